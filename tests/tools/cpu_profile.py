#!/usr/bin/env python3
"""Reads a tests/tools/cpu_sampler.c output and prints where host CPU time
went: per thread, per leaf function and per lode function on the stack
(inclusive). Addresses in lode's own binary are named with addr2line
against BINARY (the same build that ran); other modules by file name.

usage: cpu_profile.py SAMPLES BINARY [TOP [FUNCTION]]
With FUNCTION, also the call chains (lode's own frames) of the samples that
have FUNCTION on their stack, most frequent first."""
import collections
import subprocess
import sys


def main():
    path, binary = sys.argv[1], sys.argv[2]
    top = int(sys.argv[3]) if len(sys.argv) > 3 else 25
    focus = sys.argv[4] if len(sys.argv) > 4 else None
    maps, rows, part = [], [], None
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line in ("maps", "samples"):
                part = line
                continue
            if part == "maps":
                fields = line.split()
                if len(fields) >= 6 and "x" in fields[1]:
                    lo, hi = (int(x, 16) for x in fields[0].split("-"))
                    maps.append((lo, hi, int(fields[2], 16), fields[5]))
            elif part == "samples" and line:
                name, *pcs = line.split(" ")
                rows.append((name, [int(p, 16) for p in pcs]))
    total = len(rows)
    if total == 0:
        print("no samples")
        return
    exe = next((m for m in maps if m[3].endswith("/" + binary.split("/")[-1])), None)
    # PIE: file offset = pc - map start + map offset; addr2line wants the
    # virtual address, which for lode's text is the file offset plus the
    # ELF's text vaddr - offset (0 for a plain PIE: same).
    addrs = set()

    def where(pc):
        for lo, hi, off, name in maps:
            if lo <= pc < hi:
                return name, pc - lo + off
        return "?", pc

    for _, pcs in rows:
        for i, pc in enumerate(pcs):
            mod, off = where(pc if i == 0 else pc - 1)
            if exe and mod == exe[3]:
                addrs.add(off)
    names = {}
    if addrs:
        ordered = sorted(addrs)
        out = subprocess.run(["addr2line", "-f", "-C", "-e", binary] + [hex(a) for a in ordered],
                             capture_output=True, text=True).stdout.split("\n")
        for k, a in enumerate(ordered):
            names[a] = out[2 * k] if 2 * k < len(out) else "?"

    def sym(pc, caller):
        mod, off = where(pc - 1 if caller else pc)
        if exe and mod == exe[3]:
            return names.get(off, "?")
        return mod.split("/")[-1] or "?"

    threads, leaf, incl = collections.Counter(), collections.Counter(), collections.Counter()
    for name, pcs in rows:
        threads[name] += 1
        if pcs:
            leaf[sym(pcs[0], False)] += 1
        seen = set()
        for i, pc in enumerate(pcs):
            s = sym(pc, i > 0)
            if s not in seen:
                seen.add(s)
                incl[s] += 1
    print(f"{total} samples (one per timer tick of process CPU time)")
    for title, c in (("thread", threads), ("leaf", leaf), ("on the stack", incl)):
        print(f"-- by {title}")
        for k, v in c.most_common(top):
            print(f"{v:7d} {100.0 * v / total:5.1f}%  {k}")
    if focus:
        chains = collections.Counter()
        for _, pcs in rows:
            frames = [sym(pc, i > 0) for i, pc in enumerate(pcs)]
            if focus in frames:
                chains[" < ".join(f for f in frames if "." not in f and f != "?")] += 1
        print(f"-- call chains through {focus}")
        for k, v in chains.most_common(top):
            print(f"{v:7d} {100.0 * v / total:5.1f}%  {k}")


if __name__ == "__main__":
    main()
