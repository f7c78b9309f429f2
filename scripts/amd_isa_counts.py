#!/usr/bin/env python3
"""Vector-ALU instructions per unit of work from AMD GCN/CDNA/RDNA assembly.

Input: the text clang-19 writes with `-target amdgcn-amd-amdhsa -S` (the
compile of docs/PERFORMANCE.md, "AMD GPUs"). Output: per kernel, the
instructions one unit of work costs (a SHA-256d nonce or hash, a scrypt
hash, a Momentum sweep, a trial-factoring candidate), by class.

Method:
- Each function is cut into basic blocks: a label (`.LBB..:`, `; %bb.N:`)
  starts one, a branch ends one; edges are branch targets and fall-through.
- Loops are found from back-edges (a branch to a block at or above it in
  the layout): the natural loop of header h and latch l is h plus every
  block that reaches l without passing h; loops with one header merge.
  Loops are numbered per function in header order, from 0.
- A block's weight is the product of the trip counts of the loops holding
  it. Trip counts come from the source and launch shape (ALGORITHMS below),
  by loop number or else by depth, or, given as "asm", from the loop's
  scalar induction variable (a loop the compiler unrolled by k then weighs
  1/k of the source's trips); blocks in no loop at all weigh
  `outside` (0 for a grid-stride kernel, whose set-up is amortised).
- A call (s_swappc_b64 to a symbol set by s_add_u32, on gfx12
  s_add_co_u32, ...@rel32@lo) adds the callee's weighted counts, the
  call's block weight times each; the callee's loops add their depth to
  the caller's.
- Every path is counted as if taken: rare paths (a hit's recording, the
  untaken one of two alternatives) make the figure an upper bound.
- Classes: `valu` every v_* instruction except memory ones (v_dual_* is one
  issue of two operations, also counted in `dual`); of those `quarter`
  (32-bit multiplies: v_mul_lo/hi_*32, v_mad_u64_u32, on gfx12
  v_mad_co_u64_u32, and kin, quarter rate on every target), `wide`
  (the other 64-bit operations: rate by target; `f64` the floating-point
  ones among them) and `trans` (v_rcp/v_rsq/v_sqrt/v_exp/v_log/v_sin/
  v_cos); `mov` (v_mov_*, v_dual_mov_*); `salu` scalar ALU; `vmem` (global/buffer/flat/scratch),
  `smem` (s_load/s_buffer_load), `lds` (ds_*), memory counted apart.
- `units` divides the weighted sum: the units one pass of the weighted
  code does (8 hashes a nonce for the version-rolled search, 2^26 nonces
  for a Momentum sweep with `per_sweep` work-items a kernel).
"""
import argparse
import json
import re
import sys

QUARTER_RE = re.compile(r"^v_(mul_(lo|hi)_[ui]32|mul_hi_i32_i24_never|mad_(co_)?[ui]64_[ui]32|mad_u32_u16)")
WIDE_RE = re.compile(r"^v_\w*(_f64|_[iub]64)(_e32|_e64|_dpp|_sdwa)?$|^v_lshl_add_u64")
F64_RE = re.compile(r"^v_\w*_f64(_e32|_e64|_dpp)?$")
TRANS_RE = re.compile(r"^v_(rcp|rsq|sqrt|exp|log|sin|cos)_")
MEM_PREFIXES = ("global_", "buffer_", "flat_", "scratch_", "tbuffer_")
CLASSES = ("valu", "quarter", "wide", "f64", "trans", "mov", "dual", "salu", "vmem", "smem", "lds")
LABEL_RE = re.compile(r"^(\.LBB\d+_\d+):")
BB_COMMENT_RE = re.compile(r"^; %bb\.\d+:")
FUNC_RE = re.compile(r"^([A-Za-z_][\w.$]*):\s*(;.*)?$")
CALL_SYM_RE = re.compile(r"s_add_(co_)?u32\s+\S+,\s*\S+,\s*([\w.$]+)@(rel32|gotpcrel32)@lo")
META_RE = {"vgprs": re.compile(r";\s*NumVgprs:\s*(\d+)"), "agprs": re.compile(r";\s*NumAgprs:\s*(\d+)"),
           "sgprs": re.compile(r";\s*NumSgprs:\s*(\d+)"), "scratch": re.compile(r";\s*ScratchSize:\s*(\d+)"),
           "occupancy": re.compile(r";\s*Occupancy:\s*(\d+)"), "lds_bytes": re.compile(r";\s*LDSByteSize:\s*(\d+)")}


