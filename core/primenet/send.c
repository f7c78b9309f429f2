#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/log.h"
#include "core/primenet/client_internal.h"
#include "core/tf/fileio.h"

#define LINE_MAX_BYTES 16384 /* a result line is well under 1 KiB */

/* What an ar says of a result line. */
typedef struct result_fields {
    char k[33];
    char n[16], sf[8], ef[8], r[2];
    char f[64 * 42]; /* comma-joined decimal factors */
    bool complete;
    uint32_t exponent;
} result_fields;

static bool is_int(json_t *v, json_int_t lo, json_int_t hi)
{
    return json_is_integer(v) && json_integer_value(v) >= lo && json_integer_value(v) <= hi;
}

/* The ar fields of a TF result line; -1 for a line that is not one. */
static int read_result(const char *line, size_t n, result_fields *out)
{
    memset(out, 0, sizeof *out);
    json_t *r = n < LINE_MAX_BYTES ? json_loadb(line, n, JSON_REJECT_DUPLICATES, NULL) : NULL;
    json_t *worktype = json_object_get(r, "worktype"), *status = json_object_get(r, "status"),
           *factors = json_object_get(r, "factors"), *aid = json_object_get(r, "aid"),
           *complete = json_object_get(r, "rangecomplete");
    json_t *p = json_object_get(r, "exponent"), *lo = json_object_get(r, "bitlo"), *hi = json_object_get(r, "bithi");
    bool ok = json_is_object(r) && json_is_string(worktype) && strcmp(json_string_value(worktype), "TF") == 0 &&
              is_int(p, 2, UINT32_MAX) && is_int(lo, 1, 127) && is_int(hi, 1, 127) && json_is_boolean(complete) &&
              json_is_string(status) && (factors == NULL || json_is_array(factors)) &&
              (aid == NULL || (json_is_string(aid) && pn_is_key(json_string_value(aid))));
    size_t i, used = 0;
    json_t *q;
    json_array_foreach(factors, i, q) {
        const char *s = json_string_value(q);
        size_t len = s != NULL ? strlen(s) : 0;
        ok = ok && len > 0 && len < 40 && strspn(s, "0123456789") == len && used + len + 2 < sizeof out->f;
        if (ok)
            used += (size_t)snprintf(out->f + used, sizeof out->f - used, "%s%s", i ? "," : "", s);
    }
    if (ok) {
        out->exponent = (uint32_t)json_integer_value(p);
        out->complete = json_is_true(complete);
        snprintf(out->k, sizeof out->k, "%s", aid != NULL ? json_string_value(aid) : "0");
        snprintf(out->n, sizeof out->n, "%u", out->exponent);
        snprintf(out->sf, sizeof out->sf, "%d", (int)json_integer_value(lo));
        snprintf(out->ef, sizeof out->ef, "%d", (int)json_integer_value(hi));
        snprintf(out->r, sizeof out->r, "%s", strcmp(json_string_value(status), "F") == 0 ? "1" : "4");
    }
    json_decref(r);
    return ok ? 0 : -1;
}

/* Is the exponent still in the worktodo file (ar's d = 0)? */
static bool exponent_queued(const lode_primenet_client *c, uint32_t p)
{
    lode_tf_assignment *list;
    size_t count;
    int bad;
    if (lode_tf_worktodo_load(c->cfg.worktodo, &list, &count, &bad, false) != 0)
        return false;
    bool found = false;
    for (size_t i = 0; i < count && !found; i++)
        found = list[i].p == p;
    free(list);
    return found;
}

static bool final_refusal(int code)
{
    return code == LODE_PN_NO_ASSIGNMENT || code == LODE_PN_INVALID_ASSIGNMENT_KEY ||
           code == LODE_PN_INVALID_ASSIGNMENT_TYPE || code == LODE_PN_INVALID_RESULT_TYPE ||
           code == LODE_PN_WORK_NO_LONGER_NEEDED || code == LODE_PN_ILLEGAL_RESIDUE;
}

/* Records a line PrimeNet has settled (accepted, or refused for good). */
static int record(lode_primenet_client *c, const char *line, size_t n)
{
    lode_tf_crash_point("primenet-sent");
    if (lode_pn_sent_record(c->cfg.sent_file, line, n) != 0) {
        pn_note_error(c, "cannot append to %s: %s; the result is sent again later (PrimeNet credits it once)",
                      c->cfg.sent_file, strerror(errno));
        return PN_TX_FAILED;
    }
    lode_tf_crash_point("sent-recorded");
    pthread_mutex_lock(&c->lock);
    c->status.results_sent++;
    if (c->status.results_queued > 0)
        c->status.results_queued--;
    pthread_mutex_unlock(&c->lock);
    return PN_TX_OK;
}

