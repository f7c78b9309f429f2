/* Unit tests of trial factoring's result lines and the finishing steps of
 * the class driver (core/tf), without a device. The oracles are mfaktc's
 * result formats written out as literal
 * expected text, with factors checked in Python with pow(2, p, q) == 1
 * (M100003: 6400193; M100043: 200087, 9604129, 47420383). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/tf_ref.h"
#include "core/tf/checkpoint.h"
#include "core/tf/class_driver.h"
#include "core/tf/fileio.h"
#include "core/tf/results.h"
#include "core/tf/worktodo.h"
#include "tests/test_util.h"
#include "tests/tf_test_files.h"

static bool exists(const char *path)
{
    return access(path, F_OK) == 0;
}

/* ---- results ---- */

static const lode_tf_report_info fixed_info = {.version = "0.1.0", .kernel = "cpu_montgomery",
                                               .details = "AMD EPYC", .os = "Linux", .arch = "x86_64",
                                               .timestamp = "2026-01-02 03:04:05"};

static const char json_one[] =
    "{\"exponent\": 100003, \"worktype\": \"TF\", \"status\": \"F\", \"bitlo\": 1, \"bithi\": 30, "
    "\"rangecomplete\": true, \"factors\": [\"6400193\"], \"program\": {\"name\": \"lode\", \"version\": \"0.1.0\", "
    "\"kernel\": \"cpu_montgomery\", \"details\": \"AMD EPYC\"}, \"timestamp\": \"2026-01-02 03:04:05\", "
    "\"os\": {\"os\": \"Linux\", \"architecture\": \"x86_64\"}, \"checksum\": {\"version\": 1, \"checksum\": "
    "\"843E1B2E\"}}\n";

static void test_results_json(void)
{
    lode_tf_assignment a = test_assignment("Factor=N/A,100003,1,30");
    uint64_t k = 32;
    char *line = lode_tf_result_json(&a, &k, 1, &fixed_info);
    CHECK(line != NULL && strcmp(line, json_one) == 0, "one factor, key N/A (no aid):\n%s", line ? line : "NULL");
    free(line);

    /* Three factors, a 32-hex key, user and computer that need escaping. */
    lode_tf_assignment b = test_assignment("Factor=0123456789ABCDEF0123456789abcdef,100043,1,30");
    uint64_t ks[] = {1, 48, 237};
    lode_tf_report_info info = fixed_info;
    info.user = "ann \"the miner\"";
    info.computer = "box\\1\t\x1b";
    line = lode_tf_result_json(&b, ks, 3, &info);
    const char want[] =
        "{\"exponent\": 100043, \"worktype\": \"TF\", \"status\": \"F\", \"bitlo\": 1, \"bithi\": 30, "
        "\"rangecomplete\": true, \"factors\": [\"200087\", \"9604129\", \"47420383\"], \"program\": {\"name\": "
        "\"lode\", \"version\": \"0.1.0\", \"kernel\": \"cpu_montgomery\", \"details\": \"AMD EPYC\"}, "
        "\"timestamp\": \"2026-01-02 03:04:05\", \"user\": \"ann \\\"the miner\\\"\", \"computer\": "
        "\"box\\\\1\\t\\u001B\", \"aid\": \"0123456789ABCDEF0123456789abcdef\", \"os\": {\"os\": \"Linux\", "
        "\"architecture\": \"x86_64\"}, \"checksum\": {\"version\": 1, \"checksum\": \"23557A5F\"}}\n";
    CHECK(line != NULL && strcmp(line, want) == 0, "three factors, aid, escapes:\n%s", line ? line : "NULL");
    free(line);

    /* No factor: "NF", no "factors" key; the checksum over an empty list. */
    lode_tf_assignment c = test_assignment("Factor=100043,20,33");
    info = fixed_info;
    info.kernel = "cpu_montgomery+opencl_x";
    info.details = "dev \"1\"";
    line = lode_tf_result_json(&c, NULL, 0, &info);
    const char want_nf[] =
        "{\"exponent\": 100043, \"worktype\": \"TF\", \"status\": \"NF\", \"bitlo\": 20, \"bithi\": 33, "
        "\"rangecomplete\": true, \"program\": {\"name\": \"lode\", \"version\": \"0.1.0\", \"kernel\": "
        "\"cpu_montgomery+opencl_x\", \"details\": \"dev \\\"1\\\"\"}, \"timestamp\": \"2026-01-02 03:04:05\", "
        "\"os\": {\"os\": \"Linux\", \"architecture\": \"x86_64\"}, \"checksum\": {\"version\": 1, \"checksum\": "
        "\"267EDC54\"}}\n";
    CHECK(line != NULL && strcmp(line, want_nf) == 0, "no factor:\n%s", line ? line : "NULL");
    free(line);

    /* With a proof: "lode_proof" after "os", outside the checksum (the same
     * checksum as without). */
    lode_tf_proof_summary proof = {.t = 30, .count = 1287, .expected = 1299.9349, .file = "M100043_20_33.proof"};
    memset(proof.sha256, 'a', 64);
    proof.sha256[64] = '\0';
    info.proof = &proof;
    line = lode_tf_result_json(&c, NULL, 0, &info);
    const char want_proof[] =
        "\"os\": {\"os\": \"Linux\", \"architecture\": \"x86_64\"}, \"lode_proof\": {\"t\": 30, \"count\": 1287, "
        "\"expected\": 1299.9, \"sha256\": \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\", \"file\": "
        "\"M100043_20_33.proof\"}, \"checksum\": {\"version\": 1, \"checksum\": \"267EDC54\"}}\n";
    CHECK(line != NULL && strstr(line, want_proof) != NULL, "with a proof:\n%s", line ? line : "NULL");
    free(line);

    /* Without os, arch and time: uname's and now, still one valid line. */
    info = fixed_info;
    info.os = info.arch = info.timestamp = NULL;
    line = lode_tf_result_json(&a, &k, 1, &info);
    json_t *r = line ? json_loads(line, 0, NULL) : NULL;
    const char *ts = json_string_value(json_object_get(r, "timestamp"));
    CHECK(r != NULL && ts != NULL && strlen(ts) == 19 && ts[4] == '-' && ts[13] == ':', "now: %s",
          line ? line : "NULL");
    json_decref(r);
    free(line);
}