class AsmError(Exception):
    """The text is not what the counter understands (no such kernel...)."""


def classify(mnemonic):
    """The classes one instruction counts in (a list, maybe empty)."""
    if mnemonic.startswith("ds_"):
        return ["lds"]
    if mnemonic.startswith(MEM_PREFIXES):
        return ["vmem"]
    if mnemonic.startswith(("s_load", "s_buffer_load", "s_scratch_", "s_store", "s_buffer_store")):
        return ["smem"]
    if mnemonic.startswith("s_"):
        control = ("s_branch", "s_cbranch", "s_waitcnt", "s_nop", "s_endpgm", "s_setpc", "s_swappc",
                   "s_delay_alu", "s_clause", "s_inst_prefetch", "s_sleep", "s_barrier", "s_code_end",
                   "s_set_inst_prefetch_distance", "s_sendmsg", "s_dcache", "s_icache", "s_wait_")
        return [] if mnemonic.startswith(control) else ["salu"]
    if not mnemonic.startswith("v_"):
        return []
    out = ["valu"]
    if mnemonic.startswith("v_dual_"):
        out.append("dual")
        if "mov" in mnemonic:
            out.append("mov")
        return out
    if QUARTER_RE.match(mnemonic):
        out.append("quarter")
    elif WIDE_RE.match(mnemonic):
        out.append("wide")
        if F64_RE.match(mnemonic):
            out.append("f64")
    if TRANS_RE.match(mnemonic):
        out.append("trans")
    if mnemonic.startswith("v_mov_"):
        out.append("mov")
    return out


class Block:
    def __init__(self, label):
        self.label = label
        self.counts = dict.fromkeys(CLASSES, 0)
        self.calls = []
        self.succ = []
        self.falls = True  # control reaches the next block in the layout
        self.scalar = []  # its s_* lines, for loop_trip's induction variable


def split_functions(text):
    """{name: [lines]} for every function body (a global symbol's label up
    to its .Lfunc_end); metadata comments after it stay with it."""
    funcs, name, lines = {}, None, []
    for raw in text.splitlines():
        line = raw.split("//")[0].rstrip()
        match = FUNC_RE.match(line.strip()) if not line.startswith((" ", "\t", ".")) else None
        if match and not line.startswith(";"):
            if name:
                funcs[name] = lines
            name, lines = match.group(1), []
            continue
        if name:
            lines.append(line)
    if name:
        funcs[name] = lines
    return funcs


def parse_blocks(lines):
    """The function's basic blocks in layout order, with their edges."""
    blocks = [Block("<entry>")]
    pending_sym = None
    for line in lines:
        stripped = line.strip()
        if stripped.startswith(".Lfunc_end"):
            break
        label = LABEL_RE.match(stripped)
        if label or BB_COMMENT_RE.match(stripped):
            name = label.group(1) if label else stripped.split(":")[0]
            if blocks[-1].counts != Block("").counts or blocks[-1].calls or len(blocks) > 1 or label:
                blocks.append(Block(name))
            else:
                blocks[-1].label = name
            continue
        if not stripped or stripped.startswith((";", ".")):
            continue
        mnemonic = stripped.split()[0]
        if mnemonic.startswith("s_"):
            blocks[-1].scalar.append(stripped)
        for cls in classify(mnemonic):
            blocks[-1].counts[cls] += 1
        sym = CALL_SYM_RE.search(stripped)
        if sym:
            pending_sym = sym.group(2)
        if mnemonic.startswith("s_swappc") and pending_sym:
            blocks[-1].calls.append(pending_sym)
        if mnemonic.startswith(("s_branch", "s_cbranch")):
            blocks[-1].succ.append(stripped.split()[-1])
            if mnemonic.startswith("s_branch"):
                blocks[-1].falls = False
            blocks.append(Block(None))
        elif mnemonic.startswith(("s_endpgm", "s_setpc")):
            blocks[-1].falls = False
            blocks.append(Block(None))
    return [b for b in blocks if b.label is not None or any(b.counts.values()) or b.calls or b.succ]


