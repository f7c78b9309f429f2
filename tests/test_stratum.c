/* The stratum v1 client against a loopback pool (subscribe, authorize,
 * notify, submit accounting, reconnect, redirect, failover) and TLS with a
 * self-signed certificate (pinned: accepted; not: refused). The messages
 * alone are in test_stratum_msg.c. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/base/hex.h"
#include "core/base/job.h"
#include "core/base/log.h"
#include "core/base/target.h"
#include "core/stratum/stratum_client.h"
#include "core/stratum/stratum_conn.h"
#include "core/stratum/stratum_msg.h"
#include "tests/test_util.h"

/* tests/stratum_fake_mining.c */
lode_mining *fake_mining_get(void);
size_t fake_mining_wait_jobs(size_t count, double timeout_s);
unsigned fake_mining_wait_clears(unsigned count, double timeout_s);
int fake_mining_job(size_t index, lode_job *out);

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static const char *param_str(json_t *req, size_t i)
{
    const char *s = json_string_value(json_array_get(json_object_get(req, "params"), i));
    return s ? s : "(none)";
}

/* ---- a loopback pool ---- */

typedef struct test_pool {
    int listen_fd;
    int fd;
    char buf[200000];
    size_t len;
    uint16_t port;
} test_pool;

static int listen_loopback(uint16_t *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 8) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &al) != 0) {
        perror("loopback listen");
        exit(1);
    }
    *port = ntohs(a.sin_port);
    return fd;
}

/* How long a test waits for what must come: a hang guard (TSan on a loaded
 * machine is slow), never a speed limit; waits for what must not come are
 * short windows of their own. */
#define WAIT_S 30.0

static bool pool_accept(test_pool *p, double timeout_s)
{
    struct pollfd pfd = {.fd = p->listen_fd, .events = POLLIN};
    if (poll(&pfd, 1, (int)(timeout_s * 1000)) <= 0)
        return false;
    p->fd = accept(p->listen_fd, NULL, NULL);
    p->len = 0;
    return p->fd >= 0;
}

static void pool_close(test_pool *p)
{
    if (p->fd >= 0)
        close(p->fd);
    p->fd = -1;
}

/* The next JSON line the client sent, or NULL after timeout_s. */
static json_t *pool_read(test_pool *p, double timeout_s)
{
    double deadline = now_s() + timeout_s;
    for (;;) {
        char *nl = memchr(p->buf, '\n', p->len);
        if (nl != NULL) {
            *nl = '\0';
            json_t *v = json_loads(p->buf, 0, NULL);
            size_t used = (size_t)(nl - p->buf) + 1;
            memmove(p->buf, p->buf + used, p->len - used);
            p->len -= used;
            return v;
        }
        double left = deadline - now_s();
        struct pollfd pfd = {.fd = p->fd, .events = POLLIN};
        if (left <= 0 || poll(&pfd, 1, (int)(left * 1000) + 1) <= 0)
            return NULL;
        ssize_t r = read(p->fd, p->buf + p->len, sizeof p->buf - p->len);
        if (r <= 0)
            return NULL;
        p->len += (size_t)r;
    }
}

/* Reads the next request and checks its method. */
static json_t *pool_expect(test_pool *p, const char *method)
{
    json_t *v = pool_read(p, WAIT_S);
    const char *got = json_string_value(json_object_get(v, "method"));
    CHECK(got != NULL && strcmp(got, method) == 0, "expected %s, got %s", method, got ? got : "nothing");
    return v ? v : json_object();
}

