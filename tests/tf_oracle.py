"""Verifiable trial factoring from first principles (docs/TF-PROOF.md): the
Python oracle tests/test_tf.py and tests/test_tf_proof.py hold lode's proofs
against; the classes and the credit of an assignment (tests/test_tf_read.py,
tests/test_api_tf.py). No lode code: Python's own pow, Miller-Rabin, li by Simpson's rule
and hashlib."""
import hashlib
import math

SMALL_PRIMES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41)


def is_prime(n):
    """Miller-Rabin to the prime bases 2..41: deterministic below 3.3e24."""
    assert n < 3317044064679887385961981
    if n < 2:
        return False
    for b in SMALL_PRIMES:
        if n % b == 0:
            return n == b
    d, s = n - 1, 0
    while d % 2 == 0:
        d, s = d // 2, s + 1
    for b in SMALL_PRIMES:
        x = pow(b, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def passes_c(p, q, t):
    """C(p, q, t): (2^(p+96) mod q) mod 2^t == (2^96 mod q) mod 2^t."""
    return pow(2, p + 96, q) % 2**t == pow(2, 96, q) % 2**t


def li_between(a, b):
    """li(2^b) - li(2^a): the integral of 1/ln x from 2^a to 2^b, as the
    integral of e^u / u du from a ln 2 to b ln 2 (Simpson, 20 000 steps)."""
    lo, hi, n = a * math.log(2), b * math.log(2), 20000
    h = (hi - lo) / n
    total = math.exp(lo) / lo + math.exp(hi) / hi
    for i in range(1, n):
        u = lo + i * h
        total += (4 if i % 2 else 2) * math.exp(u) / u
    return total * h / 3


def expected(p, a, b):
    """(t, E): N = (li(2^b) - li(2^a)) / (2 (p - 1)) candidate primes, t =
    max(0, floor(log2(N / 1000))) (at most 64), E = N 2^-t."""
    n = li_between(a, b) / (2 * (p - 1))
    t = 0
    while t < 64 and 1000 * 2 ** (t + 1) <= n:
        t += 1
    return t, n / 2**t


def candidates(p, a, b):
    """Every q = 2kp + 1 (k >= 1), q = +-1 mod 8, in [2^a, 2^b), ascending:
    what trial factoring tests (no sieve, no classes)."""
    k = max(1, (2**a - 1 + 2 * p - 1) // (2 * p))
    while 2 * k * p + 1 < 2**b:
        q = 2 * k * p + 1
        if q >= 2**a and q % 8 in (1, 7):
            yield q
        k += 1


def listing(p, a, b, t):
    """Every prime candidate of [2^a, 2^b) that passes C(p, q, t): a proof's
    list."""
    return [q for q in candidates(p, a, b) if passes_c(p, q, t) and is_prime(q)]


def digest(qs):
    """The SHA-256 of the list as a proof file writes it ("q\\n" each)."""
    return hashlib.sha256("".join(f"{q}\n" for q in qs).encode()).hexdigest()


def needed_classes(p):
    """The classes of k mod 4620 trial factoring tests: q = 2kp + 1 is +-1
    mod 8 and divisible by none of 3, 5, 7, 11."""
    out = []
    for c in range(4620):
        q = 2 * c * p + 1
        if q % 8 in (1, 7) and all(q % m for m in (3, 5, 7, 11)):
            out.append(c)
    return out


def candidates_tested(p, lo, hi):
    """The k >= 1 of the needed classes with 2^lo <= 2kp + 1 < 2^hi."""
    k_lo = max(1, -(-(2**lo - 1) // (2 * p)))
    k_hi = (2**hi - 2) // (2 * p)  # 2kp + 1 <= 2^hi - 1
    total = 0
    for c in needed_classes(p):
        first = c if c >= k_lo else c + -(-(k_lo - c) // 4620) * 4620
        if first <= k_hi:
            total += (k_hi - first) // 4620 + 1
    return total


def ghz_days(p, a, b):
    """PrimeNet's credit of trial factoring M(p) from 2^a to 2^b, in
    GHz-days (the formula mfaktc prints): per bit level n = a+1..b,
    C(n) * 2^(n-48) * 1680 / p, C = 0.011160 up to 62, 0.017832 at 63 and
    64, 0.016968 above."""
    return sum((0.011160 if n <= 62 else 0.017832 if n <= 64 else 0.016968) * 2.0 ** (n - 48) * 1680 / p
               for n in range(a + 1, b + 1))