static void test_results_legacy(void)
{
    char out[2048];
    lode_tf_assignment a = test_assignment("Factor=N/A,100003,1,30");
    uint64_t k = 32;
    size_t n = lode_tf_legacy_lines(&a, &k, 1, &fixed_info, true, out, sizeof out);
    const char tagged[] = "M100003 has a factor: 6400193 [TF:1:30:lode 0.1.0 cpu_montgomery]\n"
                          "found 1 factor for M100003 from 2^1 to 2^30 [lode 0.1.0 cpu_montgomery]\n";
    CHECK(n == strlen(tagged) && strcmp(out, tagged) == 0, "results.txt, one factor:\n%s", out);
    lode_tf_legacy_lines(&a, &k, 1, &fixed_info, false, out, sizeof out);
    CHECK(strcmp(out, "M100003 has a factor: 6400193\nfound 1 factor for M100003 from 2^1 to 2^30\n") == 0,
          "stdout, one factor:\n%s", out);
    lode_tf_assignment b = test_assignment("Factor=100043,1,30");
    uint64_t ks[] = {1, 48, 237};
    lode_tf_legacy_lines(&b, ks, 3, &fixed_info, false, out, sizeof out);
    CHECK(strcmp(out, "M100043 has a factor: 200087\nM100043 has a factor: 9604129\nM100043 has a factor: 47420383\n"
                      "found 3 factors for M100043 from 2^1 to 2^30\n") == 0,
          "stdout, three factors:\n%s", out);
    lode_tf_assignment c = test_assignment("Factor=100043,20,33");
    n = lode_tf_legacy_lines(&c, NULL, 0, &fixed_info, true, out, sizeof out);
    CHECK(strcmp(out, "no factor for M100043 from 2^20 to 2^33 [lode 0.1.0 cpu_montgomery]\n") == 0,
          "results.txt, no factor:\n%s", out);
    /* Cut to the buffer, the full length returned. */
    char small[16];
    size_t full = lode_tf_legacy_lines(&c, NULL, 0, &fixed_info, true, small, sizeof small);
    CHECK(full == n && strlen(small) == sizeof small - 1 && memcmp(small, out, sizeof small - 1) == 0,
          "cut: '%s' of %zu", small, full);
}

