/* A stand-in for the mining session (core/mining/mining.c) in the stratum tests:
 * it records the jobs the source installs and the clears, so a test can
 * check what the client did without starting any device. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/mining/mining.h"

#define FAKE_JOBS_MAX 64

struct lode_mining {
    int unused;
};

static pthread_mutex_t fake_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fake_cond = PTHREAD_COND_INITIALIZER;
static lode_job fake_jobs[FAKE_JOBS_MAX];
static size_t fake_job_count;
static unsigned fake_clear_count;
static unsigned fake_drop_count;
static char fake_failure[256];
static struct lode_mining fake_session;

lode_mining *fake_mining_get(void);
size_t fake_mining_wait_jobs(size_t count, double timeout_s);
unsigned fake_mining_wait_clears(unsigned count, double timeout_s);
int fake_mining_job(size_t index, lode_job *out);

lode_mining *fake_mining_get(void)
{
    return &fake_session;
}

int lode_mining_set_job(lode_mining *mining, const lode_job *job)
{
    (void)mining;
    pthread_mutex_lock(&fake_lock);
    int rc = -1;
    if (fake_job_count < FAKE_JOBS_MAX && lode_job_copy(&fake_jobs[fake_job_count], job) == 0) {
        fake_job_count++;
        rc = 0;
    }
    pthread_cond_broadcast(&fake_cond);
    pthread_mutex_unlock(&fake_lock);
    return rc;
}

void lode_mining_clear_job(lode_mining *mining)
{
    (void)mining;
    pthread_mutex_lock(&fake_lock);
    fake_clear_count++;
    pthread_cond_broadcast(&fake_cond);
    pthread_mutex_unlock(&fake_lock);
}

void lode_mining_drop_jobs(lode_mining *mining)
{
    (void)mining;
    pthread_mutex_lock(&fake_lock);
    fake_drop_count++;
    fake_clear_count++; /* the devices idle, as after a clear */
    pthread_cond_broadcast(&fake_cond);
    pthread_mutex_unlock(&fake_lock);
}

void lode_mining_fail(lode_mining *mining, const char *why)
{
    (void)mining;
    pthread_mutex_lock(&fake_lock);
    if (fake_failure[0] == '\0')
        snprintf(fake_failure, sizeof fake_failure, "%s", why && why[0] ? why : "failed");
    pthread_cond_broadcast(&fake_cond);
    pthread_mutex_unlock(&fake_lock);
}

bool lode_mining_failure(lode_mining *mining, char *why, size_t why_len)
{
    (void)mining;
    pthread_mutex_lock(&fake_lock);
    bool failed = fake_failure[0] != '\0';
    if (failed && why != NULL && why_len > 0)
        snprintf(why, why_len, "%s", fake_failure);
    pthread_mutex_unlock(&fake_lock);
    return failed;
}

static struct timespec deadline_in(double seconds)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    long long ns = ts.tv_nsec + (long long)(seconds * 1e9);
    ts.tv_sec += (time_t)(ns / 1000000000);
    ts.tv_nsec = (long)(ns % 1000000000);
    return ts;
}

/* Waits until at least count jobs arrived; returns how many there are. */
size_t fake_mining_wait_jobs(size_t count, double timeout_s)
{
    struct timespec until = deadline_in(timeout_s);
    pthread_mutex_lock(&fake_lock);
    while (fake_job_count < count && pthread_cond_timedwait(&fake_cond, &fake_lock, &until) == 0) {
    }
    size_t n = fake_job_count;
    pthread_mutex_unlock(&fake_lock);
    return n;
}

unsigned fake_mining_wait_clears(unsigned count, double timeout_s)
{
    struct timespec until = deadline_in(timeout_s);
    pthread_mutex_lock(&fake_lock);
    while (fake_clear_count < count && pthread_cond_timedwait(&fake_cond, &fake_lock, &until) == 0) {
    }
    unsigned n = fake_clear_count;
    pthread_mutex_unlock(&fake_lock);
    return n;
}

/* A copy of job number index (free it with lode_job_free). */
int fake_mining_job(size_t index, lode_job *out)
{
    pthread_mutex_lock(&fake_lock);
    int rc = index < fake_job_count ? lode_job_copy(out, &fake_jobs[index]) : -1;
    pthread_mutex_unlock(&fake_lock);
    return rc;
}
