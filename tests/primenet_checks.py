"""What PrimeNet v5 requires of a trial-factoring client's requests, as
Prime95 (primenet.h, primenet.c), AutoPrimeNet (autoprimenet.py) and
mfaktc (output.c) speak it: the query of each transaction and the result
JSON an `ar` carries. Used by tests/primenet_standin.py; every failed rule
raises Violation, whose detail names the parameter the way PrimeNet's
error 7 does (`parameter r: Invalid int value ...`).

Stdlib only. Nothing here knows lode's client.
"""
import datetime
import json
import re
import zlib
from urllib.parse import parse_qsl

from tf_oracle import is_prime  # Miller-Rabin, deterministic for exponents

PX = "GIMPS"
VERSION = "0.95"  # Prime95's PRIMENET_TRANSACTION_API_VERSION
UNTRUSTED_SS = "19191919"  # the fixed salt and hash of every untrusted client
UNTRUSTED_SH = "ABCD" * 8
TRANSACTIONS = ("uc", "po", "ga", "ra", "ap", "ar", "au", "bd", "ps")
MAX_EXPONENT = 10**9  # PrimeNet v5 stops at 10^9 (TF1G work goes elsewhere)
TF_WORK_PREFS = ("2", "12")  # trial factoring, trial factoring GPU
RESULT_KEYS = ("exponent", "worktype", "status", "bitlo", "bithi", "rangecomplete", "factors", "program",
               "timestamp", "user", "computer", "aid", "os", "checksum")
OPTIONAL_RESULT_KEYS = ("factors", "user", "computer", "aid")
RESULT_OS = ("Linux", "Windows", "macOS")
RESULT_ARCH = ("x86_64", "x86_32", "ARM64")


class Violation(Exception):
    """A request PrimeNet refuses: code 7 (invalid parameter) unless the
    version (4) or the transaction (5) is what is wrong."""

    def __init__(self, param, why, code=7):
        super().__init__(f"parameter {param}: {why}")
        self.param, self.why, self.code = param, why, code

    @property
    def detail(self):
        return str(self)


# ---- value checks: each takes (name, text) and returns the value or raises ----

def integer(lo=0, hi=None):
    def check(name, text):
        if re.fullmatch(r"[0-9]{1,10}", text) is None:
            raise Violation(name, f'Invalid int value "{text}"')
        n = int(text)
        if n < lo or (hi is not None and n > hi):
            raise Violation(name, f"{n} is outside {lo}..{'' if hi is None else hi}")
        return n
    return check


def text(lo=0, hi=None):
    def check(name, value):
        if len(value) < lo or (hi is not None and len(value) > hi):
            raise Violation(name, f"{len(value)} characters, not {lo} to {'any' if hi is None else hi}")
        if any(ord(ch) < 32 for ch in value):
            raise Violation(name, "holds a control character")
        return value
    return check


def one_of(*values):
    def check(name, value):
        if value not in values:
            raise Violation(name, f'"{value}" is not one of {", ".join(values)}')
        return value
    return check


def hex32(lower=False):
    def check(name, value):
        pattern = r"[0-9a-f]{32}" if lower else r"[0-9A-Fa-f]{32}"
        if re.fullmatch(pattern, value) is None:
            raise Violation(name, f'"{value}" is not 32 {"lower-case " if lower else ""}hex digits')
        return value
    return check


def bits(name, value):
    """A bit level: 74, or 74.0 as AutoPrimeNet sends ra's sf."""
    m = re.fullmatch(r"([0-9]{1,3})(?:\.0+)?", value)
    if m is None or not 1 <= int(m.group(1)) <= 127:
        raise Violation(name, f'Invalid bit level "{value}"')
    return int(m.group(1))


def exponent(name, value):
    p = integer(2, MAX_EXPONENT - 1)(name, value)
    if not is_prime(p):
        raise Violation(name, f"{p} is not prime")
    return p


def percent(name, value):
    """ap's p: at most 4 decimals, below 100 (the server dislikes 100)."""
    if re.fullmatch(r"[0-9]{1,2}(?:\.[0-9]{1,4})?", value) is None:
        raise Violation(name, f'Invalid float value/precision "{value}" (0 to 99.9999, 4 decimals)')
    return float(value)


