#!/usr/bin/env python3
"""lode as a stratum v1 client against tests/pool/stratum_pool.py on litecoind regtest.

usage: test_mining_stratum.py PATH_TO_LODE [SCENARIO ...]

Scenarios (all by default): clean faults1 faults2 reconnect failover tls difficulty
absurd_diff flood unanswered unauthorized redirect sha256d.
Every scenario checks: lode never crashes (exit 130 on SIGINT, promptly, no
sanitizer report), it mines again within seconds of each fault, the pool saw
no invalid share and no stale-submit violation, litecoind accepted every block
the pool submitted, and lode's summary agrees with the pool's counts.
Needs litecoind on PATH (it fails, not skips, without it).
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "pool"))
from harness import (Checks, Lode, PoolProc, check_counts_agree, check_pool_clean,  # noqa: E402
                     check_stopped, free_port, log, make_cert, regtest, require_litecoind, wait_answers_read)

LODE = sys.argv[1]
ONLY = sys.argv[2:]
check = Checks()
COMMON = ["-a", "scrypt", "-d", "cpu", "-t", "2", "--no-color", "--log-interval", "5",
          "--retry-pause", "1"]
RECOVER_S = 15  # a share accepted again within this long after a fault


def lode_pool(pools, extra=(), name="lode", algo="scrypt"):
    args = [algo if a == "scrypt" else a for a in COMMON] + list(extra)
    for p in pools:
        url, user = (p if isinstance(p, tuple) else (p.url, "worker"))
        args += ["-o", url, "-u", user, "-p", "x"]
    return Lode(LODE, args, name)


def finish(lode, pools, what, allow_orphans=False):
    """Hold the pools' answers, stop lode, compare both sides' counts."""
    for p in pools:
        if p.proc.poll() is None:
            p.hold()
    if len(pools) == 1:
        wait_answers_read(lode, pools[0])
    else:
        time.sleep(0.5)  # lode reads the last answers (a pool it left keeps some unread)
    check_stopped(check, lode, what)
    sums = lode.pool_summaries()
    check(sums, f"{what}: no 'summary: pool' line in lode's stderr:\n    {lode.tail()}")
    counts = (sum(s[2] for s in sums), sum(s[3] for s in sums), sum(s[4] for s in sums))
    live = [p for p in pools if p.proc.poll() is None]
    for p in live:
        check_pool_clean(check, p, what, allow_orphans)
    # A submit lode reports unanswered (it left a connection, as a redirect
    # makes it, with the answer still in flight) may have been accepted: the
    # pools' accepted count may exceed lode's by those, never by more.
    unanswered = sum(m[2] for m in lode.pool_summaries_more())
    check_counts_agree(check, counts, live, what, slack=unanswered)
    return sums


def recovered(pool, what, timeout=RECOVER_S, more=2):
    n = pool.totals()["accepted"]
    ok = pool.wait_accepted(n + more, timeout)
    check(ok, f"{what}: lode did not get {more} more shares accepted within {timeout} s "
          f"(pool accepted {pool.totals()['accepted']})")
    return ok


def mine_undisturbed(pool, lode, what):
    """Ten shares accepted, lode stopped, both sides' counts settled and
    equal (an 'accepted:' line per accepted share); the pool's totals."""
    check(pool.wait_accepted(10, 60),
          f"{what}: fewer than 10 shares accepted in 60 s ({pool.totals()})\n    {lode.tail()}")
    check(lode.alive(), f"{what}: lode exited early:\n    {lode.tail()}")
    finish(lode, [pool], what)
    t = pool.totals()
    acc_lines = lode.count(r"accepted: \d+/\d+")
    check(acc_lines == t["accepted"], f"{what}: {acc_lines} 'accepted:' lines, pool accepted {t['accepted']}")
    return t


