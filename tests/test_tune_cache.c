/* The tuning cache and environment override (core/backend_support/tune_cache.h):
 * - a store loads back, and a missing name loads nothing;
 * - an entry of another driver or lode version is stale: not loaded, and
 *   replaced by the next store of its slot;
 * - entries of two backends for one device live side by side;
 * - a corrupt or hostile file (garbage, wrong JSON types, 10 MB, deep
 *   nesting, a folder) is treated as empty and never crashes;
 * - no temporary file is left behind;
 * - LODE_*_TUNE: off, retune, fixed values per algorithm, malformed text.
 * XDG_CACHE_HOME points at a fresh temporary folder: the user's cache is
 * never touched. */
#include <dirent.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/backend_support/tune_cache.h"
#include "tests/test_util.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static char root[64], lode_dir[128], cache_file[160];

static const char *const names[] = {"threads_per_block", "nonces_per_thread", "waves", "rate"};

static lode_tune_key cuda_key(const char *driver)
{
    return (lode_tune_key){.backend = "cuda", .device = "NVIDIA \"Test\" GPU\\1", .driver = driver,
                           .algo = "sha256d", .variant = "imad"};
}

static lode_tune_key opencl_key(void)
{
    return (lode_tune_key){.backend = "opencl", .device = "NVIDIA \"Test\" GPU\\1", .platform = "NVIDIA CUDA",
                           .driver = "580.1", .algo = "sha256d", .variant = "imad"};
}

static void write_file(const char *bytes, size_t len)
{
    FILE *f = fopen(cache_file, "wb");
    CHECK(f != NULL && fwrite(bytes, 1, len, f) == len && fclose(f) == 0, "writing %s", cache_file);
}

static json_t *read_cache(void)
{
    json_error_t err;
    json_t *j = json_load_file(cache_file, JSON_REJECT_DUPLICATES, &err);
    CHECK(json_is_array(j), "the cache is a JSON array (%s)", j ? "" : err.text);
    return j;
}

/* Files in the cache folder other than tune.json (temporaries left behind). */
static int stray_files(void)
{
    int n = 0;
    DIR *d = opendir(lode_dir);
    for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 && strcmp(e->d_name, "tune.json") != 0;
    if (d != NULL)
        closedir(d);
    return n;
}

static void test_round_trip(void)
{
    lode_tune_key key = cuda_key("580.1 cuda 13000");
    double want[] = {256, 32, 0, 4.125e9}, got[] = {-1, -1, -1, -1};
    CHECK(lode_tune_load(&key, names, got, COUNT(names)) == -1, "no cache yet: nothing loads");
    CHECK(lode_tune_store(&key, names, want, COUNT(names)) == 0, "store");
    CHECK(lode_tune_load(&key, names, got, COUNT(names)) == 0, "load after store");
    for (size_t i = 0; i < COUNT(names); i++)
        CHECK(got[i] == want[i], "%s: got %g, want %g", names[i], got[i], want[i]);

    /* A name the entry lacks: nothing loads and nothing is written. */
    const char *more[] = {"threads_per_block", "missing"};
    double two[] = {-1, -1};
    CHECK(lode_tune_load(&key, more, two, 2) == -1 && two[0] == -1, "an entry without every name is not loaded");

    /* The file: one entry, quotes and backslashes of the name escaped. */
    json_t *j = read_cache();
    json_t *e = json_array_get(j, 0);
    CHECK(json_array_size(j) == 1, "one entry, got %zu", json_array_size(j));
    CHECK(json_is_string(json_object_get(e, "lode")), "the entry names the lode version");
    CHECK(json_is_string(json_object_get(e, "device")) &&
              strcmp(json_string_value(json_object_get(e, "device")), key.device) == 0, "device name kept");
    CHECK(json_is_integer(json_object_get(json_object_get(e, "params"), "threads_per_block")),
          "a whole number is written as an integer");
    json_decref(j);
    CHECK(stray_files() == 0, "no temporary file left behind");

    /* Storing the same slot again replaces the entry. */
    want[0] = 512;
    CHECK(lode_tune_store(&key, names, want, COUNT(names)) == 0, "second store");
    j = read_cache();
    CHECK(json_array_size(j) == 1, "still one entry, got %zu", json_array_size(j));
    json_decref(j);
    CHECK(lode_tune_load(&key, names, got, COUNT(names)) == 0 && got[0] == 512, "the new value loads");
}

