/* Every Momentum kernel (backend-opencl/kernels/momentum.cl) on Oclgrind,
 * on a nonce space small enough for the simulator, each output compared
 * with what the definition gives on the CPU. tests/test_oclgrind.py runs it
 * with Oclgrind's checks on and fails on any report.
 *
 * The program is the backend's own (ocl_momentum_program: source and
 * options as at run time) plus -D LODE_MOM_NBASES=NB, which the kernels
 * take from kernel_params.h. A small space has no 50-bit collision, so the
 * filter kernels run on tables small enough to be crowded, and the pairing
 * kernel on a bucket store written here with planted collisions, near
 * misses and overflows. Birthdays come from OpenSSL (tests/momentum_oracle.c).
 *
 *   test_oclgrind_momentum momentum
 * Exit 77 when no Oclgrind device is registered. */
#include "backend-opencl/ocl_devices.h"
#include "backend-opencl/ocl_program.h"
#include "backend-opencl/ocl_programs.h"
#include "core/backend_support/kernel_params.h"
#include "core/backend_support/momentum_common.h"
#include "tests/momentum_oracle.h"
#include "tests/test_util.h"

#define NB 512u                /* nonce bases: 4096 nonces */
#define NONCES (NB * 8u)
#define LOCAL 256u             /* the backend's work-group sizes (ocl_momentum.c) */
#define TABLE_BITS 12u         /* 4096 counters for 4096 birthdays: crowded */
#define LIST_BITS 10u
#define HASH_CAP 4u            /* bucket slots for the hashed space (mean 0.25 a bucket) */
#define RBITS LODE_MOM_BK_RBITS
#define RMASK ((UINT64_C(1) << RBITS) - 1)
#define TAB_MASK ((1u << 17) - 1) /* the find kernel's table index bits (BK_TAB_BITS) */

static const uint64_t MIXER0 = 0x9E3779B97F4A7C15ull, MIXER1 = 0xC2B2AE3D27D4EB4Full;

static struct {
    const ocl_dev_desc *desc;
    cl_context ctx;
    cl_command_queue queue;
    cl_program prog;
} g;

static bool ok(cl_int err, const char *what)
{
    CHECK(err == CL_SUCCESS, "%s: OpenCL error %d", what, (int)err);
    return err == CL_SUCCESS;
}

