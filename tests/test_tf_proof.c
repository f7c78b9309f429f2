/* Unit tests of verifiable trial factoring (docs/TF-PROOF.md): the condition
 * C(p, q, t) and the primality test of core/base/tf_ref.c, and the proof
 * library of core/tf/proof.c (expected count and t, digest, proof file,
 * enumeration, verifier).
 *
 * Every expected value below was computed in Python 3 (sympy 1.14, mpmath
 * 1.3), not with lode:
 *   - C: m = the number of low bits where pow(2, p + 96, q) and
 *     pow(2, 96, q) agree (the trailing zeros of their XOR; "all" when
 *     equal, as for the factors of M(p) from tests/vectors/
 *     mersenne-factors.json); C(p, q, t) holds exactly for t <= m.
 *   - primality: sympy.isprime; the windows' counts and the sums of their
 *     primes mod 2^64 from [n for n in range(lo, hi) if isprime(n)].
 *   - N and E: mpmath.li (50 digits): (li(2^b) - li(2^a)) / (2 (p - 1)).
 *   - lists: every q = 2kp + 1, k = 1, 2, ..., q = +-1 mod 8, 2^a <= q <
 *     min(2^b, limit), passing C, sympy.isprime(q); digests with
 *     hashlib.sha256("".join(f"{q}\n" for q in list).encode()).
 *
 * `test_tf_proof --verify FILE` runs the verifier alone (its exit status,
 * its lines on stdout): tests/test_tf_proof.py uses it as well as
 * `lode tf --verify`. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/tf_ref.h"
#include "core/tf/fileio.h"
#include "core/tf/proof.h"
#include "tests/test_util.h"

static char root[64];

static const char *at(const char *name)
{
    static char paths[4][4200];
    static int next;
    char *p = paths[next++ % 4];
    snprintf(p, sizeof paths[0], "%s/%s", root, name);
    return p;
}

static lode_u128 dec(const char *s)
{
    lode_u128 v = 0;
    for (; *s; s++)
        v = 10 * v + (unsigned)(*s - '0');
    return v;
}

static lode_u128 pow2(unsigned e) { return (lode_u128)1 << e; }

static void test_condition(void)
{
    static const struct {
        uint32_t p;
        const char *q;
        unsigned match; /* low bits equal; 999: the residues are equal */
    } v[] = {
        {50804297u, "180620316395899877719", 999}, /* 68 bits, a factor of M50804297 */
        {500953u, "896895253727897103771239", 999}, /* 80 bits, a factor */
        {200899u, "76304575462339639", 999},        /* 57 bits, a factor */
        {100003u, "881626449", 10},
        {100003u, "537016111", 0},
        {1000003u, "897338692009", 11},
        {1000003u, "550185650553", 0},
        {66362159u, "10005294190163907881", 12}, /* 64 bits */
        {66362159u, "9241872125079635495", 0},
        {66362159u, "35530469913412138049", 10}, /* 65 bits */
        {66362159u, "18478219751462794873", 0},
        {66362159u, "6019839689065222129807", 14}, /* 73 bits */
        {66362159u, "4731574056570177762271", 0},
        {3321928097u, "11090723078556730196234962649", 10}, /* 94 bits */
        {3321928097u, "9918825625260264663103976775", 0},
        {100003u, "662292038129198122977", 11}, /* 70 bits */
        {100003u, "591166854708180837215", 0},
        {4294967291u, "22767116284479578250368640423", 13}, /* 95 bits */
        {4294967291u, "19823545752235815344930026049", 0},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        lode_u128 q = dec(v[i].q);
        for (unsigned t = 0; t <= LODE_TF_PROOF_MAX_T; t++) {
            bool want = t <= v[i].match;
            CHECK(lode_tf_proof_condition(v[i].p, q, t) == want, "C(%u, %s, %u) should be %d", v[i].p, v[i].q, t,
                  want);
        }
    }
    /* Factors from test vectors: C holds at every t. */
    CHECK(lode_tf_proof_condition(100003u, 6400193, 64), "6400193 divides M100003");
    /* Not odd q >= 3: false. */
    CHECK(!lode_tf_proof_condition(100003u, 6400194, 0), "even q");
    CHECK(!lode_tf_proof_condition(100003u, 1, 0), "q = 1");
}

