/* The stratum v1 messages: parsing and building, the stratum vectors
 * (notify -> lode_job -> header and hash) and hostile input. */
#include <stdlib.h>
#include <string.h>

#include "core/base/hex.h"
#include "core/base/job.h"
#include "core/base/log.h"
#include "core/base/target.h"
#include "core/stratum/stratum_msg.h"
#include "tests/test_util.h"

static int parse(const char *line, lode_stratum_msg *msg, char *err, size_t err_len)
{
    return lode_stratum_parse_line(line, strlen(line), msg, err, err_len);
}

/* A built line: ends in exactly one newline, and is one JSON object. */
static json_t *built(char *line)
{
    CHECK(line != NULL, "builder returned NULL");
    if (line == NULL)
        return json_null();
    size_t n = strlen(line);
    CHECK(n > 1 && line[n - 1] == '\n' && memchr(line, '\n', n - 1) == NULL, "not one line: %s", line);
    json_t *v = json_loads(line, 0, NULL);
    CHECK(json_is_object(v), "not a JSON object: %s", line);
    free(line);
    return v ? v : json_null();
}

static const char *param_str(json_t *req, size_t i)
{
    const char *s = json_string_value(json_array_get(json_object_get(req, "params"), i));
    return s ? s : "(none)";
}

static void test_builders(void)
{
    json_t *v = built(lode_stratum_build_configure(1, 0x1fffe000, 2));
    CHECK(json_integer_value(json_object_get(v, "id")) == 1, "configure id");
    CHECK(strcmp(json_string_value(json_object_get(v, "method")), "mining.configure") == 0, "configure method");
    json_t *ext = json_array_get(json_object_get(v, "params"), 1);
    CHECK(strcmp(json_string_value(json_object_get(ext, "version-rolling.mask")), "1fffe000") == 0, "mask");
    CHECK(json_integer_value(json_object_get(ext, "version-rolling.min-bit-count")) == 2, "min bits");
    json_decref(v);

    v = built(lode_stratum_build_subscribe(2, "lode/0.1.0", NULL));
    CHECK(json_array_size(json_object_get(v, "params")) == 1 && strcmp(param_str(v, 0), "lode/0.1.0") == 0, "subscribe");
    json_decref(v);
    v = built(lode_stratum_build_subscribe(2, "lode/0.1.0", "abc"));
    CHECK(json_array_size(json_object_get(v, "params")) == 2 && strcmp(param_str(v, 1), "abc") == 0, "resume");
    json_decref(v);
    v = built(lode_stratum_build_extranonce_subscribe(3));
    CHECK(json_array_size(json_object_get(v, "params")) == 0, "extranonce.subscribe");
    json_decref(v);
    v = built(lode_stratum_build_authorize(4, "w\"1", "p\\x"));
    CHECK(strcmp(param_str(v, 0), "w\"1") == 0 && strcmp(param_str(v, 1), "p\\x") == 0, "authorize escapes");
    json_decref(v);
    v = built(lode_stratum_build_suggest_difficulty(5, 512.5));
    CHECK(json_real_value(json_array_get(json_object_get(v, "params"), 0)) == 512.5, "suggest");
    json_decref(v);

    uint8_t en2[4] = {0xde, 0xad, 0x00, 0x01};
    v = built(lode_stratum_build_submit(6, "u", "job", en2, 4, 0x647025b5, 0x0a029ed1, false, 0));
    CHECK(json_array_size(json_object_get(v, "params")) == 5, "submit has 5 params");
    CHECK(strcmp(param_str(v, 2), "dead0001") == 0, "en2 raw bytes: %s", param_str(v, 2));
    CHECK(strcmp(param_str(v, 3), "647025b5") == 0, "ntime big-endian: %s", param_str(v, 3));
    CHECK(strcmp(param_str(v, 4), "0a029ed1") == 0, "nonce big-endian: %s", param_str(v, 4));
    json_decref(v);
    v = built(lode_stratum_build_submit(7, "u", "job", en2, 4, 1, 2, true, 0x04d1c000));
    CHECK(json_array_size(json_object_get(v, "params")) == 6 && strcmp(param_str(v, 5), "04d1c000") == 0, "version bits");
    json_decref(v);

    json_t *sid = json_string("s1");
    v = built(lode_stratum_build_reply_string(sid, "lode/0.1.0"));
    CHECK(json_equal(json_object_get(v, "id"), sid) && json_is_null(json_object_get(v, "error")), "reply id echoed");
    json_decref(v);
    v = built(lode_stratum_build_reply_error(sid, 20, "unknown method"));
    CHECK(json_integer_value(json_array_get(json_object_get(v, "error"), 0)) == 20, "error code");
    json_decref(v);
    json_decref(sid);
    v = built(lode_stratum_build_reply_true(NULL));
    CHECK(json_is_null(json_object_get(v, "id")) && json_is_true(json_object_get(v, "result")), "true reply");
    json_decref(v);
}