static cl_mem buffer(size_t bytes, const void *init)
{
    cl_int err = CL_SUCCESS;
    cl_mem m = ocl.clCreateBuffer(g.ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    if (ok(err, "clCreateBuffer") && init != NULL)
        ok(ocl.clEnqueueWriteBuffer(g.queue, m, CL_TRUE, 0, bytes, init, 0, NULL, NULL), "write");
    return m;
}

static void read_back(cl_mem m, size_t bytes, void *out)
{
    ok(ocl.clEnqueueReadBuffer(g.queue, m, CL_TRUE, 0, bytes, out, 0, NULL, NULL), "read");
}

/* A kernel argument: its size and where its value is. */
typedef struct {
    size_t size;
    const void *value;
} karg;
#define A(v) {sizeof(v), &(v)}
#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))
#define RUN(name, global, local, ...)                                                              \
    do {                                                                                           \
        const karg args_[] = {__VA_ARGS__};                                                        \
        run((name), (global), (local), args_, COUNT_OF(args_));                                    \
    } while (0)

/* Runs kernel name over global items in work-groups of local, and waits. */
static void run(const char *name, size_t global, size_t local, const karg *args, size_t nargs)
{
    cl_int err = CL_SUCCESS;
    cl_kernel k = ocl.clCreateKernel(g.prog, name, &err);
    if (!ok(err, name))
        return;
    for (size_t i = 0; i < nargs; i++)
        ok(ocl.clSetKernelArg(k, (cl_uint)i, args[i].size, args[i].value), "clSetKernelArg");
    ok(ocl.clEnqueueNDRangeKernel(g.queue, k, 1, NULL, &global, &local, 0, NULL, NULL), name);
    ok(ocl.clFinish(g.queue), name);
    ocl.clReleaseKernel(k);
}

typedef struct {
    uint64_t x, y;
} pair64; /* ulong2: a birthday (or key) and a nonce */

static int by_pair(const void *a, const void *b)
{
    const pair64 *p = a, *q = b;
    if (p->x != q->x)
        return p->x < q->x ? -1 : 1;
    return p->y < q->y ? -1 : p->y > q->y;
}

/* Sorts both lists and checks they hold the same n entries. */
static void check_same_list(pair64 *got, size_t n_got, pair64 *want, size_t n_want, const char *what)
{
    qsort(got, n_got, sizeof *got, by_pair);
    qsort(want, n_want, sizeof *want, by_pair);
    CHECK(n_got == n_want && (n_want == 0 || memcmp(got, want, n_want * sizeof *want) == 0),
          "%s: %zu entries, the definition gives %zu", what, n_got, n_want);
}

/* The 2-bit saturating counters of count_bd for the keys: bit 2i once, bit
 * 2i+1 twice or more. */
static void counters(const uint64_t *keys, size_t n, uint64_t mixer, unsigned bits, uint32_t *table)
{
    memset(table, 0, ((size_t)1 << bits) / 4);
    for (size_t i = 0; i < n; i++) {
        const uint64_t idx = (keys[i] * mixer) >> (64 - bits);
        const uint32_t bit = 1u << ((idx & 15) * 2);
        table[idx >> 4] |= table[idx >> 4] & bit ? bit << 1 : bit;
    }
}

static bool twice(const uint32_t *table, uint64_t key, uint64_t mixer, unsigned bits)
{
    const uint64_t idx = (key * mixer) >> (64 - bits);
    return (table[idx >> 4] >> ((idx & 15) * 2 + 1)) & 1;
}

/* mom_clear, mom_hash, mom_keep_all, then one filter round (mom_count_list,
 * mom_keep_list): the filter method on the small space. */
static void test_filter(const momentum_consts *c, const uint64_t *bd)
{
    const size_t table_bytes = ((size_t)1 << TABLE_BITS) / 4, list_bytes = ((size_t)1 << LIST_BITS) / 4;
    uint32_t *junk = malloc(table_bytes), *table = malloc(table_bytes), *want_table = malloc(table_bytes);
    uint64_t *B = malloc(NONCES * 8);
    pair64 *list = malloc(NONCES * sizeof *list), *want = malloc(NONCES * sizeof *want);
    memset(junk, 0xA5, table_bytes);
    cl_mem table_buf = buffer(table_bytes, junk), B_buf = buffer(NONCES * 8, NULL), list_buf = buffer(NONCES * 16, NULL);
    cl_mem out_buf = buffer(NONCES * 16, NULL), ltab_buf = buffer(list_bytes, NULL);
    const uint32_t zeros[8] = {0};
    cl_mem counts_buf = buffer(sizeof zeros, zeros);
    RUN("mom_clear", table_bytes / 16, 64, A(table_buf));
    RUN("mom_clear", list_bytes / 16, list_bytes / 16, A(ltab_buf));
    read_back(table_buf, table_bytes, table);
    CHECK(memcmp(table, zeros, sizeof zeros) == 0 && memcmp(table, table + 8, table_bytes - 32) == 0,
          "mom_clear leaves the table zero");

    cl_ulong w0 = c->w0_low, w1 = c->w1, w2 = c->w2, w3 = c->w3, w4 = c->w4, mixer = MIXER0;
    cl_uint shift = 64 - TABLE_BITS;
    RUN("mom_hash", NB, LOCAL, A(w0), A(w1), A(w2), A(w3), A(w4), A(B_buf), A(table_buf), A(mixer), A(shift));
    read_back(B_buf, NONCES * 8, B);
    size_t same = 0;
    for (uint32_t t = 0; t < NB; t++)
        for (uint32_t j = 0; j < 8; j++)
            same += B[j * NB + t] == bd[t * 8 + j];
    CHECK(same == NONCES, "mom_hash: %zu of %u birthdays as OpenSSL's", same, NONCES);
    read_back(table_buf, table_bytes, table);
    counters(bd, NONCES, MIXER0, TABLE_BITS, want_table);
    CHECK(memcmp(table, want_table, table_bytes) == 0, "mom_hash: the counters as the definition's");

    RUN("mom_keep_all", NONCES, LOCAL, A(B_buf), A(table_buf), A(mixer), A(shift), A(list_buf), A(counts_buf));
    uint32_t counts[8];
    read_back(counts_buf, sizeof counts, counts);
    size_t n_want = 0;
    for (uint32_t n = 0; n < NONCES; n++)
        if (twice(want_table, bd[n], MIXER0, TABLE_BITS))
            want[n_want++] = (pair64){bd[n], n};
    read_back(list_buf, NONCES * 16, list);
    check_same_list(list, counts[0] <= NONCES ? counts[0] : 0, want, n_want, "mom_keep_all");
    CHECK(n_want > NONCES / 8 && n_want < NONCES, "the crowded table keeps some and drops some (%zu)", n_want);

    /* Round 1 over the kept list, in four work-groups (both kernels stride). */
    uint64_t keys[NONCES];
    for (size_t i = 0; i < n_want; i++)
        keys[i] = want[i].x;
    cl_ulong mixer1 = MIXER1;
    cl_uint round_no = 1, lshift = 64 - LIST_BITS;
    RUN("mom_count_list", 4 * LOCAL, LOCAL, A(list_buf), A(counts_buf), A(round_no), A(ltab_buf), A(mixer1), A(lshift));
    RUN("mom_keep_list", 4 * LOCAL, LOCAL, A(list_buf), A(counts_buf), A(round_no), A(ltab_buf), A(mixer1), A(lshift), A(out_buf));
    uint32_t *ltab = malloc(list_bytes);
    counters(keys, n_want, MIXER1, LIST_BITS, ltab);
    size_t n_round = 0;
    for (size_t i = 0; i < n_want; i++)
        if (twice(ltab, want[i].x, MIXER1, LIST_BITS))
            want[n_round++] = want[i];
    read_back(counts_buf, sizeof counts, counts);
    read_back(out_buf, NONCES * 16, list);
    check_same_list(list, counts[1] <= NONCES ? counts[1] : 0, want, n_round, "mom_keep_list, round 1");
    cl_mem mems[] = {table_buf, B_buf, list_buf, out_buf, ltab_buf, counts_buf};
    for (size_t i = 0; i < COUNT_OF(mems); i++)
        ocl.clReleaseMemObject(mems[i]);
    free(junk), free(table), free(want_table), free(B), free(list), free(want), free(ltab);
}

/* mom_hash_bucket over the small space: each nonce's entry (low RBITS bits
 * << 26 | nonce) in its bucket (top bits), every bucket's count, and the
 * area's flags zeroed. */
static void test_hash_bucket(const momentum_consts *c, const uint64_t *bd)
{
    const size_t store_words = (size_t)LODE_MOM_NBUCKETS * HASH_CAP;
    uint64_t *store = malloc(store_words * 8);
    uint32_t *bcount = calloc(LODE_MOM_NBUCKETS, 4), *want_count = calloc(LODE_MOM_NBUCKETS, 4);
    const uint64_t garbage[2] = {~UINT64_C(0), 12345};
    cl_mem store_buf = buffer(store_words * 8, NULL), bcount_buf = buffer((size_t)LODE_MOM_NBUCKETS * 4, bcount);
    cl_mem results_buf = buffer(sizeof garbage, garbage);
    cl_ulong w0 = c->w0_low, w1 = c->w1, w2 = c->w2, w3 = c->w3, w4 = c->w4;
    cl_uint cap = HASH_CAP, area = 0, out_cap = 0;
    RUN("mom_hash_bucket", NB, LOCAL, A(w0), A(w1), A(w2), A(w3), A(w4), A(store_buf), A(bcount_buf), A(cap),
        A(results_buf), A(area), A(out_cap));
    read_back(store_buf, store_words * 8, store);
    read_back(bcount_buf, (size_t)LODE_MOM_NBUCKETS * 4, bcount);
    uint64_t flags[2];
    read_back(results_buf, sizeof flags, flags);
    CHECK(flags[0] == 0 && flags[1] == 0, "mom_hash_bucket zeroes its area's flags");
    for (uint32_t n = 0; n < NONCES; n++)
        want_count[bd[n] >> RBITS]++;
    CHECK(memcmp(bcount, want_count, (size_t)LODE_MOM_NBUCKETS * 4) == 0, "mom_hash_bucket: every bucket's count");
    /* Each nonce's entry among its bucket's first slots (all of them where
     * the bucket held no more than its slots). */
    size_t found = 0, placed = 0;
    for (uint32_t n = 0; n < NONCES; n++) {
        const uint64_t b = bd[n] >> RBITS, e = (bd[n] & RMASK) << 26 | n;
        if (want_count[b] > HASH_CAP)
            continue;
        placed++;
        for (uint32_t k = 0; k < want_count[b]; k++)
            found += store[b * HASH_CAP + k] == e;
    }
    CHECK(found == placed && placed > NONCES / 2, "mom_hash_bucket: %zu of %zu entries in their buckets", found,
          placed);
    ocl.clReleaseMemObject(store_buf), ocl.clReleaseMemObject(bcount_buf), ocl.clReleaseMemObject(results_buf);
    free(store), free(bcount), free(want_count);
}

#define FIND_CAP 1100u /* slots a bucket in the store written here */
#define FIND_BUCKETS 4u

/* The store of the pairing test: bucket 0 random entries with planted
 * collisions (a pair, a triple) and near misses that pass one or both of
 * the kernel's tables; bucket 1 one entry past its slots; bucket 2 empty;
 * bucket 3 more survivors of the first table than the kernel keeps. */
static void plant_store(uint64_t *store, uint32_t *count)
{
    uint64_t *e = store;
    uint32_t n = 0;
    for (; n < 40; n++)
        e[n] = (test_rand() & RMASK) << 26 | n;
    const uint64_t r = test_rand() & RMASK, s = test_rand() & RMASK;
    e[n++] = r << 26 | 1000, e[n++] = r << 26 | 1001;                          /* a pair */
    e[n++] = s << 26 | 1002, e[n++] = s << 26 | 1003, e[n++] = s << 26 | 1004; /* a triple */
    e[n++] = (r ^ (UINT64_C(1) << 20)) << 26 | 1005;                           /* r's first table index */
    e[n++] = (r ^ (UINT64_C(1) << 34)) << 26 | 1006;                           /* r's both indexes */
    count[0] = n;
    for (uint32_t i = 0; i <= FIND_CAP; i++)
        store[FIND_CAP + i % FIND_CAP] = (test_rand() & RMASK) << 26 | i;
    count[1] = FIND_CAP + 1;
    count[2] = 0;
    for (uint32_t i = 0; i < FIND_CAP; i++) /* one first-table index: every entry survives it */
        store[3 * FIND_CAP + i] = ((test_rand() & RMASK & ~(uint64_t)TAB_MASK) | 77) << 26 | i;
    count[3] = FIND_CAP;
}

/* What mom_bucket_find must output for bucket b: every entry whose RBITS
 * bits another entry of the bucket shares. */
static size_t want_pairs(const uint64_t *e, uint32_t n, uint32_t b, pair64 *out)
{
    size_t k = 0;
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < n; j++)
            if (i != j && e[i] >> 26 == e[j] >> 26) {
                out[k++] = (pair64){(uint64_t)b << RBITS | e[i] >> 26, e[i] & ((1u << 26) - 1)};
                break;
            }
    return k;
}

