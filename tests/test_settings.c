/* The LODE_* settings table (core/base/settings.h): each getter on unset,
 * empty, good, malformed and out-of-range values, and the table itself (no
 * name twice, ids in order, every field a kind needs). Which names the
 * sources read is tests/check_settings.py's job. */
#include <limits.h>

#include "core/base/settings.h"
#include "tests/test_util.h"

static void set(const char *name, const char *value)
{
    if (value == NULL)
        unsetenv(name);
    else
        setenv(name, value, 1);
}

static void test_table(void)
{
    size_t n = 0;
    const lode_setting *t = lode_settings(&n);
    CHECK(n == LODE_SETTING_COUNT, "count %zu", n);
    for (size_t i = 0; i < n; i++) {
        CHECK(t[i].id == (lode_setting_id)i, "%s: id %d at %zu", t[i].name, (int)t[i].id, i);
        CHECK(lode_setting_info(t[i].id) == &t[i], "%s: info", t[i].name);
        CHECK(t[i].name != NULL && strncmp(t[i].name, "LODE_", 5) == 0, "entry %zu: a LODE_ name", i);
        CHECK(t[i].help != NULL && t[i].help[0] != '\0' && strchr(t[i].help, '\n') == NULL,
              "%s: one line of help", t[i].name);
        CHECK(t[i].readers != NULL && t[i].readers[0] != '\0', "%s: who reads it", t[i].name);
        if (t[i].kind == LODE_SETTING_UNSIGNED)
            CHECK(t[i].lo <= t[i].dflt && t[i].dflt <= t[i].hi, "%s: default in range", t[i].name);
        else if (t[i].kind == LODE_SETTING_CHOICE)
            CHECK(t[i].words != NULL && t[i].words[0] != NULL, "%s: words", t[i].name);
        if (t[i].kind != LODE_SETTING_UNSIGNED)
            CHECK(t[i].default_text != NULL, "%s: a default to print", t[i].name);
        for (size_t j = 0; j < i; j++)
            CHECK(strcmp(t[i].name, t[j].name) != 0, "%s twice", t[i].name);
    }
    CHECK(lode_setting_info(LODE_SETTING_COUNT) == NULL, "no entry past the end");
}

static void test_text(void)
{
    const char *name = lode_setting_info(LODE_SETTING_TF_CRASH_AT)->name;
    set(name, NULL);
    CHECK(lode_setting_text(LODE_SETTING_TF_CRASH_AT) == NULL, "unset: NULL");
    set(name, "");
    CHECK(lode_setting_text(LODE_SETTING_TF_CRASH_AT) == NULL, "empty: NULL");
    set(name, "pending-saved");
    const char *v = lode_setting_text(LODE_SETTING_TF_CRASH_AT);
    CHECK(v != NULL && strcmp(v, "pending-saved") == 0, "text: %s", v ? v : "(null)");
    set(name, NULL);
}

static void test_flag(void)
{
    const lode_setting_id id = LODE_SETTING_OPENCL_SHOW_ALL;
    const char *name = lode_setting_info(id)->name;
    static const struct {
        const char *value;
        bool want;
    } cases[] = {{NULL, false}, {"", false}, {"0", false}, {"1", true},
                 {"yes", false}, {"2", false}, {"1 ", false}, {"01", false}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        set(name, cases[i].value);
        CHECK(lode_setting_flag(id) == cases[i].want, "flag '%s'", cases[i].value ? cases[i].value : "(unset)");
    }
    set(name, NULL);
}

