#!/usr/bin/env python3
"""A stratum v1 test pool for scrypt (Litecoin), backed by a litecoind; with
--algo sha256d, a pool for SHA-256d over the same jobs.

    stratum_pool.py --rpc URL --rpc-user U --rpc-pass P --port 0 --status-file F
                    [--tls-cert C --tls-key K [--tls-port 0]] [--difficulty D]
                    [--faults drop,garbage,...] [--fault-interval S]
                    [--reconnect-to HOST:PORT] [--payout ADDR] [--control-port 0]
                    [--min-block-interval S] [--require-pass P] [--en2-size N]
                    [--notify-interval S] [--redirect-after-auth] [--hold]
                    [--submit-delay S] [--algo scrypt|sha256d]

Jobs come from getblocktemplate (rules mweb,segwit), polled about once a
second: the pool's own coinbase (BIP34 height, 4-byte extranonce1 per
connection, 4-byte extranonce2, payout to --payout or a new address of the
node's wallet, the witness commitment recomputed here and checked against
the template's), the merkle branch, prevhash in stratum word order. Every
share is checked independently (hashlib.scrypt, scrypt pool difficulty
convention: diff-1 target 0xffff << 224; with --algo sha256d, hashlib's
double SHA-256 and Bitcoin's convention, 0xffff << 208) and answered with slush error codes (20 other, 21 stale/job not
found, 22 duplicate, 23 low difficulty, 24 unauthorized). Block candidates
are submitted with submitblock (coinbase with its witness, the template's
transactions, 0x01||mweb when present), then the job is refreshed with
clean_jobs=true. A SHA-256d pool submits no blocks: the node's chain is
scrypt's, so its shares are shares only.

Every change is written to the status file as JSON (atomic rename): ports,
fingerprint, totals and per-connection counts. "invalid" (low difficulty,
bad hash, malformed, unknown job, bad ntime/version) must stay zero for a
correct miner, and so must "stale_violations": shares for a job that had
been invalidated more than 1 s before the share arrived (shares racing a
job change inside that second count as "stale_race").

Faults (--faults a,b to repeat them every --fault-interval seconds, or one
at a time through the control port): drop, garbage, nonjson, oversized,
truncated, unknown, badhex, diff, storm, reconnect, extranonce, getversion,
showmessage, ping. The control port takes lines:
    fault NAME | faults A,B | difficulty D [clean] | reconnect HOST PORT
    | hold [on|off] | status | quit
("difficulty D clean": set_difficulty, then the current job again as a
clean job, so every job sent before is invalidated.)
("hold": submits are neither answered nor counted, so a test can stop the
miner with both sides' counts settled once status's submits_in_flight, those
that came in before the hold, is 0.)
and answers one line ("ok ..." or "error ...").
"""
import argparse
import asyncio
import hashlib
import json
import os
import ssl
import sys
import time
from fractions import Fraction

from pool_chain import ALGOS, RPC, Job, scrypt_pow, sha256d

FAULTS = ("drop", "garbage", "nonjson", "oversized", "truncated", "unknown", "badhex",
          "diff", "storm", "reconnect", "extranonce", "getversion", "showmessage", "ping")
INVALID_REASONS = ("low_difficulty", "malformed", "unknown_job", "bad_ntime", "bad_version",
                   "bad_extranonce")
STALE_GRACE = 1.0
VERSION_MASK = 0x1fffe000
# The header's proof-of-work hash and the difficulty-1 target of --algo
# (main sets them; share-check.py reads ALGOS from here).
POW, DIFF1 = ALGOS["scrypt"]


def diff_to_target(diff):
    """The difficulty-1 target of --algo / diff (scrypt: (0xffff << 208) * 65536 / diff)."""
    return int(Fraction(DIFF1) / Fraction(diff))


class ConnJob:
    def __init__(self, job, diff, prev_diff, en1, bad=False):
        self.job, self.diff, self.prev_diff, self.en1, self.bad = job, diff, prev_diff, en1, bad
        self.sent = time.monotonic()
        self.invalidated = None


def new_counts():
    return {"accepted": 0, "rejected": 0, "rejected_by_reason": {}, "rejected_by_code": {},
            "invalid": 0,
            "stale_race": 0, "stale_violations": 0, "duplicates": 0,
            "blocks_submitted": 0, "blocks_accepted": 0, "block_rejects": [],
            "accepted_easier_than_previous_diff": 0, "accepted_by_diff": {}}