static void test_results_present(void)
{
    lode_tf_assignment a = test_assignment("Factor=N/A,100003,1,30");
    const char *res = test_path("present.json.txt");
    const char earlier[] = "{\"exponent\": 100019, \"worktype\": \"TF\", \"bitlo\": 1, \"bithi\": 30}\n";
    test_put_file(res, earlier, strlen(earlier));
    long offset = (long)strlen(earlier);
    CHECK(!lode_tf_result_present(res, offset, &a, true), "not there yet");
    CHECK(lode_tf_append_record(res, json_one, strlen(json_one) - 1) == 0, "a line cut short (no newline)");
    CHECK(!lode_tf_result_present(res, offset, &a, true), "a cut-short line does not count");
    test_put_file(res, earlier, strlen(earlier));
    CHECK(lode_tf_append_record(res, json_one, strlen(json_one)) == 0, "append");
    CHECK(lode_tf_result_present(res, offset, &a, true), "there after the offset");
    CHECK(!lode_tf_result_present(res, offset + 1, &a, true), "not from the middle of the line");
    CHECK(!lode_tf_result_present(res, 1 << 20, &a, true), "an offset past the end");
    CHECK(!lode_tf_result_present(res, -1, &a, true), "no offset");
    lode_tf_assignment keyed = test_assignment("Factor=0123456789ABCDEF0123456789abcdef,100003,1,30");
    CHECK(!lode_tf_result_present(res, offset, &keyed, true), "another key: not this assignment's line");
    lode_tf_assignment bits = test_assignment("Factor=N/A,100003,1,31");
    CHECK(!lode_tf_result_present(res, offset, &bits, true), "other bits");

    const char *leg = test_path("present.txt");
    char text[512];
    lode_tf_legacy_lines(&a, (uint64_t[]){32}, 1, &fixed_info, true, text, sizeof text);
    test_put_file(leg, "", 0);
    CHECK(!lode_tf_result_present(leg, 0, &a, false), "legacy: not there");
    CHECK(lode_tf_append_record(leg, text, strlen(text)) == 0 && lode_tf_result_present(leg, 0, &a, false),
          "legacy: the summary line counts");
    lode_tf_assignment other = test_assignment("Factor=100043,1,30");
    CHECK(!lode_tf_result_present(leg, 0, &other, false), "legacy: another exponent");
}

/* ---- the finishing steps ---- */

static void finish_setup(lode_tf_driver *d, const char *dir, FILE *out)
{
    lode_tf_driver_init(d);
    d->worktodo = test_path(dir);
    static char results[4200], legacy[4200], ckp[4200];
    snprintf(results, sizeof results, "%s/%s.json", test_root, dir);
    snprintf(legacy, sizeof legacy, "%s/%s.txt", test_root, dir);
    snprintf(ckp, sizeof ckp, "%s", test_root);
    d->results = results;
    d->legacy = legacy;
    d->ckp_dir = ckp;
    d->info = fixed_info;
    d->out = out;
}

static const char legacy_text[] = "M100003 has a factor: 6400193 [TF:1:30:lode 0.1.0 cpu_montgomery]\n"
                                  "found 1 factor for M100003 from 2^1 to 2^30 [lode 0.1.0 cpu_montgomery]\n";

/* What each finishing case starts from: M100003 from 2^1 to 2^30, every
 * class done with its factor 6400193 (k = 32), and its checkpoint's path. */
typedef struct finish_case {
    lode_tf_assignment a;
    lode_tf_progress done;
    char ckp[4200];
} finish_case;

static void finish_case_init(finish_case *c)
{
    c->a = test_assignment("Factor=N/A,100003,1,30");
    lode_tf_progress_init(&c->done);
    c->done.next_class = LODE_TF_CLASSES;
    c->done.classes_done = LODE_TF_NEEDED_CLASSES;
    c->done.factors = 1;
    c->done.k[0] = 32;
    lode_tf_checkpoint_path(test_root, &c->a, c->ckp, sizeof c->ckp);
}

