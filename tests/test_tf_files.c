/* Unit tests of trial factoring's files (core/tf): the file reader, the
 * worktodo file and the checkpoint record, without a device (the result
 * lines and the finishing steps: test_tf_results.c). The oracles are
 * mfaktc's formats (worktodo, checkpoints) written out as literal expected text, with
 * CRC-32 values from Python's zlib.crc32 and factors checked there with
 * pow(2, p, q) == 1 (M100003: 6400193; M100043: 200087, 9604129, 47420383). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/log.h"
#include "core/tf/checkpoint.h"
#include "core/tf/class_driver.h"
#include "core/tf/fileio.h"
#include "core/tf/results.h"
#include "core/tf/worktodo.h"
#include "core/base/tf_ref.h"
#include "tests/test_util.h"
#include "tests/tf_test_files.h"

static bool exists(const char *path)
{
    return access(path, F_OK) == 0;
}

/* ---- fileio ---- */

static void test_fileio(void)
{
    CHECK(lode_tf_crc32("123456789", 9) == 0xCBF43926u, "the CRC-32 check value");
    CHECK(lode_tf_crc32("", 0) == 0, "CRC-32 of nothing");

    /* next_line: LF, CRLF, a lone CR inside, no final newline. */
    const char text[] = "a\r\nb\rc\n\nlast";
    const char *line;
    size_t pos = 0, n;
    const char *want[] = {"a", "b\rc", "", "last"};
    int count = 0;
    while (lode_tf_next_line(text, sizeof text - 1, &pos, &line, &n)) {
        CHECK(count < 4 && n == strlen(want[count]) && memcmp(line, want[count], n) == 0, "line %d: '%.*s'",
              count, (int)n, line);
        count++;
    }
    CHECK(count == 4, "4 lines, got %d", count);

    /* Atomic rewrite: the new text whole, no temporary left. */
    const char *f = test_path("atomic.txt");
    test_put_file(f, "old\n", 4);
    CHECK(lode_tf_write_atomic(f, "new\0text\n", 9) == 0, "write_atomic");
    CHECK(test_file_is(f, "new\0text\n", 9), "the new bytes, NUL included");
    CHECK(!exists(test_path("atomic.txt.tmp")), "no temporary left");
    /* The rename fails (a non-empty directory is in the way): an error,
     * the directory intact, no temporary left. */
    const char *dir = test_path("in-the-way");
    mkdir(dir, 0755);
    test_put_file(test_path("in-the-way/x"), "x", 1);
    errno = 0;
    CHECK(lode_tf_write_atomic(dir, "text", 4) == -1 && errno != 0, "rename onto a directory fails: %s",
          strerror(errno));
    CHECK(exists(test_path("in-the-way/x")) && !exists(test_path("in-the-way.tmp")), "nothing changed, no temporary");
    CHECK(lode_tf_write_atomic(test_path("no-such-dir/f"), "x", 1) == -1 && errno == ENOENT, "missing directory");

    /* Reads: a directory and a FIFO are not files. */
    size_t len;
    CHECK(lode_tf_read_file(dir, &len) == NULL && errno == EISDIR, "read of a directory: EISDIR");
    const char *fifo = test_path("fifo");
    if (mkfifo(fifo, 0644) == 0)
        CHECK(lode_tf_read_file(fifo, &len) == NULL && errno == EINVAL, "read of a FIFO: EINVAL, no wait");

    /* Appends: a cut-short last line gets its newline first. */
    const char *r = test_path("append.txt");
    test_put_file(r, "cut short", 9);
    CHECK(lode_tf_append_record(r, "line\n", 5) == 0, "append");
    CHECK(test_file_is(r, "cut short\nline\n", 15), "a newline before the record");
    CHECK(lode_tf_append_record(r, "two\n", 4) == 0 && test_file_is(r, "cut short\nline\ntwo\n", 19), "plain append");
    CHECK(lode_tf_append_record(dir, "x\n", 2) == -1 && errno == EISDIR, "append to a directory fails");
    if (access("/dev/full", W_OK) == 0)
        CHECK(lode_tf_append_record("/dev/full", "x\n", 2) == -1 && errno == ENOSPC, "append to a full disk: %s",
              strerror(errno));
}

