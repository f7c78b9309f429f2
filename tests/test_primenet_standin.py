#!/usr/bin/env python3
"""The PrimeNet v5 stand-in (tests/primenet_standin.py) against the
protocol as Prime95, AutoPrimeNet and mfaktc speak it, not against lode:

- the result checksum: mfaktc's two vectors (13816BE8, 3321844C) through
  the stand-in's function, the texts through zlib.crc32 too;
- requests built here by hand with urllib: each transaction (uc po ga ra
  ap ar au ps) succeeds in PrimeNet's reply format, with its semantics
  (30 before uc, 40 when no work is left, 43 for unknown or completed
  keys, od raised by changed options, a duplicate credited once);
- each kind of malformed request (parameter order, ss/sh, the GUID's case,
  p's precision, a wrong checksum, a factor not dividing M(p), result keys
  out of order, ...) is refused with its code and recorded as a violation;
- injected errors and hostile replies do what they say; down() refuses
  connections and up() listens again on the same port.

usage: test_primenet_standin.py
"""
import hashlib
import http.client
import json
import os
import re
import socket
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402
import primenet_checks  # noqa: E402
from primenet_standin import StandIn  # noqa: E402

check = Checks()
GUID = hashlib.md5(b"test computer").hexdigest()  # 32 lower hex, as uuid4().hex
SALT = [("ss", "19191919"), ("sh", "ABCD" * 8)]
UC_FIELDS = [("hg", hashlib.md5(b"hardware").hexdigest()), ("a", "Linux64,lode,v0.9.0"),
             ("c", "NVIDIA H200 NVL"), ("f", ""), ("L1", "64"), ("L2", "4096"), ("np", "1"), ("hp", "1"),
             ("m", "143771"), ("s", "1980"), ("h", "24"), ("r", "1000"), ("u", "test_user"), ("cn", "my rig")]
# mfaktc 0.24.1's checksum vectors: the text the CRC-32 covers and its value.
VECTORS = [
    ("66362159;TF;;;48;49;1;;;mfaktc;0.24.1;75bit_mul32_gs;CUDA 12.8 arch 9.0;Linux;x86_64;2026-01-01 00:00:00",
     "13816BE8"),
    ("51332417;TF;297892586972172587537;;68;69;1;;;mfaktc;0.24.1;barrett76_mul32_gs;CUDA 12.8 arch 9.0;Linux;"
     "x86_64;2026-01-01 00:00:00", "3321844C"),
]


def result_json(p, lo, hi, factors=(), aid=None, kernel="75bit_mul32_gs", complete=True, order=None,
                checksum=None):
    """A result line as mfaktc 0.24.1 writes it, its CRC-32 computed here."""
    r = {"exponent": p, "worktype": "TF", "status": "F" if factors else "NF", "bitlo": lo, "bithi": hi,
         "rangecomplete": complete}
    if factors:
        r["factors"] = [str(q) for q in factors]
    r["program"] = {"name": "mfaktc", "version": "0.24.1", "kernel": kernel, "details": "CUDA 12.8 arch 9.0"}
    r["timestamp"] = "2026-01-01 00:00:00"
    r["user"], r["computer"] = "test_user", "my rig"
    if aid:
        r["aid"] = aid
    r["os"] = {"os": "Linux", "architecture": "x86_64"}
    text = (f"{p};TF;{','.join(r.get('factors', []))};;{lo};{hi};{1 if complete else 0};;;mfaktc;0.24.1;{kernel};"
            f"CUDA 12.8 arch 9.0;Linux;x86_64;2026-01-01 00:00:00")
    r["checksum"] = {"version": 1, "checksum": checksum or f"{zlib.crc32(text.encode()):08X}"}
    if order:
        r = {k: r[k] for k in order}
    return json.dumps(r, separators=(",", ":"))


def ar_fields(p, lo, hi, factors=(), aid=None, **kw):
    fields = [("k", aid or "0"), ("m", result_json(p, lo, hi, factors, aid, **kw)), ("r", "1" if factors else "4"),
              ("n", str(p)), ("d", "1"), ("sf", str(lo))]
    if kw.get("complete", True):
        fields.append(("ef", str(hi)))
    return fields + [("f", ",".join(str(q) for q in factors))]


def query(t, fields=(), g=GUID, salt=True):
    pairs = [("px", "GIMPS"), ("v", "0.95"), ("t", t)] + ([("g", g)] if g else []) + list(fields)
    return urllib.parse.urlencode(pairs + (SALT if salt else []))


