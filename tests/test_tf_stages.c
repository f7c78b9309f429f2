/* Unit tests of trial factoring's stages and partial ranges (issue 40,
 * mfaktc's Stages and StopAfterFactor), without a device: a worktodo line
 * raised past a stage, the checkpoint of a partial result, the partial
 * result's lines, and the finishing steps of a stage. The oracles are the
 * formats of mfaktc and PrimeNet v5's result CRC as literal text, the
 * CRC-32 from Python's zlib.crc32 over
 * "100003;TF;6400193;;22;23;0;;;lode;0.1.0;cpu_montgomery;AMD EPYC;Linux;x86_64;2026-01-02 03:04:05"
 * (A4D83C68; with 1 for a whole range: 7EE1E280), and M100003's factor
 * 6400193 = 2 * 32 * 100003 + 1, checked with pow(2, 100003, q) == 1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base/log.h"
#include "core/base/tf_ref.h"
#include "core/tf/checkpoint.h"
#include "core/tf/class_driver.h"
#include "core/tf/fileio.h"
#include "core/tf/results.h"
#include "core/tf/worktodo.h"
#include "tests/test_util.h"
#include "tests/tf_test_files.h"

static void test_raised(void)
{
    struct {
        const char *line;
        unsigned lo;
        const char *want;
    } cases[] = {
        {"Factor=N/A,M100043,20,36 trailing comment", 21, "Factor=N/A,M100043,21,36 trailing comment"},
        {"Factor=0123456789ABCDEF0123456789abcdef,100003, 9 ,12", 10,
         "Factor=0123456789ABCDEF0123456789abcdef,100003, 10 ,12"},
        {"  factor=100003,22,26", 23, "  factor=100003,23,26"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        lode_tf_assignment a = test_assignment(cases[i].line);
        char out[LODE_TF_LINE_MAX + 2];
        int n = lode_tf_worktodo_raised(&a, cases[i].lo, out, sizeof out);
        CHECK(n == (int)strlen(cases[i].want) && strcmp(out, cases[i].want) == 0, "raised '%s': '%s'",
              cases[i].line, n >= 0 ? out : "-1");
        lode_tf_assignment back = test_assignment(out);
        CHECK(back.bit_min == cases[i].lo && back.bit_max == a.bit_max && back.p == a.p, "it parses: %u..%u",
              back.bit_min, back.bit_max);
    }
    /* 100 characters already: one digit more would not be a line; the plain form. */
    char line[LODE_TF_LINE_MAX + 1];
    snprintf(line, sizeof line, "Factor=N/A,100003,9,12%*s", LODE_TF_LINE_MAX - 22, "x");
    lode_tf_assignment a = test_assignment(line);
    char out[LODE_TF_LINE_MAX + 2];
    int n = lode_tf_worktodo_raised(&a, 10, out, sizeof out);
    CHECK(n > 0 && strcmp(out, "Factor=N/A,100003,10,12") == 0, "too long: '%s'", n >= 0 ? out : "-1");
}

static void test_replace(void)
{
    const char *wt = test_path("replace.txt");
    test_put_text(wt, "// top\r\nFactor=N/A,100003,22,26\r\nFactor=N/A,100003,22,26\r\nrest");
    lode_tf_assignment a = test_assignment("Factor=N/A,100003,22,26");
    CHECK(lode_tf_worktodo_replace(wt, &a, "Factor=N/A,100003,23,26", 23) == 0, "replace");
    CHECK(test_file_is_text(wt, "// top\r\nFactor=N/A,100003,23,26\r\nFactor=N/A,100003,22,26\r\nrest"),
          "the first equal line replaced, its CRLF kept, every other byte as it was");
    lode_tf_assignment gone = test_assignment("Factor=100043,1,30");
    CHECK(lode_tf_worktodo_replace(wt, &gone, "x", 1) == 0 &&
              test_file_is_text(wt, "// top\r\nFactor=N/A,100003,23,26\r\nFactor=N/A,100003,22,26\r\nrest"),
          "a line that is not there: nothing changes");
}

