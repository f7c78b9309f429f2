/* Unit tests of the PrimeNet client's pieces (core/primenet) without a
 * server: the query builder against Python's urllib.parse.quote_plus (the
 * expected texts below are its output), the reply parser against the reply
 * format of PrimeNet's clients (a real ga reply; hostile ones: garbage, no
 * ==END==, huge, NUL bytes, CR in values, missing fields, random bytes),
 * the URL rule, the state file and results_sent.txt, and the worktodo edits
 * the client makes beside the class driver (core/tf/worktodo.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "core/primenet/http.h"
#include "core/primenet/primenet.h"
#include "core/primenet/protocol.h"
#include "core/primenet/state.h"
#include "core/tf/fileio.h"
#include "core/tf/results.h"
#include "core/tf/worktodo.h"
#include "tests/test_util.h"
#include "tests/tf_test_files.h"

static void test_query(void)
{
    lode_pn_query q;
    lode_pn_query_start(&q, "uc", "0123456789abcdef0123456789abcdef");
    lode_pn_query_add(&q, "u", "a b&c=d/\xc3\xa9~_.-");
    lode_pn_query_add(&q, "m", "{\"exponent\": 1}");
    lode_pn_query_addf(&q, "n", "%u", 66362159u);
    lode_pn_query_add(&q, "f", "");
    const char *text = lode_pn_query_finish(&q);
    const char *want = "px=GIMPS&v=0.95&t=uc&g=0123456789abcdef0123456789abcdef&u=a+b%26c%3Dd%2F%C3%A9~_.-"
                       "&m=%7B%22exponent%22%3A+1%7D&n=66362159&f=&ss=19191919&sh=ABCDABCDABCDABCDABCDABCDABCDABCD";
    CHECK(text != NULL && strcmp(text, want) == 0, "query '%s'", text ? text : "(null)");
    lode_pn_query_free(&q);
    lode_pn_query_start(&q, "ps", NULL);
    text = lode_pn_query_finish(&q);
    CHECK(text != NULL && strncmp(text, "px=GIMPS&v=0.95&t=ps&ss=", 24) == 0, "no g without a GUID: %s", text);
    lode_pn_query_free(&q);
    char small[8];
    size_t used = 0;
    CHECK(!lode_pn_url_encode("a&b&c", small, sizeof small, &used), "too long for the buffer: false");
}

static int parse(const char *body, size_t len, lode_pn_reply *r, char *err, size_t err_len)
{
    return lode_pn_reply_parse(body, len, r, err, err_len);
}

static void test_reply_real(void)
{
    /* The real trial-factoring ga reply quoted in the PrimeNet v5 API's description. */
    const char *ga = "pnErrorResult=0\npnErrorDetail=Server assigned trial factoring work.\n"
                     "g=0123456789abcdef0123456789abcdef\nk=0123456789ABCDEF0123456789ABCDEF\nA=1\nb=2\n"
                     "n=204255473\nc=-1\nw=2\nsf=73\nef=74\n==END==\n";
    lode_pn_reply *r = malloc(sizeof *r);
    char err[512] = "";
    CHECK(parse(ga, strlen(ga), r, err, sizeof err) == 0, "real ga reply: %s", err);
    CHECK(r->code == 0 && strcmp(r->detail, "Server assigned trial factoring work.") == 0, "code %d '%s'", r->code,
          r->detail);
    CHECK(strcmp(lode_pn_reply_get(r, "n"), "204255473") == 0 && strcmp(lode_pn_reply_get(r, "sf"), "73") == 0 &&
          strcmp(lode_pn_reply_get(r, "ef"), "74") == 0 && strcmp(lode_pn_reply_get(r, "c"), "-1") == 0,
          "fields of the ga reply");
    CHECK(lode_pn_reply_get(r, "x") == NULL, "no such field");
    const char *crlf = "pnErrorResult=43\r\npnErrorDetail=Invalid assignment key\r\n==END==\r\nafter=1\n";
    CHECK(parse(crlf, strlen(crlf), r, err, sizeof err) == 0 && r->code == 43 &&
          strcmp(r->detail, "Invalid assignment key") == 0 && lode_pn_reply_get(r, "after") == NULL,
          "CRLF lines, nothing after ==END==: %s", err);
    const char *cr = "pnErrorResult=7\npnErrorDetail=parameter r: Invalid int value\rsecond line\n==END==\n";
    CHECK(parse(cr, strlen(cr), r, err, sizeof err) == 0 && r->code == 7 &&
          strcmp(r->detail, "parameter r: Invalid int value\nsecond line") == 0,
          "a CR within a value is a line break of it: '%s'", r->detail);
    const char *dup = "pnErrorResult=0\npnErrorResult=21\npnErrorDetail=SUCCESS\n\n==END==\n";
    CHECK(parse(dup, strlen(dup), r, err, sizeof err) == 0 && r->code == 0, "the first of two fields counts");
    free(r);
}