/* The whole way: both results once, the line and the checkpoint gone,
 * the stdout lines printed. */
static void finish_whole_way(const finish_case *c)
{
    lode_tf_driver d;
    FILE *out = tmpfile();
    finish_setup(&d, "fin.txt", out);
    test_put_file(d.worktodo, "// top\nFactor=N/A,100003,1,30\nrest", 34);
    lode_tf_progress pr = c->done;
    CHECK(lode_tf_driver_finish(&d, &c->a, &pr) == LODE_TF_DONE, "finished");
    CHECK(test_file_is(d.results, json_one, strlen(json_one)), "the JSON line");
    CHECK(test_file_is(d.legacy, legacy_text, strlen(legacy_text)), "the legacy lines");
    CHECK(test_file_is(d.worktodo, "// top\nrest", 11), "the line removed");
    CHECK(!exists(c->ckp), "the checkpoint removed");
    char printed[256] = "";
    rewind(out);
    size_t got = fread(printed, 1, sizeof printed - 1, out);
    printed[got] = '\0';
    CHECK(strcmp(printed, "M100003 has a factor: 6400193\nfound 1 factor for M100003 from 2^1 to 2^30\n") == 0,
          "printed: %s", printed);
    fclose(out);
    lode_tf_driver_destroy(&d);
}

/* The results file cannot be written (a directory): failed, the
 * pending checkpoint and the worktodo line kept; the next call (as a
 * restart that read the checkpoint) writes each result once. */
static void finish_unwritable_results(const finish_case *c)
{
    lode_tf_driver d;
    finish_setup(&d, "fail.txt", NULL);
    test_put_file(d.worktodo, "Factor=N/A,100003,1,30\n", 23);
    mkdir(d.results, 0755);
    lode_tf_progress pr = c->done;
    CHECK(lode_tf_driver_finish(&d, &c->a, &pr) == LODE_TF_FAILED, "unwritable results: failed");
    CHECK(test_file_is(d.worktodo, "Factor=N/A,100003,1,30\n", 23), "the line kept");
    lode_tf_progress back;
    CHECK(lode_tf_checkpoint_load(c->ckp, &c->a, &back) == 1 && back.state == LODE_TF_CKP_PENDING &&
              back.results_offset == 0 && back.legacy_offset == 0,
          "the pending record kept (state %d)", back.state);
    CHECK(test_file_is(d.legacy, legacy_text, strlen(legacy_text)), "the legacy lines were written before");
    rmdir(d.results);
    CHECK(lode_tf_driver_finish(&d, &c->a, &back) == LODE_TF_DONE, "the next run finishes");
    CHECK(test_file_is(d.results, json_one, strlen(json_one)), "the JSON line once");
    CHECK(test_file_is(d.legacy, legacy_text, strlen(legacy_text)), "the legacy lines once (not again)");
    CHECK(test_file_is(d.worktodo, "", 0) && !exists(c->ckp), "line and checkpoint gone");
    lode_tf_driver_destroy(&d);
}

/* Pending with the JSON line already there (killed after the append):
 * not appended again. */
static void finish_json_already_there(const finish_case *c)
{
    lode_tf_driver d;
    finish_setup(&d, "again.txt", NULL);
    d.legacy = NULL;
    test_put_file(d.worktodo, "Factor=N/A,100003,1,30\n", 23);
    test_put_file(d.results, json_one, strlen(json_one));
    lode_tf_progress pr = c->done;
    pr.state = LODE_TF_CKP_PENDING;
    pr.results_offset = 0;
    CHECK(lode_tf_driver_finish(&d, &c->a, &pr) == LODE_TF_DONE, "finished");
    CHECK(test_file_is(d.results, json_one, strlen(json_one)), "still one JSON line");
    lode_tf_driver_destroy(&d);
}