def block_edges(blocks):
    """Successor indices of every block."""
    index = {b.label: i for i, b in enumerate(blocks) if b.label}
    edges = []
    for i, b in enumerate(blocks):
        out = [index[t] for t in b.succ if t in index]
        if b.falls and i + 1 < len(blocks):
            out.append(i + 1)
        edges.append(out)
    return edges


def dominators(edges):
    """dom[i]: the blocks that dominate block i (entry 0), by iteration."""
    preds = [[] for _ in edges]
    for i, out in enumerate(edges):
        for j in out:
            preds[j].append(i)
    every = set(range(len(edges)))
    dom = [every] * len(edges)
    dom[0] = {0}
    changed = True
    while changed:
        changed = False
        for i in range(1, len(edges)):
            known = [dom[p] for p in preds[i]]
            new = (set.intersection(*known) if known else set()) | {i}
            if new != dom[i]:
                dom[i], changed = new, True
    return dom, preds


def find_loops(blocks):
    """[(header index, set of block indices)] in header order, loops of one
    header merged. A back-edge is an edge to a block that dominates it."""
    edges = block_edges(blocks)
    dom, preds = dominators(edges)
    loops = {}
    for latch, out in enumerate(edges):
        for header in out:
            if header not in dom[latch]:
                continue
            body, stack = {header, latch}, [latch] if latch != header else []
            while stack:
                for p in preds[stack.pop()]:
                    if p not in body:
                        body.add(p)
                        stack.append(p)
            loops.setdefault(header, set()).update(body)
    return sorted(loops.items())


IMM = r"(-?(?:0x[0-9a-fA-F]+|\d+))"
CMP_RE = re.compile(r"^s_cmpk?_(eq|lg)_[ui]32\s+(s\d+),\s*" + IMM + "$")
STEP_RE = re.compile(r"^s_addk?(?:_co)?_[ui]32\s+(s\d+),\s*(?:(s\d+),\s*)?" + IMM + "$")
INIT_RE = re.compile(r"^s_mov(?:k)?_[bi]32\s+(s\d+),\s*" + IMM + "$")


def loop_trip(blocks, loop):
    """A loop's trip count from its scalar induction variable: the latch's
    s_cmp of sN with a constant, sN stepped by a constant in the body and
    set by s_mov before the header. So an unrolled loop (gfx90a runs the
    8 versions as 4 trips of 2) weighs what it runs; None if not found."""
    header, body = loop
    for latch in sorted(body, reverse=True):
        compares = [CMP_RE.match(line) for line in blocks[latch].scalar]
        compares = [m for m in compares if m]
        if not compares or blocks[header].label not in blocks[latch].succ:
            continue
        _, reg, limit = compares[-1].groups()
        steps = [m for i in body for m in map(STEP_RE.match, blocks[i].scalar)
                 if m and m.group(1) == reg and m.group(2) in (None, reg)]
        inits = [m for i in range(header - 1, -1, -1) if i not in body
                 for m in map(INIT_RE.match, reversed(blocks[i].scalar)) if m and m.group(1) == reg]
        if len(steps) != 1 or not inits:
            return None
        step, start = int(steps[0].group(3), 0), int(inits[0].group(2), 0)
        span = int(limit, 0) - start
        if step == 0 or span % step or span // step <= 0:
            return None
        return span // step
    return None