static void expect_refused(const char *body, size_t len, const char *why_part, const char *what)
{
    lode_pn_reply *r = malloc(sizeof *r);
    char err[512] = "";
    int rc = parse(body, len, r, err, sizeof err);
    CHECK(rc == -1 && strstr(err, why_part) != NULL, "%s: rc %d, '%s' lacks '%s'", what, rc, err, why_part);
    free(r);
}

static void test_reply_hostile(void)
{
    const char *html = "<!DOCTYPE html>\n<html><body>Error 0x1F: the service is restarting</body></html>\n";
    expect_refused(html, strlen(html), "not name=value", "garbage");
    const char *no_end = "pnErrorResult=0\npnErrorDetail=SUCCESS\n";
    expect_refused(no_end, strlen(no_end), "no ==END==", "no ==END==");
    const char *no_code = "pnErrorDetail=SUCCESS\n==END==\n";
    expect_refused(no_code, strlen(no_code), "no pnErrorResult", "missing pnErrorResult");
    const char *no_detail = "pnErrorResult=0\n==END==\n";
    expect_refused(no_detail, strlen(no_detail), "no pnErrorDetail", "missing pnErrorDetail");
    const char *bad_code = "pnErrorResult=zero\npnErrorDetail=x\n==END==\n";
    expect_refused(bad_code, strlen(bad_code), "not a number", "pnErrorResult=zero");
    expect_refused("", 0, "no ==END==", "an empty reply");
    const char nul[] = "pnErrorResult=0\npnErrorDetail=SU\0CCESS\n==END==\n";
    expect_refused(nul, sizeof nul - 1, "NUL", "a NUL byte");
    size_t huge_len = LODE_PN_REPLY_MAX + 100;
    char *huge = malloc(huge_len + 1);
    memset(huge, 'A', huge_len);
    memcpy(huge, "pnErrorResult=0\npnErrorDetail=SUCCESS\nx=", 40);
    memcpy(huge + huge_len - 9, "\n==END==\n", 9);
    huge[huge_len] = '\0';
    expect_refused(huge, huge_len, "longer than 64 KiB", "a huge reply");
    /* A long value within the limit is cut, not overflowed. */
    huge_len = 4000;
    memcpy(huge + huge_len - 9, "\n==END==\n", 9);
    lode_pn_reply *r = malloc(sizeof *r);
    char err[512] = "";
    CHECK(parse(huge, huge_len, r, err, sizeof err) == 0 && strlen(lode_pn_reply_get(r, "x")) == LODE_PN_VALUE_MAX - 1,
          "a long value is cut: %s", err);
    /* Too many fields. */
    size_t o = (size_t)sprintf(huge, "pnErrorResult=0\npnErrorDetail=SUCCESS\n");
    for (int i = 0; i < LODE_PN_FIELDS_MAX; i++)
        o += (size_t)sprintf(huge + o, "f%d=%d\n", i, i);
    o += (size_t)sprintf(huge + o, "==END==\n");
    expect_refused(huge, o, "too many fields", "too many fields");
    /* Random bytes: refused or parsed, never a crash; a refusal says why. */
    for (int round = 0; round < 2000; round++) {
        size_t n = test_rand() % 300;
        test_rand_bytes((uint8_t *)huge, n);
        if (round % 2)
            memcpy(huge, "pnErrorResult=0\npnErrorDetail=", n < 30 ? n : 30);
        err[0] = '\0';
        int rc = parse(huge, n, r, err, sizeof err);
        CHECK(rc == 0 || (rc == -1 && err[0] != '\0'), "random reply %d: rc %d", round, rc);
    }
    free(r);
    free(huge);
}

