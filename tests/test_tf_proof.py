#!/usr/bin/env python3
"""The Python oracle of verifiable trial factoring (docs/TF-PROOF.md).

For small assignments, where Python can enumerate every q = 2kp + 1 of the
range, this builds the proof file entirely in Python: its own
pow(2, p + 96, q) for the condition C, its own Miller-Rabin (deterministic
to the prime bases 2..41 below 3.3e24: every q here is below 2^41), its own
li (Simpson's rule on the integral of e^u / u, not lode's series) for the
expected count and t, and hashlib for the digest. The verifier must accept
it (which also says that lode's t and expected count agree with Python's)
and reject every damaged or forged variant with its reason.

usage: test_tf_proof.py LODE TEST_TF_PROOF

Both verifiers are run: `LODE tf --verify FILE` and
`TEST_TF_PROOF --verify FILE` (the library's lode_tf_proof_verify alone).
A lode without the --verify option is reported and only the library is
checked.
"""
import math
import os
import re
import subprocess
import sys
import tempfile

LODE, TEST_PROG = sys.argv[1], sys.argv[2]
failures = []


def check(cond, what):
    if cond:
        print(f"ok   {what}")
    else:
        print(f"FAIL {what}")
        failures.append(what)


# ---- The oracle (tests/tf_oracle.py): no lode code. ----

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tf_oracle import digest, expected, is_prime, listing  # noqa: E402
from tf_oracle import passes_c as cond  # noqa: E402


def proof_text(p, a, b, t, e, qs, count=None, sha=None, end=True, e_text=None):
    head = (f"lode-tf-proof 1\nexponent {p}\nbits {a} {b}\nt {t}\n"
            f"expected {e_text if e_text is not None else f'{e:.1f}'}\n"
            f"count {len(qs) if count is None else count}\nsha256 {digest(qs) if sha is None else sha}\n")
    return head + "".join(f"{q}\n" for q in qs) + ("end\n" if end else "")


# ---- The verifiers ----

tmp = tempfile.mkdtemp(prefix="lode-tf-proof-py-")


def run_verifiers(path):
    """[(name, rc, output)] of every verifier."""
    out = []
    cmds = [("test_tf_proof --verify", [TEST_PROG, "--verify", path])]
    if lode_has_verify:
        cmds.append(("lode tf --verify", [LODE, "tf", "--verify", path]))
    for name, cmd in cmds:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        out.append((name, r.returncode, r.stdout + r.stderr))
    return out


probe = subprocess.run([LODE, "tf", "--verify", os.path.join(tmp, "absent.proof")], capture_output=True,
                       text=True, timeout=60)
lode_has_verify = not (probe.returncode == 2 and "unknown option" in probe.stderr)
if not lode_has_verify:
    print("NOTE: this lode has no `tf --verify` option (core/cli: see docs/TF-PROOF.md); "
          "checking the verifier through test_tf_proof --verify only")

case_no = [0]


def expect(text, want_rc, reason, what):
    case_no[0] += 1
    path = os.path.join(tmp, f"case{case_no[0]}.proof")
    with open(path, "w") as f:
        f.write(text)
    for name, rc, output in run_verifiers(path):
        ok = rc == want_rc and (reason is None or re.search(reason, output) is not None)
        check(ok, f"{name}: {what}: exit {rc} (want {want_rc})" + (f", reason /{reason}/" if reason else ""))
        if not ok:
            print("  " + output.replace("\n", "\n  "))
    return path


def insert(qs, q):
    return sorted(qs + [q])


