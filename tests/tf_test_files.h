/* A temporary folder and whole-file helpers for the unit tests of the tf
 * files and the PrimeNet client (test_tf_files.c, test_tf_stages.c,
 * test_primenet.c). */
#ifndef LODE_TESTS_TF_TEST_FILES_H
#define LODE_TESTS_TF_TEST_FILES_H

#include <stdbool.h>
#include <stddef.h>

#include "core/tf/worktodo.h"

/* The folder, once test_root_make made it. */
extern char test_root[64];

/* Makes /tmp/PREFIX-XXXXXX: 0, or -1 (said). */
int test_root_make(const char *prefix);
/* Removes it with all it holds. */
void test_root_remove(void);
/* test_root/name (eight buffers in turn: up to eight live at once). */
const char *test_path(const char *name);
/* Writes the file whole (exits on failure: the test cannot go on). */
void test_put_file(const char *path, const char *text, size_t len);
void test_put_text(const char *path, const char *text);
/* Whether the file holds exactly want[0..want_len); says what it holds if not. */
bool test_file_is(const char *path, const char *want, size_t want_len);
bool test_file_is_text(const char *path, const char *want);
/* The assignment of a worktodo line (exits if the line is not one). */
lode_tf_assignment test_assignment(const char *line);

#endif