static const char *notify_ok =
    "{\"id\":null,\"method\":\"mining.notify\",\"params\":[\"j1\","
    "\"0c859545a3498373a57452fac22eb7113df2a465000543520000000000000000\",\"0100\",\"ff\","
    "[\"2b77d9e413e8121cd7a17ff46029591051d0922bd90b2b2a38811af1cb57a2b2\"],"
    "\"20000004\",\"1705ae3a\",\"647025b5\",true]}";

static void test_parse(void)
{
    lode_stratum_msg m;
    char err[256];
    CHECK(parse(notify_ok, &m, err, sizeof err) == 0, "notify: %s", err);
    CHECK(m.kind == LODE_STRATUM_NOTIFY && strcmp(m.u.notify.job_id, "j1") == 0, "notify kind");
    CHECK(m.u.notify.version == 0x20000004 && m.u.notify.nbits == 0x1705ae3a && m.u.notify.ntime == 0x647025b5, "fields");
    CHECK(m.u.notify.coinb1_len == 2 && m.u.notify.coinb2_len == 1 && m.u.notify.branch_len == 1 && m.u.notify.clean_jobs, "parts");
    lode_stratum_msg_free(&m);

    CHECK(parse("{\"id\":3,\"result\":true,\"error\":null}\r\n", &m, err, sizeof err) == 0, "response");
    CHECK(m.kind == LODE_STRATUM_RESPONSE && m.id_is_int && m.int_id == 3 && !m.u.response.is_error, "ok reply");
    lode_stratum_msg_free(&m);
    CHECK(parse("{\"id\":4,\"result\":null,\"error\":[23,\"Low difficulty share\",null]}", &m, err, sizeof err) == 0, "err reply");
    CHECK(m.u.response.is_error && m.u.response.error_code == 23 &&
          strcmp(m.u.response.error_message, "Low difficulty share") == 0, "error parsed");
    lode_stratum_msg_free(&m);
    CHECK(parse("{\"id\":5,\"result\":null,\"error\":{\"code\":21,\"message\":\"Stale\"}}", &m, err, sizeof err) == 0 &&
          m.u.response.error_code == 21, "object error");
    lode_stratum_msg_free(&m);

    CHECK(parse("{\"id\":null,\"method\":\"mining.set_difficulty\",\"params\":[1024]}", &m, err, sizeof err) == 0 &&
          m.kind == LODE_STRATUM_SET_DIFFICULTY && m.u.difficulty == 1024, "set_difficulty");
    lode_stratum_msg_free(&m);
    CHECK(parse("{\"id\":null,\"method\":\"mining.set_extranonce\",\"params\":[\"08000002\",4]}", &m, err, sizeof err) == 0 &&
          m.u.set_extranonce.extranonce1_len == 4 && m.u.set_extranonce.extranonce2_size == 4, "set_extranonce");
    lode_stratum_msg_free(&m);
    CHECK(parse("{\"id\":null,\"method\":\"mining.set_version_mask\",\"params\":[\"00003000\"]}", &m, err, sizeof err) == 0 &&
          m.u.version_mask == 0x3000, "set_version_mask");
    lode_stratum_msg_free(&m);
    CHECK(parse("{\"id\":null,\"method\":\"client.reconnect\",\"params\":[\"pool.example\",\"3334\",5]}", &m, err, sizeof err) == 0 &&
          strcmp(m.u.reconnect.host, "pool.example") == 0 && m.u.reconnect.port == 3334 && m.u.reconnect.wait_s == 5, "reconnect");
    lode_stratum_msg_free(&m);
    CHECK(parse("{\"id\":null,\"method\":\"client.reconnect\",\"params\":[\"h\",3335]}", &m, err, sizeof err) == 0 &&
          m.u.reconnect.port == 3335, "reconnect int port");
    lode_stratum_msg_free(&m);
    CHECK(parse("{\"id\":9,\"method\":\"client.show_message\",\"params\":[\"hi\\u001b[31m\"]}", &m, err, sizeof err) == 0 &&
          strcmp(m.u.text, "hi?[31m") == 0, "show_message sanitised: %s", m.u.text);
    lode_stratum_msg_free(&m);
    CHECK(parse("{\"id\":\"x\",\"method\":\"client.get_version\",\"params\":[]}", &m, err, sizeof err) == 0 &&
          m.kind == LODE_STRATUM_GET_VERSION && json_is_string(m.id), "get_version");
    lode_stratum_msg_free(&m);
    CHECK(parse("{\"id\":1,\"method\":\"mining.ping\"}", &m, err, sizeof err) == 0 && m.kind == LODE_STRATUM_PING, "ping");
    lode_stratum_msg_free(&m);
    CHECK(parse("{\"id\":7,\"method\":\"mining.frobnicate\",\"params\":[]}", &m, err, sizeof err) == 0 &&
          m.kind == LODE_STRATUM_UNKNOWN_METHOD && strcmp(m.u.method, "mining.frobnicate") == 0, "unknown");
    lode_stratum_msg_free(&m);

    /* Subscribe and configure results. */
    json_t *r = json_loads("[[[\"mining.set_difficulty\",\"d\"],[\"mining.notify\",\"sess\"]],\"0a0b\",4]", 0, NULL);
    char sid[LODE_JOB_ID_MAX];
    uint8_t en1[LODE_EXTRANONCE_MAX];
    size_t en1_len = 0, en2_size = 0;
    CHECK(lode_stratum_parse_subscribe_result(r, sid, en1, &en1_len, &en2_size, err, sizeof err) == 0 &&
          strcmp(sid, "sess") == 0 && en1_len == 2 && en2_size == 4, "subscribe result");
    json_decref(r);
    r = json_loads("[[\"mining.notify\",\"one\"],\"\",8]", 0, NULL);
    CHECK(lode_stratum_parse_subscribe_result(r, sid, en1, &en1_len, &en2_size, err, sizeof err) == 0 &&
          strcmp(sid, "one") == 0 && en1_len == 0 && en2_size == 8, "single-pair subscribe result");
    json_decref(r);
    const char *bad_subs[] = {"[[],\"0a0b\",0]", "[[],\"0a0b\",33]", "[[],\"0a0\",4]", "[[],\"0a0b\"]", "{}",
                              "[[],\"0a0b\",\"4\"]"};
    for (size_t i = 0; i < sizeof bad_subs / sizeof bad_subs[0]; i++) {
        r = json_loads(bad_subs[i], 0, NULL);
        CHECK(lode_stratum_parse_subscribe_result(r, sid, en1, &en1_len, &en2_size, err, sizeof err) != 0,
              "bad subscribe result accepted: %s", bad_subs[i]);
        json_decref(r);
    }
    uint32_t mask = 1;
    r = json_loads("{\"version-rolling\":true,\"version-rolling.mask\":\"18000000\"}", 0, NULL);
    CHECK(lode_stratum_parse_configure_result(r, &mask, err, sizeof err) == 0 && mask == 0x18000000, "configure");
    json_decref(r);
    r = json_loads("{\"version-rolling\":false}", 0, NULL);
    CHECK(lode_stratum_parse_configure_result(r, &mask, err, sizeof err) == 0 && mask == 0, "configure refused");
    json_decref(r);
}

