#include "tests/tf_test_files.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/tf/fileio.h"

char test_root[64];

int test_root_make(const char *prefix)
{
    snprintf(test_root, sizeof test_root, "/tmp/%s-XXXXXX", prefix);
    if (mkdtemp(test_root) == NULL) {
        perror("mkdtemp");
        return -1;
    }
    return 0;
}

void test_root_remove(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", test_root);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", test_root);
}

const char *test_path(const char *name)
{
    static char paths[8][4200];
    static int next;
    char *p = paths[next++ % 8];
    snprintf(p, sizeof paths[0], "%s/%s", test_root, name);
    return p;
}

void test_put_file(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(text, 1, len, f) != len || fclose(f) != 0) {
        perror(path);
        exit(1);
    }
}

void test_put_text(const char *path, const char *text) { test_put_file(path, text, strlen(text)); }

bool test_file_is(const char *path, const char *want, size_t want_len)
{
    size_t len;
    char *text = lode_tf_read_file(path, &len);
    bool same = text != NULL && len == want_len && memcmp(text, want, len) == 0;
    if (!same)
        fprintf(stderr, "  %s holds %zu bytes: '%.*s'\n  want %zu bytes: '%.*s'\n", path, text ? len : 0,
                text ? (int)(len < 400 ? len : 400) : 0, text ? text : "", want_len,
                (int)(want_len < 400 ? want_len : 400), want);
    free(text);
    return same;
}

bool test_file_is_text(const char *path, const char *want) { return test_file_is(path, want, strlen(want)); }

lode_tf_assignment test_assignment(const char *line)
{
    lode_tf_assignment a;
    char why[256];
    if (lode_tf_worktodo_parse_line(line, strlen(line), &a, why, sizeof why) != 1) {
        fprintf(stderr, "bad test assignment %s: %s\n", line, why);
        exit(1);
    }
    return a;
}
