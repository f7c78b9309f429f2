/* Host CPU cost of the CUDA runtime calls the engines make (a measurement
 * for docs/PERFORMANCE.md, not a test): microseconds of the calling
 * thread's CPU time per call, and of the whole process's (the driver's
 * own threads included) per blocking wait.
 *
 *   host_cost_probe        prints one line per operation */
#include <cuda_runtime.h>

#include <stdio.h>
#include <sys/resource.h>
#include <time.h>

#define CHECK(call)                                                                                \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_));  \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

__global__ void empty_kernel(int *p, int v)
{
    if (p != nullptr && threadIdx.x == 0 && blockIdx.x == 0 && v < 0)
        *p = v;
}

/* Busy for about `cycles` SM clocks (one block). */
__global__ void spin_kernel(long long cycles)
{
    const long long end = clock64() + cycles;
    while (clock64() < end) {
    }
}

static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double process_cpu(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
}

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void report(const char *what, double seconds, int n)
{
    printf("%-58s %8.2f us\n", what, seconds / n * 1e6);
}

enum node_kind { KERNEL, MEMSET, MEMCPY };

/* A graph of n nodes of one kind in a chain. */
static int build(node_kind kind, int n, int *dev, int *host, cudaGraphExec_t *exec)
{
    cudaGraph_t g;
    CHECK(cudaGraphCreate(&g, 0));
    cudaGraphNode_t prev = nullptr, node;
    int v = 1;
    void *args[] = {&dev, &v};
    cudaKernelNodeParams k = {(void *)empty_kernel, dim3(132), dim3(128), 0, args, nullptr};
    cudaMemsetParams m = {};
    m.dst = dev;
    m.elementSize = 4;
    m.width = 1 << 20;
    m.height = 1;
    for (int i = 0; i < n; i++) {
        const size_t deps = prev != nullptr;
        if (kind == KERNEL)
            CHECK(cudaGraphAddKernelNode(&node, g, &prev, deps, &k));
        else if (kind == MEMSET)
            CHECK(cudaGraphAddMemsetNode(&node, g, &prev, deps, &m));
        else
            CHECK(cudaGraphAddMemcpyNode1D(&node, g, &prev, deps, host, dev, 4096, cudaMemcpyDeviceToHost));
        prev = node;
    }
    CHECK(cudaGraphInstantiate(exec, g, 0));
    return 0;
}

int main(void)
{
    CHECK(cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync));
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    int *dev, *host;
    CHECK(cudaMalloc(&dev, 16 << 20));
    CHECK(cudaMallocHost(&host, 1 << 20));
    cudaEvent_t ev, ev_block;
    CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    CHECK(cudaEventCreateWithFlags(&ev_block, cudaEventDisableTiming | cudaEventBlockingSync));
    CHECK(cudaStreamSynchronize(s));
    const int reps = 20, per = 100;

    /* Single calls, timed in groups of `per` between synchronisations (so
     * the queue never fills and no call waits for the device). */
    struct {
        const char *name;
        int op;
    } calls[] = {{"cudaLaunchKernel (empty, 132 x 128)", 0},
                 {"cudaMemsetAsync (4 MiB)", 1},
                 {"cudaMemcpyAsync D2H 4 KiB to pinned", 2},
                 {"cudaEventRecord", 3},
                 {"cudaStreamWaitEvent", 4}};
    int v = 1;
    for (auto &c : calls) {
        double t = 0;
        for (int r = 0; r < reps; r++) {
            const double t0 = thread_cpu();
            for (int i = 0; i < per; i++) {
                switch (c.op) {
                case 0: empty_kernel<<<132, 128, 0, s>>>(dev, v); break;
                case 1: cudaMemsetAsync(dev, 0, 4 << 20, s); break;
                case 2: cudaMemcpyAsync(host, dev, 4096, cudaMemcpyDeviceToHost, s); break;
                case 3: cudaEventRecord(ev, s); break;
                case 4: cudaStreamWaitEvent(s, ev, 0); break;
                }
            }
            t += thread_cpu() - t0;
            CHECK(cudaStreamSynchronize(s));
        }
        report(c.name, t, reps * per);
    }

    /* Graph launches: chains of n nodes of one kind. */
    const char *kinds[] = {"kernel", "memset (4 MiB)", "memcpy D2H 4 KiB"};
    for (int kind = 0; kind < 3; kind++)
        for (int n : {1, 4, 16, 48}) {
            cudaGraphExec_t exec;
            if (build((node_kind)kind, n, dev, host, &exec) != 0)
                return 1;
            CHECK(cudaGraphLaunch(exec, s)); /* the first launch uploads */
            CHECK(cudaStreamSynchronize(s));
            double t = 0;
            for (int r = 0; r < 200; r++) {
                const double t0 = thread_cpu();
                cudaGraphLaunch(exec, s);
                t += thread_cpu() - t0;
                CHECK(cudaStreamSynchronize(s));
            }
            char what[96];
            snprintf(what, sizeof what, "cudaGraphLaunch, %2d %s nodes", n, kinds[kind]);
            report(what, t, 200);
            cudaGraphExecDestroy(exec);
        }

    /* A kernel node's parameters updated in an executable graph. */
    {
        cudaGraphExec_t exec;
        cudaGraph_t g;
        CHECK(cudaGraphCreate(&g, 0));
        cudaGraphNode_t node;
        void *args[] = {&dev, &v};
        cudaKernelNodeParams k = {(void *)empty_kernel, dim3(132), dim3(128), 0, args, nullptr};
        CHECK(cudaGraphAddKernelNode(&node, g, nullptr, 0, &k));
        CHECK(cudaGraphInstantiate(&exec, g, 0));
        const double t0 = thread_cpu();
        for (int i = 0; i < 2000; i++) {
            v = i;
            cudaGraphExecKernelNodeSetParams(exec, node, &k);
        }
        report("cudaGraphExecKernelNodeSetParams", thread_cpu() - t0, 2000);
    }

    /* Waiting for a 10 ms kernel: the whole process's CPU per wait. */
    int clock_khz = 0;
    CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
    const long long cycles = (long long)clock_khz * 10; /* 10 ms */
    for (int mode = 0; mode < 3; mode++) {
        const int waits = 50;
        const double p0 = process_cpu(), w0 = wall();
        for (int i = 0; i < waits; i++) {
            spin_kernel<<<1, 32, 0, s>>>(cycles);
            if (mode == 0) {
                cudaEventRecord(ev_block, s);
                cudaEventSynchronize(ev_block);
            } else if (mode == 1) {
                cudaStreamSynchronize(s);
            } else { /* sleep through most of it, then poll */
                cudaEventRecord(ev, s);
                struct timespec nap = {0, 9500000};
                nanosleep(&nap, nullptr);
                while (cudaEventQuery(ev) == cudaErrorNotReady) {
                    struct timespec poll = {0, 100000};
                    nanosleep(&poll, nullptr);
                }
            }
        }
        const char *names[] = {"wait: blocking-sync event (process CPU)", "wait: cudaStreamSynchronize (process CPU)",
                               "wait: sleep, then cudaEventQuery (process CPU)"};
        char what[96];
        snprintf(what, sizeof what, "%s, wall %.1f ms", names[mode], (wall() - w0) / waits * 1e3);
        report(what, process_cpu() - p0, waits);
    }
    return 0;
}
