/* A sampling profiler of host CPU time, preloaded into lode on the GPU
 * machine (which has no perf): LD_PRELOAD=libcpu_sampler.so
 * LODE_SAMPLER_OUT=FILE lode ...
 *
 * Every tick of the process's CPU time (ITIMER_PROF asks for 1 ms; the
 * kernel rounds up to its tick) the running thread records its name and a
 * backtrace; at exit the samples and /proc/self/maps go to FILE, and
 * tests/tools/cpu_profile.py names the functions on the build machine.
 * Measuring only: not part of lode. */
#define _GNU_SOURCE
#include <execinfo.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/time.h>
#include <unistd.h>

#define MAX_SAMPLES 400000
#define MAX_FRAMES 24

typedef struct sample {
    char thread[16];
    int frames;
    void *pc[MAX_FRAMES];
} sample;

static sample *samples;
static atomic_int taken;

static void on_prof(int sig)
{
    (void)sig;
    const int i = atomic_fetch_add(&taken, 1);
    if (i >= MAX_SAMPLES)
        return;
    sample *s = &samples[i];
    prctl(PR_GET_NAME, s->thread);
    s->frames = backtrace(s->pc, MAX_FRAMES);
}

static void write_all(int fd, const char *text, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, text, n);
        if (w <= 0)
            return;
        text += w;
        n -= (size_t)w;
    }
}

static void dump(void)
{
    const struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_PROF, &off, NULL);
    const char *path = getenv("LODE_SAMPLER_OUT");
    if (path == NULL || samples == NULL)
        return;
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return;
    /* The maps first: the addresses below are read against them. */
    int maps = open("/proc/self/maps", O_RDONLY);
    char buf[4096];
    ssize_t n;
    fputs("maps\n", f);
    fflush(f);
    while (maps >= 0 && (n = read(maps, buf, sizeof buf)) > 0)
        write_all(fileno(f), buf, (size_t)n);
    if (maps >= 0)
        close(maps);
    fputs("samples\n", f);
    int count = atomic_load(&taken);
    if (count > MAX_SAMPLES)
        count = MAX_SAMPLES;
    for (int i = 0; i < count; i++) {
        fprintf(f, "%s", samples[i].thread);
        /* Frame 0 is on_prof itself, frame 1 the signal trampoline. */
        for (int k = 2; k < samples[i].frames; k++)
            fprintf(f, " %p", samples[i].pc[k]);
        fputc('\n', f);
    }
    fclose(f);
}

__attribute__((constructor)) static void start(void)
{
    if (getenv("LODE_SAMPLER_OUT") == NULL)
        return;
    samples = calloc(MAX_SAMPLES, sizeof *samples);
    if (samples == NULL)
        return;
    void *warm[2];
    backtrace(warm, 2); /* loads the unwinder outside the signal handler */
    struct sigaction sa = {.sa_handler = on_prof, .sa_flags = SA_RESTART};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGPROF, &sa, NULL);
    const struct itimerval every_ms = {{0, 1000}, {0, 1000}};
    setitimer(ITIMER_PROF, &every_ms, NULL);
    atexit(dump);
}