class Conn:
    counter = 0

    def __init__(self, pool, reader, writer, tls):
        Conn.counter += 1
        self.n = Conn.counter
        self.pool, self.reader, self.writer, self.tls = pool, reader, writer, tls
        self.en1 = (0x10000000 + self.n + pool.en1_base).to_bytes(4, "big")
        self.en2_size = pool.args.en2_size
        self.diff = pool.difficulty
        self.prev_diff = None
        self.subscribed = self.authorized = self.xn_subscribed = False
        self.version_mask = 0
        self.jobs = {}
        self.seen = set()
        self.pending = {}
        self.next_req = 0
        self.closed = False
        self.dropping = False
        self.wlock = asyncio.Lock()  # one line at a time, never interleaved
        self.counts = new_counts()
        self.info = {"n": self.n, "tls": tls, "agent": None, "user": None, "suggested": None,
                     "client_replies": {}, "client_errors": [], "connected_at": time.time(),
                     "closed_at": None, "events": []}

    # --- sending ---------------------------------------------------------
    async def send_raw(self, data, locked=False):
        if self.closed:
            return False
        if not locked:
            async with self.wlock:
                return await self.send_raw(data, locked=True)
        try:
            self.writer.write(data)
            await self.writer.drain()
            return True
        except (ConnectionError, OSError):
            self.closed = True
            return False

    async def send(self, obj):
        return await self.send_raw((json.dumps(obj) + "\n").encode())

    async def request(self, method, params):
        self.next_req += 1
        rid = f"s{self.next_req}"
        self.pending[rid] = method
        self.info["client_replies"].setdefault(method, {"sent": 0, "result": 0, "error": 0})
        self.info["client_replies"][method]["sent"] += 1
        await self.send({"id": rid, "method": method, "params": params})

    def event(self, what):
        self.info["events"].append(f"{time.time():.3f} {what}")
        self.info["events"] = self.info["events"][-40:]

    async def send_job(self, job, clean, ntime=None, bad_hex=False):
        if not (self.subscribed and self.authorized):
            return
        now = time.monotonic()
        if clean:
            for cj in self.jobs.values():
                if cj.invalidated is None:
                    cj.invalidated = now
        Job.counter += 1
        job_id = f"{Job.counter:x}" if (ntime is not None or bad_hex) else job.id
        if job_id in self.jobs:  # the same job again (e.g. after set_extranonce)
            Job.counter += 1
            job_id = f"{job.id}-{Job.counter:x}"
        cj = ConnJob(job, self.diff, self.prev_diff, self.en1, bad=bad_hex)
        self.jobs[job_id] = cj
        if len(self.jobs) > 400:
            for k in list(self.jobs)[:100]:
                del self.jobs[k]
        await self.send({"id": None, "method": "mining.notify",
                         "params": job.notify_params(job_id, clean, ntime, bad_hex)})

    async def set_difficulty(self, diff):
        self.prev_diff, self.diff = self.diff, diff
        await self.send({"id": None, "method": "mining.set_difficulty", "params": [diff]})

    # --- receiving -------------------------------------------------------
    async def run(self):
        # Lines are read as they arrive and handled in order by a second task,
        # so a slow pool (--submit-delay) still knows when each share came in:
        # a share is judged stale by its arrival, not by when the pool got to it.
        inbox = asyncio.Queue()
        handler = asyncio.ensure_future(self.handle_inbox(inbox))
        try:
            while not self.closed:
                try:
                    line = await self.reader.readline()
                except (ValueError, asyncio.LimitOverrunError):
                    self.info["client_errors"].append("line too long")
                    break
                except (ConnectionError, OSError):
                    break
                if not line:
                    break
                line = line.strip()
                if not line:
                    continue
                try:
                    msg = json.loads(line)
                    if not isinstance(msg, dict):
                        raise ValueError("not an object")
                except ValueError:
                    self.info["client_errors"].append(f"bad json: {line[:100]!r}")
                    continue
                await inbox.put((time.monotonic(), msg))
            await inbox.put(None)
            await handler
        finally:
            handler.cancel()
            self.closed = True
            self.info["closed_at"] = time.time()
            try:
                self.writer.close()
            except Exception:
                pass
            self.pool.changed()

    async def handle_inbox(self, inbox):
        try:
            while True:
                item = await inbox.get()
                if item is None or self.closed:
                    return
                self.received_at, msg = item
                await self.handle(msg)
        except (ConnectionError, OSError):
            pass
        finally:  # a handler that ends (an error, a dropped connection) ends the reading too
            self.closed = True
            try:
                self.writer.close()
            except Exception:
                pass

    async def reply(self, rid, result=None, error=None):
        return await self.send({"id": rid, "result": result, "error": error})

    async def handle(self, msg):
        method = msg.get("method")
        rid = msg.get("id")
        params = msg.get("params") or []
        if method is None:
            m = self.pending.pop(rid, None)
            if m is not None:
                r = self.info["client_replies"][m]
                r["error" if msg.get("error") else "result"] += 1
                self.pool.changed()
            return
        if method == "mining.configure":
            result = {}
            try:
                exts, opts = params[0], params[1]
                if "version-rolling" in exts:
                    mask = int(opts.get("version-rolling.mask", "ffffffff"), 16)
                    self.version_mask = mask & VERSION_MASK
                    result["version-rolling"] = True
                    result["version-rolling.mask"] = f"{self.version_mask:08x}"
                for e in exts:
                    if e != "version-rolling":
                        result[e] = False
            except (IndexError, TypeError, ValueError, AttributeError):
                await self.reply(rid, None, [20, "bad configure", None])
                return
            await self.reply(rid, result)
        elif method == "mining.subscribe":
            self.subscribed = True
            if params and isinstance(params[0], str):
                self.info["agent"] = params[0]
            sid = f"{self.n:08x}"
            await self.reply(rid, [[["mining.set_difficulty", sid], ["mining.notify", sid]],
                                   self.en1.hex(), self.en2_size])
        elif method == "mining.extranonce.subscribe":
            self.xn_subscribed = True
            await self.reply(rid, True)
        elif method == "mining.authorize":
            user = params[0] if params else None
            pw = params[1] if len(params) > 1 else None
            self.info["user"] = user
            self.pool.changed()
            ok = self.pool.args.require_pass is None or pw == self.pool.args.require_pass
            if not self.subscribed:
                await self.reply(rid, None, [25, "not subscribed", None])
                return
            await self.reply(rid, ok, None if ok else [24, "unauthorized worker", None])
            if ok and not self.authorized:
                self.authorized = True
                await self.set_difficulty(self.diff)
                if self.pool.job:
                    await self.send_job(self.pool.job, True)
                if self.pool.args.redirect_after_auth:  # to itself, every time
                    self.event("redirect after authorize")
                    await self.send({"id": None, "method": "client.reconnect",
                                     "params": ["127.0.0.1", self.pool.ports["stratum"], 0]})
        elif method == "mining.suggest_difficulty":
            self.info["suggested"] = params[0] if params else None
            await self.reply(rid, True)
        elif method == "mining.submit":
            await self.submit(rid, params)
        elif method == "mining.get_transactions":
            await self.reply(rid, [])
        else:
            await self.reply(rid, None, [20, f"unknown method {method}", None])
        self.pool.changed()

    def count_reject(self, reason):
        for c in (self.counts, self.pool.totals):
            c["rejected"] += 1
            c["rejected_by_reason"][reason] = c["rejected_by_reason"].get(reason, 0) + 1
            if reason in INVALID_REASONS:
                c["invalid"] += 1

    def bump(self, key, n=1):
        self.counts[key] += n
        self.pool.totals[key] += n

    async def reject(self, rid, code, reason, text):
        self.count_reject(reason)
        for c in (self.counts, self.pool.totals):
            c["rejected_by_code"][str(code)] = c["rejected_by_code"].get(str(code), 0) + 1
        self.event(f"reject {reason}: {text}")
        await self.reply(rid, None, [code, text, None])
        self.pool.changed()

    async def submit(self, rid, params):
        if self.dropping or self.pool.hold:
            # Neither answered nor counted: the miner cannot count it either.
            self.pool.totals["held"] = self.pool.totals.get("held", 0) + 1
            return
        # A submit that came in before a hold is still answered (a block
        # candidate waits for the node): status shows it until it is.
        self.pool.submits_in_flight += 1
        self.pool.changed()
        try:
            if self.pool.args.submit_delay:  # a slow pool: one submit at a time per connection
                await asyncio.sleep(self.pool.args.submit_delay)
            await self.check_submit(rid, params)
        finally:
            self.pool.submits_in_flight -= 1
            self.pool.changed()

    async def check_submit(self, rid, params):
        if not self.authorized:
            return await self.reject(rid, 24, "unauthorized", "unauthorized worker")
        try:
            if len(params) not in (5, 6) or not all(isinstance(p, str) for p in params):
                raise ValueError("params")
            _, job_id, en2_hex, ntime_hex, nonce_hex = params[:5]
            if len(en2_hex) != 2 * self.en2_size or len(ntime_hex) != 8 or len(nonce_hex) != 8:
                raise ValueError("field lengths")
            en2 = bytes.fromhex(en2_hex)
            ntime = int(ntime_hex, 16)
            nonce = int(nonce_hex, 16)
            vbits = int(params[5], 16) if len(params) == 6 else None
        except ValueError as e:
            return await self.reject(rid, 20, "malformed", f"malformed submit ({e})")
        cj = self.jobs.get(job_id)
        now = self.received_at  # when the share arrived (run())
        if cj is None:
            return await self.reject(rid, 21, "unknown_job", "job not found")
        if cj.bad:
            return await self.reject(rid, 20, "unknown_job", "share for a job with invalid hex")
        if cj.invalidated is not None:
            late = now - cj.invalidated
            if late > STALE_GRACE:
                self.bump("stale_violations")
                self.event(f"stale violation: job {job_id} invalidated {late:.2f} s before")
                return await self.reject(rid, 21, "stale", "stale share (job not found)")
            self.bump("stale_race")
            return await self.reject(rid, 21, "stale", "stale share (job not found)")
        job = cj.job
        version = job.version
        if vbits is not None:
            if vbits & ~self.version_mask:
                return await self.reject(rid, 20, "bad_version", "version bits outside mask")
            version = (version & ~self.version_mask) | (vbits & self.version_mask)
        if ntime < job.mintime or ntime > time.time() + 7000:
            return await self.reject(rid, 20, "bad_ntime", f"ntime {ntime} out of range")
        key = (cj.en1, en2, ntime, nonce, version, id(job))
        if key in self.seen:
            self.bump("duplicates")
            return await self.reject(rid, 22, "duplicate", "duplicate share")
        self.seen.add(key)
        header = job.header(cj.en1, en2, version, ntime, nonce)
        h = int.from_bytes(POW(header), "little")
        if h > diff_to_target(cj.diff):
            return await self.reject(rid, 23, "low_difficulty",
                                     f"low difficulty share (diff {cj.diff})")
        block_result = "none"
        if POW is scrypt_pow and h <= job.block_target:
            block_result = await self.pool.submit_block(job, header, cj.en1, en2, self)
            if block_result == "stale":
                # The job went stale while we waited for another block's submission.
                self.bump("stale_race")
                return await self.reject(rid, 21, "stale", "stale share (job not found)")
        if await self.reply(rid, True):
            self.bump("accepted")
            d = str(cj.diff)
            for c in (self.counts, self.pool.totals):
                c["accepted_by_diff"][d] = c["accepted_by_diff"].get(d, 0) + 1
            if cj.prev_diff is not None and cj.prev_diff > cj.diff and \
                    h > diff_to_target(cj.prev_diff):
                self.bump("accepted_easier_than_previous_diff")
        self.pool.changed()