static void test_url(void)
{
    const char *good[] = {LODE_PN_DEFAULT_URL, "http://127.0.0.1:8080/v5server/", "http://127.9.8.7/v5server/",
                          "http://localhost:1/", "http://[::1]:5000/v5server/", "https://mirror.example/v5/"};
    const char *bad[] = {"http://v5.mersenne.org/v5server/", "http://127.0.0.1.example.com/", "ftp://127.0.0.1/",
                         "https://user:pw@v5.mersenne.org/", "https://v5.mersenne.org/v5server/?x=1",
                         "https://v5.mersenne.org/#top", "not a url", "http://10.0.0.1/"};
    char err[512];
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        CHECK(lode_pn_url_check(good[i], err, sizeof err) == 0, "%s: %s", good[i], err);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK(lode_pn_url_check(bad[i], err, sizeof err) == -1 && err[0] != '\0', "%s refused", bad[i]);
    CHECK(lode_pn_url_check("http://v5.mersenne.org/v5server/", err, sizeof err) == -1 &&
          strstr(err, "loopback") != NULL, "the message says why: %s", err);
}

static bool lower_hex32(const char *s)
{
    return strlen(s) == 32 && strspn(s, "0123456789abcdef") == 32;
}

static void test_state(void)
{
    lode_pn_state s, t;
    char err[512] = "";
    const char *path = test_path("primenet.json");
    CHECK(lode_pn_state_load(path, &s, err, sizeof err) == 0 && lower_hex32(s.guid) && lower_hex32(s.hardware_guid) &&
          strcmp(s.guid, s.hardware_guid) != 0 && !s.registered, "no file: fresh GUIDs %s %s", s.guid, err);
    s.registered = s.options_sent = true;
    s.od = 7;
    snprintf(s.user, sizeof s.user, "%s", "m\xc3\xa9 \"x\"");
    snprintf(s.computer, sizeof s.computer, "box");
    s.work_pref = 2;
    s.days_of_work = 0.25;
    CHECK(lode_pn_state_save(path, &s) == 0, "saved");
    CHECK(lode_pn_state_load(path, &t, err, sizeof err) == 1 && memcmp(&s, &t, sizeof s) == 0, "read back: %s", err);
    const char *broken[] = {"{\"version\": 1, \"guid\": \"", "[]", "{\"version\": 2}",
                            "{\"version\": 1, \"guid\": \"0123456789ABCDEF0123456789ABCDEF\", \"hardware_guid\": "
                            "\"0123456789ABCDEF0123456789ABCDEF\"}",
                            "{\"version\": 1, \"guid\": \"0123456789abcdef0123456789abcdef\", \"hardware_guid\": "
                            "\"0123456789ABCDEF0123456789ABCDEF\", \"od\": \"x\"}"};
    for (size_t i = 0; i < sizeof broken / sizeof broken[0]; i++) {
        test_put_text(path, broken[i]);
        err[0] = '\0';
        CHECK(lode_pn_state_load(path, &t, err, sizeof err) == -1 && strstr(err, path) != NULL &&
              strstr(err, "remove it") != NULL && test_file_is_text(path, broken[i]),
              "broken state %zu refused and kept: %s", i, err);
    }
}

static void test_sent(void)
{
    const char *path = test_path("results_sent.txt");
    lode_pn_sent s;
    CHECK(lode_pn_sent_load(path, &s) == 0 && s.count == 0, "no file: empty");
    const char *a = "{\"exponent\": 100003, \"x\": 1}", *b = "{\"exponent\": 100019}";
    CHECK(lode_pn_sent_record(path, a, strlen(a)) == 0 && lode_pn_sent_record(path, b, strlen(b)) == 0, "recorded");
    char want[256];
    snprintf(want, sizeof want, "%s\n%s\n", a, b);
    CHECK(test_file_is_text(path, want), "appended verbatim, a line each");
    CHECK(lode_pn_sent_load(path, &s) == 0 && s.count == 2, "two lines");
    CHECK(lode_pn_sent_has(&s, a, strlen(a)) && lode_pn_sent_has(&s, b, strlen(b)), "both found");
    CHECK(!lode_pn_sent_has(&s, a, strlen(a) - 1) && !lode_pn_sent_has(&s, "{}", 2), "only whole lines");
    lode_pn_sent_free(&s);
}

