#include "core/stratum/stratum_msg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/errmsg.h"
#include "core/base/hex.h"
#include "core/base/json_line.h"
#include "core/base/log.h"
#include "core/base/target.h"

/* Exactly 8 hex digits -> the big-endian integer they spell. */
static int parse_hex32(const json_t *v, uint32_t *out)
{
    const char *s = json_string_value(v);
    uint8_t b[4];
    if (s == NULL || json_string_length(v) != 8 || lode_hex_decode(s, b, 4) != 0)
        return -1;
    *out = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
    return 0;
}

/* A hex string of any even length (possibly empty) -> a malloc'd copy. */
static int parse_hex_alloc(const json_t *v, uint8_t **out, size_t *out_len)
{
    const char *s = json_string_value(v);
    if (s == NULL)
        return -1;
    size_t hex_len = json_string_length(v);
    if (hex_len % 2 != 0 || strlen(s) != hex_len)
        return -1;
    uint8_t *bytes = malloc(hex_len / 2 + 1);
    if (bytes == NULL || lode_hex_decode(s, bytes, hex_len / 2) != 0) {
        free(bytes);
        return -1;
    }
    *out = bytes;
    *out_len = hex_len / 2;
    return 0;
}

/* A hex string of at most max bytes into a fixed buffer. */
static int parse_hex_bounded(const json_t *v, uint8_t *out, size_t max, size_t *out_len)
{
    const char *s = json_string_value(v);
    if (s == NULL)
        return -1;
    size_t hex_len = json_string_length(v);
    if (hex_len % 2 != 0 || hex_len / 2 > max || strlen(s) != hex_len ||
        lode_hex_decode(s, out, hex_len / 2) != 0)
        return -1;
    *out_len = hex_len / 2;
    return 0;
}

static int parse_notify(const json_t *params, lode_stratum_notify *n, char *err, size_t err_len)
{
    if (!json_is_array(params) || json_array_size(params) < 9)
        return lode_fail(err, err_len, "mining.notify: params must be an array of 9");
    const json_t *job_id = json_array_get(params, 0);
    const char *id = json_string_value(job_id);
    if (id == NULL || json_string_length(job_id) == 0 ||
        json_string_length(job_id) >= LODE_JOB_ID_MAX || strlen(id) != json_string_length(job_id))
        return lode_fail(err, err_len, "mining.notify: job_id must be a string of 1..%d characters",
                    LODE_JOB_ID_MAX - 1);
    memcpy(n->job_id, id, json_string_length(job_id) + 1);

    const json_t *prev = json_array_get(params, 1);
    if (!json_is_string(prev) || json_string_length(prev) != 64 ||
        lode_hex_decode(json_string_value(prev), n->prevhash, 32) != 0)
        return lode_fail(err, err_len, "mining.notify: prevhash must be exactly 64 hex digits");
    if (parse_hex_alloc(json_array_get(params, 2), &n->coinb1, &n->coinb1_len) != 0)
        return lode_fail(err, err_len, "mining.notify: coinb1 is not hex");
    if (parse_hex_alloc(json_array_get(params, 3), &n->coinb2, &n->coinb2_len) != 0)
        return lode_fail(err, err_len, "mining.notify: coinb2 is not hex");

    const json_t *branch = json_array_get(params, 4);
    if (!json_is_array(branch) || json_array_size(branch) > LODE_MERKLE_BRANCH_MAX)
        return lode_fail(err, err_len, "mining.notify: merkle_branch must be an array of at most %d",
                    LODE_MERKLE_BRANCH_MAX);
    n->branch_len = json_array_size(branch);
    for (size_t i = 0; i < n->branch_len; i++) {
        const json_t *h = json_array_get(branch, i);
        if (!json_is_string(h) || json_string_length(h) != 64 ||
            lode_hex_decode(json_string_value(h), n->branch[i], 32) != 0)
            return lode_fail(err, err_len, "mining.notify: merkle_branch[%zu] is not 64 hex digits", i);
    }
    if (parse_hex32(json_array_get(params, 5), &n->version) != 0)
        return lode_fail(err, err_len, "mining.notify: version must be 8 hex digits");
    if (parse_hex32(json_array_get(params, 6), &n->nbits) != 0)
        return lode_fail(err, err_len, "mining.notify: nbits must be 8 hex digits");
    if (parse_hex32(json_array_get(params, 7), &n->ntime) != 0)
        return lode_fail(err, err_len, "mining.notify: ntime must be 8 hex digits");
    const json_t *clean = json_array_get(params, 8);
    if (!json_is_boolean(clean))
        return lode_fail(err, err_len, "mining.notify: clean_jobs must be true or false");
    n->clean_jobs = json_is_true(clean);
    return 0;
}