/* Factors found out of order are reported in ascending order. */
static void finish_factors_in_order(const finish_case *c)
{
    lode_tf_driver d;
    finish_setup(&d, "order.txt", NULL);
    lode_tf_assignment b = test_assignment("Factor=100043,1,30");
    test_put_file(d.worktodo, "Factor=100043,1,30\n", 19);
    lode_tf_progress pr = c->done;
    pr.factors = 3;
    pr.k[0] = 237;
    pr.k[1] = 1;
    pr.k[2] = 48;
    const char sorted[] = "M100043 has a factor: 200087 [TF:1:30:lode 0.1.0 cpu_montgomery]\n"
                          "M100043 has a factor: 9604129 [TF:1:30:lode 0.1.0 cpu_montgomery]\n"
                          "M100043 has a factor: 47420383 [TF:1:30:lode 0.1.0 cpu_montgomery]\n"
                          "found 3 factors for M100043 from 2^1 to 2^30 [lode 0.1.0 cpu_montgomery]\n";
    CHECK(lode_tf_driver_finish(&d, &b, &pr) == LODE_TF_DONE && test_file_is(d.legacy, sorted, strlen(sorted)),
          "ascending factors");
    lode_tf_driver_destroy(&d);
}

/* The checkpoint directory cannot be written: the result is not
 * written either (nothing would guard it against a second report). */
static void finish_no_checkpoint_dir(const finish_case *c)
{
    lode_tf_driver d;
    finish_setup(&d, "nockp.txt", NULL);
    d.ckp_dir = test_path("no-such-dir");
    test_put_file(d.worktodo, "Factor=N/A,100003,1,30\n", 23);
    lode_tf_progress pr = c->done;
    CHECK(lode_tf_driver_finish(&d, &c->a, &pr) == LODE_TF_FAILED && !exists(d.results) && !exists(d.legacy),
          "no record, no result");
    lode_tf_driver_destroy(&d);
}

/* The worktodo file cannot be rewritten: failed, the result written
 * once and the record says "reported"; the next run only cleans up. */
static void finish_worktodo_not_rewritable(const finish_case *c)
{
    lode_tf_driver d;
    lode_tf_progress back;
    finish_setup(&d, "norewrite.txt", NULL);
    test_put_file(d.worktodo, "Factor=N/A,100003,1,30\n", 23);
    mkdir(test_path("norewrite.txt.tmp"), 0755);
    lode_tf_progress pr = c->done;
    CHECK(lode_tf_driver_finish(&d, &c->a, &pr) == LODE_TF_FAILED, "worktodo not rewritable: failed");
    rmdir(test_path("norewrite.txt.tmp"));
    CHECK(lode_tf_checkpoint_load(c->ckp, &c->a, &back) == 1 && back.state == LODE_TF_CKP_REPORTED,
          "the record says reported");
    CHECK(test_file_is(d.worktodo, "Factor=N/A,100003,1,30\n", 23), "the line kept");
    CHECK(lode_tf_driver_finish(&d, &c->a, &back) == LODE_TF_DONE && test_file_is(d.results, json_one, strlen(json_one)),
          "the next run only cleans up: still one JSON line");
    CHECK(test_file_is(d.worktodo, "", 0) && !exists(c->ckp), "line and checkpoint gone");
    lode_tf_driver_destroy(&d);
}

static void test_finish(void)
{
    finish_case c;
    finish_case_init(&c);
    finish_whole_way(&c);
    finish_unwritable_results(&c);
    finish_json_already_there(&c);
    finish_factors_in_order(&c);
    finish_no_checkpoint_dir(&c);
    finish_worktodo_not_rewritable(&c);
}

/* Times left as the progress line writes them. */
static void test_eta(void)
{
    char eta[48];
    struct {
        double s;
        const char *want;
    } etas[] = {{0, "0s"}, {59.4, "59s"}, {61, "1m 01s"}, {4 * 3600 + 300, "4h 05m"},
                {3 * 86400 + 4 * 3600 + 5 * 60, "3d 04h 05m"}, {-1, "0s"}};
    for (size_t i = 0; i < sizeof etas / sizeof etas[0]; i++) {
        lode_tf_format_eta(etas[i].s, eta, sizeof eta);
        CHECK(strcmp(eta, etas[i].want) == 0, "ETA %g: %s", etas[i].s, eta);
    }
}

int main(void)
{
    if (test_root_make("lode-tf-results") != 0)
        return 1;
    test_results_json();
    test_results_legacy();
    test_results_present();
    test_finish();
    test_eta();
    test_root_remove();
    return test_summary();
}
