#include "tests/test_util.h"

#include <time.h>

#include "core/base/hex.h"

int test_passed, test_failed;

void test_print_diff(const uint8_t *got, const uint8_t *want, size_t len)
{
    fputs("  got:  ", stderr);
    for (size_t i = 0; i < len; i++)
        fprintf(stderr, "%02x", got[i]);
    fputs("\n  want: ", stderr);
    for (size_t i = 0; i < len; i++)
        fprintf(stderr, "%02x", want[i]);
    fputc('\n', stderr);
}

json_t *test_load_vectors(const char *name)
{
    /* The build's own source tree, unless the tests run elsewhere (a copy
     * on a GPU machine) and say where the vectors are. */
    const char *dir = getenv("LODE_VECTORS_DIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir ? dir : LODE_VECTORS_DIR, name);
    json_error_t error;
    json_t *root = json_load_file(path, 0, &error);
    if (root == NULL) {
        fprintf(stderr, "cannot read %s: %s (line %d)\n", path, error.text, error.line);
        exit(1);
    }
    return root;
}

const char *test_json_str(json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    if (s == NULL) {
        fprintf(stderr, "vector without string member '%s'\n", key);
        exit(1);
    }
    return s;
}

uint64_t test_json_uint(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    if (json_is_integer(v) && json_integer_value(v) >= 0)
        return (uint64_t)json_integer_value(v);
    return strtoull(test_json_str(obj, key), NULL, 10);
}

size_t test_json_hex(json_t *obj, const char *key, uint8_t *out, size_t max)
{
    const char *s = test_json_str(obj, key);
    size_t len = strlen(s) / 2;
    if (len > max || lode_hex_decode(s, out, len) != 0) {
        fprintf(stderr, "vector member '%s' is not hex of at most %zu bytes\n", key, max);
        exit(1);
    }
    return len;
}

static uint64_t rng_state;

uint64_t test_seed(void)
{
    static bool seeded;
    static uint64_t seed;
    if (!seeded) {
        const char *env = getenv("LODE_TEST_SEED");
        seed = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL) ^ (uint64_t)clock();
        rng_state = seed;
        seeded = true;
        printf("random seed %llu (replay with LODE_TEST_SEED=%llu)\n", (unsigned long long)seed,
               (unsigned long long)seed);
    }
    return seed;
}

/* splitmix64 */
uint64_t test_rand(void)
{
    test_seed();
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void test_rand_bytes(uint8_t *out, size_t len)
{
    for (size_t i = 0; i < len; i++)
        out[i] = (uint8_t)test_rand();
}

int test_summary(void)
{
    printf("%d passed, %d failed\n", test_passed, test_failed);
    return test_failed ? 1 : 0;
}