static void test_stale(void)
{
    lode_tune_key key = cuda_key("580.1 cuda 13000"), other = cuda_key("590.2 cuda 13010");
    double v[] = {128, 8, 0, 1e9}, got[4] = {0};
    CHECK(lode_tune_store(&key, names, v, 4) == 0, "store");
    CHECK(lode_tune_load(&other, names, got, 4) == -1, "another driver's entry is stale");

    /* Another lode version: rewrite the entry's "lode" field. */
    json_t *j = read_cache();
    json_object_set_new(json_array_get(j, 0), "lode", json_string("0.0.0-old"));
    CHECK(json_dump_file(j, cache_file, 0) == 0, "rewriting the cache");
    json_decref(j);
    CHECK(lode_tune_load(&key, names, got, 4) == -1, "another lode version's entry is stale");

    /* The next store of the slot replaces the stale entry, not adds one. */
    CHECK(lode_tune_store(&other, names, v, 4) == 0, "store for the new driver");
    j = read_cache();
    CHECK(json_array_size(j) == 1, "the stale entry was replaced, got %zu entries", json_array_size(j));
    json_decref(j);
    CHECK(lode_tune_load(&other, names, got, 4) == 0 && got[0] == 128, "the new driver's entry loads");
    CHECK(lode_tune_load(&key, names, got, 4) == -1, "the old driver's entry is gone");
}

static void test_two_backends(void)
{
    remove(cache_file);
    lode_tune_key c = cuda_key("580.1"), o = opencl_key();
    const char *ocl_names[] = {"local_size", "per_item", "batch", "rate"};
    double cv[] = {256, 32, 0, 5e9}, ov[] = {64, 2, 8192, 3e5}, got[4];
    CHECK(lode_tune_store(&c, names, cv, 4) == 0, "cuda store");
    CHECK(lode_tune_store(&o, ocl_names, ov, 4) == 0, "opencl store");
    /* Another variant of the same device is another slot too. */
    lode_tune_key c2 = c;
    c2.variant = "iadd3";
    CHECK(lode_tune_store(&c2, names, ov, 4) == 0, "cuda store, second variant");
    json_t *j = read_cache();
    CHECK(json_array_size(j) == 3, "three entries side by side, got %zu", json_array_size(j));
    json_decref(j);
    CHECK(lode_tune_load(&c, names, got, 4) == 0 && got[0] == 256 && got[3] == 5e9, "cuda entry intact");
    CHECK(lode_tune_load(&o, ocl_names, got, 4) == 0 && got[0] == 64 && got[2] == 8192, "opencl entry intact");
    CHECK(lode_tune_load(&c2, names, got, 4) == 0 && got[0] == 64, "second variant intact");
    /* A platform is part of the slot: the same device on another one is not loaded. */
    lode_tune_key o2 = o;
    o2.platform = "Portable Computing Language";
    CHECK(lode_tune_load(&o2, ocl_names, got, 4) == -1, "another platform's entry is not loaded");
}

/* Loading from the file as it is must fail without a crash, and a store
 * must then leave one valid entry. */
static void check_treated_as_empty(const char *what)
{
    lode_tune_key key = cuda_key("580.1");
    double v[] = {256, 32, 0, 5e9}, got[] = {-7, -7, -7, -7};
    int rc = lode_tune_load(&key, names, got, 4);
    CHECK(rc == -1 && got[0] == -7, "%s: nothing loads", what);
    CHECK(lode_tune_store(&key, names, v, 4) == 0, "%s: a store replaces it", what);
    json_t *j = read_cache();
    CHECK(json_array_size(j) == 1, "%s: one entry after the store, got %zu", what, json_array_size(j));
    json_decref(j);
    CHECK(lode_tune_load(&key, names, got, 4) == 0 && got[0] == 256, "%s: the new entry loads", what);
}

