/* A small assertion harness for lode's C tests: every check prints what it
 * compared on failure, and main() ends with "N passed, N failed". */
#ifndef LODE_TEST_UTIL_H
#define LODE_TEST_UTIL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern int test_passed, test_failed;

#define CHECK(cond, ...)                                                            \
    do {                                                                            \
        if (cond) {                                                                 \
            test_passed++;                                                          \
        } else {                                                                    \
            test_failed++;                                                          \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);         \
            fprintf(stderr, __VA_ARGS__);                                           \
            fputc('\n', stderr);                                                    \
        }                                                                           \
    } while (0)

/* Compares byte strings and prints both in hex on failure. */
#define CHECK_BYTES(got, want, len, ...)                                            \
    do {                                                                            \
        bool same_ = memcmp((got), (want), (len)) == 0;                             \
        CHECK(same_, __VA_ARGS__);                                                  \
        if (!same_)                                                                 \
            test_print_diff((const uint8_t *)(got), (const uint8_t *)(want), (len)); \
    } while (0)

void test_print_diff(const uint8_t *got, const uint8_t *want, size_t len);
/* Reads tests/vectors/<name> (LODE_VECTORS_DIR is set by CMake). */
json_t *test_load_vectors(const char *name);
/* Hex of a JSON string member; aborts the test on a malformed vector. */
size_t test_json_hex(json_t *obj, const char *key, uint8_t *out, size_t max);
const char *test_json_str(json_t *obj, const char *key);
/* An integer member written either as a JSON number or as a decimal string. */
uint64_t test_json_uint(json_t *obj, const char *key);
/* Deterministic random numbers; the seed comes from LODE_TEST_SEED or the
 * clock, and is printed so a failure can be replayed. */
uint64_t test_seed(void);
uint64_t test_rand(void);
void test_rand_bytes(uint8_t *out, size_t len);
int test_summary(void);

#endif