def scenario_clean(net):
    what = "clean run"
    start = net.rpc("getblockcount")
    pool = PoolProc(net, difficulty=0.05, extra=["--min-block-interval", "0.3"])
    lode = lode_pool([pool])
    try:
        t = mine_undisturbed(pool, lode, what)
        check(t["blocks_accepted"] >= 1 and t["blocks_accepted"] == t["blocks_submitted"],
              f"{what}: blocks submitted {t['blocks_submitted']} accepted {t['blocks_accepted']}")
        paid = net.blocks_paid_to(start + 1, pool.payout)
        check(sum(1 for _, p in paid if p) >= t["blocks_accepted"],
              f"{what}: {t['blocks_accepted']} blocks accepted but only "
              f"{sum(1 for _, p in paid if p)} new blocks pay the pool's address")
    finally:
        lode.stop()
        pool.stop()


def scenario_sha256d(net):
    """SHA-256d against the pool checking shares with hashlib's double
    SHA-256 (Bitcoin's difficulty convention), then the pool's check proved
    able to fail: scrypt shares sent to it are refused."""
    what = "sha256d"
    start = net.rpc("getblockcount")
    pool = PoolProc(net, difficulty=0.002, extra=["--algo", "sha256d"])
    lode = lode_pool([pool], name="lode-sha256d", algo="sha256d")
    try:
        t = mine_undisturbed(pool, lode, what)
        check(t["blocks_submitted"] == 0 and net.rpc("getblockcount") == start,
              f"{what}: a SHA-256d pool submitted blocks ({t['blocks_submitted']})")
    finally:
        lode.stop()
        pool.stop()
    what = "scrypt shares to a sha256d pool"
    pool = PoolProc(net, difficulty=0.002, extra=["--algo", "sha256d"])
    lode = lode_pool([pool], name="lode-wrong-algo")
    try:
        pool.wait_total("invalid", 3, 20)
        t = pool.totals()
        check(t["invalid"] >= 3 and t["accepted"] == 0,
              f"{what}: the pool should refuse them all: {t['invalid']} invalid, {t['accepted']} accepted")
    finally:
        lode.stop()
        pool.stop()


def run_faults(net, what, faults, gap=1.5, check_replies=False):
    pool = PoolProc(net, difficulty=0.05, extra=["--min-block-interval", "0.3"])
    lode = lode_pool([pool])
    try:
        check(pool.wait_accepted(3, 60), f"{what}: no shares before the faults\n    {lode.tail()}")
        for f in faults:
            log(f"{what}: fault {f}")
            pool.ctl(f"fault {f}")
            time.sleep(gap)
            if not check(lode.alive(), f"{what}: lode exited after fault {f}:\n    {lode.tail()}"):
                break
            recovered(pool, f"{what}: after {f}")
        if check_replies:
            st = pool.status()
            replies = {}
            for c in st["connections"]:
                for m, r in c["client_replies"].items():
                    agg = replies.setdefault(m, {"sent": 0, "result": 0, "error": 0})
                    for k in agg:
                        agg[k] += r[k]
            log(f"{what}: client replies {replies}")
            u = replies.get("mining.frobnicate", {})
            check(u.get("error", 0) >= 1 and u.get("result", 0) == 0,
                  f"{what}: unknown method request: want an error reply, got {u}")
            for m in ("client.get_version", "client.show_message", "mining.ping"):
                r = replies.get(m, {})
                check(r.get("result", 0) + r.get("error", 0) >= 1,
                      f"{what}: no reply to {m} ({r})")
            g = replies.get("client.get_version", {})
            check(g.get("result", 0) >= 1, f"{what}: client.get_version got no result ({g})")
        finish(lode, [pool], what)
    finally:
        lode.stop()
        pool.stop()


def scenario_faults1(net):
    run_faults(net, "faults (bad lines, requests)",
               ["garbage", "nonjson", "oversized", "truncated", "unknown", "getversion",
                "showmessage", "ping"], gap=1.0, check_replies=True)


def scenario_faults2(net):
    run_faults(net, "faults (jobs, connection)",
               ["badhex", "storm", "diff", "diff", "extranonce", "drop", "drop"], gap=1.5)