/* One ar. PN_TX_OK also for a line left for the next pass (error 7). */
static int send_one(lode_primenet_client *c, const char *line, size_t n, const result_fields *f)
{
    char *m = strndup(line, n);
    if (m == NULL)
        return PN_TX_FAILED;
    pn_param p[8] = {{"k", f->k}, {"m", m}, {"r", f->r}, {"n", f->n},
                     {"d", exponent_queued(c, f->exponent) ? "0" : "1"}, {"sf", f->sf}};
    size_t count = 6;
    if (f->complete)
        p[count++] = (pn_param){"ef", f->ef};
    if (f->f[0] != '\0')
        p[count++] = (pn_param){"f", f->f};
    lode_pn_reply r;
    int rc = pn_transact(c, "ar", p, count, &r);
    free(m);
    if (rc != PN_TX_OK)
        return rc;
    char detail[256];
    pn_detail(&r, detail, sizeof detail);
    if (r.code == LODE_PN_OK) {
        lode_log(LODE_LOG_INFO, "PrimeNet: result M%u %s-%s sent: %s", f->exponent, f->sf, f->ef, detail);
        return record(c, line, n);
    }
    if (final_refusal(r.code)) {
        lode_log(LODE_LOG_WARN, "PrimeNet refused the result of M%u %s-%s for good (error %d, %s: %s): recorded "
                 "in %s, not sent again; it stays in %s for a manual submission", f->exponent, f->sf, f->ef,
                 r.code, lode_pn_error_text(r.code), detail, c->cfg.sent_file, c->cfg.results);
        return record(c, line, n);
    }
    if (r.code == LODE_PN_INVALID_PARAMETER) {
        lode_log(LODE_LOG_ERROR, "PrimeNet rejects the result of M%u %s-%s as malformed (error 7: %s): a bug of "
                 "lode, please report it; sent again next pass", f->exponent, f->sf, f->ef, detail);
        return PN_TX_OK;
    }
    pn_note_error(c, "sending the result of M%u (ar): error %d, %s: %s", f->exponent, r.code,
                  lode_pn_error_text(r.code), detail);
    return PN_TX_FAILED;
}

/* The lines not sent yet: counted into the status, then (send) sent in
 * order. */
int pn_send_results(lode_primenet_client *c, bool send)
{
    size_t len;
    char *text = lode_tf_read_file(c->cfg.results, &len);
    if (text == NULL) {
        if (errno != ENOENT)
            pn_note_error(c, "cannot read %s: %s", c->cfg.results, strerror(errno));
        return errno == ENOENT ? PN_TX_OK : PN_TX_FAILED;
    }
    lode_pn_sent sent;
    if (lode_pn_sent_load(c->cfg.sent_file, &sent) != 0) {
        pn_note_error(c, "cannot read %s: %s; no result is sent until it can be read", c->cfg.sent_file,
                      strerror(errno));
        free(text);
        return PN_TX_FAILED;
    }
    uint64_t queued = 0, malformed = 0;
    for (int round = 0; round < (send ? 2 : 1); round++) { /* count, then send */
        size_t pos = 0, n;
        const char *line;
        int rc = PN_TX_OK;
        while (rc == PN_TX_OK && lode_tf_next_line(text, len, &pos, &line, &n)) {
            result_fields f;
            if (n == 0 || text[pos - 1] != '\n' || lode_pn_sent_has(&sent, line, n)) /* a cut last line waits */
                continue;
            if (read_result(line, n, &f) != 0) {
                malformed += round == 0;
                continue;
            }
            if (round == 0) {
                queued++;
                continue;
            }
            pn_set_state(c, "sending");
            rc = send_one(c, line, n, &f);
        }
        if (round == 0) {
            pthread_mutex_lock(&c->lock);
            c->status.results_queued = queued;
            pthread_mutex_unlock(&c->lock);
            if (malformed != c->warned_lines)
                lode_log(LODE_LOG_WARN, "PrimeNet: %s: %llu line(s) not TF result JSON: not sent", c->cfg.results,
                         (unsigned long long)malformed);
            c->warned_lines = malformed;
        } else if (rc != PN_TX_OK) {
            lode_pn_sent_free(&sent);
            free(text);
            return rc;
        }
    }
    lode_pn_sent_free(&sent);
    free(text);
    return PN_TX_OK;
}