static void test_primality(void)
{
    static const char *primes[] = {
        "2", "3", "5", "41", "43", "47", "1847", "1861", "2147483647", "4294967291",
        "2305843009213693951",                      /* 2^61 - 1 */
        "18446744073709551557",                     /* the largest prime below 2^64 */
        "18446744073709551629",                     /* the smallest above */
        "618970019642690137449562111",              /* 2^89 - 1 */
        "39614081257132168796771975153",            /* the largest prime below 2^95 */
        "39614081257132168796771975131",            /* the next below */
        "170141183460469231731687303715884105703",  /* the largest prime below 2^127 - 1 */
        "170141183460469231731687303715884105727",  /* 2^127 - 1 */
        "180620316395899877719", "896895253727897103771239", /* factors of M50804297, M500953 */
    };
    for (size_t i = 0; i < sizeof primes / sizeof primes[0]; i++)
        CHECK(lode_tf_is_prime_u128(dec(primes[i])), "%s is prime", primes[i]);
    static const char *composites[] = {
        "0", "1", "4", "9", "1849" /* 43^2 */, "561", "1105", "41041", "825265" /* Carmichael */,
        "2047" /* spsp(2) */, "3215031751" /* spsp to 2, 3, 5, 7 */,
        "3825123056546413051" /* spsp to 2, 3, ..., 31 */,
        "318665857834031151167461" /* spsp to 2, 3, ..., 37 */,
        "3317044064679887385961981" /* spsp to 2, 3, ..., 41: BPSW decides */,
        "1329227995784915642319506138910959327" /* two ~2^60 primes: 1152921504606846883 * 1152921504606846869 */,
        "18446744073709551617" /* 2^64 + 1 = 274177 * 67280421310721 */,
        "39614081257132168796771975169" /* 2^95 + 1 (divisible by 3) */,
        "170141183460469231731687303715884105721" /* 2^127 - 7 = 11 * 47 * 7723 * ... */,
    };
    for (size_t i = 0; i < sizeof composites / sizeof composites[0]; i++)
        CHECK(!lode_tf_is_prime_u128(dec(composites[i])), "%s is composite", composites[i]);
    /* Squares of primes above the Miller-Rabin bound: the Lucas test needs
     * the square check. (2^61 - 1)^2 and 9223372036854775783^2 (the largest
     * prime below 2^63). */
    lode_u128 m61 = pow2(61) - 1, p63 = (lode_u128)9223372036854775783ull;
    CHECK(!lode_tf_is_prime_u128(m61 * m61), "(2^61 - 1)^2 is composite");
    CHECK(!lode_tf_is_prime_u128(p63 * p63), "9223372036854775783^2 is composite");
    CHECK(!lode_tf_is_prime_u128(m61 * p63), "(2^61 - 1) * 9223372036854775783 is composite");
    CHECK(!lode_tf_is_prime_u128(pow2(127)), "2^127 is out of range: false");

    /* Windows: the number of primes and their sum mod 2^64 (sympy). The
     * MR-bound window crosses from Miller-Rabin to BPSW. */
    static const struct {
        const char *name;
        lode_u128 lo, hi;
        unsigned count;
        uint64_t sum;
    } w[] = {
        {"2^64 +- 5000", ((lode_u128)1 << 64) - 5000, ((lode_u128)1 << 64) + 5000, 221, 18446744073709525385ull},
        {"3317044064679887385961981 +- 5000", 0, 0, 178, 14615154808124058512ull},
        {"[2^95 - 10000, 2^95)", ((lode_u128)1 << 95) - 10000, (lode_u128)1 << 95, 153, 18446744073708827183ull},
        {"[2^126, 2^126 + 3000)", (lode_u128)1 << 126, ((lode_u128)1 << 126) + 3000, 35, 45609ull},
        {"[2^127 - 3000, 2^127)", ((lode_u128)1 << 127) - 3000, (lode_u128)1 << 127, 35, 18446744073709498405ull},
    };
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
        lode_u128 lo = w[i].lo, hi = w[i].hi;
        if (hi == 0) {
            lo = dec("3317044064679887385961981") - 5000;
            hi = lo + 10000;
        }
        unsigned count = 0;
        uint64_t sum = 0;
        for (lode_u128 n = lo; n < hi; n++)
            if (lode_tf_is_prime_u128(n)) {
                count++;
                sum += (uint64_t)n;
            }
        CHECK(count == w[i].count && sum == w[i].sum, "%s: %u primes, sum %llu; want %u, %llu", w[i].name, count,
              (unsigned long long)sum, w[i].count, (unsigned long long)w[i].sum);
    }
}