def scenario_reconnect(net):
    what = "client.reconnect"
    second = PoolProc(net, difficulty=0.05, extra=["--min-block-interval", "0.3"])
    first = PoolProc(net, difficulty=0.05,
                     extra=["--min-block-interval", "0.3", "--reconnect-to",
                            f"127.0.0.1:{second.port}"])
    lode = lode_pool([first])
    try:
        check(first.wait_accepted(3, 60), f"{what}: no shares at the first pool\n    {lode.tail()}")
        first.ctl("fault reconnect")
        check(second.wait_accepted(3, 30),
              f"{what}: lode did not mine at the second pool after client.reconnect "
              f"({second.totals()})\n    {lode.tail()}")
        finish(lode, [first, second], what, allow_orphans=True)
    finally:
        lode.stop()
        first.stop()
        second.stop()
    # With --no-redirect lode stays where it is.
    what = "client.reconnect with --no-redirect"
    second = PoolProc(net, difficulty=0.05, extra=["--min-block-interval", "0.3"])
    first = PoolProc(net, difficulty=0.05,
                     extra=["--min-block-interval", "0.3", "--reconnect-to",
                            f"127.0.0.1:{second.port}"])
    lode = lode_pool([first], extra=["--no-redirect"])
    try:
        check(first.wait_accepted(2, 60), f"{what}: no shares\n    {lode.tail()}")
        first.ctl("fault reconnect")
        time.sleep(3)
        check(second.totals()["accepted"] == 0 and not second.status()["connections"],
              f"{what}: lode followed the redirect anyway")
        recovered(first, what)
        finish(lode, [first, second], what, allow_orphans=True)
    finally:
        lode.stop()
        first.stop()
        second.stop()


def scenario_failover(net):
    what = "failover"
    primary_port = free_port()  # nothing listens here yet
    backup = PoolProc(net, difficulty=0.05, extra=["--min-block-interval", "0.3"])
    lode = lode_pool([(f"stratum+tcp://127.0.0.1:{primary_port}", "first"), backup],
                     extra=["--failover-after", "2", "--failover-return", "3"])
    primary = None
    try:
        check(backup.wait_accepted(3, 40),
              f"{what}: lode did not fail over to the backup ({backup.totals()})\n    {lode.tail()}")
        # The primary comes back: lode should return to it.
        primary = PoolProc(net, difficulty=0.05, port=primary_port,
                           extra=["--min-block-interval", "0.3"])
        # Within 30 s (wait_total's guard is 3 x 10 s): lode probes the
        # primary every 3 s (--failover-return); at the default 60 s it would not.
        back = primary.wait_accepted(2, 10)
        check(back, f"{what}: lode did not go back to the primary within 30 s (--failover-return 3) "
              f"({primary.totals()})\n    {lode.tail()}")
        # The primary dies: lode mines on the backup again.
        n = backup.totals()["accepted"]
        primary.hold()
        time.sleep(0.3)  # lode reads the last answers
        primary_status = primary.status()
        primary.stop()
        check(backup.wait_accepted(n + 2, 40),
              f"{what}: no shares at the backup after the primary died\n    {lode.tail()}")
        backup.hold()
        time.sleep(0.5)
        check_stopped(check, lode, what)
        sums = lode.pool_summaries()
        check(len(sums) == 2, f"{what}: want 2 summary lines, got {sums}")
        if len(sums) == 2:
            pt = primary_status["totals"]
            check(sums[0][2] == pt["accepted"],
                  f"{what}: lode accepted {sums[0][2]} at the primary, pool says {pt['accepted']}")
            check(pt["invalid"] == 0 and pt["stale_violations"] == 0,
                  f"{what}: primary saw invalid/stale-violation shares {pt}")
            check_pool_clean(check, backup, what, allow_orphans=True)
            # lode waits for the answers to its submits before it leaves the
            # backup for the primary, so the counts agree exactly here too.
            check_counts_agree(check, sums[1][2:], [backup], what + " (backup)")
    finally:
        lode.stop()
        backup.stop()
        if primary:
            primary.stop()