static int parse_error_member(const json_t *error, lode_stratum_msg *msg)
{
    msg->u.response.is_error = true;
    msg->u.response.error_code = 0;
    const char *text = NULL;
    if (json_is_array(error)) { /* [code, "message", traceback] */
        const json_t *code = json_array_get(error, 0);
        if (json_is_integer(code) && json_integer_value(code) >= -100000 &&
            json_integer_value(code) <= 100000)
            msg->u.response.error_code = (int)json_integer_value(code);
        text = json_string_value(json_array_get(error, 1));
    } else if (json_is_object(error)) { /* JSON-RPC 2.0 style {"code":..,"message":..} */
        const json_t *code = json_object_get(error, "code");
        if (json_is_integer(code) && json_integer_value(code) >= -100000 &&
            json_integer_value(code) <= 100000)
            msg->u.response.error_code = (int)json_integer_value(code);
        text = json_string_value(json_object_get(error, "message"));
    } else if (json_is_string(error)) {
        text = json_string_value(error);
    }
    lode_log_printable(msg->u.response.error_message, sizeof msg->u.response.error_message,
                   text != NULL ? text : "unspecified error");
    return 0;
}

static int parse_reconnect(const json_t *params, lode_stratum_msg *msg, char *err, size_t err_len)
{
    /* Empty params: reconnect to the same place. */
    if (!json_is_array(params))
        return lode_fail(err, err_len, "client.reconnect: params must be an array");
    const json_t *host = json_array_get(params, 0);
    if (host != NULL && !json_is_null(host)) {
        const char *h = json_string_value(host);
        if (h == NULL || json_string_length(host) >= LODE_STRATUM_HOST_MAX ||
            strlen(h) != json_string_length(host))
            return lode_fail(err, err_len, "client.reconnect: host must be a string");
        for (const char *c = h; *c; c++)
            if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
                  *c == '.' || *c == '-' || *c == ':' || *c == '_'))
                return lode_fail(err, err_len, "client.reconnect: host has invalid characters");
        memcpy(msg->u.reconnect.host, h, strlen(h) + 1);
    }
    const json_t *port = json_array_get(params, 1);
    long long p = 0;
    if (json_is_integer(port)) {
        p = json_integer_value(port);
    } else if (json_is_string(port)) {
        char *end;
        const char *s = json_string_value(port);
        p = strtoll(s, &end, 10);
        if (*s == '\0' || *end != '\0')
            return lode_fail(err, err_len, "client.reconnect: port is not a number");
    } else if (port != NULL && !json_is_null(port)) {
        return lode_fail(err, err_len, "client.reconnect: port must be a number or a string");
    }
    if (p < 0 || p > 65535)
        return lode_fail(err, err_len, "client.reconnect: port out of range");
    msg->u.reconnect.port = (uint16_t)p;
    const json_t *wait = json_array_get(params, 2);
    double w = 0;
    if (json_is_number(wait))
        w = json_number_value(wait);
    else if (json_is_string(wait))
        w = strtod(json_string_value(wait), NULL);
    if (!isfinite(w) || w < 0 || w > 3600)
        return lode_fail(err, err_len, "client.reconnect: wait must be 0..3600 seconds");
    msg->u.reconnect.wait_s = w;
    return 0;
}