static void expect_error(const char *line, size_t len, const char *what)
{
    lode_stratum_msg m;
    char err[256] = "";
    int rc = lode_stratum_parse_line(line, len, &m, err, sizeof err);
    CHECK(rc != 0, "accepted %s", what);
    CHECK(rc == 0 || err[0] != '\0', "no reason for %s", what);
    if (rc == 0)
        lode_stratum_msg_free(&m);
}

static char *notify_with(const char *prev, const char *coinb1, const char *branch, const char *version,
                         const char *clean)
{
    char *s = malloc(4096);
    snprintf(s, 4096,
             "{\"id\":null,\"method\":\"mining.notify\",\"params\":[\"j\",\"%s\",\"%s\",\"00\",%s,\"%s\",\"1705ae3a\",\"647025b5\",%s]}",
             prev, coinb1, branch, version, clean);
    return s;
}

/* A well-formed prevhash, for lines broken elsewhere. */
static const char p64[] = "0c859545a3498373a57452fac22eb7113df2a465000543520000000000000000";

static void test_hostile(void)
{
    const char *lines[] = {
        "", "   ", "garbage", "{", "{\"id\":1,", "[1,2,3]", "\"str\"", "42", "null",
        "{\"method\":\"mining.notify\"}", "{\"id\":null,\"method\":\"mining.notify\",\"params\":{}}",
        "{\"id\":null,\"method\":\"mining.notify\",\"params\":[\"j\"]}",
        "{\"id\":null,\"method\":5,\"params\":[]}",
        "{\"id\":null,\"method\":\"mining.set_difficulty\",\"params\":[0]}",
        "{\"id\":null,\"method\":\"mining.set_difficulty\",\"params\":[-1]}",
        "{\"id\":null,\"method\":\"mining.set_difficulty\",\"params\":[\"2\"]}",
        "{\"id\":null,\"method\":\"mining.set_difficulty\",\"params\":[1e999]}",
        "{\"id\":null,\"method\":\"mining.set_difficulty\"}",
        "{\"id\":null,\"method\":\"mining.set_extranonce\",\"params\":[\"0800000\",4]}",
        "{\"id\":null,\"method\":\"mining.set_extranonce\",\"params\":[\"08\",0]}",
        "{\"id\":null,\"method\":\"mining.set_extranonce\",\"params\":[\"08\",33]}",
        "{\"id\":null,\"method\":\"mining.set_extranonce\",\"params\":[\"000000000000000000000000000000000000000000000000000000000000000000\",4]}",
        "{\"id\":null,\"method\":\"mining.set_version_mask\",\"params\":[\"3000\"]}",
        "{\"id\":null,\"method\":\"client.reconnect\",\"params\":[\"h\",70000]}",
        "{\"id\":null,\"method\":\"client.reconnect\",\"params\":[\"h\",\"80x\"]}",
        "{\"id\":null,\"method\":\"client.reconnect\",\"params\":[\"h/../x\",80]}",
        "{\"id\":null,\"method\":\"client.reconnect\",\"params\":[\"h\",80,-1]}",
        "{\"id\":null,\"method\":\"client.show_message\",\"params\":[5]}",
        "{\"id\":1,\"id\":2,\"result\":true}",
        "{\"result\":true}",
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
        expect_error(lines[i], strlen(lines[i]), lines[i]);
}

/* Notifies with one field malformed, too many branch entries, job ids
 * at and past their limit. */
static void test_hostile_notifies(void)
{
    struct { const char *prev, *coinb1, *branch, *version, *clean, *what; } notifies[] = {
        {"0c859545a3498373a57452fac22eb7113df2a4650005435200000000000000000", "01", "[]", "20000004", "true", "65-hex prevhash"},
        {"0c859545a3498373a57452fac22eb7113df2a46500054352000000000000000", "01", "[]", "20000004", "true", "63-hex prevhash"},
        {"zc859545a3498373a57452fac22eb7113df2a465000543520000000000000000", "01", "[]", "20000004", "true", "non-hex prevhash"},
        {p64, "010", "[]", "20000004", "true", "odd-length coinb1"},
        {p64, "0g", "[]", "20000004", "true", "non-hex coinb1"},
        {p64, "01", "[\"00\"]", "20000004", "true", "short branch hash"},
        {p64, "01", "[5]", "20000004", "true", "number in branch"},
        {p64, "01", "\"ab\"", "20000004", "true", "branch not an array"},
        {p64, "01", "[]", "2000004", "true", "7-hex version"},
        {p64, "01", "[]", "020000004", "true", "9-hex version"},
        {p64, "01", "[]", "20000004", "1", "clean_jobs not a bool"},
    };
    for (size_t i = 0; i < sizeof notifies / sizeof notifies[0]; i++) {
        char *line = notify_with(notifies[i].prev, notifies[i].coinb1, notifies[i].branch, notifies[i].version,
                                 notifies[i].clean);
        expect_error(line, strlen(line), notifies[i].what);
        free(line);
    }
    /* 33 branch entries: one too many. */
    char branch[64 * 70] = "[";
    for (int i = 0; i < 33; i++)
        snprintf(branch + strlen(branch), sizeof branch - strlen(branch), "%s\"%064d\"", i ? "," : "", 0);
    strcat(branch, "]");
    char *line = notify_with(p64, "01", branch, "20000004", "true");
    expect_error(line, strlen(line), "33-entry branch");
    free(line);
    /* Job ids: 63 characters pass, 64 do not. */
    char ok_id[400], long_id[400];
    snprintf(ok_id, sizeof ok_id, "{\"id\":null,\"method\":\"mining.notify\",\"params\":[\"%063d\",\"%s\",\"\",\"\",[],\"20000004\",\"1705ae3a\",\"647025b5\",false]}", 0, p64);
    snprintf(long_id, sizeof long_id, "{\"id\":null,\"method\":\"mining.notify\",\"params\":[\"%064d\",\"%s\",\"\",\"\",[],\"20000004\",\"1705ae3a\",\"647025b5\",false]}", 0, p64);
    lode_stratum_msg m;
    char err[256];
    CHECK(parse(ok_id, &m, err, sizeof err) == 0, "63-character job id: %s", err);
    lode_stratum_msg_free(&m);
    expect_error(long_id, strlen(long_id), "64-character job id");
}

/* NUL inside, nested depth, a huge array, an over-long line. */
static void test_hostile_lines(void)
{
    char err[256];
    const char with_nul[] = "{\"id\":1,\"result\":true}\0{}";
    expect_error(with_nul, sizeof with_nul - 1, "NUL byte");
    const char nul_in_string[] = "{\"id\":null,\"method\":\"mining.notify\\u0000x\",\"params\":[]}";
    lode_stratum_msg mm;
    CHECK(lode_stratum_parse_line(nul_in_string, strlen(nul_in_string), &mm, err, sizeof err) != 0, "\\u0000 in method accepted");
    size_t deep_len = 60000;
    char *deep = malloc(deep_len + 1);
    memset(deep, '[', deep_len);
    deep[deep_len] = '\0';
    expect_error(deep, deep_len, "deeply nested arrays");
    free(deep);
    size_t huge_len = LODE_STRATUM_LINE_MAX - 100;
    char *huge = malloc(huge_len + 1);
    size_t n = (size_t)snprintf(huge, huge_len, "{\"id\":null,\"method\":\"mining.notify\",\"params\":[\"j\",\"%s\",\"\",\"\",[", p64);
    while (n + 8 < huge_len - 64) {
        memcpy(huge + n, "\"00\",", 5);
        n += 5;
    }
    memcpy(huge + n, "\"00\"]]}", 8);
    expect_error(huge, strlen(huge), "huge branch array");
    free(huge);
    size_t over_len = LODE_STRATUM_LINE_MAX + 10;
    char *over = malloc(over_len);
    memset(over, ' ', over_len);
    memcpy(over, "{\"id\":1,\"result\":true}", 22);
    expect_error(over, over_len, "over-long line");
    free(over);
    expect_error(NULL, 0, "NULL line");
}

/* A notify line built from a vector's notify_params. */
static char *notify_line(json_t *params)
{
    json_t *obj = json_pack("{s:n,s:s,s:O}", "id", "method", "mining.notify", "params", params);
    char *s = json_dumps(obj, JSON_COMPACT);
    json_decref(obj);
    return s;
}

static uint32_t be32_hex(const char *hex)
{
    uint8_t b[4] = {0};
    lode_hex_decode(hex, b, 4);
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

/* Rebuilds a vector's header through the parser and lode_job, and checks the
 * submit line lode would send carries the vector's submit params. */
static void check_stratum_vector(json_t *v, lode_algo algo, const char *notify_text, const uint8_t *en1,
                                 size_t en1_len, const uint8_t *en2, size_t en2_len, json_t *submit,
                                 uint32_t mask)
{
    const char *name = test_json_str(v, "name");
    lode_stratum_msg m;
    char err[256];
    if (parse(notify_text, &m, err, sizeof err) != 0) {
        CHECK(false, "%s: notify rejected: %s", name, err);
        return;
    }
    lode_stratum_session session = {.algo = algo, .extranonce1_len = en1_len, .extranonce2_size = en2_len,
                                    .difficulty = 1, .version_mask = mask, .ntime_roll_max = 300, .generation = 7};
    memcpy(session.extranonce1, en1, en1_len);
    lode_job job;
    CHECK(lode_stratum_notify_to_job(&m.u.notify, &session, false, &job, err, sizeof err) == 0, "%s: %s", name, err);
    CHECK(job.generation == 7 && job.version_mask == (algo == LODE_ALGO_SHA256D ? mask : 0) && job.clean == m.u.notify.clean_jobs,
          "%s: job fields", name);
    lode_u256 want_target;
    lode_target_from_difficulty(1, algo, &want_target);
    CHECK(lode_u256_cmp(&job.share_target, &want_target) == 0, "%s: share target", name);

    const char *ntime_hex = json_string_value(json_array_get(submit, 3));
    const char *nonce_hex = json_string_value(json_array_get(submit, 4));
    const char *bits_hex = json_string_value(json_array_get(submit, 5));
    uint32_t version = job.version;
    if (bits_hex != NULL)
        version = (job.version & ~mask) | (be32_hex(bits_hex) & mask);
    uint8_t header[80];
    lode_job_header(&job, en2, be32_hex(ntime_hex), version, header);
    uint32_t nonce = be32_hex(nonce_hex);
    for (int i = 0; i < 4; i++)
        header[76 + i] = (uint8_t)(nonce >> (8 * i));
    uint8_t want[80];
    test_json_hex(v, json_object_get(v, "expected_header_hex") ? "expected_header_hex" : "header_hex", want, 80);
    CHECK_BYTES(header, want, 80, "%s: header", name);
    if (json_object_get(v, "merkle_root_internal_hex")) {
        uint8_t root[32], want_root[32];
        lode_job_merkle_root(&job, en2, root);
        test_json_hex(v, "merkle_root_internal_hex", want_root, 32);
        CHECK_BYTES(root, want_root, 32, "%s: merkle root", name);
    }
    uint8_t hash[32];
    char hash_hex[65];
    lode_algo_get(algo)->pow_hash_ref(header, hash);
    lode_hex_encode_reversed(hash, 32, hash_hex);
    const char *want_hash = json_object_get(v, "expected_pow_hash_scrypt") ? test_json_str(v, "expected_pow_hash_scrypt")
                            : json_object_get(v, "expected_block_hash") ? test_json_str(v, "expected_block_hash")
                                                                         : test_json_str(v, "header_hash");
    CHECK(strcmp(hash_hex, want_hash) == 0, "%s: hash %s, want %s", name, hash_hex, want_hash);

    /* The submit line lode would send for this share. */
    json_t *line = built(lode_stratum_build_submit(4, json_string_value(json_array_get(submit, 0)), job.id, en2, en2_len,
                                                   be32_hex(ntime_hex), nonce, bits_hex != NULL, version & mask));
    CHECK(json_equal(json_object_get(line, "params"), submit), "%s: submit params differ", name);
    json_decref(line);
    lode_job_free(&job);
    lode_stratum_msg_free(&m);
}

static void test_vectors(void)
{
    const char *files[] = {"sha256d.json", "scrypt.json"};
    lode_algo algos[] = {LODE_ALGO_SHA256D, LODE_ALGO_SCRYPT};
    int checked = 0;
    for (int f = 0; f < 2; f++) {
        json_t *root = test_load_vectors(files[f]);
        json_t *list = json_object_get(root, "stratum_vectors");
        CHECK(json_array_size(list) > 0, "%s has no stratum_vectors", files[f]);
        size_t i;
        json_t *v;
        json_array_foreach(list, i, v) {
            uint8_t en1[LODE_EXTRANONCE_MAX], en2[LODE_EXTRANONCE_MAX];
            json_t *params = json_object_get(v, "notify_params");
            if (params != NULL) {
                size_t en1_len = test_json_hex(v, "extranonce1", en1, sizeof en1);
                size_t en2_len = test_json_hex(v, "extranonce2", en2, sizeof en2);
                CHECK(en2_len == test_json_uint(v, "extranonce2_size"), "extranonce2_size");
                const char *mask_hex = json_string_value(json_object_get(v, "version_rolling_mask"));
                char *text = notify_line(params);
                check_stratum_vector(v, algos[f], text, en1, en1_len, en2, en2_len, json_object_get(v, "submit_params"),
                                     mask_hex ? be32_hex(mask_hex) : 0);
                free(text);
                checked++;
            } else if (json_object_get(v, "coinbase_hex") && json_object_get(v, "notify")) {
                /* The real share: cut its coinbase anywhere into coinb1|en1(4)|en2(8)|coinb2. */
                uint8_t coinbase[1024];
                size_t cb_len = test_json_hex(v, "coinbase_hex", coinbase, sizeof coinbase);
                json_t *n = json_object_get(v, "notify");
                char c1[2 * 42 + 1], c2[2 * 1024 + 1];
                lode_hex_encode(coinbase, 42, c1);
                lode_hex_encode(coinbase + 54, cb_len - 54, c2);
                json_t *np = json_pack("[s,O,s,s,O,O,O,O,b]", "share", json_object_get(n, "prevhash"), c1, c2,
                                       json_object_get(n, "merkle_branch"), json_object_get(n, "version"),
                                       json_object_get(n, "nbits"), json_object_get(n, "ntime"), 0);
                char *text = notify_line(np);
                json_t *submit = json_pack("[s,s,s,O,O]", "w", "share", "", json_object_get(n, "ntime"),
                                           json_object_get(v, "nonce_submit_hex"));
                char en2_hex[17];
                lode_hex_encode(coinbase + 46, 8, en2_hex);
                json_array_set_new(submit, 2, json_string(en2_hex));
                check_stratum_vector(v, algos[f], text, coinbase + 42, 4, coinbase + 46, 8, submit, 0);
                json_decref(submit);
                json_decref(np);
                free(text);
                checked++;
            }
        }
        json_decref(root);
    }
    CHECK(checked >= 4, "only %d stratum vectors checked", checked);
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    lode_log_configure(getenv("LODE_TEST_VERBOSE") == NULL, false);
    test_builders();
    test_parse();
    test_hostile();
    test_hostile_notifies();
    test_hostile_lines();
    test_vectors();
    return test_summary();
}
