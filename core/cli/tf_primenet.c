/* `lode tf --primenet` (docs/GIMPS.md, "The PrimeNet options"): the options, the
 * client's files beside the worktodo and results files, the machine as uc
 * describes it, and the run that waits for assignments when the worktodo
 * runs out. */
#include "core/cli/messages.h"
#include "core/cli/options.h"
#include "core/cli/signals.h"
#include "core/cli/tf_primenet.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/api/api.h"
#include "core/base/log.h"
#include "core/base/settings.h"
#include "core/primenet/http.h"
#include "core/primenet/primenet.h"
#include "core/stratum/stratum_conn.h"
#include "core/stratum/url_userinfo.h"
#include "core/tf/worktodo.h"

struct cli_tf_primenet {
    lode_primenet_client *client;
    lode_primenet_config cfg;
    char state_file[4200], sent_file[4200], computer[LODE_PRIMENET_USER_MAX + 1];
    char proxy[512], proxy_user[LODE_STRATUM_CRED_MAX], proxy_pass[LODE_STRATUM_CRED_MAX];
    const char *model;
    bool no_more_work;
};

static _Atomic(lode_primenet_client *) running_client;

void cli_tf_primenet_api_status(void *user, struct lode_api_primenet *out)
{
    const cli_tf_primenet *p = user;
    lode_primenet_status st;
    lode_primenet_client_status(p->client, &st);
    out->enabled = true;
    snprintf(out->state, sizeof out->state, "%s", st.state);
    out->results_sent = (unsigned)st.results_sent;
    out->results_queued = (unsigned)st.results_queued;
    lode_tf_assignment *list = NULL;
    size_t n = 0;
    int bad;
    if (lode_tf_worktodo_load(p->cfg.worktodo, &list, &n, &bad, false) == 0)
        free(list);
    out->assignments_queued = (unsigned)n;
    snprintf(out->last_error, sizeof out->last_error, "%.*s", (int)sizeof out->last_error - 1, st.last_error);
    out->next_contact_s = st.next_contact_s;
}

bool cli_tf_primenet_stop_asked(void)
{
    lode_primenet_client *c = atomic_load(&running_client);
    return cli_interrupted() || (c != NULL && lode_primenet_refused(c));
}

int cli_tf_primenet_check(const cli_options *o, int argc)
{
    const char *needs = o->tf.no_more_work ? "--no-more-work" : o->tf.unreserve ? "--unreserve"
                        : o->tf.unreserve_all ? "--unreserve-all" : o->tf.primenet_url ? "--primenet-url" : NULL;
    if (!o->tf.primenet)
        return needs != NULL ? cli_usage_error("%s needs --primenet", needs) : 0;
    if (argc > 0)
        return cli_usage_error("--primenet takes its assignments from PrimeNet into the worktodo file, not from "
                               "the command line");
    if (o->tf.unreserve && o->tf.unreserve_all)
        return cli_usage_error("--unreserve EXPONENT or --unreserve-all, not both");
    char why[600];
    if (lode_pn_url_check(o->tf.primenet_url ? o->tf.primenet_url : LODE_PN_DEFAULT_URL, why, sizeof why) != 0)
        return cli_usage_error("--primenet-url: %s", why);
    if (o->tf.user != NULL && (strlen(o->tf.user) == 0 || strlen(o->tf.user) > LODE_PRIMENET_USER_MAX))
        return cli_usage_error("--user: a PrimeNet user ID has 1 to %d characters", LODE_PRIMENET_USER_MAX);
    if (o->tf.computer != NULL && (strlen(o->tf.computer) == 0 || strlen(o->tf.computer) > LODE_PRIMENET_USER_MAX))
        return cli_usage_error("--computer: PrimeNet takes a name of 1 to %d characters", LODE_PRIMENET_USER_MAX);
    return 0;
}


/* name in the directory of path. */
static void beside(const char *path, const char *name, char *out, size_t len)
{
    const char *slash = strrchr(path, '/');
    snprintf(out, len, "%.*s%s", slash != NULL ? (int)(slash - path + 1) : 0, path, name);
}

/* "cpu MHz : 2400.000" of /proc/cpuinfo; 0 unknown. */
static unsigned cpu_mhz(void)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[256];
    double mhz = 0;
    while (f != NULL && mhz == 0 && fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, "cpu MHz", 7) == 0 && strchr(line, ':') != NULL)
            mhz = strtod(strchr(line, ':') + 1, NULL);
    if (f != NULL)
        fclose(f);
    return mhz > 0 && mhz < 100000 ? (unsigned)mhz : 0;
}