static int parse_method(const char *method, const json_t *params, lode_stratum_msg *msg,
                        char *err, size_t err_len)
{
    if (strcmp(method, "mining.notify") == 0) {
        msg->kind = LODE_STRATUM_NOTIFY;
        return parse_notify(params, &msg->u.notify, err, err_len);
    }
    if (strcmp(method, "mining.set_difficulty") == 0) {
        msg->kind = LODE_STRATUM_SET_DIFFICULTY;
        const json_t *d = json_array_get(params, 0);
        double v = json_is_number(d) ? json_number_value(d) : NAN;
        if (!isfinite(v) || v <= 0)
            return lode_fail(err, err_len, "mining.set_difficulty: difficulty must be a finite number > 0");
        msg->u.difficulty = v;
        return 0;
    }
    if (strcmp(method, "mining.set_extranonce") == 0) {
        msg->kind = LODE_STRATUM_SET_EXTRANONCE;
        if (parse_hex_bounded(json_array_get(params, 0), msg->u.set_extranonce.extranonce1,
                              LODE_EXTRANONCE_MAX, &msg->u.set_extranonce.extranonce1_len) != 0)
            return lode_fail(err, err_len, "mining.set_extranonce: extranonce1 must be hex of at most %d bytes",
                        LODE_EXTRANONCE_MAX);
        const json_t *size = json_array_get(params, 1);
        if (!json_is_integer(size) || json_integer_value(size) < 1 ||
            json_integer_value(size) > LODE_EXTRANONCE_MAX)
            return lode_fail(err, err_len, "mining.set_extranonce: extranonce2_size must be 1..%d",
                        LODE_EXTRANONCE_MAX);
        msg->u.set_extranonce.extranonce2_size = (size_t)json_integer_value(size);
        return 0;
    }
    if (strcmp(method, "mining.set_version_mask") == 0) {
        msg->kind = LODE_STRATUM_SET_VERSION_MASK;
        if (parse_hex32(json_array_get(params, 0), &msg->u.version_mask) != 0)
            return lode_fail(err, err_len, "mining.set_version_mask: mask must be 8 hex digits");
        return 0;
    }
    if (strcmp(method, "client.reconnect") == 0) {
        msg->kind = LODE_STRATUM_RECONNECT;
        return parse_reconnect(params, msg, err, err_len);
    }
    if (strcmp(method, "client.show_message") == 0) {
        msg->kind = LODE_STRATUM_SHOW_MESSAGE;
        const char *text = json_string_value(json_array_get(params, 0));
        if (text == NULL)
            return lode_fail(err, err_len, "client.show_message: the message must be a string");
        lode_log_printable(msg->u.text, sizeof msg->u.text, text);
        return 0;
    }
    if (strcmp(method, "client.get_version") == 0) {
        msg->kind = LODE_STRATUM_GET_VERSION;
        return 0;
    }
    if (strcmp(method, "mining.ping") == 0) {
        msg->kind = LODE_STRATUM_PING;
        return 0;
    }
    msg->kind = LODE_STRATUM_UNKNOWN_METHOD;
    lode_log_printable(msg->u.method, sizeof msg->u.method, method);
    return 0;
}