static void test_worktodo_edits(void)
{
    const char *wt = test_path("worktodo.txt");
    unlink(wt);
    CHECK(lode_tf_worktodo_append(wt, "Factor=K,100003,1,30", 20) == 0 && test_file_is_text(wt, "Factor=K,100003,1,30\n"),
          "a missing file is created, the line ended");
    test_put_text(wt, "// keep\r\nFactor=100003,1,30");
    CHECK(lode_tf_worktodo_append(wt, "Factor=100019,1,30\nFactor=100043,1,30\n", 38) == 0 &&
          test_file_is_text(wt, "// keep\r\nFactor=100003,1,30\nFactor=100019,1,30\nFactor=100043,1,30\n"),
          "a last line without a newline gets one; the rest stays");
    lode_tf_assignment b = test_assignment("Factor=100019,1,30");
    CHECK(lode_tf_worktodo_replace(wt, &b, "Factor=0123456789ABCDEF0123456789ABCDEF,100019,1,30", 51) == 0 &&
          test_file_is_text(wt, "// keep\r\nFactor=100003,1,30\nFactor=0123456789ABCDEF0123456789ABCDEF,100019,1,30\n"
                      "Factor=100043,1,30\n"), "a line replaced in place");
    /* The driver still removes the line it ran, now with its key. */
    CHECK(lode_tf_worktodo_remove(wt, &b) == 0 &&
          test_file_is_text(wt, "// keep\r\nFactor=100003,1,30\nFactor=100043,1,30\n"), "the keyed copy is removed");
    test_put_text(wt, "Factor=N/A,100003,1,30\nFactor=0123456789ABCDEF0123456789ABCDEZ,100003,1,30\n");
    lode_tf_assignment a = test_assignment("Factor=100003,1,30");
    CHECK(lode_tf_worktodo_remove(wt, &a) == 0 &&
          test_file_is_text(wt, "Factor=N/A,100003,1,30\nFactor=0123456789ABCDEF0123456789ABCDEZ,100003,1,30\n"),
          "only a 32-hex key makes a keyed copy");
    lode_tf_assignment na = test_assignment("Factor=N/A,100003,1,30");
    CHECK(lode_tf_worktodo_replace(wt, &na, NULL, 0) == 0 &&
          test_file_is_text(wt, "Factor=0123456789ABCDEF0123456789ABCDEZ,100003,1,30\n"), "replace with NULL removes");
    CHECK(lode_tf_worktodo_replace(wt, &na, NULL, 0) == 0 &&
          test_file_is_text(wt, "Factor=0123456789ABCDEF0123456789ABCDEZ,100003,1,30\n"), "a line already gone: no change");
}

/* Appends (the client) and removals (the driver) at once lose nothing. */
static void *appender(void *arg)
{
    const char *wt = arg;
    for (int i = 0; i < 100; i++) {
        char line[64];
        int n = snprintf(line, sizeof line, "Factor=N/A,%d,1,30\n", 200000 + i);
        if (lode_tf_worktodo_append(wt, line, (size_t)n) != 0)
            return (void *)1;
    }
    return NULL;
}

static void test_worktodo_concurrent(void)
{
    const char *wt = test_path("busy.txt");
    char text[8192] = "";
    size_t o = 0;
    for (int i = 0; i < 100; i++)
        o += (size_t)snprintf(text + o, sizeof text - o, "Factor=N/A,%d,1,30\n", 100000 + i);
    test_put_text(wt, text);
    pthread_t t;
    pthread_create(&t, NULL, appender, (void *)wt);
    int failed = 0;
    for (int i = 0; i < 100; i++) {
        char line[64];
        snprintf(line, sizeof line, "Factor=N/A,%d,1,30", 100000 + i);
        lode_tf_assignment a = {.aid = "N/A"}; /* removal matches the line's bytes (100000+i need not be prime) */
        memcpy(a.line, line, strlen(line));
        a.line_len = strlen(line);
        failed += lode_tf_worktodo_remove(wt, &a) != 0;
    }
    void *rc;
    pthread_join(t, &rc);
    o = 0;
    for (int i = 0; i < 100; i++)
        o += (size_t)snprintf(text + o, sizeof text - o, "Factor=N/A,%d,1,30\n", 200000 + i);
    CHECK(failed == 0 && rc == NULL && test_file_is_text(wt, text), "every append kept, every removal done");
}

/* The os and architecture names of PrimeNet's result JSON (the PrimeNet v5
 * API: Linux/Windows/macOS, x86_64/x86_32/ARM64). */
