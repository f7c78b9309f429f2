#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/log.h"
#include "core/primenet/client_internal.h"

int pn_save_state(lode_primenet_client *c)
{
    if (lode_pn_state_save(c->cfg.state_file, &c->state) == 0)
        return 0;
    lode_log(LODE_LOG_ERROR, "PrimeNet: cannot write %s: %s (the registration is kept in memory only)",
             c->cfg.state_file, strerror(errno));
    return -1;
}

/* uc's c: printable, 8 to 64 characters. */
static void model_text(const lode_primenet_client *c, char *out, size_t len)
{
    char text[65];
    lode_log_printable(text, sizeof text, c->cfg.cpu_model != NULL ? c->cfg.cpu_model : "");
    snprintf(out, len, "%s", strlen(text) >= 8 ? text : "lode trial-factoring device");
}

static long reply_long(const lode_pn_reply *r, const char *name, long dflt)
{
    const char *v = lode_pn_reply_get(r, name);
    char *end;
    long n = v != NULL ? strtol(v, &end, 10) : dflt;
    return v != NULL && *v != '\0' && *end == '\0' ? n : dflt;
}

static int send_uc(lode_primenet_client *c)
{
    const lode_primenet_config *f = &c->cfg;
    char model[72], l1[16], l2[16], np[16], hp[16], m[16], s[16];
    model_text(c, model, sizeof model);
    snprintf(l1, sizeof l1, "%u", f->l1_kib);
    snprintf(l2, sizeof l2, "%u", f->l2_kib);
    snprintf(np, sizeof np, "%u", f->cores ? f->cores : 1);
    snprintf(hp, sizeof hp, "%u", f->threads_per_core ? f->threads_per_core : 1);
    snprintf(m, sizeof m, "%u", f->memory_mib);
    snprintf(s, sizeof s, "%u", f->mhz ? f->mhz : 1000);
    pn_param p[] = {{"hg", c->state.hardware_guid}, {"a", c->app}, {"c", model}, {"f", ""}, {"L1", l1},
                    {"L2", l2}, {"np", np}, {"hp", hp}, {"m", m}, {"s", s}, {"h", "24"}, {"r", "1000"},
                    {"u", f->user}, {"cn", f->computer}};
    lode_pn_reply r;
    pn_set_state(c, "registering");
    int rc = pn_transact(c, "uc", p, sizeof p / sizeof p[0], &r);
    if (rc != PN_TX_OK)
        return rc;
    char detail[256];
    pn_detail(&r, detail, sizeof detail);
    if (r.code != LODE_PN_OK) {
        pn_note_error(c, "registering the computer (uc): error %d, %s: %s", r.code, lode_pn_error_text(r.code),
                      detail);
        return PN_TX_FAILED;
    }
    c->state.registered = true;
    snprintf(c->state.user, sizeof c->state.user, "%s", f->user);
    snprintf(c->state.computer, sizeof c->state.computer, "%s", f->computer);
    c->server_od = reply_long(&r, "od", c->state.od);
    c->od_stale = c->state.options_sent && c->server_od > c->state.od;
    pn_save_state(c);
    char user[64];
    lode_log_printable(user, sizeof user, lode_pn_reply_get(&r, "un") ? lode_pn_reply_get(&r, "un") : f->user);
    lode_log(LODE_LOG_INFO, "PrimeNet: computer '%s' of user '%s' registered (GUID %s)", f->computer, user,
             c->state.guid);
    return PN_TX_OK;
}

/* po: our options (send), or PrimeNet's (!send: after the options
 * counter moved, the way Prime95 catches up with a change on the web). */
static int send_po(lode_primenet_client *c, bool send)
{
    char w[16], days[16];
    double d = c->cfg.days_of_work;
    snprintf(w, sizeof w, "%u", c->cfg.work_pref);
    snprintf(days, sizeof days, "%ld", d < 1.5 ? 1L : (long)(d + 0.5));
    pn_param p[] = {{"w", w}, {"nw", "1"}, {"DaysOfWork", days}};
    lode_pn_reply r;
    int rc = pn_transact(c, "po", p, send ? 3 : 0, &r);
    if (rc != PN_TX_OK)
        return rc;
    if (r.code != LODE_PN_OK) {
        char detail[256];
        pn_detail(&r, detail, sizeof detail);
        pn_note_error(c, "setting the options (po): error %d, %s: %s", r.code, lode_pn_error_text(r.code), detail);
        return PN_TX_FAILED;
    }
    c->state.od = reply_long(&r, "od", c->state.od);
    c->od_stale = false;
    if (send) {
        c->state.options_sent = true;
        c->state.work_pref = c->cfg.work_pref;
        c->state.days_of_work = c->cfg.days_of_work;
    } else {
        char theirs[32];
        lode_log_printable(theirs, sizeof theirs, lode_pn_reply_get(&r, "w"));
        if (theirs[0] != '\0' && strcmp(theirs, w) != 0)
            lode_log(LODE_LOG_WARN, "PrimeNet: its options for this computer ask for work preference %s; "
                     "lode fetches --work-pref %s", theirs, w);
    }
    pn_save_state(c);
    return PN_TX_OK;
}

int pn_register(lode_primenet_client *c)
{
    int rc = send_uc(c);
    return rc == PN_TX_OK ? send_po(c, true) : rc;
}

int pn_ensure_registered(lode_primenet_client *c)
{
    const lode_pn_state *s = &c->state;
    if (!s->registered || strcmp(s->user, c->cfg.user) != 0 || strcmp(s->computer, c->cfg.computer) != 0)
        return pn_register(c);
    if (!s->options_sent || s->work_pref != c->cfg.work_pref || s->days_of_work != c->cfg.days_of_work) {
        pn_set_state(c, "registering");
        return send_po(c, true);
    }
    if (c->od_stale) {
        pn_set_state(c, "registering");
        return send_po(c, false);
    }
    return PN_TX_OK;
}