int lode_stratum_parse_line(const char *line, size_t len, lode_stratum_msg *msg, char *err,
                            size_t err_len)
{
    memset(msg, 0, sizeof *msg);
    if (line == NULL)
        return lode_fail(err, err_len, "no line");
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
        len--;
    if (len > LODE_STRATUM_LINE_MAX)
        return lode_fail(err, err_len, "line of %zu bytes is longer than %d", len, LODE_STRATUM_LINE_MAX);
    if (memchr(line, '\0', len) != NULL)
        return lode_fail(err, err_len, "line holds a NUL byte");
    json_error_t jerr;
    json_t *root = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
    if (root == NULL)
        return lode_fail(err, err_len, "invalid JSON: %s (column %d)", jerr.text, jerr.column);
    if (!json_is_object(root)) {
        json_decref(root);
        return lode_fail(err, err_len, "not a JSON object");
    }
    json_t *id = json_object_get(root, "id");
    msg->id = id != NULL ? json_incref(id) : json_null();
    if (json_is_integer(id)) {
        msg->id_is_int = true;
        msg->int_id = json_integer_value(id);
    }
    const json_t *method = json_object_get(root, "method");
    int rc = 0;
    if (method != NULL && !json_is_null(method)) {
        const char *name = json_string_value(method);
        if (name == NULL || strlen(name) != json_string_length(method)) {
            rc = lode_fail(err, err_len, "method is not a string");
        } else {
            json_t *params = json_object_get(root, "params");
            if (params == NULL)
                params = json_array(); /* an absent params is an empty one */
            else
                json_incref(params);
            if (params == NULL)
                rc = lode_fail(err, err_len, "out of memory");
            else
                rc = parse_method(name, params, msg, err, err_len);
            json_decref(params);
        }
    } else if (id != NULL && !json_is_null(id)) {
        msg->kind = LODE_STRATUM_RESPONSE;
        json_t *result = json_object_get(root, "result");
        json_t *error = json_object_get(root, "error");
        msg->u.response.result = json_incref(result != NULL ? result : json_null());
        if (error != NULL && !json_is_null(error))
            parse_error_member(error, msg);
        else if (result == NULL || json_is_null(result)) /* no result, no error: count as an error */
            parse_error_member(json_null(), msg);
    } else {
        rc = lode_fail(err, err_len, "neither a method call nor a reply with an id");
    }
    json_decref(root);
    if (rc != 0)
        lode_stratum_msg_free(msg);
    return rc;
}

void lode_stratum_msg_free(lode_stratum_msg *msg)
{
    if (msg == NULL)
        return;
    json_decref(msg->id);
    if (msg->kind == LODE_STRATUM_RESPONSE)
        json_decref(msg->u.response.result);
    if (msg->kind == LODE_STRATUM_NOTIFY) {
        free(msg->u.notify.coinb1);
        free(msg->u.notify.coinb2);
    }
    memset(msg, 0, sizeof *msg);
}

int lode_stratum_parse_subscribe_result(const json_t *result, char session_id[LODE_JOB_ID_MAX],
                                        uint8_t extranonce1[LODE_EXTRANONCE_MAX],
                                        size_t *extranonce1_len, size_t *extranonce2_size,
                                        char *err, size_t err_len)
{
    session_id[0] = '\0';
    if (!json_is_array(result) || json_array_size(result) < 3)
        return lode_fail(err, err_len, "mining.subscribe: the result must be an array of 3");
    /* The subscriptions: a list of [method, id] pairs, or one bare pair. */
    const json_t *subs = json_array_get(result, 0);
    bool single_pair = json_is_array(subs) && json_is_string(json_array_get(subs, 0));
    size_t pairs = single_pair ? 1 : (json_is_array(subs) ? json_array_size(subs) : 0);
    for (size_t i = 0; i < pairs; i++) {
        const json_t *pair = single_pair ? subs : json_array_get(subs, i);
        const char *name = json_string_value(json_array_get(pair, 0));
        const json_t *sid = json_array_get(pair, 1);
        if (name != NULL && strcmp(name, "mining.notify") == 0 && json_is_string(sid) &&
            json_string_length(sid) < LODE_JOB_ID_MAX) {
            lode_log_printable(session_id, LODE_JOB_ID_MAX, json_string_value(sid));
            break;
        }
    }
    if (parse_hex_bounded(json_array_get(result, 1), extranonce1, LODE_EXTRANONCE_MAX,
                          extranonce1_len) != 0)
        return lode_fail(err, err_len, "mining.subscribe: extranonce1 must be hex of at most %d bytes",
                    LODE_EXTRANONCE_MAX);
    const json_t *size = json_array_get(result, 2);
    if (!json_is_integer(size) || json_integer_value(size) < 1 ||
        json_integer_value(size) > LODE_EXTRANONCE_MAX)
        return lode_fail(err, err_len, "mining.subscribe: extranonce2_size must be 1..%d",
                    LODE_EXTRANONCE_MAX);
    *extranonce2_size = (size_t)json_integer_value(size);
    return 0;
}