static void machine(lode_primenet_config *cfg)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN), pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    long l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE), l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    cfg->cores = cores > 0 ? (unsigned)cores : 1;
    cfg->threads_per_core = 1;
    cfg->memory_mib = pages > 0 && page > 0 ? (unsigned)((double)pages * (double)page / 1048576.0) : 0;
    cfg->l1_kib = l1 > 0 ? (unsigned)(l1 / 1024) : 32;
    cfg->l2_kib = l2 > 0 ? (unsigned)(l2 / 1024) : 256;
    cfg->mhz = cpu_mhz();
}

static void driver_progress(void *user, lode_primenet_progress *out)
{
    lode_tf_status st;
    lode_tf_driver_status(user, &st);
    *out = (lode_primenet_progress){.running = st.running, .exponent = st.exponent, .bit_min = st.bit_min,
                                    .bit_max = st.bit_max, .classes_done = st.classes_done,
                                    .classes_total = st.classes_total, .ghz_days_per_day = st.ghz_days_per_day,
                                    .eta_s = st.eta_s};
}

static void result_written(void *user, const lode_tf_assignment *a)
{
    (void)a;
    lode_primenet_wake(user);
}

/* -x as libcurl takes it: the URL without the credentials, and them apart. */
static int split_proxy(cli_tf_primenet *p, const char *proxy)
{
    if (proxy == NULL || proxy[0] == '\0')
        return 0;
    const char *host = strstr(proxy, "://");
    host = host != NULL ? host + 3 : proxy;
    const char *at = strrchr(host, '@');
    snprintf(p->proxy, sizeof p->proxy, "%.*s%s", (int)(host - proxy), proxy, at != NULL ? at + 1 : host);
    p->cfg.proxy = p->proxy;
    if (at == NULL)
        return 0;
    bool has_pass = false;
    char err[256];
    if (lode_stratum_userinfo_parse(host, (size_t)(at - host), "proxy URL", p->proxy_user, p->proxy_pass,
                                    sizeof p->proxy_user, &has_pass, err, sizeof err) != 0) {
        lode_log(LODE_LOG_ERROR, "%s", err);
        return -1;
    }
    p->cfg.proxy_user = p->proxy_user;
    p->cfg.proxy_pass = p->proxy_pass;
    return 0;
}

/* The client's configuration (no thread yet). */
static int configure(cli_tf_primenet *p, const cli_options *o, const char *worktodo)
{
    lode_primenet_config *cfg = &p->cfg;
    *cfg = (lode_primenet_config){.url = o->tf.primenet_url ? o->tf.primenet_url : LODE_PN_DEFAULT_URL,
                                  .user = o->tf.user ? o->tf.user : "ANONYMOUS", .work_pref = o->tf.work_pref,
                                  .days_of_work = o->tf.days_of_work, .no_more_work = o->tf.no_more_work,
                                  .program_version = LODE_VERSION, .cpu_model = p->model, .worktodo = worktodo,
                                  .results = o->tf.results, .state_file = p->state_file,
                                  .sent_file = p->sent_file, .stop = cli_interrupted};
    if (o->tf.computer != NULL) {
        snprintf(p->computer, sizeof p->computer, "%s", o->tf.computer);
    } else {
        char host[256] = "";
        gethostname(host, sizeof host - 1);
        lode_log_printable(p->computer, sizeof p->computer, host[0] ? host : "lode");
    }
    cfg->computer = p->computer;
    beside(worktodo, "primenet.json", p->state_file, sizeof p->state_file);
    beside(o->tf.results, "results_sent.txt", p->sent_file, sizeof p->sent_file);
    machine(cfg);
    cfg->retry_s = lode_setting_unsigned(LODE_SETTING_PRIMENET_RETRY_S);
    cfg->checkin_s = lode_setting_unsigned(LODE_SETTING_PRIMENET_CHECKIN_S);
    cfg->timeout_s = lode_setting_unsigned(LODE_SETTING_PRIMENET_TIMEOUT_S);
    p->no_more_work = o->tf.no_more_work;
    return split_proxy(p, o->proxy);
}

