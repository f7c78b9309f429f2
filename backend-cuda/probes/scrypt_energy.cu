/* Where the energy of a scrypt hash goes on a power-capped GPU.
 *
 * Not part of lode: a measuring tool for docs/PERFORMANCE.md. It runs the
 * real romix kernels of scrypt.cu and stripped copies of them, each
 * for a few seconds at the board's power limit, and prints per mode the
 * sustained rate, the board power and energy per hash (NVML's energy
 * counter) and the average SM clock:
 *
 *   thread, thread-skip8   the shipped kernels (romix only, no PBKDF2)
 *   salsa-only             the same 2 x 1024 BlockMix calls and X ^= V xors,
 *                          no scratchpad: the compute side alone
 *   memory-only            the same scratchpad traffic (stores, dependent
 *                          random 128-byte reads, shared-memory staging),
 *                          one multiply-add in place of each BlockMix
 *   writes-only            its first pass alone (the reads cost the
 *                          difference: a second pass alone would read a
 *                          scratchpad its own indices did not write)
 *   spin                   every SM resident, sleeping: the board's power
 *                          at load clocks with next to no work
 *
 * Built as backend-cuda/scrypt_energy_probe with the CUDA backend.
 * Run:   scrypt_energy_probe [seconds per mode [mode...]]   (0 seconds: one
 *        launch per mode, for a profiler such as ncu)
 */
#include "backend-cuda/scrypt.cu"
#include "probe_nvml.h" /* beside this file */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

namespace {

/* ---- the stripped kernels ------------------------------------------------ */

__global__ void __launch_bounds__(kRomixMaxBlock, 4) probe_salsa_only(slot_state *state, uint4 *, uint32_t slots)
{
    const uint32_t slot = blockIdx.x * blockDim.x + threadIdx.x;
    if (slot >= slots)
        return;
    uint4 *x_state = reinterpret_cast<uint4 *>(state[slot].x);
    uint32_t x0[16], x1[16];
    load_x(x_state, x0, x1);
#pragma unroll 1
    for (uint32_t i = 0; i < LODE_SCRYPT_N; i++)
        salsa_block_mix(x0, x1);
#pragma unroll 1
    for (uint32_t i = 0; i < LODE_SCRYPT_N; i++) {
        /* X ^= V_j with V_j made of X's own words: the same 32 xors. */
        const uint32_t j = x1[0] & (LODE_SCRYPT_N - 1);
#pragma unroll
        for (int k = 0; k < 16; k++)
            x0[k] ^= x1[(k + 1) & 15] ^ (k == 0 ? j : 0);
#pragma unroll
        for (int k = 0; k < 16; k++)
            x1[k] ^= x0[(k + 3) & 15];
        salsa_block_mix(x0, x1);
    }
    store_x(x_state, x0, x1);
}

/* One multiply-add where romix has a BlockMix: the random indices stay
 * random and depend on the loaded data, as in scrypt. */
__device__ __forceinline__ void cheap_mix(uint32_t (&x0)[16], uint32_t (&x1)[16])
{
    x1[0] = x1[0] * 0x9E3779B1u + x0[0];
}

template <bool kRead>
__global__ void __launch_bounds__(kRomixMaxBlock, 4) probe_memory_only(slot_state *state, uint4 *pad, uint32_t slots)
{
    extern __shared__ uint4 stage[];
    const uint32_t slot = blockIdx.x * blockDim.x + threadIdx.x;
    if (slot >= slots)
        return;
    const unsigned lane = threadIdx.x & 31;
    uint4 *rows = stage + (threadIdx.x >> 5) * 32 * kRowWords;
    uint4 *own = rows + lane * kRowWords;
    const uint4 *carried = carried_row(rows, lane) + (lane & 7);
    uint4 *lane_pad = pad + (size_t)(slot & ~31u) * 8 + lane;
    uint4 *x_state = reinterpret_cast<uint4 *>(state[slot].x);
    uint32_t x0[16], x1[16];
    load_x(x_state, x0, x1);
    const size_t entry_stride = (size_t)slots * 8;
#pragma unroll 1
    for (uint32_t i = 0; i < LODE_SCRYPT_N; i++) {
        store_entry(own, carried, lane_pad + i * entry_stride, x0, x1);
        cheap_mix(x0, x1);
    }
#pragma unroll 1
    for (uint32_t i = 0; kRead && i < LODE_SCRYPT_N; i++) {
        load_entries<false>(rows, lane, pad, (x1[0] & (LODE_SCRYPT_N - 1)) * slots);
#pragma unroll
        for (int c = 0; c < 4; c++) {
            set_piece(x0, c, piece(x0, c) ^ own[c]);
            set_piece(x1, c, piece(x1, c) ^ own[4 + c]);
        }
        __syncwarp();
        cheap_mix(x0, x1);
    }
    store_x(x_state, x0, x1);
}

/* Every SM resident and clocked, next to no work: the board's power at
 * load clocks before any instruction or byte is paid for. */
__global__ void __launch_bounds__(kRomixMaxBlock, 4) probe_spin(slot_state *, uint4 *, uint32_t)
{
    for (int i = 0; i < 2000; i++)
        __nanosleep(5000); /* 10 ms a launch */
}

using lode_probe::now_s;
using lode_probe::nvml;

struct mode {
    const char *name;
    romix_fn kernel;
    double pad_fraction; /* of 256 KiB of scratchpad traffic per hash */
};

} // namespace