static void pool_send(test_pool *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void pool_send(test_pool *p, const char *fmt, ...)
{
    char line[100000];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    line[n++] = '\n';
    ssize_t w = send(p->fd, line, (size_t)n, MSG_NOSIGNAL);
    (void)w;
}

static long long req_id(json_t *req)
{
    return (long long)json_integer_value(json_object_get(req, "id"));
}

static const char *prev1 = "0c859545a3498373a57452fac22eb7113df2a465000543520000000000000000";

static void send_notify(test_pool *p, const char *job_id, const char *prev, bool clean)
{
    pool_send(p, "{\"id\":null,\"method\":\"mining.notify\",\"params\":[\"%s\",\"%s\",\"01000000\",\"ffffffff\",[],"
                 "\"20000000\",\"1705ae3a\",\"647025b5\",%s]}", job_id, prev, clean ? "true" : "false");
}

static lode_share make_share(const lode_job *job, uint32_t nonce)
{
    lode_share share = {.job = job, .ntime = job->ntime + 1, .version = job->version | 0x00002000, .nonce = nonce};
    for (size_t i = 0; i < job->extranonce2_len; i++)
        share.extranonce2[i] = (uint8_t)(i + 1);
    return share;
}

static void wait_stats(lode_stratum *s, size_t pool, uint64_t accepted, uint64_t rejected, uint64_t stale,
                       uint64_t dropped, lode_pool_stats *out)
{
    double deadline = now_s() + WAIT_S;
    do {
        lode_stratum_pool_stats(s, pool, out);
        if (out->accepted == accepted && out->rejected == rejected && out->stale == stale && out->dropped == dropped)
            return;
        usleep(10000);
    } while (now_s() < deadline);
}

/* The loopback pool test, step by step on one client and pool. */
typedef struct loopback {
    test_pool pool;
    lode_stratum *s;
    lode_job job1, job4;
} loopback;

/* Connection 1: configure, subscribe, extranonce.subscribe, authorize. */
static void loopback_connect(loopback *lb)
{
    test_pool *pool = &lb->pool;
    lode_job *job1 = &lb->job1;
    CHECK(pool_accept(pool, WAIT_S), "no connection");
    json_t *r = pool_expect(pool, "mining.configure");
    pool_send(pool, "{\"id\":%lld,\"result\":{\"version-rolling\":true,\"version-rolling.mask\":\"1fffe000\"},\"error\":null}", req_id(r));
    json_decref(r);
    r = pool_expect(pool, "mining.subscribe");
    CHECK(json_array_size(json_object_get(r, "params")) == 1 && strcmp(param_str(r, 0), "lode/test") == 0, "fresh subscribe");
    pool_send(pool, "{\"id\":%lld,\"result\":[[[\"mining.set_difficulty\",\"d1\"],[\"mining.notify\",\"sess42\"]],\"0a0b0c0d\",4],\"error\":null}", req_id(r));
    json_decref(r);
    r = pool_expect(pool, "mining.extranonce.subscribe");
    pool_send(pool, "{\"id\":%lld,\"result\":true,\"error\":null}", req_id(r));
    json_decref(r);
    r = pool_expect(pool, "mining.authorize");
    CHECK(strcmp(param_str(r, 0), "worker.1") == 0 && strcmp(param_str(r, 1), "pw") == 0, "credentials");
    /* Notifications before the authorize reply. */
    pool_send(pool, "{\"id\":null,\"method\":\"mining.set_difficulty\",\"params\":[2]}");
    send_notify(pool, "j1", prev1, true);
    pool_send(pool, "{\"id\":%lld,\"result\":true,\"error\":null}", req_id(r));
    json_decref(r);

    CHECK(fake_mining_wait_jobs(1, WAIT_S) == 1, "no job installed");
    CHECK(fake_mining_job(0, job1) == 0, "job copy");
    lode_u256 want_target;
    lode_target_from_difficulty(2, LODE_ALGO_SHA256D, &want_target);
    CHECK(strcmp(job1->id, "j1") == 0 && job1->extranonce1_len == 4 && job1->extranonce1[0] == 0x0a &&
              job1->extranonce2_len == 4 && job1->clean, "job 1 fields");
    CHECK(job1->version_mask == 0x1fffe000 && job1->ntime_roll_max == LODE_STRATUM_NTIME_ROLL_MAX, "mask %08x", job1->version_mask);
    CHECK(lode_u256_cmp(&job1->share_target, &want_target) == 0, "difficulty 2 applied to the next notify");
    CHECK(job1->prevhash[0] == 0x45 && job1->prevhash[3] == 0x0c, "prevhash word swap");
}

/* Shares: accepted, rejected, stale flag, stale by code 21, old generation. */
static void loopback_shares(loopback *lb)
{
    test_pool *pool = &lb->pool;
    lode_stratum *s = lb->s;
    lode_job *job1 = &lb->job1;
    json_t *r;
    lode_share sh = make_share(job1, 0x12345678);
    lode_stratum_source_ops.submit(s, &sh, false);
    r = pool_expect(pool, "mining.submit");
    json_t *params = json_object_get(r, "params");
    CHECK(json_array_size(params) == 6 && strcmp(param_str(r, 1), "j1") == 0 && strcmp(param_str(r, 2), "01020304") == 0 &&
              strcmp(param_str(r, 3), "647025b6") == 0 && strcmp(param_str(r, 4), "12345678") == 0 &&
              strcmp(param_str(r, 5), "00002000") == 0, "submit params");
    pool_send(pool, "{\"id\":%lld,\"result\":true,\"error\":null}", req_id(r));
    json_decref(r);
    lode_stratum_source_ops.submit(s, &sh, false);
    r = pool_expect(pool, "mining.submit");
    pool_send(pool, "{\"id\":%lld,\"result\":null,\"error\":[23,\"Low difficulty share\",null]}", req_id(r));
    json_decref(r);
    lode_stratum_source_ops.submit(s, &sh, true); /* the session says stale: never sent */
    lode_stratum_source_ops.submit(s, &sh, false);
    r = pool_expect(pool, "mining.submit");
    pool_send(pool, "{\"id\":%lld,\"result\":null,\"error\":[21,\"Job not found\",null]}", req_id(r));
    json_decref(r);
    lode_job old = *job1;
    old.generation = job1->generation + 100;
    lode_share old_share = make_share(&old, 1);
    lode_stratum_source_ops.submit(s, &old_share, false);
}

/* Junk the client must skip, and requests it must answer. */
static void loopback_requests(loopback *lb)
{
    test_pool *pool = &lb->pool;
    lode_stratum *s = lb->s;
    json_t *r;
    pool_send(pool, "hello world");
    pool_send(pool, "{\"id\":1,");
    pool_send(pool, "{\"id\":null,\"method\":\"mining.notify\",\"params\":[\"bad\",\"%s0\",\"\",\"\",[],\"20000000\",\"1705ae3a\",\"647025b5\",true]}", prev1);
    pool_send(pool, "{\"id\":7,\"method\":\"mining.frobnicate\",\"params\":[]}");
    r = pool_read(pool, WAIT_S);
    CHECK(json_integer_value(json_object_get(r, "id")) == 7 && json_is_array(json_object_get(r, "error")), "unknown method answered with an error");
    json_decref(r);
    pool_send(pool, "{\"id\":\"v\",\"method\":\"client.get_version\",\"params\":[]}");
    r = pool_read(pool, WAIT_S);
    const char *echoed = json_string_value(json_object_get(r, "id"));
    CHECK(echoed != NULL && strcmp(echoed, "v") == 0, "get_version id");
    CHECK(json_is_string(json_object_get(r, "result")) && strcmp(json_string_value(json_object_get(r, "result")), "lode/test") == 0, "agent");
    json_decref(r);
    pool_send(pool, "{\"id\":9,\"method\":\"mining.ping\"}");
    r = pool_read(pool, WAIT_S);
    CHECK(json_integer_value(json_object_get(r, "id")) == 9 && json_is_string(json_object_get(r, "result")), "pong");
    json_decref(r);
    pool_send(pool, "{\"id\":10,\"method\":\"client.show_message\",\"params\":[\"maintenance at noon\"]}");
    r = pool_read(pool, WAIT_S);
    CHECK(json_integer_value(json_object_get(r, "id")) == 10 && json_is_true(json_object_get(r, "result")), "show_message");
    json_decref(r);
    lode_pool_stats st;
    wait_stats(s, 0, 1, 1, 1, 2, &st); /* stale: the code-21 answer; dropped: the two of ended jobs */
    CHECK(st.accepted == 1 && st.rejected == 1 && st.stale == 1 && st.dropped == 2, "accepted %llu rejected %llu stale "
          "%llu dropped %llu", (unsigned long long)st.accepted, (unsigned long long)st.rejected,
          (unsigned long long)st.stale, (unsigned long long)st.dropped);
    CHECK(strcmp(st.last_reject, "Low difficulty share") == 0, "reason: %s", st.last_reject);
    CHECK(st.bad_lines == 3 && st.connected && st.difficulty == 2, "bad lines %llu", (unsigned long long)st.bad_lines);
}

/* set_extranonce applies at the next notify, which is then clean. */
static void loopback_extranonce(loopback *lb)
{
    test_pool *pool = &lb->pool;
    lode_job *job1 = &lb->job1;
    pool_send(pool, "{\"id\":null,\"method\":\"mining.set_extranonce\",\"params\":[\"01020304\",2]}");
    send_notify(pool, "j2", prev1, false);
    CHECK(fake_mining_wait_jobs(2, WAIT_S) == 2, "no second job");
    lode_job job2 = {0};
    fake_mining_job(1, &job2);
    CHECK(job2.extranonce1[0] == 1 && job2.extranonce2_len == 2 && job2.clean && job2.generation == job1->generation,
          "extranonce change");
    lode_job_free(&job2);
    send_notify(pool, "j3", prev1, false);
    CHECK(fake_mining_wait_jobs(3, WAIT_S) == 3, "no third job");
    fake_mining_job(2, &job2);
    CHECK(!job2.clean, "same prevhash, clean_jobs false: not clean");
    lode_job_free(&job2);
}

/* Drop the connection: the job is cleared, the client reconnects and
 * tries to resume; the pool refuses, a plain subscribe follows. */
static void loopback_reconnect(loopback *lb)
{
    test_pool *pool = &lb->pool;
    lode_stratum *s = lb->s;
    lode_job *job1 = &lb->job1;
    lode_job *job4 = &lb->job4;
    json_t *r;
    lode_pool_stats st;
    lode_u256 want_target;
    lode_share sh;
    pool_close(pool);
    CHECK(fake_mining_wait_clears(1, WAIT_S) >= 1, "job not cleared on disconnect");
    CHECK(pool_accept(pool, WAIT_S), "no reconnection");
    r = pool_expect(pool, "mining.configure");
    pool_send(pool, "{\"id\":%lld,\"result\":{\"version-rolling\":false},\"error\":null}", req_id(r));
    json_decref(r);
    r = pool_expect(pool, "mining.subscribe");
    CHECK(strcmp(param_str(r, 1), "sess42") == 0, "resume with the notify subscription id");
    pool_send(pool, "{\"id\":%lld,\"result\":null,\"error\":[20,\"unknown session\",null]}", req_id(r));
    json_decref(r);
    r = pool_expect(pool, "mining.subscribe");
    CHECK(json_array_size(json_object_get(r, "params")) == 1, "plain subscribe after a refused resume");
    pool_send(pool, "{\"id\":%lld,\"result\":[[[\"mining.notify\",\"sess43\"]],\"aabbccdd\",4],\"error\":null}", req_id(r));
    json_decref(r);
    r = pool_expect(pool, "mining.extranonce.subscribe"); /* left unanswered */
    json_decref(r);
    r = pool_expect(pool, "mining.authorize");
    pool_send(pool, "{\"id\":%lld,\"result\":true,\"error\":null}", req_id(r));
    json_decref(r);
    send_notify(pool, "k1", "1111111111111111111111111111111111111111111111111111111111111111", false);
    CHECK(fake_mining_wait_jobs(4, WAIT_S) == 4, "no job after reconnecting");
    fake_mining_job(3, job4);
    CHECK(job4->generation == job1->generation + 1 && job4->version_mask == 0 && job4->clean, "new generation, no mask, new prevhash is clean");
    lode_target_from_difficulty(1, LODE_ALGO_SHA256D, &want_target);
    CHECK(lode_u256_cmp(&job4->share_target, &want_target) == 0, "difficulty back to 1 on a new connection");
    sh = make_share(job4, 42);
    lode_stratum_source_ops.submit(s, &sh, false);
    r = pool_expect(pool, "mining.submit");
    CHECK(json_array_size(json_object_get(r, "params")) == 5, "no version bits without rolling");
    pool_send(pool, "{\"id\":%lld,\"result\":true,\"error\":null}", req_id(r));
    json_decref(r);
    lode_stratum_source_ops.submit(s, &(lode_share){.job = job1}, false); /* the old connection's job */
    wait_stats(s, 0, 2, 1, 1, 3, &st);
    CHECK(st.accepted == 2 && st.stale == 1 && st.dropped == 3, "after reconnect: accepted %llu stale %llu dropped %llu",
          (unsigned long long)st.accepted, (unsigned long long)st.stale, (unsigned long long)st.dropped);
}

/* An over-long line ends the connection; the client comes back. */
static void loopback_overlong_line(loopback *lb)
{
    test_pool *pool = &lb->pool;
    lode_stratum *s = lb->s;
    json_t *r;
    lode_pool_stats st;
    char *longline = malloc(LODE_STRATUM_LINE_MAX + 100);
    memset(longline, 'a', LODE_STRATUM_LINE_MAX + 99);
    longline[LODE_STRATUM_LINE_MAX + 99] = '\0';
    pool_send(pool, "%s", longline);
    free(longline);
    CHECK(fake_mining_wait_clears(2, WAIT_S) >= 2, "over-long line did not end the connection");
    pool_close(pool);
    CHECK(pool_accept(pool, WAIT_S), "no reconnection after an over-long line");
    r = pool_expect(pool, "mining.configure"); /* sent after the connection is counted */
    json_decref(r);
    lode_stratum_pool_stats(s, 0, &st);
    CHECK(st.bad_lines == 4 && st.connects == 3, "bad lines %llu connects %llu", (unsigned long long)st.bad_lines,
          (unsigned long long)st.connects);
}

static void test_loopback(void)
{
    loopback lb = {.pool = {.fd = -1}};
    lb.pool.listen_fd = listen_loopback(&lb.pool.port);
    char url[64];
    snprintf(url, sizeof url, "stratum+tcp://127.0.0.1:%u", lb.pool.port);
    lode_pool_config pc = {.url = url, .user = "worker.1", .pass = "pw"};
    lode_stratum_config cfg;
    lode_stratum_config_defaults(&cfg);
    cfg.algo = LODE_ALGO_SHA256D;
    cfg.pools = &pc;
    cfg.pool_count = 1;
    cfg.agent = "lode/test";
    cfg.retry_base_s = 0.05;
    cfg.retry_max_s = 0.2;
    char err[256];
    lode_stratum *s = lb.s = lode_stratum_create(&cfg, err, sizeof err);
    CHECK(s != NULL, "create: %s", err);
    if (s == NULL)
        return;
    CHECK(lode_stratum_pool_count(s) == 1, "pool count");
    CHECK(lode_stratum_start(s, fake_mining_get()) == 0, "start");

    loopback_connect(&lb);
    loopback_shares(&lb);
    loopback_requests(&lb);
    loopback_extranonce(&lb);
    loopback_reconnect(&lb);
    loopback_overlong_line(&lb);


    /* Stop while the client waits for replies: it returns without waiting
     * for them (were it to wait, the replies never come and ctest's timeout
     * reports the hang; no wall-clock bound here). */
    lode_stratum_stop(s);
    pool_close(&lb.pool);
    lode_stratum_free(s);
    lode_job_free(&lb.job1);
    lode_job_free(&lb.job4);
    close(lb.pool.listen_fd);
}


/* A scrypt client of the given pools that retries at once (loopback pools). */
static lode_stratum_config loopback_config(lode_pool_config *pools, size_t count)
{
    lode_stratum_config cfg;
    lode_stratum_config_defaults(&cfg);
    cfg.algo = LODE_ALGO_SCRYPT;
    cfg.pools = pools;
    cfg.pool_count = count;
    cfg.retry_base_s = 0.02;
    cfg.retry_max_s = 0.05;
    return cfg;
}

/* Failover from a dead pool to the next, then a client.reconnect redirect. */
static void test_failover_redirect(void)
{
    uint16_t dead_port;
    int dead = listen_loopback(&dead_port);
    close(dead); /* nothing listens there now: connection refused */
    test_pool a = {.fd = -1}, b = {.fd = -1};
    a.listen_fd = listen_loopback(&a.port);
    b.listen_fd = listen_loopback(&b.port);
    char url0[64], url1[64];
    snprintf(url0, sizeof url0, "stratum+tcp://127.0.0.1:%u", dead_port);
    snprintf(url1, sizeof url1, "stratum+tcp://127.0.0.1:%u", a.port);
    lode_pool_config pcs[2] = {{.url = url0, .user = "u"}, {.url = url1, .user = "u"}};
    lode_stratum_config cfg = loopback_config(pcs, 2);
    cfg.failover_after = 2;
    cfg.primary_check_s = 1000;
    /* The stall timeout also runs on a from its connection, so the redirect
     * must reach a within it: 3 s leaves a late test thread room. */
    cfg.stall_timeout_s = 3.0;
    char err[256];
    lode_stratum *s = lode_stratum_create(&cfg, err, sizeof err);
    CHECK(s != NULL, "create: %s", err);
    if (s == NULL)
        return;
    lode_stratum_start(s, fake_mining_get());
    CHECK(pool_accept(&a, WAIT_S), "no failover to the second pool");
    json_t *r = pool_expect(&a, "mining.subscribe"); /* scrypt: no configure */
    json_decref(r);
    /* b's stall timer starts when the client connects to b, which is after
     * this: the time from here to the reconnection to a is at least the
     * stall timeout, however late the test's thread reads b. */
    double stall_t0 = now_s();
    pool_send(&a, "{\"id\":null,\"method\":\"client.reconnect\",\"params\":[\"127.0.0.1\",\"%u\",0]}", b.port);
    CHECK(pool_accept(&b, WAIT_S), "redirect not followed");
    r = pool_expect(&b, "mining.subscribe");
    json_decref(r);
    /* b never answers: after the stall timeout the client gives up on the
     * redirect and goes back to its pool list (the second pool, a). */
    pool_close(&a);
    CHECK(pool_accept(&a, cfg.stall_timeout_s + WAIT_S), "no reconnection after a stall");
    double stalled = now_s() - stall_t0;
    /* The bound holds exactly (one monotonic clock); 0.9 is a margin, not a speed allowance. */
    CHECK(stalled >= 0.9 * cfg.stall_timeout_s, "reconnected before the stall timeout (%.2f s)", stalled);
    r = pool_expect(&a, "mining.subscribe");
    json_decref(r);
    lode_stratum_stop(s);
    lode_stratum_free(s);
    pool_close(&a);
    pool_close(&b);
    close(a.listen_fd);
    close(b.listen_fd);
}

/* A client.reconnect while a submit is in flight: the client reads the
 * pool's answer before it follows the redirect, so the share counts as
 * accepted, not unanswered. */
static void test_redirect_answers(void)
{
    test_pool a = {.fd = -1}, b = {.fd = -1};
    a.listen_fd = listen_loopback(&a.port);
    b.listen_fd = listen_loopback(&b.port);
    char url[64];
    snprintf(url, sizeof url, "stratum+tcp://127.0.0.1:%u", a.port);
    lode_pool_config pc = {.url = url, .user = "u"};
    lode_stratum_config cfg = loopback_config(&pc, 1);
    char err[256];
    lode_stratum *s = lode_stratum_create(&cfg, err, sizeof err);
    CHECK(s != NULL, "create: %s", err);
    if (s == NULL)
        return;
    const size_t jobs = fake_mining_wait_jobs(0, 0);
    lode_stratum_start(s, fake_mining_get());
    CHECK(pool_accept(&a, WAIT_S), "no connection");
    json_t *r = pool_expect(&a, "mining.subscribe"); /* scrypt: no configure */
    pool_send(&a, "{\"id\":%lld,\"result\":[[[\"mining.notify\",\"s1\"]],\"0a0b0c0d\",4],\"error\":null}", req_id(r));
    json_decref(r);
    json_decref(pool_expect(&a, "mining.extranonce.subscribe")); /* left unanswered */
    r = pool_expect(&a, "mining.authorize");
    pool_send(&a, "{\"id\":%lld,\"result\":true,\"error\":null}", req_id(r));
    json_decref(r);
    send_notify(&a, "r1", prev1, true);
    CHECK(fake_mining_wait_jobs(jobs + 1, WAIT_S) == jobs + 1, "no job");
    lode_job job = {0};
    CHECK(fake_mining_job(jobs, &job) == 0, "job copy");
    lode_share sh = make_share(&job, 7);
    lode_stratum_source_ops.submit(s, &sh, false);
    r = pool_expect(&a, "mining.submit");
    pool_send(&a, "{\"id\":null,\"method\":\"client.reconnect\",\"params\":[\"127.0.0.1\",\"%u\",0]}", b.port);
    pool_send(&a, "{\"id\":%lld,\"result\":true,\"error\":null}", req_id(r));
    json_decref(r);
    CHECK(pool_accept(&b, WAIT_S), "redirect not followed");
    json_decref(pool_expect(&b, "mining.subscribe"));
    lode_pool_stats st;
    lode_stratum_pool_stats(s, 0, &st);
    CHECK(st.accepted == 1 && st.unanswered == 0, "after the redirect: accepted %llu unanswered %llu",
          (unsigned long long)st.accepted, (unsigned long long)st.unanswered);
    lode_stratum_stop(s);
    lode_stratum_free(s);
    lode_job_free(&job);
    pool_close(&a);
    pool_close(&b);
    close(a.listen_fd);
    close(b.listen_fd);
}

/* lode_stratum_next_pool (the API's "next pool"): the source leaves a
 * working pool for the next, wraps around after the last, and does not
 * probe its way back to the first pool while on one the user chose. */
static void test_next_pool(void)
{
    test_pool a = {.fd = -1}, b = {.fd = -1};
    a.listen_fd = listen_loopback(&a.port);
    b.listen_fd = listen_loopback(&b.port);
    char url0[64], url1[64];
    snprintf(url0, sizeof url0, "stratum+tcp://127.0.0.1:%u", a.port);
    snprintf(url1, sizeof url1, "stratum+tcp://127.0.0.1:%u", b.port);
    lode_pool_config pcs[2] = {{.url = url0, .user = "u"}, {.url = url1, .user = "u"}};
    lode_stratum_config cfg = loopback_config(pcs, 1);
    cfg.primary_check_s = 0.2; /* would probe pool a five times a second */
    char err[256];
    lode_stratum *one = lode_stratum_create(&cfg, err, sizeof err);
    CHECK(one != NULL && lode_stratum_next_pool(one) == -1, "next pool with one pool (not started)");
    lode_stratum_free(one);
    cfg.pool_count = 2;
    lode_stratum *s = lode_stratum_create(&cfg, err, sizeof err);
    CHECK(s != NULL, "create: %s", err);
    if (s == NULL)
        return;
    CHECK(lode_stratum_next_pool(s) == -1, "next pool before start");
    lode_stratum_start(s, fake_mining_get());
    CHECK(pool_accept(&a, WAIT_S), "no connection to the first pool");
    json_decref(pool_expect(&a, "mining.subscribe"));
    CHECK(lode_stratum_current_pool(s) == 0, "current pool %zu, want 0", lode_stratum_current_pool(s));
    CHECK(lode_stratum_next_pool(s) == 0, "next pool refused");
    CHECK(pool_accept(&b, WAIT_S), "no connection to the second pool after next_pool");
    json_decref(pool_expect(&b, "mining.subscribe"));
    CHECK(pool_read(&a, 2) == NULL, "the first pool's connection is still used");
    CHECK(lode_stratum_current_pool(s) == 1, "current pool %zu, want 1", lode_stratum_current_pool(s));
    /* Chosen by the user: no probe of the first pool in 1 s (five probe periods). */
    pool_close(&a);
    CHECK(!pool_accept(&a, 1.0), "probed the first pool while on the chosen second one");
    pool_close(&a);
    /* After the last pool, the first. */
    CHECK(lode_stratum_next_pool(s) == 0, "next pool refused (wrap)");
    CHECK(pool_accept(&a, WAIT_S), "no connection back to the first pool");
    json_decref(pool_expect(&a, "mining.subscribe"));
    CHECK(lode_stratum_current_pool(s) == 0, "current pool %zu, want 0 after the wrap", lode_stratum_current_pool(s));
    lode_stratum_stop(s);
    lode_stratum_free(s);
    pool_close(&a);
    pool_close(&b);
    close(a.listen_fd);
    close(b.listen_fd);
}

/* ---- TLS ---- */

typedef struct tls_server {
    SSL_CTX *ctx;
    int listen_fd;
    int connections; /* how many to serve */
} tls_server;

static void *tls_server_thread(void *arg)
{
    tls_server *t = arg;
    sigset_t pipe_set; /* the client may hang up first: no SIGPIPE for the test server */
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, NULL);
    for (int i = 0; i < t->connections; i++) {
        struct pollfd pfd = {.fd = t->listen_fd, .events = POLLIN};
        if (poll(&pfd, 1, 10000) <= 0)
            break;
        int fd = accept(t->listen_fd, NULL, NULL);
        if (fd < 0)
            continue;
        struct timeval tv = {.tv_sec = 5};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        SSL *ssl = SSL_new(t->ctx);
        SSL_set_fd(ssl, fd);
        if (SSL_accept(ssl) == 1) {
            char buf[256];
            int n = SSL_read(ssl, buf, sizeof buf); /* echo one line back */
            if (n > 0)
                SSL_write(ssl, buf, n);
            SSL_shutdown(ssl);
        }
        SSL_free(ssl);
        close(fd);
    }
    return NULL;
}