/* --unreserve, --unreserve-all: the exit status. */
static int unreserve(const cli_options *o, const char *worktodo)
{
    cli_tf_primenet *p = calloc(1, sizeof *p);
    if (p == NULL)
        return EXIT_RUNTIME;
    p->model = "";
    int lock = configure(p, o, worktodo) == 0 ? lode_tf_worktodo_lock(worktodo) : -1;
    int rc = lock < 0 ? LODE_PRIMENET_UNRESERVE_FAILED : lode_primenet_unreserve(&p->cfg, o->tf.unreserve);
    if (lock >= 0)
        close(lock);
    free(p);
    return rc == LODE_PRIMENET_UNRESERVED ? 0 : rc == LODE_PRIMENET_UNRESERVE_REFUSED ? EXIT_REFUSED
           : rc == LODE_PRIMENET_UNRESERVE_NONE ? EXIT_USAGE : EXIT_RUNTIME;
}

int cli_tf_primenet_prepare(const cli_options *o, const char *worktodo)
{
    if (!o->tf.primenet)
        return -1;
    if (access(worktodo, F_OK) != 0 && errno == ENOENT && lode_tf_worktodo_append(worktodo, "", 0) != 0)
        return cli_usage_error("cannot create %s: %s", worktodo, strerror(errno));
    return o->tf.unreserve || o->tf.unreserve_all ? unreserve(o, worktodo) : -1;
}

cli_tf_primenet *cli_tf_primenet_start(const cli_options *o, lode_tf_driver *d, const char *model)
{
    cli_tf_primenet *p = calloc(1, sizeof *p);
    if (p == NULL)
        return NULL;
    p->model = model;
    char err[600];
    if (configure(p, o, d->worktodo) != 0) {
        free(p);
        return NULL;
    }
    p->cfg.progress = driver_progress;
    p->cfg.progress_user = d;
    if ((p->client = lode_primenet_start(&p->cfg, err, sizeof err)) == NULL) {
        lode_log(LODE_LOG_ERROR, "%s", err);
        free(p);
        return NULL;
    }
    atomic_store(&running_client, p->client);
    d->on_result = result_written;
    d->on_result_user = p->client;
    if (d->info.user == NULL)
        d->info.user = p->cfg.user;
    if (d->info.computer == NULL)
        d->info.computer = p->cfg.computer;
    lode_log(LODE_LOG_INFO, "PrimeNet: %s as user '%s', computer '%s', work preference %u, %g days of work%s",
             p->cfg.url, p->cfg.user, p->cfg.computer, p->cfg.work_pref, p->cfg.days_of_work,
             p->no_more_work ? " (no more work fetched)" : "");
    return p;
}

/* Waits until the worktodo holds assignments again (1), or a stop (0). */
static int wait_for_work(cli_tf_primenet *p, const char *worktodo, lode_tf_assignment **list, size_t *count)
{
    lode_log(LODE_LOG_INFO, "%s has no assignment left: waiting for PrimeNet's", worktodo);
    lode_primenet_wake(p->client);
    while (!cli_tf_primenet_stop_asked()) {
        struct timespec ts = {.tv_sec = 0, .tv_nsec = 250 * 1000 * 1000};
        nanosleep(&ts, NULL);
        if (lode_tf_worktodo_merge_add(worktodo) < 0)
            lode_log(LODE_LOG_ERROR, "cannot merge worktodo.add into %s: %s", worktodo, strerror(errno));
        lode_tf_assignment *fresh = NULL;
        size_t n = 0;
        int bad;
        if (lode_tf_worktodo_load(worktodo, &fresh, &n, &bad, false) == 0 && n > 0) {
            free(*list);
            *list = fresh;
            *count = n;
            return 1;
        }
        free(fresh);
    }
    return 0;
}

int cli_tf_primenet_run(cli_tf_primenet *p, lode_tf_driver *d, lode_tf_assignment **list, size_t *count)
{
    for (;;) {
        if (*count > 0) {
            int r = lode_tf_driver_run_list(d, list, count);
            if (r != LODE_TF_DONE)
                return r;
        }
        if (cli_tf_primenet_stop_asked())
            return LODE_TF_STOPPED;
        if (p->no_more_work)
            return LODE_TF_DONE;
        if (wait_for_work(p, d->worktodo, list, count) == 0)
            return LODE_TF_STOPPED;
    }
}

int cli_tf_primenet_end(cli_tf_primenet *p, int status)
{
    if (p == NULL)
        return status;
    bool refused = lode_primenet_refused(p->client);
    if (status == 0 && !refused) {
        uint64_t left = lode_primenet_finish(p->client);
        if (left > 0)
            lode_log(LODE_LOG_WARN, "PrimeNet: %llu result(s) of %s not sent yet: the next lode tf --primenet "
                     "sends them", (unsigned long long)left, p->cfg.results);
    }
    atomic_store(&running_client, NULL);
    lode_primenet_stop(p->client);
    free(p);
    return refused ? EXIT_REFUSED : status;
}