def weigh_function(funcs, name, params, depth0=0, seen=()):
    """Weighted class counts of one call of function `name`."""
    if name not in funcs:
        raise AsmError(f"function {name} not in the assembly")
    if name in seen:
        raise AsmError(f"recursive call to {name}")
    blocks = parse_blocks(funcs[name])
    loops = find_loops(blocks)
    by_number = params.get("loop_trips", {}).get(name, {})
    if "choose_trips" in params and name == params.get("choose_in"):
        by_number = params["choose_trips"](blocks, loops)
    by_depth = params.get("depth_trips", {})
    total = dict.fromkeys(CLASSES, 0.0)
    for i, block in enumerate(blocks):
        holding = [n for n, (_, body) in enumerate(loops) if i in body]
        depth = depth0 + len(holding)
        weight = 1.0
        for n in holding:
            loop_depth = depth0 + sum(1 for m in holding if loops[n][0] in loops[m][1])
            trip = by_number.get(str(n), by_number.get(n))
            trip = trip if trip is not None else by_depth.get(str(loop_depth), by_depth.get(loop_depth, 1))
            if trip == "asm":
                trip = loop_trip(blocks, loops[n])
                if trip is None:
                    raise AsmError(f"{name}: loop {n} has no constant trip count in the assembly")
            weight *= trip
        own = weight * params.get("outside", 1) if depth == 0 else weight
        for cls, count in block.counts.items():
            total[cls] += own * count
        if weight == 0:
            continue
        for callee in block.calls:
            sub = weigh_function(funcs, callee, params, depth, seen + (name,))
            for cls in CLASSES:
                total[cls] += weight * sub[cls]
    return total


def kernel_meta(funcs, name):
    """Registers, scratch, LDS and occupancy from the compiler's comments."""
    meta = {}
    for line in funcs.get(name, []):
        for key, regex in META_RE.items():
            match = regex.search(line)
            if match and key not in meta:
                meta[key] = int(match.group(1))
    return meta


def per_unit(asm_text, algo, kernel_names=None, params=None):
    """{kernel: {class: instructions a unit, ..., 'meta': {...}},
    'total': {class: sum over the algorithm's kernels}} for one algorithm
    (a key of ALGORITHMS) or, with params, for any kernels."""
    spec = dict(ALGORITHMS.get(algo, {})) if params is None else {k: params for k in kernel_names or []}
    if not spec:
        raise AsmError(f"unknown algorithm {algo!r}; one of {', '.join(sorted(ALGORITHMS))}")
    if kernel_names:
        spec = {k: v for k, v in spec.items() if k in kernel_names}
    funcs = split_functions(asm_text)
    result, total = {}, dict.fromkeys(CLASSES, 0.0)
    for kernel, kparams in spec.items():
        weighted = weigh_function(funcs, kernel, kparams)
        scale = kparams.get("items", 1) / kparams.get("units", 1)
        counts = {cls: round(weighted[cls] * scale, 1) for cls in CLASSES}
        if kparams.get("in_total", True):
            for cls in CLASSES:
                total[cls] += counts[cls]
        counts["meta"] = kernel_meta(funcs, kernel)
        result[kernel] = counts
    result["total"] = {cls: round(v, 1) for cls, v in total.items()}
    return result


def loop_report(asm_text, kernel):
    """[(number, header label, depth, blocks, VALU in the body, trip count
    from the assembly or None)] of a function: what the trip counts of
    ALGORITHMS refer to."""
    funcs = split_functions(asm_text)
    if kernel not in funcs:
        raise AsmError(f"function {kernel} not in the assembly")
    blocks = parse_blocks(funcs[kernel])
    loops = find_loops(blocks)
    rows = []
    for n, (header, body) in enumerate(loops):
        depth = sum(1 for h, b in loops if header in b)
        valu = sum(blocks[i].counts["valu"] for i in body)
        rows.append((n, blocks[header].label, depth, len(body), valu, loop_trip(blocks, loops[n])))
    return rows


# Trip counts from the sources (backend-opencl/kernels/*.cl, core/backend_support/kernels/*.h) and launch shapes
# (backend-opencl/ocl_*.c). Loop numbers are those loop_report (--loops) prints; they were checked on all six
# targets' compiles of 2026-12-02.
SHA_PLAIN = {"outside": 0, "depth_trips": {1: 1}}  # the grid-stride loop: one nonce an iteration
# A nonce, 8 versions in a rolled loop (unrolled by 2 on gfx90a/gfx942: its trips are read from the asm).
SHA_VERSIONS = {"outside": 0, "depth_trips": {1: 1, 2: "asm"}, "units": 8}
MOM_ITEMS = 1 << 23  # mom_hash_bucket: 8 birthdays (one SHA-512) a work-item, 2^26 nonces a sweep