def fetch(url, timeout=5, data=None):
    """(HTTP status, body) of one GET (a POST with data)."""
    try:
        with urllib.request.urlopen(url, data=data, timeout=timeout) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def parse(body):
    """A PrimeNet reply as a dict, or None when it is not one: LF-ended
    name=value lines, pnErrorResult then pnErrorDetail first, ==END== last."""
    text = body.decode("utf-8")
    lines = text.split("\n")
    if "\r" in text or lines[-1] != "" or lines[-2] != "==END==":
        return None
    pairs = [line.partition("=") for line in lines[:-2]]
    if len(pairs) < 2 or pairs[0][0] != "pnErrorResult" or pairs[1][0] != "pnErrorDetail":
        return None
    if not all(sep == "=" for _, sep, _ in pairs):
        return None
    return {name: value for name, _, value in pairs}


class Client:
    def __init__(self, s):
        self.s = s

    def send(self, t, fields=(), g=GUID, salt=True, raw=None):
        status, body = fetch(self.s.url + "?" + (raw if raw is not None else query(t, fields, g, salt)))
        reply = parse(body) if status == 200 else None
        if not check(reply is not None, f"t={t}: a PrimeNet reply: {status} {body[:200]!r}"):
            return {"pnErrorResult": None, "pnErrorDetail": ""}
        reply["code"] = int(reply["pnErrorResult"])
        return reply


def test_vectors():
    for text, want in VECTORS:
        check(f"{zlib.crc32(text.encode()):08X}" == want, f"zlib.crc32 of the vector text is {want}")
    for (text, want), (p, lo, hi, factors, kernel) in zip(VECTORS, [
            (66362159, 48, 49, (), "75bit_mul32_gs"),
            (51332417, 68, 69, (297892586972172587537,), "barrett76_mul32_gs")]):
        r = json.loads(result_json(p, lo, hi, factors, kernel=kernel))
        check(primenet_checks.checksum_text(r) == text, f"checksum_text of M{p}: {primenet_checks.checksum_text(r)}")
        check(primenet_checks.result_checksum(r) == want, f"M{p}: checksum {primenet_checks.result_checksum(r)}")
    check(pow(2, 51332417, 297892586972172587537) == 1, "the vector's factor divides M51332417")


def test_registration(c, s):
    r = c.send("ps", [("q", "1")], g=None, salt=False)
    check(r["code"] == 0 and "r" in r, f"ps before registration (no g, ss, sh): {r}")
    r = c.send("ga", [("c", "0")])
    check(r["code"] == 30, f"ga of an unregistered GUID: 30: {r}")
    r = c.send("uc", UC_FIELDS)
    check(r["code"] == 0 and r["g"] == GUID and r["u"] == "test_user" and r["un"] and r["cn"] == "my rig"
          and r["od"] == "1", f"uc registers: g u un cn od: {r}")
    check(s.computers.get(GUID, {}).get("cn") == "my rig" and s.computers[GUID]["c"] == "NVIDIA H200 NVL",
          f"uc's params registered, + decoded as a space: {s.computers.get(GUID)}")
    r = c.send("ps", [("q", "1")])
    check(r["code"] == 0, f"ps with ss and sh: {r}")
    r = c.send("po", [("c", "")])
    names = ("w", "nw", "DaysOfWork", "DayMemory", "NightMemory", "Priority", "RunOnBattery", "od")
    check(r["code"] == 0 and all(n in r for n in names) and r["od"] == "1", f"po query: every option: {r}")
    opts = [("c", ""), ("w", "12"), ("nw", "1"), ("DaysOfWork", "3"), ("DayMemory", "0"), ("NightMemory", "0")]
    r = c.send("po", opts)
    check(r["code"] == 0 and r["DaysOfWork"] == "3" and r["od"] == "2", f"po sends options: od raised: {r}")
    r = c.send("po", opts)
    check(r["code"] == 0 and r["od"] == "2", f"po sends the same options: od kept: {r}")
    s.change_options(GUID, DaysOfWork=5)
    r = c.send("uc", UC_FIELDS[:-2])
    check(r["code"] == 0 and r["od"] == "3" and r["u"] == "test_user", f"uc after a web change: od 3, u kept: {r}")
    r = c.send("po", [("c", "")])
    check(r["DaysOfWork"] == "5" and r["od"] == "3", f"po query after the web change: {r}")


