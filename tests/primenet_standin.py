"""A PrimeNet v5 server for tests of a trial-factoring client, on loopback.

    from primenet_standin import StandIn
    s = StandIn()                  # listening on 127.0.0.1, a free port
    s.url                          # http://127.0.0.1:PORT/v5server/
    key = s.add_assignment(66362159, 73, 74)
    ... run the client against s.url ...
    assert not s.violations
    s.close()

It answers the transactions a trial-factoring client makes (uc po ga ra ap
ar au ps) in PrimeNet's reply format: `name=value` lines ending in LF,
pnErrorResult first, pnErrorDetail second, then the fields, then ==END==.
Every request is checked as PrimeNet requires (tests/primenet_checks.py);
one that breaks a rule is answered with error 7 (4 for a wrong version, 5
for an unknown transaction), the detail naming the parameter, and recorded
in `violations`. A wrong path or method is answered 404 or 405 and recorded
too.

State and semantics:
- a GUID not registered through uc answers 30 (uc registers it);
- ga hands out the assignments added by add_assignment, in order (those
  whose exponent is within min..max when given; w=2 in the reply); 40 when
  none is left; `ga a=0` answers a=<count held by this GUID>, `a=N` the N-th;
- ra registers a keyless line and answers its new key k;
- ap records p, d, e and stage in the assignment's progress;
- ar checks the result JSON (key order, checksum, factors dividing M(p),
  r/n/sf/ef/f/k agreeing with it) and credits it; the key is completed when
  the result finds a factor, covers the assignment to its ef, or says d=1;
  an ar, ap or au of an unknown or completed key answers 43; a result
  already credited (the same JSON again) is not credited twice;
- au completes the key (its assignment is not handed out again);
- po with option fields stores them and raises the options counter od when
  they change; po without answers every option; uc and po answer od.

Injected failures, each for the next `times` valid transactions of a type
(a request that breaks a rule gets its error 7 instead and uses none up):
- fail_next(t, code, detail): answer pnErrorResult=code, nothing changes;
- hostile_next(t, mode): a broken reply, nothing changes (except
  "cr_in_value", a valid reply of a processed transaction whose detail
  holds a CR): "garbage" (no pnErrorResult), "no_end" (no ==END==), "huge"
  (10 MB), "slow" (no answer for 65 s, or until down or close), "http500",
  "truncated" (Content-Length above what is sent, then closed),
  "no_error_field", "binary" (bytes that are not text).
down() closes the listening socket (connections are refused) and gives up
the slow answers; up() listens on the same port again, state kept.

Stdlib only: http.server, urllib.parse, zlib, json, threading.
"""
import http.server
import os
import sys
import threading
import time
from urllib.parse import parse_qsl, urlsplit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import primenet_checks as checks  # noqa: E402

PATH = "/v5server/"
HOSTILE_MODES = ("garbage", "no_end", "huge", "slow", "http500", "truncated", "no_error_field", "cr_in_value",
                 "binary")
HUGE_BYTES = 10 * 1024 * 1024
SLOW_SECONDS = 65
# The meanings of PrimeNet's error codes (Prime95's primenet.h; 48 from AutoPrimeNet).
ERROR_TEXT = {
    0: "SUCCESS", 3: "Server busy", 4: "Invalid version", 5: "Invalid transaction type",
    7: "Invalid parameter", 9: "Access denied", 11: "Server database malfunction",
    13: "Server database full or broken", 21: "Invalid user", 30: "CPU not registered",
    31: "Obsolete client", 32: "Stale CPU info", 33: "CPU identity mismatch",
    34: "CPU configuration mismatch", 40: "No assignment", 43: "Invalid assignment key",
    44: "Invalid assignment type", 45: "Invalid result type", 46: "Invalid work type",
    47: "Work no longer needed", 48: "Illegal residue",
}
DEFAULT_OPTIONS = {"w": "12", "nw": "1", "DaysOfWork": "1", "DayMemory": "0", "NightMemory": "0",
                   "Priority": "1", "RunOnBattery": "1"}


