#!/usr/bin/env python3
"""A slow stratum v1 scrypt miner (hashlib), to prove the test pool by itself.

    mini_miner.py HOST PORT [--seconds S] [--user U] [--pass P] [--tls --fingerprint HEX]

Subscribes, authorizes, mines every job it is sent (set_difficulty applies to
the next job), submits shares, follows client.reconnect, answers get_version,
show_message, ping and unknown requests, and prints one JSON line at the end:
{"accepted": A, "rejected": R, "reasons": {...}}.
"""
import argparse
import asyncio
import hashlib
import json
import ssl
import sys
import time
from fractions import Fraction


def sha256d(b):
    return hashlib.sha256(hashlib.sha256(b).digest()).digest()


class Miner:
    def __init__(self, args):
        self.args = args
        self.host, self.port = args.host, args.port
        self.accepted = self.rejected = 0
        self.reasons = {}
        self.pending = {}
        self.next_id = 10
        self.job = None
        self.diff = self.next_diff = 1.0
        self.en1 = b""
        self.en2_size = 4
        self.en2 = 0
        self.reconnect_to = None
        self.messages = 0

    async def send(self, w, obj):
        w.write((json.dumps(obj) + "\n").encode())
        await w.drain()

    async def reader_loop(self, r, w):
        while True:
            line = await r.readline()
            if not line:
                return
            try:
                msg = json.loads(line)
                if not isinstance(msg, dict):
                    raise ValueError
            except ValueError:
                self.messages += 1
                continue
            m = msg.get("method")
            if m == "mining.notify":
                p = msg["params"]
                try:
                    job = {"id": p[0], "prev": bytes.fromhex(p[1]), "cb1": bytes.fromhex(p[2]),
                           "cb2": bytes.fromhex(p[3]), "branch": [bytes.fromhex(b) for b in p[4]],
                           "version": int(p[5], 16), "bits": int(p[6], 16),
                           "ntime": int(p[7], 16)}
                except (ValueError, IndexError):
                    continue
                self.diff = self.next_diff
                job["diff"] = self.diff
                self.job = job
            elif m == "mining.set_difficulty":
                self.next_diff = float(msg["params"][0])
            elif m == "mining.set_extranonce":
                self.en1 = bytes.fromhex(msg["params"][0])
                self.en2_size = int(msg["params"][1])
            elif m == "client.reconnect":
                self.reconnect_to = (msg["params"][0], int(msg["params"][1]))
                w.close()
                return
            elif m in ("client.get_version",):
                await self.send(w, {"id": msg["id"], "result": "mini_miner/1", "error": None})
            elif m in ("client.show_message", "mining.ping"):
                if msg.get("id") is not None:
                    await self.send(w, {"id": msg["id"], "result": True if m != "mining.ping"
                                        else "pong", "error": None})
            elif m is not None:
                if msg.get("id") is not None:
                    await self.send(w, {"id": msg["id"], "result": None,
                                        "error": [20, "unknown method", None]})
            else:
                what = self.pending.pop(msg.get("id"), None)
                if what == "submit":
                    if msg.get("result") is True:
                        self.accepted += 1
                    else:
                        self.rejected += 1
                        err = msg.get("error") or [0, "false"]
                        self.reasons[str(err[1])] = self.reasons.get(str(err[1]), 0) + 1
                elif what == "subscribe":
                    self.en1 = bytes.fromhex(msg["result"][1])
                    self.en2_size = msg["result"][2]

    async def mine(self, w, stop_at):
        nonce = 0
        cur = None
        while time.monotonic() < stop_at:
            job = self.job
            if job is None:
                await asyncio.sleep(0.05)
                continue
            if job is not cur:
                cur = job
                self.en2 += 1
                en2 = (self.en2 % (1 << (8 * self.en2_size))).to_bytes(self.en2_size, "little")
                root = sha256d(job["cb1"] + self.en1 + en2 + job["cb2"])
                for b in job["branch"]:
                    root = sha256d(root + b)
                prev = b"".join(job["prev"][i:i + 4][::-1] for i in range(0, 32, 4))
                head = (job["version"].to_bytes(4, "little") + prev + root +
                        job["ntime"].to_bytes(4, "little") + job["bits"].to_bytes(4, "little"))
                target = int(Fraction(0xffff << 224) / Fraction(job["diff"]))
                nonce = 0
            for _ in range(100):
                h = head + nonce.to_bytes(4, "little")
                d = hashlib.scrypt(h, salt=h, n=1024, r=1, p=1, dklen=32)
                if int.from_bytes(d, "little") <= target:
                    self.next_id += 1
                    self.pending[self.next_id] = "submit"
                    await self.send(w, {"id": self.next_id, "method": "mining.submit",
                                        "params": [self.args.user, job["id"], en2.hex(),
                                                   f"{job['ntime']:08x}", f"{nonce:08x}"]})
                nonce += 1
            await asyncio.sleep(0)

    async def session(self, stop_at):
        ctx = None
        if self.args.tls:
            ctx = ssl.create_default_context()
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        r, w = await asyncio.open_connection(self.host, self.port, ssl=ctx, limit=1 << 20)
        if ctx and self.args.fingerprint:
            der = w.get_extra_info("ssl_object").getpeercert(binary_form=True)
            if hashlib.sha256(der).hexdigest() != self.args.fingerprint.lower():
                raise SystemExit("certificate fingerprint mismatch")
        self.job = None
        self.pending = {1: "subscribe", 2: "authorize", 3: "xn"}
        await self.send(w, {"id": 1, "method": "mining.subscribe", "params": ["mini_miner/1"]})
        await self.send(w, {"id": 2, "method": "mining.authorize",
                            "params": [self.args.user, self.args.password]})
        await self.send(w, {"id": 3, "method": "mining.extranonce.subscribe", "params": []})
        rt = asyncio.create_task(self.reader_loop(r, w))
        mt = asyncio.create_task(self.mine(w, stop_at))
        done, _ = await asyncio.wait([rt, mt], return_when=asyncio.FIRST_COMPLETED)
        for t in (rt, mt):
            t.cancel()
        w.close()

    async def run(self):
        stop_at = time.monotonic() + self.args.seconds
        while time.monotonic() < stop_at:
            try:
                await self.session(stop_at)
            except (ConnectionError, OSError):
                await asyncio.sleep(0.5)
            if self.reconnect_to:
                self.host, self.port = self.reconnect_to
                self.reconnect_to = None
        print(json.dumps({"accepted": self.accepted, "rejected": self.rejected,
                          "reasons": self.reasons, "garbage_lines": self.messages}), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("host")
    ap.add_argument("port", type=int)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--user", default="mini")
    ap.add_argument("--pass", dest="password", default="x")
    ap.add_argument("--tls", action="store_true")
    ap.add_argument("--fingerprint")
    asyncio.run(Miner(ap.parse_args()).run())


if __name__ == "__main__":
    sys.exit(main())