static void test_result_names(void)
{
    const char *arch[][2] = {{"x86_64", "x86_64"}, {"amd64", "x86_64"}, {"aarch64", "ARM64"}, {"arm64", "ARM64"},
                             {"i686", "x86_32"}, {"i386", "x86_32"}, {"riscv64", "riscv64"}};
    for (size_t i = 0; i < sizeof arch / sizeof arch[0]; i++)
        CHECK(strcmp(lode_tf_result_arch(arch[i][0]), arch[i][1]) == 0, "%s -> %s", arch[i][0], arch[i][1]);
    CHECK(strcmp(lode_tf_result_os("Darwin"), "macOS") == 0 && strcmp(lode_tf_result_os("Linux"), "Linux") == 0,
          "Darwin is macOS");
}

static lode_primenet_config client_config(const char *url)
{
    return (lode_primenet_config){.url = url, .user = "ANONYMOUS", .computer = "box", .work_pref = 12,
                                  .days_of_work = 1, .program_version = "0.1.0", .cpu_model = "test device",
                                  .worktodo = test_path("c-worktodo.txt"), .results = test_path("c-results.json.txt"),
                                  .state_file = test_path("c-primenet.json"), .sent_file = test_path("c-sent.txt"),
                                  .retry_s = 6, .timeout_s = 60};
}

static void sleep_s(double s)
{
    struct timespec ts = {.tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

/* A server that refuses connections: the status says so (state, the
 * error, the results queued, the next contact); a stop ends the client at
 * once. */
static void test_client_status(void)
{
    test_put_text(test_path("c-results.json.txt"),
             "{\"exponent\": 100003, \"worktype\": \"TF\", \"status\": \"NF\", \"bitlo\": 1, \"bithi\": 30, "
             "\"rangecomplete\": true}\nnot json\n{\"exponent\": 100019, \"worktype\": \"TF\", \"status\": "
             "\"NF\", \"bitlo\": 1, \"bithi\": 30, \"rangecomplete\": true}\n{\"exponent\": 100043");
    lode_primenet_config cfg = client_config("http://127.0.0.1:1/v5server/");
    char err[512] = "";
    lode_primenet_client *c = lode_primenet_start(&cfg, err, sizeof err);
    CHECK(c != NULL, "started: %s", err);
    if (c == NULL)
        return;
    lode_primenet_status st;
    double t0 = lode_clock_s();
    do {
        sleep_s(0.05);
        lode_primenet_client_status(c, &st);
    } while (strcmp(st.state, "waiting to retry") != 0 && lode_clock_s() - t0 < 10);
    CHECK(strcmp(st.state, "waiting to retry") == 0 && strstr(st.last_error, "t=uc") != NULL,
          "state '%s', error '%s'", st.state, st.last_error);
    CHECK(st.results_queued == 2 && st.results_sent == 0 && st.assignments_fetched == 0,
          "two whole TF lines queued: %llu", (unsigned long long)st.results_queued);
    CHECK(st.next_contact_s > 3 && st.next_contact_s <= 6, "next contact in %.1f s", st.next_contact_s);
    CHECK(!lode_primenet_refused(c), "not refused");
    t0 = lode_clock_s();
    lode_primenet_stop(c);
    CHECK(lode_clock_s() - t0 < 1, "stopped in %.2f s", lode_clock_s() - t0);
}

/* A server that takes the connection and never answers: a stop aborts
 * the call within a second, not after its 60 s. */
static void test_client_stop_in_call(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 4) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
        perror("listen");
        exit(1);
    }
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/v5server/", ntohs(a.sin_port));
    unlink(test_path("c-primenet.json"));
    lode_primenet_config cfg = client_config(url);
    char err[512] = "";
    lode_primenet_client *c = lode_primenet_start(&cfg, err, sizeof err);
    CHECK(c != NULL, "started: %s", err);
    if (c == NULL)
        return;
    sleep_s(0.5);
    lode_primenet_status st;
    lode_primenet_client_status(c, &st);
    CHECK(strcmp(st.state, "registering") == 0, "in the uc call: '%s'", st.state);
    double t0 = lode_clock_s();
    lode_primenet_stop(c);
    CHECK(lode_clock_s() - t0 < 1.5, "a stop in a call took %.2f s", lode_clock_s() - t0);
    close(fd);
}

int main(void)
{
    if (test_root_make("lode-primenet") != 0)
        return 1;
    test_seed();
    test_query();
    test_reply_real();
    test_reply_hostile();
    test_url();
    test_state();
    test_sent();
    test_worktodo_edits();
    test_worktodo_concurrent();
    test_result_names();
    test_client_status();
    test_client_stop_in_call();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", test_root);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", test_root);
    return test_summary();
}