def reply_text(code, detail, fields=()):
    """PrimeNet's reply: pnErrorResult, pnErrorDetail, the fields, ==END==, LF each."""
    lines = [f"pnErrorResult={code}", f"pnErrorDetail={detail}"]
    lines += [f"{name}={value}" for name, value in fields]
    return "".join(line + "\n" for line in lines + ["==END=="])


def tf_credit(p, lo, hi):
    """A GHz-days figure of the right size for the credit text (about
    2.4e12 candidates a GHz-day); PrimeNet's own formula is not needed."""
    return (2**hi - 2**lo) / (2 * p) / 2.4e12


class _Handler(http.server.BaseHTTPRequestHandler):
    server_version = "PrimeNetStandIn/1"

    def do_GET(self):
        self.server.standin._serve(self)

    def _wrong_method(self):
        self.server.standin._refuse_http(self, 405, f"method {self.command}: PrimeNet takes GET")

    do_POST = do_PUT = do_HEAD = do_DELETE = do_PATCH = do_OPTIONS = _wrong_method

    def log_message(self, *args):
        pass


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def handle_error(self, request, client_address):
        pass  # a client that hangs up mid-reply is not the server's error


class StandIn:
    def __init__(self):
        self._lock = threading.Lock()
        self.requests, self.violations, self.results = [], [], []
        self.assignments, self.computers = {}, {}
        self._options = {}  # guid -> {"od": n, option: text}
        self._failures, self._hostile = {}, {}  # t -> [(code, detail)], t -> [mode]
        self._key_counter = 0
        self._httpd = self._thread = None
        self._wake = threading.Event()
        self.port = 0
        self.up()
        self.url = f"http://127.0.0.1:{self.port}{PATH}"

    # ---- the server's life ----

    def up(self):
        """Listen (again, on the same port)."""
        with self._lock:
            if self._httpd is not None:
                return
            self._wake = threading.Event()
            httpd = _Server(("127.0.0.1", self.port), _Handler)
            httpd.standin = self
            self.port = httpd.server_address[1]
            self._httpd = httpd
            self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                            daemon=True)
            self._thread.start()

    def down(self):
        """Close the listening socket: connections are refused until up()."""
        with self._lock:
            httpd, thread, self._httpd = self._httpd, self._thread, None
            self._wake.set()  # the slow answers give up
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()
            thread.join()

    def close(self):
        self.down()

    # ---- what a test sets up and reads ----

    def add_assignment(self, exponent, sf, ef, key=None):
        """An assignment ga hands out; returns its key (32 upper hex)."""
        with self._lock:
            key = key if key is not None else self._new_key()
            self.assignments[key] = {"n": exponent, "sf": sf, "ef": ef, "guid": None, "progress": [],
                                     "done": False}
            return key

    def fail_next(self, t, code, detail=None, times=1):
        with self._lock:
            self._failures.setdefault(t, []).extend([(code, detail or ERROR_TEXT.get(code, "Error"))] * times)

    def hostile_next(self, t, mode, times=1):
        if mode not in HOSTILE_MODES:
            raise ValueError(f"unknown hostile mode {mode!r}: one of {', '.join(HOSTILE_MODES)}")
        with self._lock:
            self._hostile.setdefault(t, []).extend([mode] * times)

    def change_options(self, guid, **options):
        """Options changed on the web page: stored, and od raised."""
        with self._lock:
            opts = self._options.setdefault(guid, dict(DEFAULT_OPTIONS, od=1))
            opts.update({k: str(v) for k, v in options.items()})
            opts["od"] += 1

    def credited(self, exponent, bitlo, bithi):
        """How many accepted results cover exactly exponent from bitlo to bithi."""
        with self._lock:
            return sum(1 for r in self.results
                       if (r["json"]["exponent"], r["json"]["bitlo"], r["json"]["bithi"]) == (exponent, bitlo, bithi))

    def _new_key(self):
        self._key_counter += 1
        return f"{(self._key_counter * 0x9E3779B97F4A7C15 + os.getpid()) & (2**128 - 1):032X}"

    # ---- one request ----

    def _refuse_http(self, handler, status, why):
        with self._lock:
            self.violations.append(why)
            self.requests.append({"t": None, "params": {}, "ok": False, "code": status})
        self._send(handler, status, f"{why}\n".encode())

    def _serve(self, handler):
        parts = urlsplit(handler.path)
        if parts.path != PATH:
            self._refuse_http(handler, 404, f"path {parts.path}: PrimeNet's is {PATH}")
            return
        t = mode = None
        code, detail, fields = None, "", ()
        with self._lock:
            try:
                t, params, values = checks.check_query(parts.query)
                mode = _pop(self._hostile, t)
                if mode in (None, "cr_in_value"):
                    code, detail, fields = self._answer(t, params, values)
            except checks.Violation as v:
                if mode is not None:  # a broken request uses up no injected reply
                    self._hostile[t].insert(0, mode)
                params = _raw_params(parts.query)
                t, mode, code, detail, fields = params.get("t"), None, v.code, v.detail, ()
                self.violations.append(f"t={t}: {v.detail}")
            self.requests.append({"t": t, "params": params, "ok": code == 0, "code": code})
        if mode not in (None, "cr_in_value"):
            self._send_hostile(handler, mode)
            return
        if mode == "cr_in_value":
            detail += "\rand a second line"
        self._send(handler, 200, reply_text(code, detail, fields).encode("utf-8"))

    def _answer(self, t, params, values):
        """(code, detail, fields) of a valid request; the lock is held."""
        failure = _pop(self._failures, t)
        if failure is not None:
            return failure[0], failure[1], ()
        guid = params.get("g")
        if t == "uc":
            return self._uc(guid, params)
        if t == "ps":
            return 0, "SUCCESS", [("r", "PrimeNet v5 test server")]
        if guid not in self.computers:
            return 30, f"CPU not registered: {guid}", ()
        return getattr(self, "_" + t)(guid, values)

    # ---- the transactions (the lock is held) ----

    def _uc(self, guid, params):
        sent = {k: v for k, v in params.items() if k not in ("px", "v", "t", "ss", "sh")}
        held = self.computers[guid] = dict(self.computers.get(guid, {}), **sent)
        user = held.get("u", "ANONYMOUS")
        od = self._options.setdefault(guid, dict(DEFAULT_OPTIONS, od=1))["od"]
        return 0, "SUCCESS", [("g", guid), ("u", user), ("un", user), ("cn", held.get("cn", "")), ("od", od)]

    def _po(self, guid, values):
        opts = self._options.setdefault(guid, dict(DEFAULT_OPTIONS, od=1))
        sent = {k: str(values[k]) for k in checks.PO_OPTIONS if k in values}
        if any(opts[k] != v for k, v in sent.items()):
            opts.update(sent)
            opts["od"] += 1
        names = checks.PO_OPTIONS + ("Priority", "RunOnBattery")
        return 0, "SUCCESS", [(k, opts[k]) for k in names] + [("od", opts["od"])]

    def _ga(self, guid, values):
        held = [k for k, a in self.assignments.items() if a["guid"] == guid and not a["done"]]
        if values.get("a") == 0:
            return 0, "SUCCESS", [("a", len(held))]
        if "a" in values:
            if values["a"] > len(held):
                return 40, f"No assignment {values['a']}: this computer holds {len(held)}", ()
            key = held[values["a"] - 1]
        else:
            lo, hi = values.get("min", 0), values.get("max", checks.MAX_EXPONENT)
            free = [k for k, a in self.assignments.items()
                    if a["guid"] is None and not a["done"] and lo <= a["n"] <= hi]
            if not free:
                return 40, "No assignment available", ()
            key = free[0]
            self.assignments[key]["guid"] = guid
        a = self.assignments[key]
        # The fields of a real trial-factoring reply, in its order.
        fields = [("g", guid), ("k", key), ("A", 1), ("b", 2), ("n", a["n"]), ("c", -1), ("w", 2), ("sf", a["sf"]),
                  ("ef", a["ef"])]
        return 0, "Server assigned trial factoring work.", [f for f in fields if f[1] is not None]

    def _ra(self, guid, values):
        key = self._new_key()
        self.assignments[key] = {"n": values["n"], "sf": values["sf"], "ef": values.get("ef"), "guid": guid,
                                 "progress": [], "done": False}
        return 0, "SUCCESS", [("k", key)]

    def _live(self, key):
        a = self.assignments.get(key)
        return a if a is not None and not a["done"] else None

    def _ap(self, guid, values):
        a = self._live(values["k"])
        if a is None:
            return 43, f"Invalid assignment key: {values['k']}", ()
        a["progress"].append({"p": values["p"], "d": values["d"], "e": values["e"], "stage": values.get("stage")})
        return 0, "SUCCESS", ()

    def _au(self, guid, values):
        a = self._live(values["k"])
        if a is None:
            return 43, f"Invalid assignment key: {values['k']}", ()
        a["done"] = a["unreserved"] = True
        return 0, "SUCCESS", ()

    def _ar(self, guid, values):
        r = values["result"]
        a = None
        if values["k"] != "0":
            a = self._live(values["k"])
            if a is None:
                return 43, f"Invalid assignment key: {values['k']}", ()
            if a["n"] != r["exponent"]:
                raise checks.Violation("n", f"{r['exponent']} is not assignment {values['k']}'s exponent {a['n']}")
        if any(old["json"] == r for old in self.results):
            return 0, "Result already received: no more credit.", ()
        self.results.append({"k": values["k"], "r": int(values["r"]), "n": values["n"], "sf": values["sf"],
                             "ef": values.get("ef"), "f": values.get("f", ""), "json": r})
        if a is not None and (r["status"] == "F" or values["d"] == "1" or
                              (r["rangecomplete"] and (a["ef"] is None or r["bithi"] >= a["ef"]))):
            a["done"] = True
        credit = tf_credit(r["exponent"], r["bitlo"], r["bithi"])
        return 0, f"CPU credit is {credit:.4f} GHz-days.", ()

    # ---- sending ----

    def _send(self, handler, status, body, length=None):
        try:
            handler.send_response(status)
            handler.send_header("Content-Type", "text/plain; charset=utf-8")
            handler.send_header("Content-Length", str(len(body) if length is None else length))
            handler.end_headers()
            handler.wfile.write(body)
            handler.wfile.flush()
        except OSError:
            pass  # the client hung up

    def _send_hostile(self, handler, mode):
        ok = reply_text(0, "SUCCESS").encode()
        if mode == "slow":
            deadline = time.monotonic() + SLOW_SECONDS
            while time.monotonic() < deadline and not self._wake.wait(0.1):
                pass
            handler.close_connection = True
            return
        if mode == "huge":
            body = b"pnErrorResult=0\npnErrorDetail=SUCCESS\nx=" + b"A" * HUGE_BYTES + b"\n==END==\n"
        elif mode == "truncated":
            self._send(handler, 200, ok[:len(ok) // 2], length=len(ok))
            handler.close_connection = True
            return
        else:
            body = {
                "garbage": b"<!DOCTYPE html>\n<html><body>Error 0x1F: the service is restarting</body></html>\n",
                "no_end": ok[:-len(b"==END==\n")],
                "no_error_field": ok[ok.index(b"\n") + 1:],
                "binary": bytes((i * 37 + 11) % 256 for i in range(4096)),
                "http500": b"Internal Server Error\n",
            }[mode]
        self._send(handler, 500 if mode == "http500" else 200, body)


def _pop(queues, t):
    queue = queues.get(t)
    return queue.pop(0) if queue else None


def _raw_params(query):
    """The request's parameters for the record, however malformed."""
    try:
        return dict(parse_qsl(query, keep_blank_values=True, errors="replace"))
    except ValueError:
        return {"query": query}