def scenario_tls(net):
    cert, key = make_cert()
    pool = PoolProc(net, difficulty=0.05, tls=(cert, key), extra=["--min-block-interval", "0.3"])
    url = f"stratum+ssl://127.0.0.1:{pool.tls_port}"
    try:
        what = "TLS with the pin"
        lode = Lode(LODE, COMMON + ["-o", url, "-u", "w", "-p", "x", "--cert-pin", pool.fingerprint])
        try:
            check(pool.wait_accepted(5, 60),
                  f"{what}: fewer than 5 shares ({pool.totals()})\n    {lode.tail()}")
            check(any(c["tls"] for c in pool.status()["connections"]), f"{what}: not over TLS")
            finish(lode, [pool], what)
        finally:
            lode.stop()
        pool.ctl("hold off")
        for what, extra in (("TLS without a pin", []),
                            ("TLS with a wrong pin", ["--cert-pin", "ab" * 32])):
            before = pool.status()
            n_auth = sum(1 for c in before["connections"] if c["user"])
            acc = before["totals"]["accepted"]
            lode = Lode(LODE, COMMON + ["-o", url, "-u", "w", "-p", "x", *extra])
            try:
                logged = lode.wait_for(r"(?i)certificate|verify|pin|tls", 15)
                time.sleep(2)
                check(logged, f"{what}: no certificate error logged:\n    {lode.tail()}")
                after = pool.status()
                check(after["totals"]["accepted"] == acc and
                      sum(1 for c in after["connections"] if c["user"]) == n_auth,
                      f"{what}: lode authorized or mined at a pool whose certificate it "
                      f"should refuse")
                check(lode.alive(), f"{what}: lode exited (want: keep retrying):\n    {lode.tail()}")
                check_stopped(check, lode, what)
            finally:
                lode.stop()
    finally:
        pool.stop()


def scenario_difficulty(net):
    what = "difficulty changes"
    pool = PoolProc(net, difficulty=0.05, extra=["--min-block-interval", "0.3"])
    lode = lode_pool([pool])
    try:
        check(pool.wait_accepted(3, 60), f"{what}: no shares\n    {lode.tail()}")
        pool.ctl("difficulty 0.15")
        time.sleep(1)
        n = pool.totals()["accepted_by_diff"].get("0.15", 0)
        check(pool.wait_accepted(pool.totals()["accepted"] + 3, 40),
              f"{what}: no shares at difficulty 0.15")
        t = pool.totals()
        check(t["accepted_by_diff"].get("0.15", 0) > n,
              f"{what}: no share accepted on a difficulty-0.15 job: {t['accepted_by_diff']}")
        pool.ctl("difficulty 0.01")
        time.sleep(1)
        check(pool.wait_accepted(pool.totals()["accepted"] + 15, 40),
              f"{what}: too few shares at difficulty 0.01")
        t = pool.totals()
        check(t["accepted_easier_than_previous_diff"] > 0,
              f"{what}: no share below the old difficulty after lowering it: lode did not "
              f"apply the new difficulty ({t['accepted_by_diff']})")
        finish(lode, [pool], what)
    finally:
        lode.stop()
        pool.stop()


def scenario_absurd_diff(net):
    """set_difficulty 1e308 then a clean job: the clean job cannot be mined,
    and it still ends the job it replaces (no stale share is sent)."""
    what = "absurd difficulty with a clean job"
    pool = PoolProc(net, difficulty=0.005, extra=["--min-block-interval", "0.3"])
    lode = lode_pool([pool])
    try:
        check(pool.wait_accepted(5, 60), f"{what}: no shares first\n    {lode.tail()}")
        pool.ctl("difficulty 1e308 clean")
        time.sleep(3)  # a share of the old job now is a stale violation (1 s grace)
        t = pool.totals()
        check(t["stale_violations"] == 0,
              f"{what}: lode sent {t['stale_violations']} shares of jobs the clean job replaced")
        check(lode.count(r"difficulty 1e\+308 is too high") >= 1,
              f"{what}: no warning about the difficulty:\n    {lode.tail()}")
        check(lode.alive(), f"{what}: lode exited:\n    {lode.tail()}")
        pool.ctl("difficulty 0.005 clean")
        recovered(pool, f"{what}: after a usable difficulty")
        finish(lode, [pool], what)
    finally:
        lode.stop()
        pool.stop()