def stage(name, value):
    m = re.fullmatch(r"TF([0-9]{1,3})(?:-([0-9]{1,3}))?", value)
    if m is None or (m.group(2) is not None and int(m.group(2)) <= int(m.group(1))):
        raise Violation(name, f'"{value}" is not TF<lo> or TF<lo>-<hi> with lo < hi')
    return value


def application(name, value):
    """uc's a: <OS>[64],<program>,v<version>[,build N], at most 64 characters."""
    if len(value) > 64 or re.fullmatch(r"[A-Za-z]+(?:64)?,[^,]+,v[^,\s]+(?:,build [0-9]+)?", value) is None:
        raise Violation(name, f'"{value}" is not <OS>[64],<program>,v<version>[,build N] in 64 characters')
    return value


def factor_list(name, value):
    if value != "" and re.fullmatch(r"[1-9][0-9]*(?:,[1-9][0-9]*)*", value) is None:
        raise Violation(name, f'"{value}" is not comma-separated decimal factors')
    return value


def empty_or(check):
    return lambda name, value: value if value == "" else check(name, value)


def aid_or_zero(name, value):
    return value if value == "0" else hex32()(name, value)


# Each transaction's fields beyond px v t g ss sh: (required, optional).
SCHEMAS = {
    "uc": ({"hg": hex32(), "a": application, "c": text(8, 64), "f": text(), "L1": integer(), "L2": integer(),
            "np": integer(1), "hp": integer(1), "m": integer(), "s": integer(), "h": integer(0, 24),
            "r": integer()},
           {"wg": hex32(), "L3": integer(), "u": text(1, 20), "cn": text(1, 20)}),
    "po": ({}, {"c": empty_or(integer()), "w": one_of(*TF_WORK_PREFS), "nw": integer(1),
                "DaysOfWork": integer(1), "DayMemory": integer(), "NightMemory": integer()}),
    "ga": ({"c": integer()}, {"min": integer(), "max": integer(), "sf": bits, "ef": bits,
                              "a": integer(), "all": one_of("0", "1")}),
    "ra": ({"c": integer(), "w": one_of("2"), "n": exponent, "sf": bits}, {"ef": bits}),
    "ap": ({"k": hex32(), "p": percent, "d": integer(), "e": integer(), "c": integer()}, {"stage": stage}),
    "ar": ({"k": aid_or_zero, "m": text(1), "r": one_of("1", "4"), "n": exponent, "d": one_of("0", "1"),
            "sf": bits}, {"ef": bits, "f": factor_list}),
    "au": ({"k": hex32()}, {}),
    "ps": ({"q": one_of("1")}, {}),
}
PO_OPTIONS = ("w", "nw", "DaysOfWork", "DayMemory", "NightMemory")


# ---- the query ----

def parse_pairs(query):
    """The query's (name, value) pairs in order; URL escapes and + decoded."""
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=True, encoding="utf-8", errors="strict")
    except (ValueError, UnicodeDecodeError) as e:
        raise Violation("query", f"not name=value pairs joined by & ({e})")
    seen = set()
    for name, _ in pairs:
        if name in seen:
            raise Violation(name, "given twice")
        seen.add(name)
    return pairs


def check_frame(pairs):
    """px v t [g] first, ss sh last, with their values; returns t."""
    names = [n for n, _ in pairs]
    values = dict(pairs)
    for i, name in enumerate(("px", "v", "t")):
        if name not in values:
            raise Violation(name, "missing")
        if names[i] != name:
            raise Violation(name, f"must be parameter {i + 1} (px v t g ... ss sh), not {names.index(name) + 1}")
    if values["px"] != PX:
        raise Violation("px", f'"{values["px"]}" is not {PX}')
    if values["v"] != VERSION:
        raise Violation("v", f'version "{values["v"]}" is not {VERSION}', code=4)
    t = values["t"]
    if t not in TRANSACTIONS:
        raise Violation("t", f'unknown transaction "{t}"', code=5)
    if t == "bd":
        raise Violation("t", "bd (benchmark data) is not a trial-factoring transaction", code=5)
    has_salt = "ss" in values or "sh" in values
    if t != "ps" or has_salt:
        for name in ("ss", "sh"):
            if name not in values:
                raise Violation(name, "missing (ss and sh end every request)")
        for name, want, at in (("ss", UNTRUSTED_SS, -2), ("sh", UNTRUSTED_SH, -1)):
            if names[at] != name:
                raise Violation(name, "must end the query: ... ss sh")
            if values[name] != want:
                raise Violation(name, f'"{values[name]}" is not the untrusted client\'s {want}')
    if t != "ps":
        if "g" not in values:
            raise Violation("g", "missing")
        if names[3] != "g":
            raise Violation("g", "must be parameter 4 (px v t g ... ss sh)")
        hex32(lower=True)("g", values["g"])
    return t


