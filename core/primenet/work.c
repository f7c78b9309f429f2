#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/log.h"
#include "core/base/tf_ref.h"
#include "core/primenet/client_internal.h"

bool pn_is_key(const char *s)
{
    if (s == NULL || strlen(s) != 32)
        return false;
    for (; *s; s++)
        if (!isxdigit((unsigned char)*s))
            return false;
    return true;
}

/* The worktodo's assignments (none when it is missing). */
static int load_list(lode_primenet_client *c, lode_tf_assignment **list, size_t *count)
{
    int bad;
    if (lode_tf_worktodo_load(c->cfg.worktodo, list, count, &bad, false) == 0)
        return 0;
    *list = NULL;
    *count = 0;
    if (errno == ENOENT)
        return 0;
    pn_note_error(c, "cannot read %s: %s", c->cfg.worktodo, strerror(errno));
    return -1;
}

/* The running assignment; the measured rate is remembered. */
static void running(lode_primenet_client *c, lode_primenet_progress *pr)
{
    *pr = (lode_primenet_progress){.ghz_days_per_day = -1, .eta_s = -1};
    if (c->cfg.progress != NULL)
        c->cfg.progress(c->cfg.progress_user, pr);
    if (pr->ghz_days_per_day > 0)
        c->known_rate = pr->ghz_days_per_day;
}

static bool is_running(const lode_primenet_progress *pr, const lode_tf_assignment *a)
{
    return pr->running && pr->exponent == a->p && pr->bit_min == a->bit_min && pr->bit_max == a->bit_max;
}

/* The GHz-days of a that are left. */
static double left_ghz_days(const lode_primenet_progress *pr, const lode_tf_assignment *a)
{
    double gd = lode_tf_ghz_days(a->p, a->bit_min, a->bit_max);
    if (is_running(pr, a) && pr->classes_total > 0)
        gd *= 1.0 - (double)pr->classes_done / pr->classes_total;
    return gd;
}

bool pn_queue_short(lode_primenet_client *c)
{
    lode_tf_assignment *list;
    size_t count;
    if (load_list(c, &list, &count) != 0)
        return false;
    lode_primenet_progress pr;
    running(c, &pr);
    double gd = 0;
    for (size_t i = 0; i < count; i++)
        gd += left_ghz_days(&pr, &list[i]);
    free(list);
    if (count >= PN_QUEUE_MAX)
        return false;
    if (c->known_rate <= 0) /* speed unknown: a small fixed queue, as AutoPrimeNet keeps */
        return count < LODE_PRIMENET_FETCH_UNKNOWN;
    return gd / c->known_rate < c->cfg.days_of_work;
}

void pn_drop_assignment(lode_primenet_client *c, const lode_tf_assignment *a, int code, const char *detail)
{
    lode_primenet_progress pr;
    running(c, &pr);
    int rc = lode_tf_worktodo_replace(c->cfg.worktodo, a, NULL, 0);
    lode_log(LODE_LOG_WARN, "PrimeNet no longer wants M%u from 2^%u to 2^%u (key %s; error %d, %s: %s): %s%s",
             a->p, a->bit_min, a->bit_max, a->aid, code, lode_pn_error_text(code), detail,
             rc == 0 ? "removed from the worktodo" : "cannot remove it from the worktodo",
             is_running(&pr, a) ? "; it is running now and finishes" : "");
}

/* Gives a fetched assignment back (au), for one lode cannot run. */
static void give_back(lode_primenet_client *c, const char *key)
{
    pn_param p[] = {{"k", key}};
    lode_pn_reply r;
    if (pn_transact(c, "au", p, 1, &r) == PN_TX_OK && r.code == LODE_PN_OK)
        lode_log(LODE_LOG_INFO, "PrimeNet: assignment %s given back", key);
}

/* 1 to 10 decimal digits, nothing else (no line break a hostile reply
 * could smuggle into the worktodo). */
static bool is_number(const char *s)
{
    size_t n = s != NULL ? strlen(s) : 0;
    return n > 0 && n <= 10 && strspn(s, "0123456789") == n;
}

/* A ga reply's assignment as a worktodo line, or -1 with why. */
static int assignment_line(const lode_pn_reply *r, char *line, size_t len, char *why, size_t why_len)
{
    const char *w = lode_pn_reply_get(r, "w"), *k = lode_pn_reply_get(r, "k"), *n = lode_pn_reply_get(r, "n"),
               *sf = lode_pn_reply_get(r, "sf"), *ef = lode_pn_reply_get(r, "ef");
    if (w == NULL || strcmp(w, "2") != 0) {
        snprintf(why, why_len, "not trial-factoring work (w=%.8s)", w != NULL ? w : "none");
        return -1;
    }
    if (!pn_is_key(k) || !is_number(n) || !is_number(sf) || !is_number(ef)) {
        snprintf(why, why_len, "k, n, sf or ef missing or malformed");
        return -1;
    }
    snprintf(line, len, "Factor=%s,%s,%s,%s", k, n, sf, ef);
    lode_tf_assignment a;
    return lode_tf_worktodo_parse_line(line, strlen(line), &a, why, why_len) == 1 ? 0 : -1;
}