def scenario_flood(net):
    """Difficulty 1e-12 (every hash a share) on a pool that answers slowly:
    what cannot be sent is counted unsent, every answer is read, and both
    sides' counts agree."""
    what = "flood of shares"
    # Every share is a regtest block: the pool submits only the first, so no
    # clean job makes the shares waiting in its slow inbox stale.
    pool = PoolProc(net, difficulty=1e-12, extra=["--min-block-interval", "1000",
                                                  "--submit-delay", "0.05"])
    lode = lode_pool([pool])
    try:
        # 20 answers a second at most: lode (every hash a share) outruns it.
        check(lode.wait_for(r"share\(s\) not sent", 90),
              f"{what}: lode never had to leave shares unsent\n    {lode.tail()}")
        check(pool.wait_accepted(20, 30), f"{what}: fewer than 20 shares\n    {lode.tail()}")
        check(lode.alive(), f"{what}: lode exited:\n    {lode.tail()}")
        finish(lode, [pool], what)
        more = lode.pool_summaries_more()
        check(more and more[0][1] > 0,
              f"{what}: no share counted unsent ({more}); the pool kept up, so nothing was tested")
        check(lode.count(r"makes every hash a share") >= 1, f"{what}: no warning about the difficulty")
        check(lode.count(r"share\(s\) not sent") >= 1, f"{what}: no warning about unsent shares")
    finally:
        lode.stop()
        pool.stop()


def scenario_unanswered(net):
    """A pool that sends jobs but answers no submit: stalled after the stall
    timeout, and the summary shows the unanswered submits."""
    what = "submits never answered"
    pool = PoolProc(net, difficulty=0.005, extra=["--hold", "--notify-interval", "0.5"])
    lode = lode_pool([pool], extra=["--stall-timeout", "3"])
    try:
        check(lode.wait_for(r"unanswered for \d+ s, reconnecting", 40),
              f"{what}: lode did not treat the pool as stalled:\n    {lode.tail()}")
        deadline = time.monotonic() + 15
        while len(pool.status()["connections"]) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        check(len(pool.status()["connections"]) >= 2, f"{what}: lode did not reconnect")
        check_stopped(check, lode, what)
        more = lode.pool_summaries_more()
        held = pool.totals().get("held", 0)
        sums = lode.pool_summaries()
        check(more and held > 0 and more[0][2] >= held,
              f"{what}: lode counts {more} unanswered, the pool left {held} submits unanswered")
        check(sums and sums[0][2:] == (0, 0, sums[0][4]),
              f"{what}: lode counted answers the pool never gave: {sums}")
    finally:
        lode.stop()
        pool.stop()


def scenario_unauthorized(net):
    """Every pool refuses the worker: said once per pool, then lode stops
    with exit status 3 after the failover attempts."""
    what = "worker refused everywhere"
    pools = [PoolProc(net, difficulty=0.005, extra=["--require-pass", "right"]) for _ in range(2)]
    lode = lode_pool(pools, extra=["--failover-after", "2", "--retry-pause", "0.3"])
    try:
        try:
            lode.proc.wait(timeout=40)
        except Exception:
            pass
        check(not lode.alive(), f"{what}: lode still retries after 40 s:\n    {lode.tail()}")
        rc = lode.stop()
        check(rc == 3, f"{what}: exit status {rc}, want 3 (refused)\n    {lode.tail()}")
        check(not lode.sanitizer_report(), f"{what}: sanitizer report:\n    {lode.tail(60)}")
        said = lode.count(r"refused worker '[^']*'.*; check the user name and password")
        check(said == 2, f"{what}: the refusal was said {said} times, want once per pool (2)")
        check(lode.count(r"every pool refused") == 1, f"{what}: no final reason:\n    {lode.tail()}")
        for p in pools:
            tried = sum(1 for c in p.status()["connections"] if c["user"])
            check(tried == 2, f"{what}: {p.name} saw {tried} authorize attempts, want 2")
    finally:
        lode.stop()
        for p in pools:
            p.stop()