static void test_unsigned(void)
{
    const lode_setting_id id = LODE_SETTING_MOMENTUM_TABLE_BITS; /* 24..34, default 27 */
    const char *name = lode_setting_info(id)->name;
    static const struct {
        const char *value;
        unsigned want;
    } cases[] = {
        {NULL, 27},  {"", 27},   {"24", 24},  {"30", 30},   {"34", 34},
        {"23", 24},  {"0", 24},  {"35", 34},  {"99999999999999999999999", 34}, /* clamped */
        {"abc", 27}, {"-1", 27}, {"+25", 27}, {" 25", 27},  {"25 ", 27},
        {"25x", 27}, {"0x19", 27}, {"2.5", 27},                                  /* malformed: the default */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        set(name, cases[i].value);
        unsigned got = lode_setting_unsigned(id);
        CHECK(got == cases[i].want, "'%s': %u, want %u", cases[i].value ? cases[i].value : "(unset)", got,
              cases[i].want);
    }

    /* The reader's own default and range. */
    const lode_setting_id tf = LODE_SETTING_TF_LAUNCH_BITS;
    const char *tf_name = lode_setting_info(tf)->name;
    set(tf_name, NULL);
    CHECK(lode_setting_unsigned_in(tf, 26, 17, 28) == 26, "unset: the reader's default");
    set(tf_name, "16");
    CHECK(lode_setting_unsigned_in(tf, 26, 17, 28) == 17, "below: the reader's lower bound");
    CHECK(lode_setting_unsigned_in(tf, 27, 20, 28) == 20, "below another reader's bound");
    set(tf_name, "22");
    CHECK(lode_setting_unsigned_in(tf, 27, 20, 28) == 22, "in range");
    set(tf_name, "29");
    CHECK(lode_setting_unsigned_in(tf, 27, 20, 28) == 28, "above: the upper bound");
    set(tf_name, "twenty");
    CHECK(lode_setting_unsigned_in(tf, 27, 20, 28) == 27, "malformed: the reader's default");
    set(tf_name, NULL);

    /* Absent means off. */
    const lode_setting_id f = LODE_SETTING_TEST_FAIL_SCANS_AFTER;
    const char *f_name = lode_setting_info(f)->name;
    unsigned n = 12345;
    set(f_name, NULL);
    CHECK(!lode_setting_unsigned_given(f, &n) && n == 12345, "unset: not given");
    set(f_name, "");
    CHECK(!lode_setting_unsigned_given(f, &n) && n == 12345, "empty: not given");
    set(f_name, "0");
    CHECK(lode_setting_unsigned_given(f, &n) && n == 0, "0: given");
    set(f_name, "7");
    CHECK(lode_setting_unsigned_given(f, &n) && n == 7, "7: given");
    set(f_name, "4294967295");
    CHECK(lode_setting_unsigned_given(f, &n) && n == UINT_MAX, "UINT_MAX: given");
    set(f_name, "4294967296");
    CHECK(lode_setting_unsigned_given(f, &n) && n == UINT_MAX, "above UINT_MAX: clamped");
    n = 12345;
    set(f_name, "-1");
    CHECK(!lode_setting_unsigned_given(f, &n) && n == 12345, "negative: malformed, not given");
    set(f_name, "x");
    CHECK(!lode_setting_unsigned_given(f, &n), "malformed: not given");
    set(f_name, NULL);
}

static void test_choice(void)
{
    const lode_setting_id id = LODE_SETTING_OPENCL_LOOKUP_GAP; /* 1, 2, 4 */
    const char *name = lode_setting_info(id)->name;
    static const struct {
        const char *value;
        int want;
    } cases[] = {{NULL, -1}, {"", -1}, {"1", 0}, {"2", 1}, {"4", 2}, {"3", -1}, {"8", -1}, {"04", -1}, {"4 ", -1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        set(name, cases[i].value);
        CHECK(lode_setting_choice(id) == cases[i].want, "choice '%s'", cases[i].value ? cases[i].value : "(unset)");
    }
    set(name, NULL);
    /* A kind's getter on another kind's variable reads nothing. */
    CHECK(lode_setting_choice(LODE_SETTING_TF_CRASH_AT) == -1, "no words: -1");
}

static void test_print(void)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK(f != NULL, "memstream");
    if (f == NULL)
        return;
    lode_settings_print(f);
    fclose(f);
    size_t n = 0;
    const lode_setting *t = lode_settings(&n);
    for (size_t i = 0; i < n; i++)
        CHECK(strstr(buf, t[i].name) != NULL, "--help-env lists %s", t[i].name);
    const char *hooks = strstr(buf, "Test hooks");
    const char *crash = strstr(buf, "LODE_TF_CRASH_AT"), *tune = strstr(buf, "LODE_CUDA_TUNE");
    CHECK(hooks != NULL && crash > hooks && tune < hooks, "test hooks under their own heading, last");
    free(buf);
}

int main(void)
{
    test_table();
    test_text();
    test_flag();
    test_unsigned();
    test_choice();
    test_print();
    printf("%d passed, %d failed\n", test_passed, test_failed);
    return test_failed ? 1 : 0;
}