static void test_partial_checkpoint(void)
{
    lode_tf_assignment a = test_assignment("Factor=N/A,100003,22,23");
    lode_tf_progress pr;
    lode_tf_progress_init(&pr);
    pr.next_class = 33;
    pr.classes_done = 7;
    pr.factors = 1;
    pr.k[0] = 32;
    pr.partial = true;
    pr.state = LODE_TF_CKP_PENDING;
    pr.results_offset = 10;
    char buf[4096];
    int n = lode_tf_checkpoint_format(&a, &pr, buf, sizeof buf);
    const char head[] = "lode-tf-checkpoint 1\nexponent 100003\nbits 22 23\nnext_class 33\nclasses_done 7\n"
                        "class_log 0\nfactors 1 32\npartial 1\naid N/A\nresults_offset 10\nlegacy_offset -1\n"
                        "crc32 ";
    CHECK(n > 0 && strncmp(buf, head, sizeof head - 1) == 0, "the partial record:\n%s", buf);
    lode_tf_progress back;
    CHECK(lode_tf_checkpoint_parse(buf, (size_t)n, &a, &back) == 1 && back.partial &&
              back.state == LODE_TF_CKP_PENDING && back.next_class == 33 && back.factors == 1 && back.k[0] == 32,
          "read back: partial %d state %d", back.partial, back.state);
    /* Finished before the last class without "partial 1": damaged. */
    pr.partial = false;
    n = lode_tf_checkpoint_format(&a, &pr, buf, sizeof buf);
    CHECK(lode_tf_checkpoint_parse(buf, (size_t)n, &a, &back) == -1, "finished early, not partial: damaged");
    /* A running record never says partial. */
    pr.partial = true;
    pr.state = LODE_TF_CKP_RUNNING;
    n = lode_tf_checkpoint_format(&a, &pr, buf, sizeof buf);
    CHECK(n > 0 && strstr(buf, "partial") == NULL && lode_tf_checkpoint_parse(buf, (size_t)n, &a, &back) == 1 &&
              !back.partial,
          "running: no partial line");
}

static const lode_tf_report_info fixed_info = {.version = "0.1.0", .kernel = "cpu_montgomery",
                                               .details = "AMD EPYC", .os = "Linux", .arch = "x86_64",
                                               .timestamp = "2026-01-02 03:04:05"};

static const char json_partial[] =
    "{\"exponent\": 100003, \"worktype\": \"TF\", \"status\": \"F\", \"bitlo\": 22, \"bithi\": 23, "
    "\"rangecomplete\": false, \"factors\": [\"6400193\"], \"program\": {\"name\": \"lode\", \"version\": \"0.1.0\", "
    "\"kernel\": \"cpu_montgomery\", \"details\": \"AMD EPYC\"}, \"timestamp\": \"2026-01-02 03:04:05\", "
    "\"os\": {\"os\": \"Linux\", \"architecture\": \"x86_64\"}, \"checksum\": {\"version\": 1, \"checksum\": "
    "\"A4D83C68\"}}\n";

static void test_partial_lines(void)
{
    lode_tf_assignment a = test_assignment("Factor=N/A,100003,22,23");
    uint64_t k = 32;
    lode_tf_report_info info = fixed_info;
    info.partial = true;
    char *line = lode_tf_result_json(&a, &k, 1, &info);
    CHECK(line != NULL && strcmp(line, json_partial) == 0, "partial JSON:\n%s", line ? line : "NULL");
    free(line);
    line = lode_tf_result_json(&a, &k, 1, &fixed_info);
    CHECK(line != NULL && strstr(line, "\"rangecomplete\": true") && strstr(line, "\"7EE1E280\""), "whole:\n%s",
          line ? line : "NULL");
    free(line);
    char out[512];
    lode_tf_legacy_lines(&a, &k, 1, &info, true, out, sizeof out);
    CHECK(strcmp(out, "M100003 has a factor: 6400193 [TF:22:23:lode 0.1.0 cpu_montgomery]\n"
                      "found 1 factor for M100003 from 2^22 to 2^23 (partially tested) [lode 0.1.0 "
                      "cpu_montgomery]\n") == 0,
          "partial legacy lines:\n%s", out);
    /* A restart finds the partial summary line as this range's. */
    const char *leg = test_path("partial.txt");
    test_put_text(leg, out);
    CHECK(lode_tf_result_present(leg, 0, &a, false), "the partial summary counts as written");
}

/* A stage's finish: the result of the stage, and the worktodo line raised
 * past it (or removed: its last stage, or a factor that stops the run). */