/* ---- worktodo ---- */

static void test_parse_line(void)
{
    struct {
        const char *line;
        int want;
        const char *aid;
        uint32_t p;
        unsigned lo, hi;
    } cases[] = {
        {"Factor=0123456789ABCDEF0123456789abcdef,66362159,64,68", 1, "0123456789ABCDEF0123456789abcdef", 66362159,
         64, 68},
        {"Factor=66362159,64,68", 1, "", 66362159, 64, 68},
        {"factor=N/A,M100043,20,36 trailing comment", 1, "N/A", 100043, 20, 36},
        {"  FACTOR=m100003 , 1 , 30", 1, "", 100003, 1, 30},
        {"", 0, NULL, 0, 0, 0},
        {" \t ", 0, NULL, 0, 0, 0},
        {"// a comment", 0, NULL, 0, 0, 0},
        {"  \\\\ another", 0, NULL, 0, 0, 0},
        {"Factor=bogus,line", -1, NULL, 0, 0, 0},
        {"Test=12345,1,2", -1, NULL, 0, 0, 0},
        {"Factor=100001,1,30", -1, NULL, 0, 0, 0},     /* not prime */
        {"Factor=99991,1,30", -1, NULL, 0, 0, 0},      /* below 100000 */
        {"Factor=100003,0,40", -1, NULL, 0, 0, 0},     /* bit_min 0 */
        {"Factor=100003,40,40", -1, NULL, 0, 0, 0},    /* empty range */
        {"Factor=100003,94,96", -1, NULL, 0, 0, 0},    /* above 95 */
        {"Factor=100003,80,82", -1, NULL, 0, 0, 0},    /* k >= 2^63.9 */
        {"Factor=100003,1,36x", -1, NULL, 0, 0, 0},    /* a number glued to text */
        {"Factor=,100003,1,30", -1, NULL, 0, 0, 0},    /* an empty key */
        {"Factor=1,2,100003,1,30", -1, NULL, 0, 0, 0}, /* four commas */
        {"Factor=4294967311,1,30", -1, NULL, 0, 0, 0}, /* above 2^32 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        lode_tf_assignment a;
        char why[256] = "";
        int r = lode_tf_worktodo_parse_line(cases[i].line, strlen(cases[i].line), &a, why, sizeof why);
        CHECK(r == cases[i].want, "'%s': %d, want %d (%s)", cases[i].line, r, cases[i].want, why);
        if (r < 0)
            CHECK(why[0] != '\0', "'%s': a reason", cases[i].line);
        if (r == 1 && cases[i].want == 1)
            CHECK(strcmp(a.aid, cases[i].aid) == 0 && a.p == cases[i].p && a.bit_min == cases[i].lo &&
                      a.bit_max == cases[i].hi && a.line_len == strlen(cases[i].line) &&
                      memcmp(a.line, cases[i].line, a.line_len) == 0,
                  "'%s': aid '%s' M%u %u..%u", cases[i].line, a.aid, a.p, a.bit_min, a.bit_max);
    }
    /* NUL bytes, anywhere. */
    lode_tf_assignment a;
    char why[256];
    CHECK(lode_tf_worktodo_parse_line("Factor=100019,\0,1,30", 20, &a, why, sizeof why) == -1 &&
              strstr(why, "NUL") != NULL, "a NUL inside: %s", why);
    CHECK(lode_tf_worktodo_parse_line("\0junk", 5, &a, why, sizeof why) == -1, "a NUL first");
    CHECK(lode_tf_worktodo_parse_line("Factor=100003,1,30\0", 19, &a, why, sizeof why) == -1, "a NUL last");
    /* The length limit: 100 bytes are a line, 101 are not. */
    char line[256];
    snprintf(line, sizeof line, "%82sFactor=100003,1,30", "");
    CHECK(strlen(line) == 100 && lode_tf_worktodo_parse_line(line, 100, &a, why, sizeof why) == 1,
          "100 bytes: %s", why);
    snprintf(line, sizeof line, "%83sFactor=100003,1,30", "");
    CHECK(lode_tf_worktodo_parse_line(line, 101, &a, why, sizeof why) == -1 && strstr(why, "longer") != NULL,
          "101 bytes: %s", why);
}

static void test_escape(void)
{
    char out[LODE_TF_ECHO_MAX * 4 + 64];
    lode_tf_worktodo_escape("\x1b[2J\\\0ok\x7f", 9, out, sizeof out);
    CHECK(strcmp(out, "\\x1b[2J\\x5c\\x00ok\\x7f") == 0, "escaped: %s", out);
    char longer[200];
    memset(longer, 'a', sizeof longer);
    lode_tf_worktodo_escape(longer, sizeof longer, out, sizeof out);
    char want[128];
    snprintf(want, sizeof want, "%.80s... (200 bytes)", longer);
    CHECK(strcmp(out, want) == 0, "cut at 80 bytes: %s", out);
    lode_tf_worktodo_escape(longer, sizeof longer, out, 10);
    CHECK(strlen(out) < 10, "never past the buffer: %s", out);
}

static void test_worktodo_file(void)
{
    /* Every malformed kind, CRLF lines and no final newline; the finished
     * lines go, every other byte stays. */
    size_t big = 1 << 20;
    char *text = malloc(big + 512);
    size_t n = 0;
#define ADD(s, len) (memcpy(text + n, (s), (len)), n += (len))
#define ADDS(s) ADD(s, sizeof(s) - 1)
    ADDS("// keep\r\n");
    size_t first_at = n;
    ADDS("Factor=N/A,100003,1,30\r\n");
    size_t first_end = n;
    ADDS("Factor=");
    memset(text + n, '7', big);
    n += big;
    ADDS("\n\0junk\n");
    ADDS("\x1b[2J\x1b[31mFactor=evil\x07\x1b[0m\r\n");
    ADDS("\n");
    size_t last_at = n;
    ADDS("Factor=100043,1,30"); /* no final newline */
#undef ADDS
#undef ADD
    const char *wt = test_path("worktodo.txt");
    test_put_file(wt, text, n);
    lode_log_configure(true, false);
    lode_tf_assignment *list;
    size_t count;
    int bad;
    CHECK(lode_tf_worktodo_load(wt, &list, &count, &bad, true) == 0, "load");
    CHECK(count == 2 && bad == 3, "2 assignments, 3 malformed lines: %zu %d", count, bad);
    if (count == 2) {
        CHECK(list[0].p == 100003 && strcmp(list[0].aid, "N/A") == 0 && list[0].line_len == 22, "first (CRLF)");
        CHECK(list[1].p == 100043 && list[1].line_len == 18, "second (no newline)");
        CHECK(lode_tf_worktodo_remove(wt, &list[0]) == 0, "remove the first");
        memmove(text + first_at, text + first_end, n - first_end);
        n -= first_end - first_at;
        last_at -= first_end - first_at;
        CHECK(test_file_is(wt, text, n), "the CRLF line gone, the rest byte for byte");
        CHECK(lode_tf_worktodo_remove(wt, &list[1]) == 0, "remove the last");
        n = last_at;
        CHECK(test_file_is(wt, text, n), "the last line gone, the rest byte for byte");
        CHECK(lode_tf_worktodo_remove(wt, &list[1]) == 0 && test_file_is(wt, text, n), "a line already gone: no change");
        /* A rewrite that fails (the file replaced by a directory: the
         * rename cannot happen) is an error and changes nothing. */
        unlink(wt);
        CHECK(lode_tf_worktodo_remove(wt, &list[0]) == 0, "no file: nothing to remove");
    }
    free(list);
    free(text);
    /* A missing file is an error to load. */
    CHECK(lode_tf_worktodo_load(test_path("missing.txt"), &list, &count, &bad, false) == -1 && errno == ENOENT,
          "missing worktodo");
    CHECK(lode_tf_worktodo_load(test_root, &list, &count, &bad, false) == -1 && errno == EISDIR, "a directory");
    /* The same lines twice: only the first goes. */
    test_put_file(wt, "Factor=100003,1,30\nFactor=100003,1,30\n", 38);
    lode_tf_assignment a = test_assignment("Factor=100003,1,30");
    CHECK(lode_tf_worktodo_remove(wt, &a) == 0 && test_file_is(wt, "Factor=100003,1,30\n", 19), "one copy removed");
    /* A worktodo file that cannot be rewritten (a directory where the
     * temporary file goes; for test_root too): an error, the file unchanged. */
    test_put_file(wt, "Factor=100003,1,30\nrest\n", 24);
    mkdir(test_path("worktodo.txt.tmp"), 0755);
    CHECK(lode_tf_worktodo_remove(wt, &a) == -1 && errno == EISDIR, "no rewrite: %s", strerror(errno));
    CHECK(test_file_is(wt, "Factor=100003,1,30\nrest\n", 24), "unchanged");
    rmdir(test_path("worktodo.txt.tmp"));
}

static void test_merge_add(void)
{
    const char *dir = test_path("merge");
    mkdir(dir, 0755);
    const char *wt = test_path("merge/worktodo.txt"), *add = test_path("merge/worktodo.add"),
               *merging = test_path("merge/worktodo.add.merging");
    test_put_file(wt, "Factor=N/A,100003,1,34", 22); /* no final newline: the merge adds one */
    test_put_file(add, "Factor=N/A,100043,20,33\n", 24);
    CHECK(lode_tf_worktodo_merge_add(wt) == 24, "24 bytes merged");
    CHECK(test_file_is(wt, "Factor=N/A,100003,1,34\nFactor=N/A,100043,20,33\n", 47), "appended after a newline");
    CHECK(!exists(add) && !exists(merging), "worktodo.add gone");
    CHECK(lode_tf_worktodo_merge_add(wt) == 0, "nothing to merge");
    /* Killed after the rewrite, before the .merging file went: its text
     * already ends the worktodo file, so it is only removed. */
    test_put_file(merging, "Factor=N/A,100043,20,33\n", 24);
    CHECK(lode_tf_worktodo_merge_add(wt) == 0, "already merged: 0 bytes");
    CHECK(test_file_is(wt, "Factor=N/A,100003,1,34\nFactor=N/A,100043,20,33\n", 47) && !exists(merging),
          "not added twice");
    /* Killed after the rename, before the rewrite: merged now, and a new
     * worktodo.add after it. */
    test_put_file(merging, "Factor=100019,1,30\n", 19);
    test_put_file(add, "Factor=100057,1,30\n", 19);
    CHECK(lode_tf_worktodo_merge_add(wt) == 38, "both merged");
    CHECK(test_file_is(wt, "Factor=N/A,100003,1,34\nFactor=N/A,100043,20,33\nFactor=100019,1,30\nFactor=100057,1,30\n",
                  85), "in order");
    /* A directory named worktodo.add is left alone. */
    mkdir(add, 0755);
    CHECK(lode_tf_worktodo_merge_add(wt) == -1 && errno == EISDIR, "worktodo.add a directory: EISDIR");
    struct stat st;
    CHECK(stat(add, &st) == 0 && S_ISDIR(st.st_mode), "and kept");
    rmdir(add);
}

static void test_lock(void)
{
    const char *wt = test_path("locked.txt");
    test_put_file(wt, "", 0);
    int fd = lode_tf_worktodo_lock(wt);
    CHECK(fd >= 0, "first lock");
    char pid[32];
    snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    CHECK(test_file_is(test_path("locked.txt.lock"), pid, strlen(pid)), "the pid in the lock file");
    int again = lode_tf_worktodo_lock(wt); /* a second open file: flock refuses it */
    CHECK(again == -1, "second lock refused");
    if (again >= 0)
        close(again);
    close(fd);
    fd = lode_tf_worktodo_lock(wt);
    CHECK(fd >= 0, "free again once closed");
    if (fd >= 0)
        close(fd);
}

/* ---- checkpoint ---- */

static const char running_text[] = "lode-tf-checkpoint 1\nexponent 100003\nbits 1 30\nnext_class 17\n"
                                    "classes_done 5\nclass_log 12\nfactors 2 32 7\ncrc32 090522B8\n";
static const char pending_text[] = "lode-tf-checkpoint 1\nexponent 100003\nbits 1 30\nnext_class 4620\n"
                                    "classes_done 960\nclass_log 0\nfactors 1 32\naid N/A\nresults_offset 100\n"
                                    "legacy_offset -1\ncrc32 2845E3BF\n";
static const char reported_text[] = "lode-tf-checkpoint 1\nexponent 100003\nbits 1 30\nnext_class 4620\n"
                                     "classes_done 960\nclass_log 0\nfactors 1 32\naid N/A\nreported 1\n"
                                     "crc32 6294C448\n";

/* Every class done, with the factor 6400193 (k = 32). */
static lode_tf_progress finished_progress(void)
{
    lode_tf_progress done;
    lode_tf_progress_init(&done);
    done.next_class = LODE_TF_CLASSES;
    done.classes_done = LODE_TF_NEEDED_CLASSES;
    done.factors = 1;
    done.k[0] = 32;
    return done;
}

static void test_checkpoint_format(void)
{
    lode_tf_assignment a = test_assignment("Factor=N/A,100003,1,30");
    lode_tf_progress pr;
    lode_tf_progress_init(&pr);
    pr.next_class = 17;
    pr.classes_done = 5;
    pr.class_log_offset = 12;
    pr.factors = 2;
    pr.k[0] = 32;
    pr.k[1] = 7;
    char buf[4096];
    int n = lode_tf_checkpoint_format(&a, &pr, buf, sizeof buf);
    CHECK(n == (int)strlen(running_text) && memcmp(buf, running_text, (size_t)n) == 0, "running record:\n%.*s",
          n > 0 ? n : 0, buf);
    lode_tf_progress back;
    CHECK(lode_tf_checkpoint_parse(buf, (size_t)n, &a, &back) == 1 && back.next_class == 17 &&
              back.classes_done == 5 && back.class_log_offset == 12 && back.factors == 2 && back.k[0] == 32 &&
              back.k[1] == 7 && back.state == LODE_TF_CKP_RUNNING && back.results_offset == -1,
          "running record read back");
    CHECK(lode_tf_checkpoint_format(&a, &pr, buf, 50) == -1, "too small a buffer: -1");

    lode_tf_progress done = finished_progress();
    done.state = LODE_TF_CKP_PENDING;
    done.results_offset = 100;
    n = lode_tf_checkpoint_format(&a, &done, buf, sizeof buf);
    CHECK(n == (int)strlen(pending_text) && memcmp(buf, pending_text, (size_t)n) == 0, "pending record:\n%.*s",
          n > 0 ? n : 0, buf);
    CHECK(lode_tf_checkpoint_parse(buf, (size_t)n, &a, &back) == 1 && back.state == LODE_TF_CKP_PENDING &&
              back.results_offset == 100 && back.legacy_offset == -1 && strcmp(back.aid, "N/A") == 0,
          "pending record read back");
    done.state = LODE_TF_CKP_REPORTED;
    n = lode_tf_checkpoint_format(&a, &done, buf, sizeof buf);
    CHECK(n == (int)strlen(reported_text) && memcmp(buf, reported_text, (size_t)n) == 0, "reported record:\n%.*s",
          n > 0 ? n : 0, buf);
    CHECK(lode_tf_checkpoint_parse(buf, (size_t)n, &a, &back) == 1 && back.state == LODE_TF_CKP_REPORTED,
          "reported record read back");

    /* 64 factors of 20 digits and a 63-character key fit. */
    lode_tf_assignment big = test_assignment("Factor=ABCDEFGHIJABCDEFGHIJABCDEFGHIJABCDEFGHIJABCDEFGHIJABCDEFGHIJABC,100003,1,30");
    done.factors = LODE_TF_MAX_FACTORS;
    for (int i = 0; i < LODE_TF_MAX_FACTORS; i++)
        done.k[i] = UINT64_MAX - (uint64_t)i;
    done.state = LODE_TF_CKP_PENDING;
    n = lode_tf_checkpoint_format(&big, &done, buf, sizeof buf);
    CHECK(n > 0 && lode_tf_checkpoint_parse(buf, (size_t)n, &big, &back) == 1 && back.factors == 64 &&
              back.k[63] == UINT64_MAX - 63 && strcmp(back.aid, big.aid) == 0,
          "the largest record round-trips (%d bytes)", n);
}

/* A proof line round-trips; a record whose proof line is damaged under a
 * good checksum is refused. */
static void test_checkpoint_proof(void)
{
    lode_tf_assignment a = test_assignment("Factor=N/A,100003,1,30");
    lode_tf_progress done = finished_progress();
    done.state = LODE_TF_CKP_REPORTED;
    done.results_offset = 100;
    lode_tf_progress back;
    char buf[4096];
    int n;
    lode_tf_progress kept = done;
    kept.state = LODE_TF_CKP_RUNNING;
    kept.proof_kept = true;
    kept.proof_bits = 30;
    kept.proof_count = 3;
    kept.proof_k[0] = 5;
    kept.proof_k[1] = 6;
    kept.proof_k[2] = UINT64_MAX;
    n = lode_tf_checkpoint_format(&a, &kept, buf, sizeof buf);
    CHECK(n > 0 && strstr(buf, "\nproof 30 3 5 6 18446744073709551615\n") != NULL, "proof line:\n%.*s",
          n > 0 ? n : 0, buf);
    CHECK(lode_tf_checkpoint_parse(buf, (size_t)n, &a, &back) == 1 && back.proof_kept && back.proof_bits == 30 &&
              back.proof_count == 3 && back.proof_k[1] == 6 && back.proof_k[2] == UINT64_MAX,
          "proof read back");
    CHECK(lode_tf_checkpoint_parse(running_text, strlen(running_text), &a, &back) == 1 && !back.proof_kept,
          "a record without a proof line keeps no proof");
    static const char *const bad_proofs[] = {"proof 30 4 5 6 7\n", "proof 30 2 5 6 7\n", "proof 65 0\n",
                                             "proof 30 1 x\n", "proof 30 1 -\n", "proof 30\n"};
    for (size_t i = 0; i < sizeof bad_proofs / sizeof bad_proofs[0]; i++) {
        char body[512], rec[600];
        int m = snprintf(body, sizeof body, "lode-tf-checkpoint 1\nexponent 100003\nbits 1 30\nnext_class 17\n"
                         "classes_done 5\nclass_log 12\nfactors 0\n%s", bad_proofs[i]);
        m = snprintf(rec, sizeof rec, "%scrc32 %08X\n", body, (unsigned)lode_tf_crc32(body, (size_t)m));
        CHECK(lode_tf_checkpoint_parse(rec, (size_t)m, &a, &back) == -1, "damaged proof line refused: %s",
              bad_proofs[i]);
    }
    /* The largest proof fits the buffer lode_tf_checkpoint_save sizes. */
    kept.proof_count = LODE_TF_PROOF_MAX;
    for (unsigned i = 0; i < LODE_TF_PROOF_MAX; i++)
        kept.proof_k[i] = UINT64_MAX - i;
    char *large = malloc(lode_tf_checkpoint_size(&kept));
    n = large ? lode_tf_checkpoint_format(&a, &kept, large, lode_tf_checkpoint_size(&kept)) : -1;
    CHECK(n > 0 && lode_tf_checkpoint_parse(large, (size_t)n, &a, &back) == 1 &&
              back.proof_count == LODE_TF_PROOF_MAX && back.proof_k[LODE_TF_PROOF_MAX - 1] == UINT64_MAX - 4095,
          "a full proof round-trips (%d bytes)", n);
    free(large);
}

static void test_checkpoint_damage(void)
{
    lode_tf_assignment a = test_assignment("Factor=N/A,100003,1,30");
    lode_tf_progress pr;
    size_t len = strlen(pending_text);
    /* Truncated anywhere before the checksum's last digit: damaged. Only
     * the final newline may go (the checksum is whole). */
    int truncated_ok = 0;
    for (size_t cut = 0; cut + 1 < len; cut++)
        truncated_ok += lode_tf_checkpoint_parse(pending_text, cut, &a, &pr) != -1;
    CHECK(truncated_ok == 0, "%d truncations read as good", truncated_ok);
    CHECK(lode_tf_checkpoint_parse(pending_text, len - 1, &a, &pr) == 1, "the final newline alone may go");
    /* Each byte of the body changed (one bit): damaged. */
    const char *crc_line = strstr(pending_text, "crc32 ");
    int flipped_ok = 0;
    char copy[sizeof pending_text];
    for (size_t i = 0; i < (size_t)(crc_line - pending_text); i++) {
        memcpy(copy, pending_text, len);
        copy[i] ^= 0x01;
        flipped_ok += lode_tf_checkpoint_parse(copy, len, &a, &pr) != -1;
    }
    CHECK(flipped_ok == 0, "%d one-bit changes read as good", flipped_ok);
    memcpy(copy, pending_text, len);
    copy[len - 2] = copy[len - 2] == 'F' ? 'E' : 'F';
    CHECK(lode_tf_checkpoint_parse(copy, len, &a, &pr) == -1, "a wrong checksum");
    /* A NUL byte: damaged, even where the checksum would match. */
    char nul[] = "lode-tf-checkpoint 1\nexponent 100003\0";
    CHECK(lode_tf_checkpoint_parse(nul, sizeof nul - 1, &a, &pr) == -1, "a NUL");
    CHECK(lode_tf_checkpoint_parse("", 0, &a, &pr) == -1, "empty");
    CHECK(lode_tf_checkpoint_parse("crc32 00000000\n", 15, &a, &pr) == -1, "a checksum alone");

}

/* Good records that are not this assignment's, or not usable as they are. */
static void test_checkpoint_other_records(void)
{
    lode_tf_assignment a = test_assignment("Factor=N/A,100003,1,30");
    lode_tf_progress pr;
    size_t len = strlen(pending_text);
    lode_tf_assignment other = test_assignment("Factor=N/A,100019,1,30");
    CHECK(lode_tf_checkpoint_parse(running_text, strlen(running_text), &other, &pr) == 0, "another exponent: 0");
    lode_tf_assignment bits = test_assignment("Factor=N/A,100003,1,31");
    CHECK(lode_tf_checkpoint_parse(running_text, strlen(running_text), &bits, &pr) == 0, "other bits: 0");
    lode_tf_assignment newkey = test_assignment("Factor=0123456789ABCDEF0123456789abcdef,100003,1,30");
    CHECK(lode_tf_checkpoint_parse(pending_text, len, &newkey, &pr) == 1 && pr.state == LODE_TF_CKP_RUNNING &&
              pr.next_class == LODE_TF_CLASSES && pr.factors == 1,
          "another key: the classes kept, the result not (state %d)", pr.state);
    /* A finished state before the last class: damaged (by the checksum a
     * writer made it, so the record itself is wrong). */
    lode_tf_progress half;
    lode_tf_progress_init(&half);
    half.next_class = 17;
    half.state = LODE_TF_CKP_REPORTED;
    char buf[4096];
    int n = lode_tf_checkpoint_format(&a, &half, buf, sizeof buf);
    CHECK(lode_tf_checkpoint_parse(buf, (size_t)n, &a, &pr) == -1, "reported before the last class");
    /* next_class past 4620, more than 64 factors: damaged. */
    half.state = LODE_TF_CKP_RUNNING;
    half.next_class = LODE_TF_CLASSES + 1;
    n = lode_tf_checkpoint_format(&a, &half, buf, sizeof buf);
    CHECK(lode_tf_checkpoint_parse(buf, (size_t)n, &a, &pr) == -1, "next_class 4621");
    /* The record tests/test_tf.py writes by hand (no aid, no legacy_offset):
     * pending for the key "". */
    const char hand[] = "lode-tf-checkpoint 1\nexponent 100003\nbits 1 30\nnext_class 4620\nclasses_done 960\n"
                        "class_log 0\nfactors 1 32\nresults_offset 0\n";
    char with_crc[512];
    int m = snprintf(with_crc, sizeof with_crc, "%scrc32 %08X\n", hand, (unsigned)lode_tf_crc32(hand, strlen(hand)));
    lode_tf_assignment plain = test_assignment("Factor=100003,1,30");
    CHECK(lode_tf_checkpoint_parse(with_crc, (size_t)m, &plain, &pr) == 1 && pr.state == LODE_TF_CKP_PENDING &&
              pr.results_offset == 0 && pr.legacy_offset == -1,
          "a pending record without aid and legacy_offset");
}

/* Files: save and load, a damaged file, an unwritable directory. */
static void test_checkpoint_files(void)
{
    lode_tf_assignment a = test_assignment("Factor=N/A,100003,1,30");
    lode_tf_progress pr;
    size_t len = strlen(pending_text);
    char copy[sizeof pending_text];
    memcpy(copy, pending_text, len);
    copy[len - 2] = copy[len - 2] == 'F' ? 'E' : 'F'; /* a wrong checksum */
    char path[4200];
    lode_tf_checkpoint_path(test_root, &a, path, sizeof path);
    CHECK(strcmp(path + strlen(test_root), "/M100003_1_30.ckp") == 0, "the file name: %s", path);
    lode_tf_progress_init(&pr);
    pr.next_class = 17;
    pr.classes_done = 5;
    pr.class_log_offset = 12;
    pr.factors = 2;
    pr.k[0] = 32;
    pr.k[1] = 7;
    CHECK(lode_tf_checkpoint_save(path, &a, &pr) == 0 && test_file_is(path, running_text, strlen(running_text)),
          "saved as the literal record");
    lode_tf_progress back;
    CHECK(lode_tf_checkpoint_load(path, &a, &back) == 1 && back.next_class == 17, "loaded");
    test_put_file(path, copy, len);
    CHECK(lode_tf_checkpoint_load(path, &a, &back) == -1, "a damaged file: -1");
    unlink(path);
    CHECK(lode_tf_checkpoint_load(path, &a, &back) == 0, "none: 0");
    lode_tf_checkpoint_path(test_path("no-such-dir"), &a, path, sizeof path);
    CHECK(lode_tf_checkpoint_save(path, &a, &pr) == -1 && errno == ENOENT, "unwritable: -1");
}

static void test_remove_stale(void)
{
    const char *dir = test_path("stale");
    mkdir(dir, 0755);
    test_put_file(test_path("stale/M100003_1_30.ckp"), reported_text, strlen(reported_text)); /* its line is gone */
    char other[512];
    snprintf(other, sizeof other, "%s", reported_text);
    test_put_file(test_path("stale/M100003_1_31.ckp"), other, strlen(other)); /* not a record of M100003_1_31 */
    test_put_file(test_path("stale/M100003_01_30.ckp"), reported_text, strlen(reported_text)); /* not our name */
    lode_tf_assignment a = test_assignment("Factor=N/A,100003,1,30");
    /* Listed: kept. */
    lode_tf_checkpoint_remove_stale(dir, &a, 1);
    CHECK(exists(test_path("stale/M100003_1_30.ckp")), "a listed assignment's record is kept");
    lode_tf_checkpoint_remove_stale(dir, NULL, 0);
    CHECK(!exists(test_path("stale/M100003_1_30.ckp")), "a reported record whose line is gone is removed");
    CHECK(exists(test_path("stale/M100003_1_31.ckp")) && exists(test_path("stale/M100003_01_30.ckp")),
          "records that do not match their file name stay");
    /* A running record stays. */
    test_put_file(test_path("stale/M100003_1_30.ckp"), running_text, strlen(running_text));
    lode_tf_checkpoint_remove_stale(dir, NULL, 0);
    CHECK(exists(test_path("stale/M100003_1_30.ckp")), "a running record is kept");
}

int main(void)
{
    if (test_root_make("lode-tf-files") != 0)
        return 1;
    test_fileio();
    test_parse_line();
    test_escape();
    test_worktodo_file();
    test_merge_add();
    test_lock();
    test_checkpoint_format();
    test_checkpoint_proof();
    test_checkpoint_damage();
    test_checkpoint_other_records();
    test_checkpoint_files();
    test_remove_stale();
    test_root_remove();
    return test_summary();
}
