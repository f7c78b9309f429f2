/* ap (progress) and au (unreserve). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/log.h"
#include "core/base/tf_ref.h"
#include "core/primenet/client_internal.h"

static bool final_for_assignment(int code)
{
    return code == LODE_PN_INVALID_ASSIGNMENT_KEY || code == LODE_PN_INVALID_ASSIGNMENT_TYPE ||
           code == LODE_PN_INVALID_RESULT_TYPE || code == LODE_PN_WORK_NO_LONGER_NEEDED ||
           code == LODE_PN_ILLEGAL_RESIDUE;
}

/* One ap: p with 4 decimals below 100, d the seconds to the next report,
 * e the seconds until this assignment is done (cumulative). */
static int report_one(lode_primenet_client *c, const lode_tf_assignment *a, double pct, double e)
{
    char p[16], d[16], es[24], stage[16];
    if (pct > 99.9999)
        pct = 99.9999;
    snprintf(p, sizeof p, "%.4f", pct > 0 ? pct : 0);
    snprintf(d, sizeof d, "%.0f", c->cfg.checkin_s);
    snprintf(es, sizeof es, "%.0f", e < 1e12 ? e : 1e12);
    if (a->bit_max == a->bit_min + 1)
        snprintf(stage, sizeof stage, "TF%u", a->bit_min);
    else
        snprintf(stage, sizeof stage, "TF%u-%u", a->bit_min, a->bit_max);
    pn_param params[] = {{"k", a->aid}, {"p", p}, {"d", d}, {"e", es}, {"c", "0"}, {"stage", stage}};
    lode_pn_reply r;
    int rc = pn_transact(c, "ap", params, strcmp(p, "0.0000") != 0 ? 6 : 5, &r);
    if (rc != PN_TX_OK)
        return rc;
    char detail[256];
    pn_detail(&r, detail, sizeof detail);
    if (r.code == LODE_PN_OK)
        return PN_TX_OK;
    if (final_for_assignment(r.code)) {
        pn_drop_assignment(c, a, r.code, detail);
        return PN_TX_OK;
    }
    pn_note_error(c, "reporting progress of M%u (ap): error %d, %s: %s", a->p, r.code, lode_pn_error_text(r.code),
                  detail);
    return r.code == LODE_PN_INVALID_PARAMETER ? PN_TX_OK : PN_TX_FAILED;
}

int pn_report_progress(lode_primenet_client *c)
{
    lode_tf_assignment *list;
    size_t count;
    int bad;
    if (lode_tf_worktodo_load(c->cfg.worktodo, &list, &count, &bad, false) != 0)
        return PN_TX_OK; /* no worktodo yet: nothing to report */
    lode_primenet_progress pr = {.ghz_days_per_day = -1, .eta_s = -1};
    if (c->cfg.progress != NULL)
        c->cfg.progress(c->cfg.progress_user, &pr);
    if (pr.ghz_days_per_day > 0)
        c->known_rate = pr.ghz_days_per_day;
    double e = 0;
    int rc = PN_TX_OK, sent = 0;
    for (size_t i = 0; i < count && rc == PN_TX_OK && sent < PN_REPORT_MAX; i++) {
        const lode_tf_assignment *a = &list[i];
        bool run = pr.running && pr.exponent == a->p && pr.bit_min == a->bit_min && pr.bit_max == a->bit_max;
        double frac = run && pr.classes_total > 0 ? (double)pr.classes_done / pr.classes_total : 0;
        double gd = lode_tf_ghz_days(a->p, a->bit_min, a->bit_max) * (1 - frac);
        e += run && pr.eta_s >= 0 ? pr.eta_s : c->known_rate > 0 ? gd / c->known_rate * 86400 : PN_UNKNOWN_ETA_S;
        if (!pn_is_key(a->aid))
            continue;
        pn_set_state(c, "reporting");
        rc = report_one(c, a, 100 * frac, e);
        sent++;
    }
    free(list);
    return rc;
}