static void test_expected(void)
{
    static const struct {
        uint32_t p;
        unsigned a, b, t;
        double n, e;
    } v[] = {
        {66362159u, 73, 74, 30, 1395707637598.3383787, 1299.854030458571742},
        {100003u, 20, 30, 0, 271.59125863012760127, 271.59125863012760127},
        {100003u, 30, 34, 1, 3542.6439986787170659, 1771.3219993393585329},
        {1000003u, 30, 40, 4, 20574.323334010870944, 1285.895208375679434},
        {3321928097u, 1, 95, 46, 91967182749585580.219, 1306.9322726207926198},
        {100003u, 1, 2, 0, 9.6119143363210640445e-6, 9.6119143363210640445e-6},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        double n = lode_tf_proof_candidates(v[i].p, v[i].a, v[i].b);
        unsigned t = lode_tf_proof_bits(v[i].p, v[i].a, v[i].b);
        double e = lode_tf_proof_expected(v[i].p, v[i].a, v[i].b, t);
        CHECK(fabs(n - v[i].n) <= 1e-11 * v[i].n, "N(%u, %u, %u) = %.17g, want %.17g", v[i].p, v[i].a, v[i].b, n,
              v[i].n);
        CHECK(t == v[i].t, "t(%u, %u, %u) = %u, want %u", v[i].p, v[i].a, v[i].b, t, v[i].t);
        CHECK(fabs(e - v[i].e) <= 1e-11 * v[i].e, "E = %.17g, want %.17g", e, v[i].e);
    }
    /* The example. */
    CHECK(lode_tf_proof_bits(66362159u, 73, 74) == 30, "M66362159 73-74: t = 30");
    CHECK(fabs(lode_tf_proof_expected(66362159u, 73, 74, 30) - 1299.9) < 0.05, "M66362159 73-74: E = 1299.9");
    /* t is capped. */
    CHECK(lode_tf_proof_bits(100003u, 1, 127) == LODE_TF_PROOF_MAX_T, "t capped at %u", LODE_TF_PROOF_MAX_T);
}