static int fetch_one(lode_primenet_client *c, bool *no_work)
{
    pn_param p[] = {{"c", "0"}};
    lode_pn_reply r;
    pn_set_state(c, "fetching");
    int rc = pn_transact(c, "ga", p, 1, &r);
    if (rc != PN_TX_OK)
        return rc;
    char detail[256], line[LODE_TF_LINE_MAX + 2], why[256];
    pn_detail(&r, detail, sizeof detail);
    *no_work = true; /* unless an assignment comes */
    if (r.code == LODE_PN_NO_ASSIGNMENT) {
        lode_log(LODE_LOG_INFO, "PrimeNet has no assignment for now (%s): asking again later", detail);
        return PN_TX_OK;
    }
    if (r.code != LODE_PN_OK) {
        pn_note_error(c, "fetching work (ga): error %d, %s: %s", r.code, lode_pn_error_text(r.code), detail);
        return PN_TX_OK;
    }
    const char *key = lode_pn_reply_get(&r, "k");
    if (assignment_line(&r, line, sizeof line, why, sizeof why) != 0) {
        pn_note_error(c, "PrimeNet assigned work lode cannot run (%s): given back", why);
        if (pn_is_key(key))
            give_back(c, key);
        return PN_TX_OK;
    }
    if (lode_tf_worktodo_append(c->cfg.worktodo, line, strlen(line)) != 0) {
        pn_note_error(c, "cannot add the assignment to %s: %s; given back", c->cfg.worktodo, strerror(errno));
        give_back(c, key);
        return PN_TX_FAILED;
    }
    *no_work = false;
    pthread_mutex_lock(&c->lock);
    c->status.assignments_fetched++;
    pthread_mutex_unlock(&c->lock);
    lode_log(LODE_LOG_INFO, "PrimeNet: assignment %s", line);
    return PN_TX_OK;
}

int pn_fill_queue(lode_primenet_client *c, bool *no_work)
{
    *no_work = false;
    for (int i = 0; i < PN_FETCH_PER_PASS && !*no_work && pn_queue_short(c); i++) {
        int rc = fetch_one(c, no_work);
        if (rc != PN_TX_OK)
            return rc;
    }
    return PN_TX_OK;
}

/* ra for one keyless line: the key goes in after "Factor=" (the class
 * driver still finds the line it runs, core/tf/worktodo.h). */
static int register_line(lode_primenet_client *c, const lode_tf_assignment *a)
{
    char n[16], sf[8], ef[8], line[LODE_TF_LINE_MAX + 40];
    snprintf(n, sizeof n, "%u", a->p);
    snprintf(sf, sizeof sf, "%u", a->bit_min);
    snprintf(ef, sizeof ef, "%u", a->bit_max);
    pn_param p[] = {{"c", "0"}, {"w", "2"}, {"n", n}, {"sf", sf}, {"ef", ef}};
    lode_pn_reply r;
    int rc = pn_transact(c, "ra", p, 5, &r);
    if (rc != PN_TX_OK)
        return rc;
    char detail[256];
    pn_detail(&r, detail, sizeof detail);
    const char *key = lode_pn_reply_get(&r, "k");
    const char *eq = memchr(a->line, '=', a->line_len);
    int head = (int)(eq - a->line) + 1;
    bool ok = r.code == LODE_PN_OK && pn_is_key(key);
    if (!ok && r.code != LODE_PN_INVALID_PARAMETER && r.code != LODE_PN_INVALID_ASSIGNMENT_TYPE &&
        r.code != LODE_PN_OK) {
        pn_note_error(c, "registering M%u (ra): error %d, %s: %s", a->p, r.code, lode_pn_error_text(r.code), detail);
        return PN_TX_FAILED;
    }
    /* Refused (or a reply without a key): N/A, as AutoPrimeNet marks it, never asked again. */
    snprintf(line, sizeof line, "%.*s%s,%.*s", head, a->line, ok ? key : "N/A", (int)(a->line_len - (size_t)head),
             a->line + head);
    if (lode_tf_worktodo_replace(c->cfg.worktodo, a, line, strlen(line)) != 0) {
        pn_note_error(c, "cannot rewrite %s: %s", c->cfg.worktodo, strerror(errno));
        return PN_TX_FAILED;
    }
    if (ok)
        lode_log(LODE_LOG_INFO, "PrimeNet: M%u from 2^%u to 2^%u registered as assignment %s", a->p, a->bit_min,
                 a->bit_max, key);
    else
        lode_log(LODE_LOG_WARN, "PrimeNet would not register M%u from 2^%u to 2^%u (error %d, %s: %s): marked N/A, "
                 "run without a key", a->p, a->bit_min, a->bit_max, r.code, lode_pn_error_text(r.code), detail);
    return PN_TX_OK;
}

int pn_register_keyless(lode_primenet_client *c)
{
    lode_tf_assignment *list;
    size_t count;
    if (load_list(c, &list, &count) != 0)
        return PN_TX_OK;
    lode_primenet_progress pr;
    running(c, &pr);
    int rc = PN_TX_OK;
    for (size_t i = 0; i < count && rc == PN_TX_OK; i++) {
        const lode_tf_assignment *a = &list[i];
        /* The running line stays as it is: its result carries no key anyway. */
        if (a->aid[0] != '\0' || is_running(&pr, a) || a->line_len + 33 > LODE_TF_LINE_MAX)
            continue;
        pn_set_state(c, "registering");
        rc = register_line(c, a);
    }
    free(list);
    return rc;
}