/* The assignments to give back: keyed lines of exponent (0: all). */
static int unreserve_list(lode_primenet_client *c, uint32_t exponent)
{
    lode_tf_assignment *list;
    size_t count;
    int bad, rc = LODE_PRIMENET_UNRESERVE_NONE;
    if (lode_tf_worktodo_load(c->cfg.worktodo, &list, &count, &bad, false) != 0)
        return rc;
    for (size_t i = 0; i < count; i++) {
        const lode_tf_assignment *a = &list[i];
        if (!pn_is_key(a->aid) || (exponent != 0 && a->p != exponent))
            continue;
        pn_param p[] = {{"k", a->aid}};
        lode_pn_reply r;
        int tx = pn_transact(c, "au", p, 1, &r);
        if (tx == PN_TX_REFUSED) {
            rc = LODE_PRIMENET_UNRESERVE_REFUSED;
            break;
        }
        char detail[256];
        pn_detail(&r, detail, sizeof detail);
        if (tx != PN_TX_OK || (r.code != LODE_PN_OK && r.code != LODE_PN_INVALID_ASSIGNMENT_KEY)) {
            if (tx == PN_TX_OK)
                lode_log(LODE_LOG_ERROR, "PrimeNet: cannot give back M%u (%s): error %d, %s: %s", a->p, a->aid,
                         r.code, lode_pn_error_text(r.code), detail);
            rc = LODE_PRIMENET_UNRESERVE_FAILED;
            if (tx == PN_TX_STOPPED)
                break;
            continue;
        }
        if (lode_tf_worktodo_replace(c->cfg.worktodo, a, NULL, 0) != 0) {
            lode_log(LODE_LOG_ERROR, "cannot remove %.*s from %s: %s", (int)a->line_len, a->line, c->cfg.worktodo,
                     strerror(errno));
            rc = LODE_PRIMENET_UNRESERVE_FAILED;
            continue;
        }
        lode_log(LODE_LOG_NOTICE, "M%u from 2^%u to 2^%u given back to PrimeNet%s; line removed", a->p, a->bit_min,
                 a->bit_max, r.code == LODE_PN_OK ? "" : " (PrimeNet no longer held it)");
        if (rc == LODE_PRIMENET_UNRESERVE_NONE)
            rc = LODE_PRIMENET_UNRESERVED;
    }
    free(list);
    return rc;
}

static bool stop_asked(void *c)
{
    return pn_stopping(c);
}

int lode_primenet_unreserve(const lode_primenet_config *cfg, uint32_t exponent)
{
    lode_primenet_client *c = calloc(1, sizeof *c);
    if (c == NULL)
        return LODE_PRIMENET_UNRESERVE_FAILED;
    c->cfg = *cfg;
    c->cfg.retry_s = cfg->retry_s > 0 ? cfg->retry_s : 60;
    c->cfg.timeout_s = cfg->timeout_s > 0 ? cfg->timeout_s : 180;
    c->http = (lode_pn_http){.url = cfg->url, .proxy = cfg->proxy, .proxy_user = cfg->proxy_user,
                             .proxy_pass = cfg->proxy_pass, .timeout_s = c->cfg.timeout_s,
                             .connect_timeout_s = c->cfg.timeout_s < 30 ? c->cfg.timeout_s : 30,
                             .stop = stop_asked, .stop_user = c};
    pthread_mutex_init(&c->lock, NULL);
    char err[512];
    int loaded = lode_pn_state_load(cfg->state_file, &c->state, err, sizeof err);
    int rc;
    if (loaded < 0) {
        lode_log(LODE_LOG_ERROR, "%s", err);
        rc = LODE_PRIMENET_UNRESERVE_FAILED;
    } else if (loaded == 0 || !c->state.registered) {
        lode_log(LODE_LOG_ERROR, "%s: this computer is not registered with PrimeNet: it holds no assignment to "
                 "give back", cfg->state_file);
        rc = LODE_PRIMENET_UNRESERVE_NONE;
    } else {
        rc = unreserve_list(c, exponent);
        if (rc == LODE_PRIMENET_UNRESERVE_NONE)
            lode_log(LODE_LOG_ERROR, "%s holds no PrimeNet assignment%s%.0u to give back", cfg->worktodo,
                     exponent ? " of M" : "", exponent);
    }
    pthread_mutex_destroy(&c->lock);
    free(c);
    return rc;
}