def check_query(query):
    """(t, {name: text}, {name: value}) of a request PrimeNet takes, or
    Violation: the common frame, then each field of t and its type."""
    pairs = parse_pairs(query)
    t = check_frame(pairs)
    required, optional = SCHEMAS[t]
    fields = {n: v for n, v in pairs if n not in ("px", "v", "t", "g", "ss", "sh")}
    for name in required:
        if name not in fields:
            raise Violation(name, f"missing (t={t} needs {' '.join(required)})")
    values = {}
    for name, value in fields.items():
        check = required.get(name) or optional.get(name)
        if check is None:
            raise Violation(name, f"not a parameter of t={t}")
        values[name] = check(name, value)
    if t == "ap" and "stage" in values and values["p"] == 0:
        raise Violation("stage", "sent only when p > 0")
    if t == "ga" and "min" in values and "max" in values and values["min"] > values["max"]:
        raise Violation("min", f"{values['min']} is above max {values['max']}")
    if t == "ra" and "ef" in values and values["ef"] <= values["sf"]:
        raise Violation("ef", f"{values['ef']} is not above sf {values['sf']}")
    if t == "ar":
        values["result"] = check_ar(values)
    return t, dict(pairs), values


# ---- the result JSON of an ar ----

def checksum_text(result):
    """The text mfaktc's CRC-32 covers (keys of the result JSON)."""
    prog, osys = result["program"], result["os"]
    return ";".join([str(result["exponent"]), "TF", ",".join(result.get("factors", [])), "",
                     str(result["bitlo"]), str(result["bithi"]), "1" if result["rangecomplete"] else "0", "", "",
                     prog["name"], prog["version"], prog["kernel"], prog["details"], osys["os"],
                     osys["architecture"], result["timestamp"]])


def result_checksum(result):
    """8 upper-hex digits: CRC-32 (zlib's) of checksum_text."""
    return f"{zlib.crc32(checksum_text(result).encode('utf-8')) & 0xFFFFFFFF:08X}"


def _object_without_duplicates(pairs):
    names = [n for n, _ in pairs]
    for n in names:
        if names.count(n) > 1:
            raise Violation("m", f'key "{n}" given twice')
    return dict(pairs)


def _refuse_constant(name):
    raise Violation("m", f"{name} is not JSON")


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _strings(obj, where, keys):
    if not isinstance(obj, dict):
        raise Violation("m", f"{where} is not an object")
    for k in keys:
        if not isinstance(obj.get(k), str):
            raise Violation("m", f"{where}.{k} missing or not a string")


def _check_key_order(result):
    known = [k for k in result if k in RESULT_KEYS]
    order = [RESULT_KEYS.index(k) for k in known]
    if order != sorted(order):
        raise Violation("m", f"keys out of order: {' '.join(known)} (want {' '.join(RESULT_KEYS)})")
    for k in RESULT_KEYS:
        if k not in result and k not in OPTIONAL_RESULT_KEYS:
            raise Violation("m", f'key "{k}" missing')