def test_work(c, s):
    k1 = s.add_assignment(66362159, 48, 49)
    k2 = s.add_assignment(51332417, 68, 69)
    check(re.fullmatch(r"[0-9A-F]{32}", k1) is not None and k1 != k2, f"add_assignment's keys: {k1} {k2}")
    r = c.send("ga", [("c", "0"), ("min", "60000000")])
    check(r["code"] == 0 and r["w"] == "2" and r["k"] == k1 and (r["n"], r["sf"], r["ef"]) == ("66362159", "48", "49")
          and r["pnErrorDetail"] == "Server assigned trial factoring work.", f"ga with min: w=2 k n sf ef: {r}")
    r = c.send("ga", [("c", "0"), ("a", "0")])
    check(r["code"] == 0 and r["a"] == "1", f"ga a=0: the count held: {r}")
    r = c.send("ap", [("k", k1), ("p", "37.7083"), ("d", "3600"), ("e", "4156"), ("c", "0"), ("stage", "TF48")])
    check(r["code"] == 0 and s.assignments[k1]["progress"][-1]["stage"] == "TF48", f"ap: {r}")
    r = c.send("ar", ar_fields(66362159, 48, 49, aid=k1))
    check(r["code"] == 0 and re.search(r"CPU credit is [0-9.]+ GHz-days", r["pnErrorDetail"]) is not None,
          f"ar NF with its aid: credited: {r}")
    check(s.assignments[k1]["done"] and s.credited(66362159, 48, 49) == 1 and s.results[-1]["k"] == k1
          and s.results[-1]["ef"] == 49 and s.results[-1]["json"]["status"] == "NF", f"results: {s.results}")
    r = c.send("ar", ar_fields(66362159, 48, 49, aid=k1))
    check(r["code"] == 43 and s.credited(66362159, 48, 49) == 1, f"the same ar again: 43, credited once: {r}")
    for t, fields in (("ap", [("k", k1), ("p", "1.0000"), ("d", "3600"), ("e", "10"), ("c", "0")]),
                      ("au", [("k", k1)]), ("ap", [("k", "F" * 32), ("p", "0"), ("d", "1"), ("e", "1"), ("c", "0")])):
        r = c.send(t, fields)
        check(r["code"] == 43, f"{t} of a completed or unknown key: 43: {r}")
    f = 297892586972172587537
    r = c.send("ga", [("c", "0")])
    check(r["code"] == 0 and r["k"] == k2, f"ga: the second assignment: {r}")
    r = c.send("ar", ar_fields(51332417, 68, 69, (f,), kernel="barrett76_mul32_gs"))
    check(r["code"] == 0 and s.results[-1]["f"] == str(f) and s.results[-1]["r"] == 1, f"ar F, k=0: {r}")
    r = c.send("ar", ar_fields(51332417, 68, 69, (f,), kernel="barrett76_mul32_gs"))
    check(r["code"] == 0 and s.credited(51332417, 68, 69) == 1 and len(s.results) == 2,
          f"the keyless result again: not credited twice: {r}")
    r = c.send("ga", [("c", "0")])
    check(r["code"] == 40, f"ga with no assignment left: 40: {r}")
    r = c.send("ra", [("c", "0"), ("w", "2"), ("n", "100003"), ("sf", "74.0"), ("ef", "75")])
    k3 = r.get("k", "")
    check(r["code"] == 0 and re.fullmatch(r"[0-9A-F]{32}", k3) and s.assignments[k3]["n"] == 100003
          and s.assignments[k3]["guid"] == GUID and s.assignments[k3]["sf"] == 74, f"ra registers: k: {r}")
    r = c.send("au", [("k", k3)])
    check(r["code"] == 0 and s.assignments[k3]["done"], f"au: {r}")
    r = c.send("au", [("k", k3)])
    check(r["code"] == 43, f"au again: 43: {r}")
    r = c.send("ga", [("c", "0")])
    check(r["code"] == 40, f"an unreserved assignment is not handed out again: {r}")
    check(s.violations == [], f"no violations so far: {s.violations}")
    check(all(q["ok"] == (q["code"] == 0) for q in s.requests), "requests: ok is code 0")