/* mom_bucket_find over the planted store, once with room for its output
 * and once with too little. */
static void test_bucket_find(void)
{
    const size_t store_words = (size_t)FIND_BUCKETS * FIND_CAP;
    uint64_t *store = malloc(store_words * 8);
    uint32_t count[FIND_BUCKETS];
    plant_store(store, count);
    pair64 want[64], got[64];
    const size_t n_want = want_pairs(store, count[0], 0, want);
    CHECK(n_want == 5, "the planted store has 5 colliding entries (%zu)", n_want);
    const cl_uint out_caps[] = {32, 2};
    for (size_t run_no = 0; run_no < COUNT_OF(out_caps); run_no++) {
        cl_uint out_cap = out_caps[run_no];
        pair64 area[1 + 32];
        memset(area, 0, sizeof area);
        cl_mem store_buf = buffer(store_words * 8, store), bcount_buf = buffer(sizeof count, count);
        cl_mem results_buf = buffer(sizeof area, area);
        cl_uint cap = FIND_CAP, area_no = 0;
        RUN("mom_bucket_find", FIND_BUCKETS * LOCAL, LOCAL, A(store_buf), A(bcount_buf), A(cap), A(results_buf),
            A(area_no), A(out_cap));
        read_back(results_buf, sizeof area, area);
        uint32_t after[FIND_BUCKETS], flags[2];
        read_back(bcount_buf, sizeof after, after);
        memcpy(flags, area, sizeof flags);
        CHECK(after[0] == 0 && after[1] == 0 && after[2] == 0 && after[3] == 0, "mom_bucket_find clears the counts");
        const uint32_t overflow = 1u | 2u | (out_cap < n_want ? 4u : 0u);
        CHECK(flags[1] == overflow, "out_cap %u: flags %#x, expected %#x (slots, survivors, output)", out_cap,
              flags[1], overflow);
        CHECK(flags[0] == n_want, "out_cap %u: %u entries counted, %zu collide", out_cap, flags[0], n_want);
        if (out_cap >= n_want) {
            memcpy(got, area + 1, n_want * sizeof *got);
            check_same_list(got, flags[0] <= out_cap ? flags[0] : 0, want, n_want, "mom_bucket_find");
        }
        ocl.clReleaseMemObject(store_buf), ocl.clReleaseMemObject(bcount_buf), ocl.clReleaseMemObject(results_buf);
    }
    free(store);
}