def _check_result_fields(r):
    if not _is_int(r["exponent"]) or not is_prime(r["exponent"]) or r["exponent"] >= MAX_EXPONENT:
        raise Violation("m", f"exponent {r['exponent']!r} is not a prime below {MAX_EXPONENT}")
    if r["worktype"] != "TF":
        raise Violation("m", f"worktype {r['worktype']!r} is not TF")
    if r["status"] not in ("F", "NF"):
        raise Violation("m", f"status {r['status']!r} is not F or NF")
    if not (_is_int(r["bitlo"]) and _is_int(r["bithi"]) and 1 <= r["bitlo"] < r["bithi"]):
        raise Violation("m", f"bitlo {r['bitlo']!r}, bithi {r['bithi']!r}: not bit levels with bitlo < bithi")
    if not isinstance(r["rangecomplete"], bool):
        raise Violation("m", "rangecomplete is not true or false")
    _strings(r["program"], "program", ("name", "version", "kernel", "details"))
    _strings(r["os"], "os", ("os", "architecture"))
    if r["os"]["os"] not in RESULT_OS or r["os"]["architecture"] not in RESULT_ARCH:
        raise Violation("m", f"os {r['os']} is not one of {RESULT_OS} x {RESULT_ARCH}")
    ts = r["timestamp"]
    try:
        datetime.datetime.strptime(ts, "%Y-%m-%d %H:%M:%S")
        ok = isinstance(ts, str) and re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", ts) is not None
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise Violation("m", f"timestamp {ts!r} is not UTC YYYY-MM-DD HH:MM:SS")
    for k in ("user", "computer"):
        if k in r and not isinstance(r[k], str):
            raise Violation("m", f"{k} is not a string")
    if "aid" in r and (not isinstance(r["aid"], str) or re.fullmatch(r"[0-9A-Fa-f]{32}", r["aid"]) is None):
        raise Violation("m", f"aid {r['aid']!r} is not 32 hex digits")


def _check_factors(r):
    factors = r.get("factors")
    if (r["status"] == "F") != (factors is not None):
        raise Violation("m", "status F comes with factors, NF without")
    if factors is None:
        return
    if not isinstance(factors, list) or not factors or \
            not all(isinstance(f, str) and re.fullmatch(r"[1-9][0-9]*", f) for f in factors):
        raise Violation("m", "factors is not a list of decimal strings")
    values = [int(f) for f in factors]
    if values != sorted(set(values)):
        raise Violation("m", "factors are not in ascending order")
    for q in values:
        if pow(2, r["exponent"], q) != 1:
            raise Violation("m", f"{q} does not divide M{r['exponent']}")


def check_result(m):
    """The parsed result JSON of an ar's m, or Violation: key order, types,
    factors dividing M(p), the checksum recomputed."""
    try:
        r = json.loads(m, object_pairs_hook=_object_without_duplicates, parse_constant=_refuse_constant)
    except ValueError as e:
        raise Violation("m", f"not JSON ({e})")
    if not isinstance(r, dict):
        raise Violation("m", "not a JSON object")
    _check_key_order(r)
    _check_result_fields(r)
    _check_factors(r)
    cs = r["checksum"]
    if not isinstance(cs, dict) or cs.get("version") != 1 or not _is_int(cs.get("version")) or \
            not isinstance(cs.get("checksum"), str) or re.fullmatch(r"[0-9A-F]{8}", cs["checksum"]) is None:
        raise Violation("m", "checksum is not {version: 1, checksum: 8 upper hex}")
    want = result_checksum(r)
    if cs["checksum"] != want:
        raise Violation("m", f"checksum {cs['checksum']} is wrong: CRC-32 of the result is {want}")
    return r


def check_ar(values):
    """The result of an ar whose fields agree with its JSON, or Violation."""
    r = check_result(values["m"])
    if values["n"] != r["exponent"]:
        raise Violation("n", f"{values['n']} is not the result's exponent {r['exponent']}")
    if int(values["r"]) != (1 if r["status"] == "F" else 4):
        raise Violation("r", f"{values['r']} for status {r['status']} (1 factor found, 4 no factor)")
    if values["sf"] != r["bitlo"]:
        raise Violation("sf", f"{values['sf']} is not the result's bitlo {r['bitlo']}")
    if r["rangecomplete"] != ("ef" in values):
        raise Violation("ef", "sent exactly when the range is complete")
    if "ef" in values and values["ef"] != r["bithi"]:
        raise Violation("ef", f"{values['ef']} is not the result's bithi {r['bithi']}")
    if values.get("f", "") != ",".join(r.get("factors", [])):
        raise Violation("f", f"\"{values.get('f', '')}\" is not the result's factors joined by commas")
    if values["k"] != r.get("aid", "0"):
        raise Violation("k", f"{values['k']} is not the result's aid (or 0 without one)")
    return r