def scenario_redirect(net):
    what = "client.reconnect to another host"
    second = PoolProc(net, difficulty=0.005, extra=["--min-block-interval", "0.3"])
    first = PoolProc(net, difficulty=0.005, extra=["--min-block-interval", "0.3", "--reconnect-to",
                                                  f"localhost:{second.port}"])
    lode = lode_pool([first])
    try:
        check(first.wait_accepted(2, 60), f"{what}: no shares\n    {lode.tail()}")
        first.ctl("fault reconnect")
        time.sleep(2)
        check(not second.status()["connections"],
              f"{what}: lode took the pool's credentials to another host")
        check(lode.count(r"reconnect to another host") == 1, f"{what}: no warning:\n    {lode.tail()}")
        recovered(first, what)
        finish(lode, [first, second], what, allow_orphans=True)
    finally:
        lode.stop()
        first.stop()
        second.stop()
    what = "client.reconnect to another host with --allow-redirect-host"
    second = PoolProc(net, difficulty=0.005, extra=["--min-block-interval", "0.3"])
    first = PoolProc(net, difficulty=0.005, extra=["--min-block-interval", "0.3", "--reconnect-to",
                                                  f"localhost:{second.port}"])
    lode = lode_pool([first], extra=["--allow-redirect-host"])
    try:
        check(first.wait_accepted(2, 60), f"{what}: no shares")
        first.ctl("fault reconnect")
        check(second.wait_accepted(2, 30), f"{what}: lode did not follow ({second.totals()})\n"
              f"    {lode.tail()}")
        finish(lode, [first, second], what, allow_orphans=True)
    finally:
        lode.stop()
        first.stop()
        second.stop()
    what = "a pool that redirects to itself after every authorize"
    pool = PoolProc(net, difficulty=0.005, extra=["--redirect-after-auth"])
    lode = lode_pool([pool])
    try:
        # Six seconds from the first connection (lode's start-up, slow under
        # sanitizers, is not part of the backoff).
        deadline = time.monotonic() + 60
        while not pool.status()["connections"] and lode.alive() and time.monotonic() < deadline:
            time.sleep(0.05)
        conns = pool.status()["connections"]
        t0 = min((c["connected_at"] for c in conns), default=time.time())
        time.sleep(max(0.0, t0 + 6 - time.time()))
        n = sum(1 for c in pool.status()["connections"] if c["connected_at"] < t0 + 6)
        # Backoff from --retry-pause 1 (jittered down to half): 0, 0.5, 1, 2, 4 s.
        check(2 <= n <= 8, f"{what}: {n} connections in the 6 s from the first (want 2 to 8: backed off)")
        check_stopped(check, lode, what)
    finally:
        lode.stop()
        pool.stop()


SCENARIOS = {"clean": scenario_clean, "faults1": scenario_faults1, "faults2": scenario_faults2,
             "reconnect": scenario_reconnect, "failover": scenario_failover, "tls": scenario_tls,
             "difficulty": scenario_difficulty, "absurd_diff": scenario_absurd_diff,
             "flood": scenario_flood, "unanswered": scenario_unanswered,
             "unauthorized": scenario_unauthorized, "redirect": scenario_redirect,
             "sha256d": scenario_sha256d}


def main():
    require_litecoind()
    regtest.install_signal_handlers()
    t0 = time.monotonic()
    with regtest.Regtest(mature=True) as net:
        net.send_txs(4)  # so templates carry transactions and the branch is not empty
        for name, fn in SCENARIOS.items():
            if ONLY and name not in ONLY:
                continue
            log(f"scenario {name}")
            t = time.monotonic()
            try:
                fn(net)
            except Exception as e:
                import traceback
                traceback.print_exc()
                check(False, f"scenario {name} raised {e!r}")
            log(f"scenario {name} took {time.monotonic() - t:.0f} s")
    log(f"total {time.monotonic() - t0:.0f} s")
    check.done()


main()