class Pool:
    def __init__(self, args):
        self.args = args
        self.rpc = RPC(args.rpc, args.rpc_user, args.rpc_pass, args.rpc_cookie)
        self.difficulty = args.difficulty
        self.conns = []
        self.job = None
        self.totals = new_counts()
        self.ports = {}
        self.fingerprint = None
        self.commitment_mismatches = 0
        self.templates = 0
        self.auto_faults = [f for f in (args.faults.split(",") if args.faults else []) if f]
        self.faults_done = {}
        self.lock = asyncio.Lock()
        self.dirty = True
        self.last_block = 0.0
        self.en1_base = args.en1_base
        self.errors = []
        self.hold = args.hold
        self.submits_in_flight = 0  # received, not yet answered

    def changed(self):
        self.dirty = True

    def status(self):
        return {"pid": os.getpid(), "ports": self.ports, "fingerprint": self.fingerprint,
                "algo": self.args.algo, "difficulty": self.difficulty, "totals": self.totals,
                "height": self.job.height if self.job else None,
                "templates": self.templates, "commitment_mismatches": self.commitment_mismatches,
                "submits_in_flight": self.submits_in_flight,
                "faults_done": self.faults_done, "auto_faults": self.auto_faults,
                "errors": self.errors[-20:],
                "connections": [dict(c.info, counts=c.counts, closed=c.closed,
                                     en1=c.en1.hex(), difficulty=c.diff) for c in self.conns]}

    def write_status(self):
        if not self.args.status_file:
            return
        tmp = self.args.status_file + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.status(), f, indent=1)
        os.replace(tmp, self.args.status_file)
        self.dirty = False

    async def status_writer(self):
        while True:
            if self.dirty:
                self.write_status()
            await asyncio.sleep(0.05)

    # --- templates and blocks ------------------------------------------
    async def refresh(self, force_clean=False):
        tmpl = await asyncio.to_thread(self.rpc.call, "getblocktemplate",
                                       {"rules": ["mweb", "segwit"]})
        self.templates += 1
        old = self.job
        new_prev = old is None or tmpl["previousblockhash"] != old.prev_display
        changed_txs = old is not None and \
            [t["txid"] for t in tmpl["transactions"]] != [t["txid"] for t in old.tmpl["transactions"]]
        if not (new_prev or changed_txs or force_clean):
            return
        job = Job(tmpl, self.payout_spk)
        if job.commitment_ok is False:
            self.commitment_mismatches += 1
            self.errors.append(f"witness commitment mismatch at height {job.height}")
        self.job = job
        clean = new_prev or force_clean
        for c in list(self.conns):
            if not c.closed:
                await c.send_job(job, clean)
        self.changed()

    async def poller(self):
        while True:
            await asyncio.sleep(1.0)
            try:
                async with self.lock:
                    await self.refresh()
            except Exception as e:
                self.errors.append(f"getblocktemplate: {e}")
                self.changed()

    async def submit_block(self, job, header, en1, en2, conn):
        """Returns 'accepted', 'rejected', 'skipped' or 'stale'."""
        async with self.lock:
            if self.job is not job and self.job.prev_display != job.prev_display:
                return "stale"
            if time.monotonic() - self.last_block < self.args.min_block_interval:
                return "skipped"
            self.last_block = time.monotonic()
            blk = job.block(header, en1, en2)
            conn.bump("blocks_submitted")
            try:
                res = await asyncio.to_thread(self.rpc.call, "submitblock", blk.hex())
            except Exception as e:
                res = f"rpc error {e}"
            if res is None:
                conn.bump("blocks_accepted")
                conn.event(f"block accepted at height {job.height}")
            else:
                for c in (conn.counts, self.totals):
                    c["block_rejects"].append(f"{job.height}: {res}")
                conn.event(f"block rejected: {res}")
            try:
                await self.refresh(force_clean=True)
            except Exception as e:
                self.errors.append(f"getblocktemplate after block: {e}")
            self.changed()
            return "accepted" if res is None else "rejected"

    # --- faults ----------------------------------------------------------
    async def fault(self, name, arg=None):
        if name not in FAULTS:
            raise ValueError(f"unknown fault {name}")
        self.faults_done[name] = self.faults_done.get(name, 0) + 1
        for c in [c for c in self.conns if not c.closed and c.authorized]:
            c.event(f"fault {name}")
            await self.fault_one(c, name, arg)
        self.changed()

    async def fault_one(self, c, name, arg):
        if name == "drop":
            c.dropping = True  # answers already written get out first
            await asyncio.sleep(0.05)
            c.closed = True
            try:
                c.writer.transport.abort()
            except Exception:
                pass
        elif name == "garbage":
            await c.send_raw(b"\x00\xffgarbage \x01\x02 <html>not stratum</html>\n")
        elif name == "nonjson":
            await c.send_raw(b"{\"id\": null, \"method\": \"mining.notify\", \"params\": [\n"
                             b"[1, 2, 3]\n\"just a string\"\nnull\n{}\n")
        elif name == "oversized":
            await c.send_raw(b"{\"id\":null,\"method\":\"client.show_message\",\"params\":[\"" +
                             b"x" * 200_000 + b"\"]}\n")
        elif name == "truncated":
            async with c.wlock:  # nothing else may land inside the broken line
                await c.send_raw(b"{\"id\":null,\"method\":\"mining.set_difficulty\",\"par",
                                 locked=True)
                await asyncio.sleep(0.3)
                await c.send_raw(b"\n", locked=True)
        elif name == "unknown":
            await c.request("mining.frobnicate", ["x", 1])
        elif name == "badhex":
            if self.job:
                await c.send_job(self.job, False, bad_hex=True)
                await asyncio.sleep(0.2)
                await c.send_job(self.job, True)
        elif name == "diff":
            new = arg if arg is not None else (c.diff * 2 if c.diff <= self.difficulty else
                                               self.difficulty)
            await c.set_difficulty(new)
            if self.job:
                await c.send_job(self.job, False, ntime=self.job.ntime + 1)
        elif name == "storm":
            if self.job:
                for i in range(20):
                    await c.send_job(self.job, True, ntime=self.job.ntime + i % 2)
                    await asyncio.sleep(0.05)
        elif name == "reconnect":
            target = arg or self.args.reconnect_to
            if target:
                host, port = target.rsplit(":", 1)
                await c.send({"id": None, "method": "client.reconnect",
                              "params": [host, int(port), 0]})
        elif name == "extranonce":
            if c.xn_subscribed or self.args.force_extranonce:
                c.en1 = (int.from_bytes(c.en1, "big") + 0x01000000 & 0xffffffff).to_bytes(4, "big")
                await c.send({"id": None, "method": "mining.set_extranonce",
                              "params": [c.en1.hex(), c.en2_size]})
                if self.job:
                    await c.send_job(self.job, True)
            else:
                c.event("set_extranonce skipped: client did not subscribe")
        elif name == "getversion":
            await c.request("client.get_version", [])
        elif name == "showmessage":
            await c.send({"id": None, "method": "client.show_message",
                          "params": ["hello from the test pool"]})
            await c.request("client.show_message", ["a message that wants a reply"])
        elif name == "ping":
            await c.request("mining.ping", [])

    async def notify_loop(self):
        """--notify-interval: the current job again under a new id (not
        clean, ntime + 1) every so often, as pools refresh jobs."""
        if not self.args.notify_interval:
            return
        while True:
            await asyncio.sleep(self.args.notify_interval)
            for c in [c for c in self.conns if not c.closed and c.authorized]:
                if self.job:
                    await c.send_job(self.job, False, ntime=self.job.ntime + 1)

    async def fault_loop(self):
        i = 0
        while True:
            await asyncio.sleep(self.args.fault_interval)
            if self.auto_faults:
                name = self.auto_faults[i % len(self.auto_faults)]
                i += 1
                try:
                    await self.fault(name)
                except Exception as e:
                    self.errors.append(f"fault {name}: {e!r}")

    # --- control port ---------------------------------------------------
    async def control(self, reader, writer):
        try:
            while True:
                line = await reader.readline()
                if not line:
                    break
                words = line.decode(errors="replace").split()
                if not words:
                    continue
                try:
                    reply = await self.control_cmd(words)
                except Exception as e:
                    reply = f"error {e}"
                writer.write((reply + "\n").encode())
                await writer.drain()
                if words[0] == "quit":
                    self.write_status()
                    os._exit(0)
        finally:
            writer.close()

    async def control_cmd(self, w):
        if w[0] == "fault":
            await self.fault(w[1], float(w[2]) if len(w) > 2 and w[1] == "diff" else None)
            return f"ok fault {w[1]}"
        if w[0] == "faults":
            self.auto_faults = [f for f in (w[1].split(",") if len(w) > 1 else []) if f]
            for f in self.auto_faults:
                if f not in FAULTS:
                    raise ValueError(f"unknown fault {f}")
            return "ok"
        if w[0] == "difficulty":
            self.difficulty = float(w[1])
            clean = len(w) > 2 and w[2] == "clean"
            for c in [c for c in self.conns if not c.closed and c.authorized]:
                await c.set_difficulty(self.difficulty)
                if self.job:
                    await c.send_job(self.job, clean, ntime=self.job.ntime + 1)
            self.changed()
            return "ok"
        if w[0] == "reconnect":
            await self.fault("reconnect", f"{w[1]}:{w[2]}")
            return "ok"
        if w[0] == "hold":
            self.hold = len(w) < 2 or w[1] != "off"
            return f"ok hold {'on' if self.hold else 'off'}"
        if w[0] == "status":
            return json.dumps(self.status())
        if w[0] == "quit":
            return "ok bye"
        raise ValueError(f"unknown command {w[0]}")

    # --- start -----------------------------------------------------------
    async def on_client(self, reader, writer, tls=False):
        c = Conn(self, reader, writer, tls)
        self.conns.append(c)
        self.changed()
        await c.run()

    async def main(self):
        if self.args.payout:
            addr = self.args.payout
        else:
            addr = await asyncio.to_thread(self.rpc.call, "getnewaddress", wallet=self.args.wallet)
        info = await asyncio.to_thread(self.rpc.call, "validateaddress", addr)
        if not info.get("isvalid"):
            raise SystemExit(f"stratum_pool: bad payout address {addr}")
        self.payout_spk = bytes.fromhex(info["scriptPubKey"])
        self.payout = addr
        await self.refresh(force_clean=True)
        limit = 64 * 1024
        srv = await asyncio.start_server(self.on_client, "127.0.0.1", self.args.port, limit=limit)
        self.ports["stratum"] = srv.sockets[0].getsockname()[1]
        servers = [srv]
        if self.args.tls_cert:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(self.args.tls_cert, self.args.tls_key)
            tsrv = await asyncio.start_server(lambda r, w: self.on_client(r, w, True),
                                              "127.0.0.1", self.args.tls_port, ssl=ctx,
                                              limit=limit)
            self.ports["tls"] = tsrv.sockets[0].getsockname()[1]
            der = ssl.PEM_cert_to_DER_cert(open(self.args.tls_cert).read())
            self.fingerprint = hashlib.sha256(der).hexdigest()
            servers.append(tsrv)
        csrv = await asyncio.start_server(self.control, "127.0.0.1", self.args.control_port)
        self.ports["control"] = csrv.sockets[0].getsockname()[1]
        servers.append(csrv)
        self.write_status()
        print(json.dumps({"ports": self.ports, "fingerprint": self.fingerprint,
                          "payout": self.payout}), flush=True)
        await asyncio.gather(self.poller(), self.status_writer(), self.fault_loop(), self.notify_loop(),
                             *(s.serve_forever() for s in servers))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rpc", required=True)
    ap.add_argument("--rpc-user")
    ap.add_argument("--rpc-pass")
    ap.add_argument("--rpc-cookie")
    ap.add_argument("--wallet", default="w")
    ap.add_argument("--payout")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--tls-cert")
    ap.add_argument("--tls-key")
    ap.add_argument("--tls-port", type=int, default=0)
    ap.add_argument("--control-port", type=int, default=0)
    ap.add_argument("--difficulty", type=float, default=0.05)
    ap.add_argument("--faults", default="")
    ap.add_argument("--fault-interval", type=float, default=4.0)
    ap.add_argument("--reconnect-to")
    ap.add_argument("--force-extranonce", action="store_true",
                    help="send set_extranonce even to a client that did not subscribe")
    ap.add_argument("--min-block-interval", type=float, default=0.0,
                    help="submit at most one block candidate per this many seconds")
    ap.add_argument("--require-pass")
    ap.add_argument("--en2-size", type=int, default=4, help="extranonce2 bytes (subscribe reply)")
    ap.add_argument("--notify-interval", type=float, default=0.0,
                    help="resend the current job under a new id this often (0: only on changes)")
    ap.add_argument("--redirect-after-auth", action="store_true",
                    help="answer every authorize with client.reconnect to this very pool")
    ap.add_argument("--submit-delay", type=float, default=0.0,
                    help="seconds spent on each submit before checking it (a slow pool)")
    ap.add_argument("--hold", action="store_true", help="start with hold on (submits unanswered)")
    ap.add_argument("--en1-base", type=lambda s: int(s, 0), default=0,
                    help="offset of this instance's extranonce1 values")
    ap.add_argument("--status-file")
    ap.add_argument("--algo", choices=sorted(ALGOS), default="scrypt",
                    help="how shares are checked (sha256d: no blocks are submitted)")
    args = ap.parse_args()
    global POW, DIFF1
    POW, DIFF1 = ALGOS[args.algo]
    for f in (args.faults.split(",") if args.faults else []):
        if f and f not in FAULTS:
            ap.error(f"unknown fault {f} (known: {', '.join(FAULTS)})")
    try:
        asyncio.run(Pool(args).main())
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