static void test_tls(void)
{
    EVP_PKEY *key = EVP_EC_gen("P-256");
    X509 *cert = X509_new();
    X509_set_version(cert, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
    X509_gmtime_adj(X509_getm_notBefore(cert), -60);
    X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
    X509_set_pubkey(cert, key);
    X509_NAME *name = X509_get_subject_name(cert);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)"localhost", -1, -1, 0);
    X509_set_issuer_name(cert, name);
    CHECK(key != NULL && X509_sign(cert, key, EVP_sha256()) > 0, "self-signed certificate");
    uint8_t fp[32];
    unsigned fp_len = 0;
    X509_digest(cert, EVP_sha256(), fp, &fp_len);
    char fp_hex[65], fp_colons[100] = "";
    lode_hex_encode(fp, 32, fp_hex);
    for (int i = 0; i < 32; i++)
        snprintf(fp_colons + strlen(fp_colons), sizeof fp_colons - strlen(fp_colons), "%s%02X", i ? ":" : "", fp[i]);

    tls_server t = {.ctx = SSL_CTX_new(TLS_server_method()), .connections = 3};
    SSL_CTX_use_certificate(t.ctx, cert);
    SSL_CTX_use_PrivateKey(t.ctx, key);
    uint16_t port;
    t.listen_fd = listen_loopback(&port);
    pthread_t thread;
    pthread_create(&thread, NULL, tls_server_thread, &t);

    lode_stratum_url url;
    char text[64], err[512];
    snprintf(text, sizeof text, "stratum+ssl://127.0.0.1:%u", port);
    lode_stratum_url_parse(text, &url, err, sizeof err);

    /* Pinned (upper case, colons): accepted, and lines flow both ways. */
    lode_stratum_conn *c = lode_stratum_conn_open(&url, fp_colons, NULL, 5, NULL, err, sizeof err);
    CHECK(c != NULL, "pinned TLS refused: %s", err);
    if (c != NULL) {
        CHECK(lode_stratum_conn_write(c, "ping over tls\n", 14, 5, err, sizeof err) == 0, "TLS write: %s", err);
        const char *line = NULL;
        size_t len = 0;
        lode_conn_status st = lode_stratum_conn_read_line(c, NULL, 5, &line, &len, err, sizeof err);
        CHECK(st == LODE_CONN_LINE && len == 13 && strcmp(line, "ping over tls") == 0, "TLS echo (status %d): %s", st, err);
        lode_stratum_conn_close(c);
    }
    /* No pin: the self-signed certificate is not trusted; the error shows its fingerprint. */
    c = lode_stratum_conn_open(&url, NULL, NULL, 5, NULL, err, sizeof err);
    CHECK(c == NULL && strstr(err, fp_hex) != NULL, "unpinned self-signed accepted or no fingerprint: %s", err);
    lode_stratum_conn_close(c);
    /* A different pin: refused. */
    c = lode_stratum_conn_open(&url, "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff", NULL, 5, NULL, err, sizeof err);
    CHECK(c == NULL && strstr(err, "not the pinned") != NULL && strstr(err, fp_hex) != NULL, "wrong pin: %s", err);
    lode_stratum_conn_close(c);

    pthread_join(thread, NULL);
    close(t.listen_fd);
    SSL_CTX_free(t.ctx);
    X509_free(cert);
    EVP_PKEY_free(key);
}