int lode_stratum_parse_configure_result(const json_t *result, uint32_t *mask, char *err,
                                        size_t err_len)
{
    *mask = 0;
    if (!json_is_object(result))
        return lode_fail(err, err_len, "mining.configure: the result must be an object");
    if (!json_is_true(json_object_get(result, "version-rolling")))
        return 0;
    if (parse_hex32(json_object_get(result, "version-rolling.mask"), mask) != 0)
        return lode_fail(err, err_len, "mining.configure: version-rolling.mask must be 8 hex digits");
    return 0;
}

static char *request(int64_t id, const char *method, json_t *params)
{
    if (params == NULL)
        return NULL;
    return lode_json_line(json_pack("{s:I,s:s,s:o}", "id", (json_int_t)id, "method", method, "params", params));
}

char *lode_stratum_build_configure(int64_t id, uint32_t mask, unsigned min_bit_count)
{
    char mask_hex[9];
    snprintf(mask_hex, sizeof mask_hex, "%08x", mask);
    return request(id, "mining.configure",
                   json_pack("[[s],{s:s,s:I}]", "version-rolling", "version-rolling.mask", mask_hex,
                             "version-rolling.min-bit-count", (json_int_t)min_bit_count));
}

char *lode_stratum_build_subscribe(int64_t id, const char *agent, const char *session_id)
{
    if (session_id != NULL && session_id[0] != '\0')
        return request(id, "mining.subscribe", json_pack("[s,s]", agent, session_id));
    return request(id, "mining.subscribe", json_pack("[s]", agent));
}

char *lode_stratum_build_extranonce_subscribe(int64_t id)
{
    return request(id, "mining.extranonce.subscribe", json_array());
}

char *lode_stratum_build_authorize(int64_t id, const char *user, const char *pass)
{
    return request(id, "mining.authorize", json_pack("[s,s]", user ? user : "", pass ? pass : ""));
}

char *lode_stratum_build_suggest_difficulty(int64_t id, double difficulty)
{
    return request(id, "mining.suggest_difficulty", json_pack("[f]", difficulty));
}

char *lode_stratum_build_submit(int64_t id, const char *user, const char *job_id,
                                const uint8_t *extranonce2, size_t extranonce2_len,
                                uint32_t ntime, uint32_t nonce, bool with_version_bits,
                                uint32_t version_bits)
{
    if (extranonce2_len > LODE_EXTRANONCE_MAX)
        return NULL;
    char en2[2 * LODE_EXTRANONCE_MAX + 1], ntime_hex[9], nonce_hex[9], bits_hex[9];
    lode_hex_encode(extranonce2, extranonce2_len, en2);
    snprintf(ntime_hex, sizeof ntime_hex, "%08x", ntime);
    snprintf(nonce_hex, sizeof nonce_hex, "%08x", nonce);
    snprintf(bits_hex, sizeof bits_hex, "%08x", version_bits);
    json_t *params = json_pack("[s,s,s,s,s]", user ? user : "", job_id, en2, ntime_hex, nonce_hex);
    if (params != NULL && with_version_bits && json_array_append_new(params, json_string(bits_hex)) != 0) {
        json_decref(params);
        return NULL;
    }
    return request(id, "mining.submit", params);
}

static json_t *id_copy(const json_t *id)
{
    return id != NULL ? json_deep_copy(id) : json_null();
}

char *lode_stratum_build_reply_string(const json_t *id, const char *result)
{
    return lode_json_line(json_pack("{s:o,s:s,s:n}", "id", id_copy(id), "result", result, "error"));
}

char *lode_stratum_build_reply_true(const json_t *id)
{
    return lode_json_line(json_pack("{s:o,s:b,s:n}", "id", id_copy(id), "result", 1, "error"));
}

char *lode_stratum_build_reply_error(const json_t *id, int code, const char *message)
{
    return lode_json_line(json_pack("{s:o,s:n,s:[i,s,n]}", "id", id_copy(id), "result", "error", code,
                             message));
}