def tf_squaring_trips(blocks, loops, squarings=21, heavy=40):
    """tf_exponentiate's trip counts: the candidates' loop is the outer loop
    that holds the squaring loops (inner loops of >= `heavy` VALU; the
    doubling loops have ~20 and are skipped on the fp64 start); of the three
    exp_steps instances by bit_max the q < 2^78 one does least work, so the
    lightest heavy loop is it, run `squarings` times; the rest weigh 0 (the
    other outer loop is the next sub-launch's preparation, in groups of its
    own)."""
    valu = [sum(blocks[i].counts["valu"] for i in body) for _, body in loops]
    inner = {n for n, (h, _) in enumerate(loops) if any(h in b and h != h2 for h2, b in loops)}
    heavy_loops = [n for n in inner if valu[n] >= heavy]
    if not heavy_loops:
        raise AsmError("tf_exponentiate: no squaring loop found")
    squaring = min(heavy_loops, key=lambda n: valu[n])
    outer = next(n for n, (h, b) in enumerate(loops) if n not in inner and loops[squaring][0] in b)
    trips = {n: 0 for n in range(len(loops))}
    trips[outer], trips[squaring] = 1, squarings
    return trips


# M66362159: nbits 26, the top 5 bits start the ladder: 21 squarings a candidate.
TF_EXP = {"outside": 0, "choose_in": "tf_exponentiate", "choose_trips": tf_squaring_trips}
ALGORITHMS = {
    "sha256d": {"sha256d_search_iadd3": SHA_PLAIN, "sha256d_search_imad": SHA_PLAIN},
    "sha256d-versions": {"sha256d_search_versions_iadd3": SHA_VERSIONS,
                         "sha256d_search_versions_imad": SHA_VERSIONS},
    # romix_thread: two loops of N = 1024 BlockMix each (read from the asm: 1024 on all six targets of
    # 2026-12-02); pbkdf2_in/out one work-item a hash, straight code.
    "scrypt": {"romix_thread": {"outside": 1, "depth_trips": {1: "asm"}}, "pbkdf2_in": {}, "pbkdf2_out": {}},
    "momentum": {"mom_hash_bucket": {"items": MOM_ITEMS}},
    # tf_exponentiate, M66362159 from 2^73: loop 0 takes a candidate; of its inner loops the third is
    # exp_steps(.., 78), 26 - 5 = 21 squarings; the doubling loops (1, 2) are skipped on the fp64 start,
    # 4 and 5 are the other bit_max instances, 6-7 the next sub-launch's preparation (other work-groups).
    "tf": {"tf_exponentiate": TF_EXP},
}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("asm", help="clang -S output for an amdgcn target")
    parser.add_argument("algo", nargs="?", help="one of " + ", ".join(sorted(ALGORITHMS)))
    parser.add_argument("--loops", metavar="FUNCTION", help="list a function's loops and exit")
    parser.add_argument("--json", action="store_true", help="print the counts as JSON")
    args = parser.parse_args(argv)
    try:
        with open(args.asm, encoding="utf-8") as f:
            text = f.read()
        if args.loops:
            for row in loop_report(text, args.loops):
                print("loop %d header %s depth %d blocks %d valu %d trip %s" % (row[:5] + (row[5] or "?",)))
            return 0
        if not args.algo:
            parser.error("an algorithm or --loops is needed")
        result = per_unit(text, args.algo)
    except (OSError, AsmError) as e:
        print(f"amd_isa_counts: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result, indent=1, sort_keys=True))
        return 0
    for kernel, counts in result.items():
        meta = counts.get("meta", {})
        row = " ".join(f"{cls} {counts[cls]:g}" for cls in CLASSES)
        print(f"{kernel}: {row}" + "".join(f" {k} {v}" for k, v in sorted(meta.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