static void test_corrupt(void)
{
    uint8_t garbage[4096];
    test_rand_bytes(garbage, sizeof garbage);
    write_file((const char *)garbage, sizeof garbage);
    check_treated_as_empty("garbage bytes");

    write_file("", 0);
    check_treated_as_empty("an empty file");

    static const char obj[] = "{\"backend\": \"cuda\"}";
    write_file(obj, strlen(obj));
    check_treated_as_empty("an object, not an array");

    /* The entry's slot matches, but its fields have the wrong types. */
    static const char types[] =
        "[1, \"x\", null, [], {\"backend\": 5},\n"
        " {\"backend\": \"cuda\", \"device\": \"NVIDIA \\\"Test\\\" GPU\\\\1\", \"platform\": \"\", \"algo\": "
        "\"sha256d\", \"variant\": \"imad\", \"driver\": \"580.1\", \"lode\": \"" LODE_TEST_VERSION "\", "
        "\"params\": {\"threads_per_block\": \"256\", \"nonces_per_thread\": 32, \"waves\": [], \"rate\": null}},\n"
        " {\"backend\": \"cuda\", \"device\": \"NVIDIA \\\"Test\\\" GPU\\\\1\", \"platform\": \"\", \"algo\": "
        "\"sha256d\", \"variant\": \"imad\", \"driver\": \"580.1\", \"lode\": \"" LODE_TEST_VERSION "\", "
        "\"params\": [256, 32, 0, 1]}]";
    write_file(types, strlen(types));
    check_treated_as_empty("wrong JSON types");

    /* Duplicate keys could make two readers disagree: rejected. */
    static const char dup[] = "[{\"backend\": \"cuda\", \"backend\": \"opencl\"}]";
    write_file(dup, strlen(dup));
    check_treated_as_empty("duplicate keys");

    /* 10 MB: far past any real cache. */
    size_t big = 10u << 20;
    char *buf = malloc(big);
    CHECK(buf != NULL, "malloc");
    if (buf != NULL) {
        size_t len = 1;
        buf[0] = '[';
        for (; len + 4 < big; len += 2)
            memcpy(buf + len, "0,", 2);
        memcpy(buf + len, "0]", 2);
        write_file(buf, len + 2);
        check_treated_as_empty("a 10 MB array");

        /* Deep nesting within the size limit: the parser's depth limit holds. */
        size_t deep = 400000;
        memset(buf, '[', deep);
        memset(buf + deep, ']', deep);
        write_file(buf, 2 * deep);
        check_treated_as_empty("nesting 400000 deep");
        free(buf);
    }

    /* A folder where the file should be: loads nothing, the store fails
     * with a warning, neither crashes. */
    remove(cache_file);
    CHECK(mkdir(cache_file, 0755) == 0, "mkdir %s", cache_file);
    lode_tune_key key = cuda_key("580.1");
    double v[] = {256, 32, 0, 5e9};
    CHECK(lode_tune_load(&key, names, v, 4) == -1, "a folder: nothing loads");
    CHECK(lode_tune_store(&key, names, v, 4) == -1, "a folder: the store fails");
    CHECK(stray_files() == 0, "a failed store leaves no temporary file");
    rmdir(cache_file);

    /* A value with no JSON form is refused, and the file is untouched. */
    double inf[] = {256, 32, 0, INFINITY};
    CHECK(lode_tune_store(&key, names, inf, 4) == -1, "a non-finite value is not stored");
}