int lode_stratum_notify_to_job(const lode_stratum_notify *notify,
                               const lode_stratum_session *session, bool clean, lode_job *job,
                               char *err, size_t err_len)
{
    memset(job, 0, sizeof *job);
    if (session->extranonce1_len > LODE_EXTRANONCE_MAX || session->extranonce2_size < 1 ||
        session->extranonce2_size > LODE_EXTRANONCE_MAX)
        return lode_fail(err, err_len, "extranonce sizes out of range (%zu, %zu)",
                    session->extranonce1_len, session->extranonce2_size);
    if (notify->branch_len > LODE_MERKLE_BRANCH_MAX)
        return lode_fail(err, err_len, "merkle branch too long");
    if (session->algo >= LODE_ALGO_COUNT)
        return lode_fail(err, err_len, "unknown algorithm");
    if (lode_target_from_difficulty(session->difficulty, session->algo, &job->share_target) != 0)
        return lode_fail(err, err_len, "invalid pool difficulty %g", session->difficulty);
    if (lode_u256_is_zero(&job->share_target))
        return lode_fail(err, err_len, "pool difficulty %g is too high: no hash can meet it", session->difficulty);
    size_t id_len = strnlen(notify->job_id, LODE_JOB_ID_MAX);
    if (id_len == 0 || id_len >= LODE_JOB_ID_MAX)
        return lode_fail(err, err_len, "job id empty or too long");
    memcpy(job->id, notify->job_id, id_len + 1);
    job->algo = session->algo;
    job->version = notify->version;
    job->version_mask = session->algo == LODE_ALGO_SHA256D ? session->version_mask : 0;
    /* Stratum sends prevhash as eight 4-byte words each byte-reversed. */
    for (size_t word = 0; word < 8; word++)
        for (size_t b = 0; b < 4; b++)
            job->prevhash[word * 4 + b] = notify->prevhash[word * 4 + 3 - b];
    job->nbits = notify->nbits;
    job->ntime = notify->ntime;
    job->ntime_roll_max = session->ntime_roll_max;
    memcpy(job->extranonce1, session->extranonce1, session->extranonce1_len);
    job->extranonce1_len = session->extranonce1_len;
    job->extranonce2_len = session->extranonce2_size;
    memcpy(job->branch, notify->branch, notify->branch_len * 32);
    job->branch_len = notify->branch_len;
    job->clean = clean || notify->clean_jobs;
    job->generation = session->generation;
    static const uint8_t empty[1] = {0};
    if (lode_job_set_coinbase(job, notify->coinb1 ? notify->coinb1 : empty, notify->coinb1_len,
                              notify->coinb2 ? notify->coinb2 : empty, notify->coinb2_len) != 0) {
        lode_job_free(job);
        return lode_fail(err, err_len, "out of memory for the coinbase");
    }
    return 0;
}

char *lode_stratum_masked_line(const char *line, size_t len)
{
    json_t *msg = json_loadb(line, len, 0, NULL);
    json_t *method = json_object_get(msg, "method");
    json_t *params = json_object_get(msg, "params");
    char *masked = NULL;
    if (json_is_string(method) && strcmp(json_string_value(method), "mining.authorize") == 0 &&
        json_is_array(params) && json_array_size(params) >= 2) {
        json_array_set_new(params, 1, json_string("***"));
        masked = json_dumps(msg, JSON_COMPACT | JSON_PRESERVE_ORDER);
        if (masked == NULL) { /* never the password unmasked */
            json_decref(msg);
            return strdup("(a mining.authorize request)");
        }
        line = masked;
        len = strlen(masked);
    }
    json_decref(msg);
    char *out = malloc(4 * len + 1);
    size_t o = 0;
    for (size_t i = 0; out != NULL && i < len; i++) {
        unsigned char c = (unsigned char)line[i];
        if (c >= 0x20 && c < 0x7f && c != '\\')
            out[o++] = (char)c;
        else
            o += (size_t)snprintf(out + o, 5, "\\x%02x", c);
    }
    if (out != NULL)
        out[o] = '\0';
    free(masked);
    return out;
}