def find(p, lo, hi, pred, step_k=1):
    k = max(1, (lo - 1 + 2 * p - 1) // (2 * p))
    while 2 * k * p + 1 < hi:
        q = 2 * k * p + 1
        if pred(q):
            return q
        k += step_k
    raise RuntimeError("no such q")


def smallest_factor(n):
    f = 2
    while f * f <= n:
        if n % f == 0:
            return f
        f += 1
    return n


assignments = [(100003, 20, 30), (100003, 30, 36), (1000003, 30, 40)]
for p, a, b in assignments:
    t, e = expected(p, a, b)
    qs = listing(p, a, b, t)
    print(f"M{p} {a}-{b}: t = {t}, E = {e:.4f}, {len(qs)} q listed by Python")
    # Python's count is within the heuristic's error of Python's E.
    check(abs(len(qs) - e) < 5 * math.sqrt(e), f"M{p} {a}-{b}: {len(qs)} q within 5 sqrt(E) of E = {e:.1f}")
    good = proof_text(p, a, b, t, e, qs)
    path = expect(good, 0, r"proof holds", f"M{p} {a}-{b}: Python's proof is accepted")
    # lode's own E (printed with 4 decimals) agrees with Python's.
    for name, rc, output in run_verifiers(path):
        m = re.search(r"lode computes ([0-9.]+)", output)
        check(m is not None and abs(float(m.group(1)) - e) < 1e-3 * max(1.0, e) * 1e-3,
              f"{name}: lode's E {m.group(1) if m else '?'} = Python's {e:.4f}")
    # More decimals in the header are fine too.
    expect(proof_text(p, a, b, t, e, qs, e_text=f"{e:.6f}"), 0, r"proof holds", f"M{p} {a}-{b}: E with 6 decimals")

    mid = len(qs) // 2
    lo, hi = 2**a, 2**b
    expect(proof_text(p, a, b, t, e, qs[:mid] + qs[mid + 1:], count=len(qs), sha=digest(qs)), 1,
           r"count %d: the file lists %d q" % (len(qs), len(qs) - 1), f"M{p} {a}-{b}: a q dropped")
    if t > 0:
        bad_c = find(p, qs[mid] + 1, hi, lambda q: q % 8 in (1, 7) and is_prime(q) and not cond(p, q, t))
        expect(proof_text(p, a, b, t, e, insert(qs, bad_c)), 1, r"q = %d: fails C" % bad_c,
               f"M{p} {a}-{b}: a prime q failing C added")
    comp = find(p, lo, hi, lambda q: q % 8 in (1, 7) and cond(p, q, t) and not is_prime(q)
                and smallest_factor(q) > 100)
    expect(proof_text(p, a, b, t, e, insert(qs, comp)), 1, r"q = %d: composite" % comp,
           f"M{p} {a}-{b}: a composite q ({comp} = {smallest_factor(comp)} * ...) passing C added")
    above = find(p, hi, 4 * hi, lambda q: q % 8 in (1, 7) and cond(p, q, t) and is_prime(q))
    expect(proof_text(p, a, b, t, e, qs + [above]), 1, r"q = %d: outside the range" % above,
           f"M{p} {a}-{b}: a q above 2^b added")
    try:
        below = find(p, 1, lo, lambda q: q % 8 in (1, 7) and cond(p, q, t) and is_prime(q))
    except RuntimeError:
        below = None  # none of the few q below 2^a qualifies: the range check is tested above
    if below is not None:
        expect(proof_text(p, a, b, t, e, [below] + qs), 1, r"q = %d: outside the range" % below,
               f"M{p} {a}-{b}: a q below 2^a added")
    # Wrong form: a prime in range, +-1 mod 8, passing C, not 1 mod 2p.
    q = qs[mid] + 2
    while not (q % 8 in (1, 7) and (q - 1) % (2 * p) != 0 and cond(p, q, t) and is_prime(q)):
        q += 2
    expect(proof_text(p, a, b, t, e, insert(qs, q)), 1, r"q = %d: not of the form 2kp \+ 1" % q,
           f"M{p} {a}-{b}: a prime not of the form 2kp + 1 added")
    m8 = find(p, qs[mid], hi, lambda q: q % 8 in (3, 5) and cond(p, q, t) and is_prime(q))
    expect(proof_text(p, a, b, t, e, insert(qs, m8)), 1, r"q = %d: not \+-1 mod 8" % m8,
           f"M{p} {a}-{b}: a prime 2kp + 1 = {m8 % 8} mod 8 added")
    swapped = qs[:mid] + [qs[mid + 1], qs[mid]] + qs[mid + 2:]
    expect(proof_text(p, a, b, t, e, swapped), 1, r"q = %d: not in ascending order" % qs[mid],
           f"M{p} {a}-{b}: two lines swapped")
    repeated = qs[:mid + 1] + qs[mid:]
    expect(proof_text(p, a, b, t, e, repeated), 1, r"q = %d: repeated" % qs[mid], f"M{p} {a}-{b}: a repeated q")
    expect(proof_text(p, a, b, t, e, qs, count=len(qs) + 1), 1, r"count %d: the file lists %d q" %
           (len(qs) + 1, len(qs)), f"M{p} {a}-{b}: a wrong count")
    sha = digest(qs)
    wrong = sha[:10] + ("0" if sha[10] != "0" else "1") + sha[11:]
    expect(proof_text(p, a, b, t, e, qs, sha=wrong), 1, r"sha256 %s: the list's SHA-256 is %s" % (wrong, sha),
           f"M{p} {a}-{b}: a wrong digest")
    qs_t1 = [q for q in qs if cond(p, q, t + 1)]
    expect(proof_text(p, a, b, t + 1, e / 2, qs_t1), 1, r"t %d: lode chooses t = %d" % (t + 1, t),
           f"M{p} {a}-{b}: a wrong t (list and E made for t + 1)")
    expect(proof_text(p, a, b, t, e * 1.01, qs), 1, r"expected [0-9.]+: lode computes",
           f"M{p} {a}-{b}: expected 1% off")
    text = good[: good.index(f"\n{qs[mid]}\n") + 1]
    expect(text, 1, r"no \"end\" line", f"M{p} {a}-{b}: a file cut short in its list")
    expect(good[:-4], 1, r"no \"end\" line", f"M{p} {a}-{b}: a file without its end line")
    expect(good + "7\n", 1, r"text after the \"end\" line", f"M{p} {a}-{b}: text after end")
    expect(good[: good.index("sha256")], 1, r"ends before its \"sha256\" line", f"M{p} {a}-{b}: only a header")
    few = qs[:: 10]
    expect(proof_text(p, a, b, t, e, few), 1, r"below E - 5 sqrt\(E\)",
           f"M{p} {a}-{b}: a tenth of the list (count and digest made to match)")

# Headers.
p, a, b = assignments[1]
t, e = expected(p, a, b)
qs = listing(p, a, b, t)
good = proof_text(p, a, b, t, e, qs)
expect("", 1, r"empty", "an empty file")
expect(good.replace("lode-tf-proof 1", "lode-tf-proof 2"), 1, r"format 2", "format 2")
expect(good.replace(f"exponent {p}", f"exponent {p + 2}"), 1, r"not prime", "an exponent that is not prime")
expect(good.replace(f"bits {a} {b}", f"bits {b} {a}"), 1, r"not a valid assignment", "bits reversed")
expect(good.replace(f"bits {a} {b}", f"bits {a}  {b}"), 1, r"want \"bits A B\"", "bits with two spaces")
expect(good.replace(f"\nt {t}\n", f"\nt 0{t}\n"), 1, r"want \"t N\"", "t with a leading zero")
expect(good.replace("sha256 ", "sha256 ".upper()), 1, r"want \"sha256\"", "SHA256 in capitals")
expect(good.replace(f"\n{qs[5]}\n", f"\n0{qs[5]}\n"), 1, r"not a decimal number", "a q with a leading zero")
expect(good.replace(f"\n{qs[5]}\n", f"\n{qs[5]} \n"), 1, r"not a decimal number", "a q with a trailing space")

# No file, a directory.
for name, rc, output in run_verifiers(os.path.join(tmp, "no-such.proof")):
    check(rc == 1 and "cannot read" in output and "No such file" in output, f"{name}: a missing file: exit {rc}")
for name, rc, output in run_verifiers(tmp):
    check(rc == 1 and "cannot read" in output, f"{name}: a directory: exit {rc}")

# Usage (the lode command only).
if lode_has_verify:
    r = subprocess.run([LODE, "tf", "--verify"], capture_output=True, text=True, timeout=60)
    check(r.returncode == 2, f"lode tf --verify without a file: exit {r.returncode} (want 2)")
    path = os.path.join(tmp, "case1.proof")
    r = subprocess.run([LODE, "tf", "--verify", path, "100003", "20", "30"], capture_output=True, text=True,
                       timeout=60)
    check(r.returncode == 2, f"lode tf --verify with an assignment: exit {r.returncode} (want 2)")
    r = subprocess.run([LODE, "tf", "--help"], capture_output=True, text=True, timeout=60)
    check(r.returncode == 0 and "--verify" in r.stdout, "lode tf --help names --verify")

for f in os.listdir(tmp):
    os.unlink(os.path.join(tmp, f))
os.rmdir(tmp)
print(f"{len(failures)} failed" if failures else "all passed")
sys.exit(1 if failures else 0)