/* The Oclgrind device, or NULL. */
static const ocl_dev_desc *oclgrind_device(void)
{
    char why[256];
    if (ocl_devices_probe(why, sizeof why) != 0)
        return NULL;
    for (int i = 0; i < ocl_devices_count(); i++)
        if (strstr(ocl_devices_get(i)->name, "Oclgrind") != NULL)
            return ocl_devices_get(i);
    return NULL;
}

static int build(void)
{
    ocl_program_spec spec;
    ocl_momentum_program(g.desc, &spec);
    char options[sizeof spec.options + 64];
    snprintf(options, sizeof options, "%s -D LODE_MOM_NBASES=%uu", spec.options, NB);
    cl_int err = CL_SUCCESS;
    g.ctx = ocl.clCreateContext(NULL, 1, &g.desc->id, NULL, NULL, &err);
    if (ok(err, "clCreateContext"))
        g.queue = ocl.clCreateCommandQueue(g.ctx, g.desc->id, 0, &err);
    if (!ok(err, "clCreateCommandQueue"))
        return -1;
    const char *sources[1] = {spec.source};
    printf("%s: momentum, options %s\n", g.desc->name, options);
    return ocl_program_build(g.desc, g.ctx, "oclgrind", sources, 1, options, &g.prog);
}

int main(int argc, char **argv)
{
    if (argc != 2 || strcmp(argv[1], "momentum") != 0) {
        fprintf(stderr, "usage: test_oclgrind_momentum momentum\n");
        return 2;
    }
    test_seed();
    if ((g.desc = oclgrind_device()) == NULL) {
        printf("no Oclgrind OpenCL device (is its ICD registered?): skipped\n");
        return 77;
    }
    CHECK(build() == 0, "the momentum program builds with -D LODE_MOM_NBASES=%u", NB);
    if (test_failed == 0) {
        uint8_t mid[32];
        test_rand_bytes(mid, sizeof mid);
        momentum_consts c;
        momentum_consts_init(&c, mid);
        uint64_t *bd = malloc(NONCES * 8);
        CHECK(oracle_momentum_birthdays(mid, NONCES, bd) == 0, "OpenSSL's birthdays");
        test_filter(&c, bd);
        test_hash_bucket(&c, bd);
        test_bucket_find();
        free(bd);
    }
    if (g.prog != NULL)
        ocl.clReleaseProgram(g.prog);
    if (g.queue != NULL)
        ocl.clReleaseCommandQueue(g.queue);
    if (g.ctx != NULL)
        ocl.clReleaseContext(g.ctx);
    return test_summary();
}