/* A wake-up interrupts a read at once. */
static void test_wake(void)
{
    uint16_t port;
    int lfd = listen_loopback(&port);
    lode_stratum_url url;
    char text[64], err[256];
    snprintf(text, sizeof text, "stratum+tcp://127.0.0.1:%u", port);
    lode_stratum_url_parse(text, &url, err, sizeof err);
    lode_stratum_conn *c = lode_stratum_conn_open(&url, NULL, NULL, 5, NULL, err, sizeof err);
    CHECK(c != NULL, "connect: %s", err);
    if (c == NULL)
        return;
    lode_wake w;
    lode_wake_init(&w);
    lode_wake_signal(&w);
    const char *line;
    size_t len;
    /* Woken, not timed out: the status says which, whatever the load. */
    CHECK(lode_stratum_conn_read_line(c, &w, 10, &line, &len, err, sizeof err) == LODE_CONN_WOKEN, "not woken");
    lode_wake_drain(&w);
    CHECK(lode_stratum_conn_read_line(c, &w, 0.05, &line, &len, err, sizeof err) == LODE_CONN_TIMEOUT, "timeout");
    lode_wake_destroy(&w);
    lode_stratum_conn_close(c);
    close(lfd);
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    lode_log_configure(getenv("LODE_TEST_VERBOSE") == NULL, false);
    test_wake();
    test_tls();
    test_loopback();
    test_failover_redirect();
    test_redirect_answers();
    test_next_pool();
    return test_summary();
}