static void finish_stage(const char *line, unsigned stage_max, int stop_after_factor, int factors,
                         const char *want_worktodo)
{
    lode_tf_driver d;
    lode_tf_driver_init(&d);
    d.worktodo = test_path("stage.txt");
    char results[4200], ckp[4200];
    snprintf(results, sizeof results, "%s", test_path("stage.json"));
    unlink(results);
    d.results = results;
    d.ckp_dir = test_root;
    d.info = fixed_info;
    d.out = NULL;
    d.stop_after_factor = stop_after_factor;
    char text[256];
    snprintf(text, sizeof text, "// top\n%s\nrest\n", line);
    test_put_text(d.worktodo, text);
    lode_tf_assignment stage = test_assignment(line);
    stage.bit_max = stage_max;
    lode_tf_progress pr;
    lode_tf_progress_init(&pr);
    pr.next_class = LODE_TF_CLASSES;
    pr.classes_done = LODE_TF_NEEDED_CLASSES;
    pr.factors = factors;
    pr.k[0] = 32;
    lode_tf_checkpoint_path(test_root, &stage, ckp, sizeof ckp);
    CHECK(lode_tf_driver_finish(&d, &stage, &pr) == LODE_TF_DONE, "%s stage to %u: finished", line, stage_max);
    snprintf(text, sizeof text, "// top\n%s%srest\n", want_worktodo, *want_worktodo ? "\n" : "");
    CHECK(test_file_is_text(d.worktodo, text), "%s stage to %u, stop after factor %d, %d factors: the line", line,
          stage_max, stop_after_factor, factors);
    size_t len;
    char *json = lode_tf_read_file(results, &len);
    char want[64];
    snprintf(want, sizeof want, "\"bitlo\": %u, \"bithi\": %u, ", stage.bit_min, stage_max);
    CHECK(json != NULL && strstr(json, want) != NULL && strchr(json, '\n') == json + len - 1,
          "one result, of the stage: %s", json ? json : "NULL");
    free(json);
    CHECK(access(ckp, F_OK) != 0, "the stage's checkpoint removed");
    lode_tf_driver_destroy(&d);
}

static void test_finish_stage(void)
{
    finish_stage("Factor=N/A,100003,22,26", 23, 1, 0, "Factor=N/A,100003,23,26");
    finish_stage("Factor=N/A,100003,22,26", 23, 1, 1, "");
    finish_stage("Factor=N/A,100003,22,26", 23, 2, 1, "");
    finish_stage("Factor=N/A,100003,22,26", 23, 0, 1, "Factor=N/A,100003,23,26");
    finish_stage("Factor=N/A,100003,25,26", 26, 0, 0, "");
    finish_stage("Factor=N/A,100003,22,26", 26, 0, 0, "");
}

static void test_stale_stage(void)
{
    /* A reported stage checkpoint inside its line stays (its line is not
     * raised yet: the next run does that); past its line, it goes. */
    lode_tf_assignment stage = test_assignment("Factor=N/A,100003,22,23");
    lode_tf_progress pr;
    lode_tf_progress_init(&pr);
    pr.next_class = LODE_TF_CLASSES;
    pr.classes_done = LODE_TF_NEEDED_CLASSES;
    pr.state = LODE_TF_CKP_REPORTED;
    char ckp[4200];
    lode_tf_checkpoint_path(test_root, &stage, ckp, sizeof ckp);
    CHECK(lode_tf_checkpoint_save(ckp, &stage, &pr) == 0, "saved");
    lode_tf_assignment line = test_assignment("Factor=N/A,100003,22,26");
    lode_tf_checkpoint_remove_stale(test_root, &line, 1);
    CHECK(access(ckp, F_OK) == 0, "inside its line: kept");
    lode_tf_assignment raised = test_assignment("Factor=N/A,100003,23,26");
    lode_tf_checkpoint_remove_stale(test_root, &raised, 1);
    CHECK(access(ckp, F_OK) != 0, "the line raised past it: removed");
}

int main(void)
{
    if (test_root_make("lode-tf-stages") != 0)
        return 1;
    lode_log_configure(true, false);
    test_raised();
    test_replace();
    test_partial_checkpoint();
    test_partial_lines();
    test_finish_stage();
    test_stale_stage();
    test_root_remove();
    return test_summary();
}