def malformed_requests():
    """(what, raw query, code, parameter named)."""
    good_uc = query("uc", UC_FIELDS)
    k = "0123456789ABCDEF0123456789ABCDEF"
    ap = [("k", k), ("d", "3600"), ("e", "60"), ("c", "0")]
    p, f_not = 66362159, 1327243181  # 2 * 10 * p + 1, not a factor of M66362159
    out = [
        ("t before v", good_uc.replace("v=0.95&t=uc", "t=uc&v=0.95"), 7, "v"),
        ("g after a field", query("uc", [("hg", "0" * 32), ("g", GUID)] + UC_FIELDS[1:], g=None), 7, "g"),
        ("ss sh not last", query("ga", SALT + [("c", "0")], salt=False), 7, "ss"),
        ("missing ss", query("ga", [("c", "0"), SALT[1]], salt=False), 7, "ss"),
        ("missing sh", query("ga", [("c", "0"), SALT[0]], salt=False), 7, "sh"),
        ("no ss and sh", query("ga", [("c", "0")], salt=False), 7, "ss"),
        ("wrong sh", query("ga", [("c", "0"), SALT[0], ("sh", "ABCD" * 7 + "ABCE")], salt=False), 7, "sh"),
        ("wrong ss", query("ga", [("c", "0"), ("ss", "19191918"), SALT[1]], salt=False), 7, "ss"),
        ("upper-case guid", query("ga", [("c", "0")], g=GUID.upper()), 7, "g"),
        ("short guid", query("ga", [("c", "0")], g=GUID[:31]), 7, "g"),
        ("p with 5 decimals", query("ap", ap + [("p", "37.70833")]), 7, "p"),
        ("p = 100", query("ap", ap + [("p", "100.0000")]), 7, "p"),
        ("stage with p = 0", query("ap", ap + [("p", "0.0000"), ("stage", "TF73")]), 7, "stage"),
        ("a wrong checksum", query("ar", ar_fields(p, 48, 49, checksum="13816BE9")), 7, "m"),
        ("a factor not dividing M(p)", query("ar", ar_fields(p, 48, 49, (f_not,))), 7, "m"),
        ("result keys out of order", query("ar", ar_fields(p, 48, 49, order=(
            "exponent", "worktype", "status", "bithi", "bitlo", "rangecomplete", "program", "timestamp", "user",
            "computer", "os", "checksum"))), 7, "m"),
        ("r=1 for no factor", query("ar", [(n, "1" if n == "r" else v) for n, v in ar_fields(p, 48, 49)]), 7, "r"),
        ("ef for an incomplete range", query("ar", ar_fields(p, 48, 49, complete=False) + [("ef", "49")]), 7, "ef"),
        ("ar's k not the aid", query("ar", [(n, k if n == "k" else v) for n, v in ar_fields(p, 48, 49)]), 7, "k"),
        ("ra with w=12", query("ra", [("c", "0"), ("w", "12"), ("n", "100003"), ("sf", "74")]), 7, "w"),
        ("ra of a composite exponent", query("ra", [("c", "0"), ("w", "2"), ("n", "100001"), ("sf", "74")]), 7, "n"),
        ("uc without hg", query("uc", UC_FIELDS[1:]), 7, "hg"),
        ("uc with a short c", query("uc", [(n, "GPU" if n == "c" else v) for n, v in UC_FIELDS]), 7, "c"),
        ("uc with a 21-character u", query("uc", [(n, "u" * 21 if n == "u" else v) for n, v in UC_FIELDS]), 7, "u"),
        ("a parameter given twice", query("ga", [("c", "0"), ("c", "1")]), 7, "c"),
        ("an unknown parameter", query("ga", [("c", "0"), ("zz", "1")]), 7, "zz"),
        ("px not GIMPS", good_uc.replace("px=GIMPS", "px=gimps"), 7, "px"),
        ("version 0.94", good_uc.replace("v=0.95", "v=0.94"), 4, "v"),
        ("an unknown t", query("xx"), 5, "t"),
        ("bd", query("bd"), 5, "t"),
    ]
    return out


def test_malformed(c, s):
    handed = {k: a["guid"] for k, a in s.assignments.items()}
    for what, raw, code, param in malformed_requests():
        before = len(s.violations)
        r = c.send(None, raw=raw)
        check(r["code"] == code and f"parameter {param}:" in r["pnErrorDetail"],
              f"{what}: {code} naming {param}: {r}")
        check(len(s.violations) == before + 1 and f"parameter {param}:" in s.violations[-1],
              f"{what}: recorded: {s.violations[before:]}")
        check(s.requests[-1]["ok"] is False and s.requests[-1]["code"] == code, f"{what}: request record")
    check({k: a["guid"] for k, a in s.assignments.items()} == handed and len(s.results) == 2,
          "no malformed request changed the state")
    for what, url, data, status in (("a POST", c.s.url + "?" + query("ps", [("q", "1")]), b"x", 405),
                                    ("another path", c.s.url.replace("v5server/", "v5/") + "?" + query("ga"), None,
                                     404)):
        before = len(s.violations)
        got, _ = fetch(url, data=data)
        check(got == status and len(s.violations) == before + 1, f"{what}: HTTP {status}, recorded: {got}")
    s.violations.clear()