static void test_env(void)
{
    const char *cuda[] = {"tpb", "npt", "waves"}, *ocl[] = {"ls", "npt", "il", "batch"};
    double v[4] = {1, 2, 3, 4};
    const char *var = "LODE_CUDA_TUNE"; /* read as LODE_SETTING_CUDA_TUNE */

    unsetenv(var);
    CHECK(lode_tune_env(LODE_SETTING_CUDA_TUNE, "sha256d", cuda, v, 3) == LODE_TUNE_AUTO, "unset: auto");
    setenv(var, "", 1);
    CHECK(lode_tune_env(LODE_SETTING_CUDA_TUNE, "sha256d", cuda, v, 3) == LODE_TUNE_AUTO, "empty: auto");
    setenv(var, "off", 1);
    CHECK(lode_tune_env(LODE_SETTING_CUDA_TUNE, "sha256d", cuda, v, 3) == LODE_TUNE_OFF, "off");
    setenv(var, "retune", 1);
    CHECK(lode_tune_env(LODE_SETTING_CUDA_TUNE, "scrypt", cuda, v, 3) == LODE_TUNE_RETUNE, "retune");
    CHECK(v[0] == 1 && v[1] == 2 && v[2] == 3, "off and retune change no value");

    setenv(var, "sha256d:tpb=256,npt=32;scrypt:tpb=128,waves=2", 1);
    CHECK(lode_tune_env(LODE_SETTING_CUDA_TUNE, "sha256d", cuda, v, 3) == LODE_TUNE_FIXED, "fixed sha256d");
    CHECK(v[0] == 256 && v[1] == 32 && v[2] == 3, "sha256d values: %g %g %g", v[0], v[1], v[2]);
    double s[3] = {1, 2, 3};
    CHECK(lode_tune_env(LODE_SETTING_CUDA_TUNE, "scrypt", cuda, s, 3) == LODE_TUNE_FIXED, "fixed scrypt");
    CHECK(s[0] == 128 && s[1] == 2 && s[2] == 2, "scrypt values: %g %g %g", s[0], s[1], s[2]);
    double o[3] = {1, 2, 3};
    CHECK(lode_tune_env(LODE_SETTING_CUDA_TUNE, "momentum", cuda, o, 3) == LODE_TUNE_AUTO && o[0] == 1,
          "an algorithm the text does not name: auto");

    setenv(var, "sha256d:ls=256,npt=32;scrypt:ls=64,il=2,batch=8192", 1);
    double q[4] = {1, 1, 1, 1};
    CHECK(lode_tune_env(LODE_SETTING_CUDA_TUNE, "scrypt", ocl, q, 4) == LODE_TUNE_FIXED, "opencl keys");
    CHECK(q[0] == 64 && q[1] == 1 && q[2] == 2 && q[3] == 8192, "opencl scrypt values: %g %g %g %g", q[0], q[1],
          q[2], q[3]);

    static const char *const bad[] = {
        "sha256d",                   /* no values */
        "sha256d:",                  /* empty */
        "sha256d:tpb",               /* no '=' */
        "sha256d:tpb=",              /* no number */
        "sha256d:tpb=abc",           /* not a number */
        "sha256d:tpb=-1",            /* signed */
        "sha256d:tpb=0",             /* zero */
        "sha256d:tpb=99999999999",   /* too large */
        "sha256d:bogus=1",           /* unknown key */
        "sha256d:ls=256",            /* another backend's key */
        "sha256d:tpb=256,",          /* trailing comma */
        "sha256d:tpb=256,,npt=1",    /* empty item */
        "sha256d:tpb=256 ",          /* trailing space */
        "sha256d:tpb=256;;",         /* empty segment */
        "sha256d:tpb=256;scrypt",    /* a later segment is malformed */
        ":tpb=256",                  /* no algorithm */
        "OFF",                       /* case matters */
    };
    for (size_t i = 0; i < COUNT(bad); i++) {
        double w[3] = {1, 2, 3};
        setenv(var, bad[i], 1);
        CHECK(lode_tune_env(LODE_SETTING_CUDA_TUNE, "sha256d", cuda, w, 3) == LODE_TUNE_AUTO && w[0] == 1 && w[1] == 2 && w[2] == 3,
              "malformed '%s' reads as auto and changes nothing", bad[i]);
    }
    unsetenv(var);
}

int main(void)
{
    test_seed();
    snprintf(root, sizeof root, "/tmp/lode-tune-test-XXXXXX");
    if (mkdtemp(root) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    setenv("XDG_CACHE_HOME", root, 1);
    snprintf(lode_dir, sizeof lode_dir, "%s/lode", root);
    snprintf(cache_file, sizeof cache_file, "%s/tune.json", lode_dir);

    test_round_trip();
    test_stale();
    test_two_backends();
    test_corrupt();
    test_env();

    remove(cache_file);
    rmdir(lode_dir);
    rmdir(root);
    return test_summary();
}