int main(int argc, char **argv)
{
    const double seconds = argc > 1 ? atof(argv[1]) : 12.0;
    const double warm = 3.0; /* let the power controller settle first */
    nvml nv;
    if (!nv.open()) {
        fprintf(stderr, "NVML not available\n");
        return 1;
    }
    const mode modes[] = {
        {"thread", romix_thread<0>, 1.0},
        {"thread-skip8", romix_thread<8>, 15.0 / 16},
        {"salsa-only", probe_salsa_only, 0.0},
        {"memory-only", probe_memory_only<true>, 1.0},
        {"writes-only", probe_memory_only<false>, 0.5},
        {"spin", probe_spin, 0.0},
    };
    const unsigned tpb = 256;
    const size_t smem = thread_romix_smem(tpb);
    int sms = 0, blocks = 0;
    PROBE_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    for (const mode &m : modes)
        PROBE_CHECK(cudaFuncSetAttribute(m.kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                         cudaSharedmemCarveoutMaxShared));
    /* Every block resident once: one wave a launch. */
    PROBE_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, romix_thread<0>, tpb, smem));
    const uint32_t slots = (uint32_t)(blocks * sms) * tpb, grid = slots / tpb;
    slot_state *state;
    uint4 *pad;
    PROBE_CHECK(cudaMalloc(&state, (size_t)slots * sizeof(slot_state)));
    PROBE_CHECK(cudaMalloc(&pad, (size_t)slots * LODE_SCRYPT_N * 128));
    {
        uint32_t *h = (uint32_t *)malloc((size_t)slots * sizeof(slot_state));
        srand(1);
        for (size_t i = 0; i < (size_t)slots * sizeof(slot_state) / 4; i++)
            h[i] = (uint32_t)rand() * 2654435761u ^ (uint32_t)rand();
        PROBE_CHECK(cudaMemcpy(state, h, (size_t)slots * sizeof(slot_state), cudaMemcpyHostToDevice));
        free(h);
    }
    unsigned idle_mw = 0;
    sleep(1);
    nv.power(nv.dev, &idle_mw);
    printf("%u slots (%d blocks of %u per SM), idle board power %.0f W\n", slots, blocks, tpb, idle_mw / 1e3);
    printf("%-14s %9s %8s %9s %9s %10s\n", "mode", "MH/s", "W", "uJ/hash", "SM MHz", "GB/s pad");
    for (const mode &m : modes) {
        bool wanted = argc <= 2;
        for (int a = 2; a < argc; a++)
            wanted |= strcmp(argv[a], m.name) == 0;
        if (!wanted)
            continue;
        m.kernel<<<grid, tpb, smem>>>(state, pad, slots);
        PROBE_CHECK(cudaGetLastError());
        if (seconds <= 0) {
            PROBE_CHECK(cudaDeviceSynchronize());
            printf("%-14s one launch\n", m.name);
            continue;
        }
        /* Two launches in flight: the GPU never idles while the host polls. */
        cudaEvent_t done[2];
        for (cudaEvent_t &e : done)
            PROBE_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
        unsigned n = 0;
        PROBE_CHECK(cudaEventRecord(done[n++ & 1]));
        const double t0 = now_s();
        double tw = 0;
        unsigned long long e0 = 0, e1 = 0, launches_timed = 0;
        double clock_sum = 0;
        unsigned clock_n = 0;
        bool timing = false;
        for (;;) {
            m.kernel<<<grid, tpb, smem>>>(state, pad, slots);
            PROBE_CHECK(cudaGetLastError());
            PROBE_CHECK(cudaEventRecord(done[n & 1]));
            /* wait for the launch before this one */
            while (cudaEventQuery(done[(n + 1) & 1]) == cudaErrorNotReady) {
                unsigned mhz;
                if (timing && nv.clock(nv.dev, 1 /* NVML_CLOCK_SM */, &mhz) == 0)
                    clock_sum += mhz, clock_n++;
                usleep(500);
            }
            PROBE_CHECK(cudaEventSynchronize(done[(n + 1) & 1]));
            n++;
            const double t = now_s();
            if (timing)
                launches_timed++;
            if (!timing && t - t0 >= warm) {
                timing = true, tw = t;
                nv.energy(nv.dev, &e0);
            } else if (timing && t - tw >= seconds) {
                nv.energy(nv.dev, &e1);
                const double dt = t - tw, hashes = (double)launches_timed * slots;
                const double watts = (e1 - e0) / 1e3 / dt;
                printf("%-14s %9.3f %8.1f %9.2f %9.0f %10.0f\n", m.name, hashes / dt / 1e6, watts,
                       watts / (hashes / dt) * 1e6, clock_n ? clock_sum / clock_n : 0.0,
                       hashes / dt * m.pad_fraction * 256 * 1024 / 1e9);
                break;
            }
        }
        PROBE_CHECK(cudaDeviceSynchronize());
        for (cudaEvent_t &e : done)
            PROBE_CHECK(cudaEventDestroy(e));
        sleep(2); /* cool down a little between modes */
    }
    return 0;
}
