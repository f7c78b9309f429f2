"""The chain side of the test pool (stratum_pool.py): the node's RPC, the
hashes and difficulty targets of both algorithms, and a getblocktemplate
template turned into a stratum job (coinbase, witness commitment, merkle
branch, header and block)."""
import base64
import hashlib
import json
import time
import urllib.error
import urllib.request


def sha256d(b):
    return hashlib.sha256(hashlib.sha256(b).digest()).digest()


def scrypt_pow(header):
    return hashlib.scrypt(header, salt=header, n=1024, r=1, p=1, dklen=32)


# Per --algo: the header's proof-of-work hash and the difficulty-1 target.
ALGOS = {"scrypt": (scrypt_pow, 0xffff << 224), "sha256d": (sha256d, 0xffff << 208)}


def varint(n):
    if n < 0xfd:
        return bytes([n])
    if n <= 0xffff:
        return b"\xfd" + n.to_bytes(2, "little")
    if n <= 0xffffffff:
        return b"\xfe" + n.to_bytes(4, "little")
    return b"\xff" + n.to_bytes(8, "little")


def push(data):
    assert len(data) < 0x4c
    return bytes([len(data)]) + data


def bip34_height(h):
    """CScript() << h: OP_0, OP_1..OP_16, or the minimal CScriptNum push."""
    if h == 0:
        return b"\x00"
    if 1 <= h <= 16:
        return bytes([0x50 + h])
    n = h.to_bytes((h.bit_length() + 7) // 8, "little")
    if n[-1] & 0x80:
        n += b"\x00"
    return push(n)


def merkle_root(leaves):
    level = list(leaves)
    if not level:
        return b"\x00" * 32
    while len(level) > 1:
        if len(level) % 2:
            level.append(level[-1])
        level = [sha256d(level[i] + level[i + 1]) for i in range(0, len(level), 2)]
    return level[0]


def merkle_branch(txids):
    """Branch for leaf 0 (the coinbase) given the other leaves, internal order."""
    branch = []
    level = [None] + list(txids)
    while len(level) > 1:
        branch.append(level[1])
        if len(level) % 2:
            level.append(level[-1])
        level = [None] + [sha256d(level[i] + level[i + 1]) for i in range(2, len(level), 2)]
    return branch


def bits_to_target(bits):
    exp, mant = bits >> 24, bits & 0x7fffff
    return mant << (8 * (exp - 3)) if exp >= 3 else mant >> (8 * (3 - exp))


def stratum_prevhash(display_hex):
    internal = bytes.fromhex(display_hex)[::-1]
    return b"".join(internal[i:i + 4][::-1] for i in range(0, 32, 4)).hex()


class RPC:
    def __init__(self, url, user, password, cookie=None):
        self.url, self.user, self.password, self.cookie = url, user, password, cookie

    def call(self, method, *params, wallet=None):
        user, password = self.user, self.password
        if self.cookie:
            user, password = open(self.cookie).read().strip().split(":", 1)
        url = self.url + (f"/wallet/{wallet}" if wallet else "")
        body = json.dumps({"jsonrpc": "1.0", "id": "pool", "method": method,
                           "params": list(params)}).encode()
        req = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
        req.add_header("Authorization", "Basic " +
                       base64.b64encode(f"{user}:{password}".encode()).decode())
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                reply = json.loads(r.read())
        except urllib.error.HTTPError as e:
            reply = json.loads(e.read() or b"{}")
        if reply.get("error"):
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply["result"]


class Job:
    """One template turned into a stratum job (shared by every connection)."""
    counter = 0

    def __init__(self, tmpl, payout_spk, tag=b"/lode-test-pool/"):
        Job.counter += 1
        self.id = f"{Job.counter:x}"
        self.tmpl = tmpl
        self.height = tmpl["height"]
        self.prev_display = tmpl["previousblockhash"]
        self.version = tmpl["version"]
        self.bits = int(tmpl["bits"], 16)
        self.ntime = tmpl["curtime"]
        self.mintime = tmpl.get("mintime", 0)
        self.block_target = bits_to_target(self.bits)
        txs = tmpl["transactions"]
        self.txdata = [bytes.fromhex(t["data"]) for t in txs]
        txids = [bytes.fromhex(t["txid"])[::-1] for t in txs]
        self.branch = merkle_branch(txids)
        self.txids = txids
        self.mweb = tmpl.get("mweb")
        # Outputs: the payout, then the witness commitment (recomputed here).
        outputs = [(tmpl["coinbasevalue"], payout_spk)]
        self.commitment_ok = None
        dwc = tmpl.get("default_witness_commitment")
        if dwc is not None:
            wtxids = [b"\x00" * 32] + [bytes.fromhex(t["hash"])[::-1] for t in txs]
            mine = "6a24aa21a9ed" + sha256d(merkle_root(wtxids) + b"\x00" * 32).hex()
            self.commitment_ok = (mine == dwc)
            outputs.append((0, bytes.fromhex(mine)))
        self.has_witness = dwc is not None
        height_push = bip34_height(self.height)
        script_len = len(height_push) + 1 + 8 + len(push(tag))
        self.coinb1 = (b"\x01\x00\x00\x00" + b"\x01" + b"\x00" * 32 + b"\xff\xff\xff\xff" +
                       varint(script_len) + height_push + b"\x08")
        outs = varint(len(outputs)) + b"".join(v.to_bytes(8, "little") + varint(len(s)) + s
                                                for v, s in outputs)
        self.coinb2_script_tail = push(tag)
        self.coinb2 = push(tag) + b"\xff\xff\xff\xff" + outs + b"\x00\x00\x00\x00"
        self.outs = outs
        self.prev_stratum = stratum_prevhash(self.prev_display)
        self.created = time.monotonic()

    def notify_params(self, job_id, clean, ntime=None, bad_hex=False):
        coinb1 = self.coinb1.hex()
        if bad_hex:
            coinb1 = coinb1[:-4] + "zz" + coinb1[-2:]
        return [job_id, self.prev_stratum, coinb1, self.coinb2.hex(),
                [b.hex() for b in self.branch], f"{self.version:08x}", f"{self.bits:08x}",
                f"{ntime if ntime is not None else self.ntime:08x}", clean]

    def coinbase(self, en1, en2):
        return self.coinb1 + en1 + en2 + self.coinb2

    def coinbase_witness(self, en1, en2):
        cb = self.coinbase(en1, en2)
        if not self.has_witness:
            return cb
        body = cb[4:-4]
        return cb[:4] + b"\x00\x01" + body + b"\x01\x20" + b"\x00" * 32 + cb[-4:]

    def header(self, en1, en2, version, ntime, nonce):
        root = sha256d(self.coinbase(en1, en2))
        for b in self.branch:
            root = sha256d(root + b)
        return (version.to_bytes(4, "little") + bytes.fromhex(self.prev_display)[::-1] + root +
                ntime.to_bytes(4, "little") + self.bits.to_bytes(4, "little") +
                nonce.to_bytes(4, "little"))

    def block(self, header, en1, en2):
        blk = header + varint(1 + len(self.txdata)) + self.coinbase_witness(en1, en2)
        blk += b"".join(self.txdata)
        if self.mweb:
            blk += b"\x01" + bytes.fromhex(self.mweb)
        return blk