static void test_digest_and_path(void)
{
    char hex[65];
    lode_tf_proof_digest(NULL, 0, hex);
    CHECK(strcmp(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855") == 0, "empty: %s", hex);
    lode_u128 q[] = {7, 23, dec("4722366569565102700097"), dec("170141183460469231731687303715884105703")};
    lode_tf_proof_digest(q, 4, hex);
    CHECK(strcmp(hex, "aa1ff2d910f986cbfd3704c788956103f68cfa1158dde1edcb623ee3516814c9") == 0, "list: %s", hex);

    lode_tf_assignment a = {.p = 66362159u, .bit_min = 73, .bit_max = 74};
    char path[256];
    lode_tf_proof_path(NULL, &a, path, sizeof path);
    CHECK(strcmp(path, "M66362159_73_74.proof") == 0, "%s", path);
    lode_tf_proof_path("", &a, path, sizeof path);
    CHECK(strcmp(path, "M66362159_73_74.proof") == 0, "%s", path);
    lode_tf_proof_path("/x/y", &a, path, sizeof path);
    CHECK(strcmp(path, "/x/y/M66362159_73_74.proof") == 0, "%s", path);
}

static int verify_quiet(const char *path)
{
    FILE *devnull = fopen("/dev/null", "w");
    int rc = lode_tf_proof_verify(path, devnull);
    if (devnull != NULL)
        fclose(devnull);
    return rc;
}

static void test_enumerate_write_verify(void)
{
    static const struct {
        uint32_t p;
        unsigned a, b, t;
        lode_u128 limit;
        size_t count;
        const char *digest, *first, *last;
    } v[] = {
        {100003u, 20, 30, 0, 0, 296, "f0d80432372aa37ea57b5f215e3e6534f30bea6387df059094e210f86c320c0f", "4200127",
         "1070432113"},
        {100003u, 30, 34, 1, 0, 1693, "79baa15847fc87d87980a4df654316e906e781ddc55ed2784ba445bb45c088f1",
         "1086432593", "17174115209"},
        {100003u, 1, 40, 5, (lode_u128)1 << 25, 1, "15c92dfffe187b7b119d72d3e9d9151c8fa986b8acab1644e992b67209849abb",
         "6400193", "6400193"},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        lode_u128 *q = NULL;
        size_t n = 0;
        lode_u128 limit = v[i].limit ? v[i].limit : (lode_u128)1 << v[i].b;
        int rc = lode_tf_proof_enumerate(v[i].p, v[i].a, v[i].b, v[i].t, limit, &q, &n);
        char hex[65] = "";
        if (rc == 0)
            lode_tf_proof_digest(q, n, hex);
        CHECK(rc == 0 && n == v[i].count && strcmp(hex, v[i].digest) == 0, "M%u %u-%u t %u: %zu q, %s", v[i].p,
              v[i].a, v[i].b, v[i].t, n, hex);
        CHECK(n > 0 && q[0] == dec(v[i].first) && q[n - 1] == dec(v[i].last), "first and last q");
        if (v[i].limit == 0) {
            /* Round trip: the file lode writes, the verifier accepts. */
            CHECK(lode_tf_proof_bits(v[i].p, v[i].a, v[i].b) == v[i].t, "t");
            const char *path = at("round.proof");
            CHECK(lode_tf_proof_write(path, v[i].p, v[i].a, v[i].b, v[i].t, q, n) == 0, "write: %s", strerror(errno));
            CHECK(verify_quiet(path) == 0, "verify M%u %u-%u", v[i].p, v[i].a, v[i].b);
            size_t len;
            char *text = lode_tf_read_file(path, &len);
            char head[512];
            snprintf(head, sizeof head, "lode-tf-proof 1\nexponent %u\nbits %u %u\nt %u\nexpected %.1f\ncount %zu\n"
                     "sha256 %s\n%s\n", v[i].p, v[i].a, v[i].b, v[i].t,
                     lode_tf_proof_expected(v[i].p, v[i].a, v[i].b, v[i].t), n, v[i].digest, v[i].first);
            CHECK(text != NULL && strncmp(text, head, strlen(head)) == 0, "header:\n%s", text ? text : "(none)");
            CHECK(text != NULL && len > 4 && strcmp(text + len - 4, "end\n") == 0, "ends in end");
            if (text != NULL && n > 1) {
                /* Drop the last q: count and digest now disagree. */
                char *last = strstr(text, v[i].last);
                if (last != NULL) {
                    memmove(last, last + strlen(v[i].last) + 1, strlen(last + strlen(v[i].last) + 1) + 1);
                    lode_tf_write_atomic(path, text, strlen(text));
                    CHECK(verify_quiet(path) == 1, "a dropped q fails");
                }
            }
            free(text);
            unlink(path);
        }
        free(q);
    }
    /* Not ascending: refused. */
    lode_u128 bad[] = {4200127, 4200127};
    CHECK(lode_tf_proof_write(at("bad.proof"), 100003u, 20, 30, 0, bad, 2) == -1 && errno == EINVAL, "repeat");
    /* A huge loop is refused. */
    lode_u128 *q = NULL;
    size_t n = 7;
    errno = 0;
    CHECK(lode_tf_proof_enumerate(100003u, 1, 80, 0, (lode_u128)1 << 80, &q, &n) == -1 && errno == EINVAL &&
          q == NULL && n == 0, "enumerate refuses 2^80");
    /* Empty ranges. */
    CHECK(lode_tf_proof_enumerate(100003u, 20, 30, 0, 1000, &q, &n) == 0 && q == NULL && n == 0, "limit below");
    CHECK(lode_tf_proof_enumerate(100003u, 30, 30, 0, (lode_u128)1 << 40, &q, &n) == 0 && n == 0, "a == b");
    /* A file that is not there, an empty file. */
    CHECK(verify_quiet(at("none.proof")) == 1, "missing file");
    const char *empty = at("empty.proof");
    lode_tf_write_atomic(empty, "", 0);
    CHECK(verify_quiet(empty) == 1, "empty file");
    unlink(empty);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--verify") == 0)
        return lode_tf_proof_verify(argv[2], stdout);
    if (argc != 1) {
        fprintf(stderr, "usage: test_tf_proof [--verify PROOF_FILE]\n");
        return 2;
    }
    snprintf(root, sizeof root, "/tmp/lode-tf-proof-XXXXXX");
    if (mkdtemp(root) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    test_condition();
    test_primality();
    test_expected();
    test_digest_and_path();
    test_enumerate_write_verify();
    rmdir(root);
    return test_summary();
}