def test_failures(c, s):
    key = s.add_assignment(1000003, 60, 61)
    s.fail_next("ga", 3, times=2)
    s.fail_next("ap", 34, detail="CPU configuration mismatch: the test")
    r = c.send(None, raw=query("ga", [("c", "x")]))
    check(r["code"] == 7, f"a malformed ga uses up no injected error: {r}")
    for i in range(2):
        r = c.send("ga", [("c", "0")])
        check(r["code"] == 3 and r["pnErrorDetail"] == "Server busy" and s.assignments[key]["guid"] is None,
              f"injected 3, #{i + 1}: nothing handed out: {r}")
    r = c.send("ap", [("k", key), ("p", "0"), ("d", "1"), ("e", "1"), ("c", "0")])
    check(r["code"] == 34 and r["pnErrorDetail"] == "CPU configuration mismatch: the test", f"injected 34: {r}")
    r = c.send("ga", [("c", "0")])
    check(r["code"] == 0 and r["k"] == key, f"after the injected errors: the work: {r}")
    s.violations.clear()


def raw_get(s, t, fields, timeout=5):
    """(status, body) or the exception of a GET, for the broken replies."""
    try:
        return fetch(s.url + "?" + query(t, fields), timeout=timeout)
    except (OSError, http.client.HTTPException) as e:
        return None, e


def test_hostile(c, s):
    key = s.add_assignment(1000033, 60, 61)
    ga = [("c", "0")]
    expect = {
        "garbage": lambda st, b: st == 200 and b"pnErrorResult" not in b,
        "no_end": lambda st, b: st == 200 and b.startswith(b"pnErrorResult=") and b"==END==" not in b,
        "huge": lambda st, b: st == 200 and len(b) >= 10 * 1024 * 1024,
        "http500": lambda st, b: st == 500,
        "truncated": lambda st, b: st is None and isinstance(b, http.client.IncompleteRead),
        "no_error_field": lambda st, b: st == 200 and b"pnErrorResult" not in b and b.endswith(b"==END==\n")
        and b"pnErrorDetail=" in b,
        "binary": lambda st, b: st == 200 and b"\0" in b and b"pnErrorResult" not in b,
    }
    for mode, ok in expect.items():
        s.hostile_next("ga", mode)
        status, body = raw_get(s, "ga", ga)
        check(ok(status, body), f"hostile {mode}: {status} {str(body)[:120]}")
        check(s.assignments[key]["guid"] is None, f"hostile {mode}: nothing handed out")
        check(s.requests[-1]["ok"] is False, f"hostile {mode}: recorded as not ok")
    s.hostile_next("ga", "slow")
    status, err = raw_get(s, "ga", ga, timeout=0.5)
    check(status is None and isinstance(err, (socket.timeout, TimeoutError, urllib.error.URLError)),
          f"hostile slow: no answer within the client's timeout: {err!r}")
    s.hostile_next("ga", "cr_in_value")
    status, body = raw_get(s, "ga", ga)
    lines = body.replace(b"\r", b"\n").decode().split("\n") if status == 200 else []
    check(status == 200 and b"\r" in body and f"k={key}" in lines and lines[0] == "pnErrorResult=0",
          f"cr_in_value: a processed reply with a CR in a value: {body!r}")
    check(s.assignments[key]["guid"] == GUID, "cr_in_value: the work was handed out")
    check(s.violations == [], f"hostile replies: no violation: {s.violations}")


def test_down_up(c, s):
    url = s.url
    s.hostile_next("ps", "slow")
    slow = {}
    thread = threading.Thread(target=lambda: slow.update(r=raw_get(s, "ps", [("q", "1")], timeout=30)))
    thread.start()
    for _ in range(200):
        if any(q["t"] == "ps" and q["code"] is None for q in s.requests):
            break
        time.sleep(0.01)
    s.down()
    thread.join(10)
    check(not thread.is_alive() and slow.get("r", (1,))[0] is None, f"down ends a slow answer: {slow}")
    status, err = raw_get(s, "ps", [("q", "1")])
    check(status is None and isinstance(getattr(err, "reason", err), ConnectionRefusedError),
          f"down: connections refused: {err!r}")
    s.up()
    check(s.url == url, "up: the same URL")
    r = c.send("ga", [("c", "0"), ("a", "0")])
    check(r["code"] == 0, f"up: answered again, the registration kept: {r}")


def main():
    test_vectors()
    s = StandIn()
    c = Client(s)
    try:
        check(re.fullmatch(r"http://127\.0\.0\.1:[0-9]+/v5server/", s.url) is not None, f"url: {s.url}")
        test_registration(c, s)
        test_work(c, s)
        test_malformed(c, s)
        test_failures(c, s)
        test_hostile(c, s)
        test_down_up(c, s)
    finally:
        s.close()
    return check.report()


sys.exit(main())
