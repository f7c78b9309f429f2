/* The proof of work of a trial-factoring run (core/tf/proof.h,
 * docs/TF-PROOF.md): the expected count and t, the digest, the proof file
 * and its verifier. */
#include "core/tf/proof.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/sha256_ref.h"
#include "core/base/text.h"
#include "core/tf/fileio.h"

/* lode_tf_proof_enumerate walks every k below its bound: it is meant for
 * the q below a sieve's largest prime (about 2^24). A range of more k than
 * this is refused (EINVAL) rather than looped over for hours. */
#define ENUMERATE_MAX_K (1ull << 28)

/* li(2^bits) by Ramanujan's series (accurate to about 1e-15 relative for
 * 1 <= bits <= 127 in long double):
 *   li(x) = gamma + ln ln x + sqrt(x) sum_{n>=1} (-1)^(n-1) (ln x)^n
 *           / (n! 2^(n-1)) sum_{k=0}^{floor((n-1)/2)} 1 / (2k+1). */
static long double li_pow2(unsigned bits)
{
    const long double euler_gamma = 0.577215664901532860606512090082402431L;
    const long double ln2 = 0.693147180559945309417232121458176568L;
    long double l = (long double)bits * ln2;
    long double term = l; /* (-1)^(n-1) l^n / (n! 2^(n-1)), n = 1 */
    long double inner = 0, sum = 0;
    for (unsigned n = 1; n < 2000; n++) {
        if (n % 2 == 1)
            inner += 1.0L / n;
        long double add = term * inner;
        sum += add;
        if ((long double)n > 2 * l && fabsl(add) < 1e-24L * fabsl(sum))
            break;
        term *= -l / (2.0L * (n + 1));
    }
    return euler_gamma + logl(l) + sqrtl(ldexpl(1.0L, (int)bits)) * sum;
}

double lode_tf_proof_candidates(uint32_t p, unsigned a, unsigned b)
{
    if (p < 3 || a >= b || b > 127)
        return 0;
    long double lo = li_pow2(a > 0 ? a : 1); /* li(1) = -inf: a = 0 counts from 2 */
    return (double)((li_pow2(b) - lo) / (2.0L * (p - 1)));
}

/* t for N candidates: the largest t <= LODE_TF_PROOF_MAX_T with
 * N 2^-t >= TARGET, 0 when N < 2 TARGET. */
static unsigned bits_for(double n)
{
    unsigned t = 0;
    while (t < LODE_TF_PROOF_MAX_T && ldexp(LODE_TF_PROOF_TARGET, (int)t + 1) <= n)
        t++;
    return t;
}

unsigned lode_tf_proof_bits(uint32_t p, unsigned a, unsigned b)
{
    return bits_for(lode_tf_proof_candidates(p, a, b));
}

double lode_tf_proof_expected(uint32_t p, unsigned a, unsigned b, unsigned t)
{
    return ldexp(lode_tf_proof_candidates(p, a, b), -(int)t);
}

static void hex_of(const uint8_t d[32], char hex[65])
{
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < 32; i++) {
        hex[2 * i] = digits[d[i] >> 4];
        hex[2 * i + 1] = digits[d[i] & 15];
    }
    hex[64] = '\0';
}

void lode_tf_proof_digest(const lode_u128 *q, size_t n, char hex[65])
{
    lode_ref_sha256_ctx ctx;
    lode_ref_sha256_init(&ctx);
    for (size_t i = 0; i < n; i++) {
        char s[48];
        lode_tf_u128_str(q[i], s);
        size_t l = strlen(s);
        s[l++] = '\n';
        lode_ref_sha256_update(&ctx, s, l);
    }
    uint8_t d[32];
    lode_ref_sha256_final(&ctx, d);
    hex_of(d, hex);
}

void lode_tf_proof_path(const char *dir, const lode_tf_assignment *a, char *out, size_t len)
{
    if (dir == NULL || dir[0] == '\0')
        snprintf(out, len, "M%u_%u_%u.proof", a->p, a->bit_min, a->bit_max);
    else
        snprintf(out, len, "%s/M%u_%u_%u.proof", dir, a->p, a->bit_min, a->bit_max);
}

int lode_tf_proof_write(const char *path, uint32_t p, unsigned a, unsigned b, unsigned t, const lode_u128 *q,
                        size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (q[i] <= q[i - 1]) {
            errno = EINVAL; /* not ascending, or a repeat */
            return -1;
        }
    char hex[65];
    lode_tf_proof_digest(q, n, hex);
    size_t cap = 512 + n * 41; /* a q has at most 39 digits */
    char *buf = malloc(cap);
    if (buf == NULL)
        return -1;
    int w = snprintf(buf, cap,
                     "lode-tf-proof %d\nexponent %u\nbits %u %u\nt %u\nexpected %.1f\ncount %zu\nsha256 %s\n",
                     LODE_TF_PROOF_FORMAT, p, a, b, t, lode_tf_proof_expected(p, a, b, t), n, hex);
    if (w < 0 || (size_t)w >= cap) {
        free(buf);
        errno = EOVERFLOW;
        return -1;
    }
    size_t len = (size_t)w;
    for (size_t i = 0; i < n; i++) {
        lode_tf_u128_str(q[i], buf + len);
        len += strlen(buf + len);
        buf[len++] = '\n';
    }
    memcpy(buf + len, "end\n", 4);
    len += 4;
    int rc = lode_tf_write_atomic(path, buf, len);
    int saved = errno;
    free(buf);
    errno = saved;
    return rc;
}

int lode_tf_proof_enumerate(uint32_t p, unsigned a, unsigned b, unsigned t, lode_u128 limit, lode_u128 **out,
                            size_t *n)
{
    *out = NULL;
    *n = 0;
    if (p == 0 || a >= b || b > 126)
        return 0;
    lode_u128 lo = (lode_u128)1 << a, hi = (lode_u128)1 << b;
    if (limit < hi)
        hi = limit;
    if (hi <= lo || hi < 3)
        return 0;
    lode_u128 step = 2 * (lode_u128)p;
    /* k from 1 while q = 2kp + 1 < hi; the k with q < lo are skipped at once. */
    lode_u128 k_end = (hi - 2) / step + 1; /* q < hi <=> k <= (hi - 2) / (2p) */
    lode_u128 k = lo > 1 ? (lo - 1 + step - 1) / step : 1; /* the smallest k with 2kp + 1 >= lo */
    if (k < 1)
        k = 1;
    if (k_end <= k)
        return 0;
    if (k_end - k > ENUMERATE_MAX_K) {
        errno = EINVAL;
        return -1;
    }
    size_t cap = 0;
    lode_u128 *list = NULL;
    for (; k < k_end; k++) {
        lode_u128 q = step * k + 1;
        unsigned m8 = (unsigned)(q & 7);
        if ((m8 != 1 && m8 != 7) || !lode_tf_proof_condition(p, q, t) || !lode_tf_is_prime_u128(q))
            continue;
        if (*n == cap) {
            size_t c = cap ? 2 * cap : 64;
            lode_u128 *g = realloc(list, c * sizeof *g);
            if (g == NULL) {
                free(list);
                *n = 0;
                errno = ENOMEM;
                return -1;
            }
            list = g;
            cap = c;
        }
        list[(*n)++] = q;
    }
    *out = list;
    return 0;
}

/* ---- The verifier ---- */

typedef struct verifier {
    FILE *out;
    lode_tf_lines *lines; /* read a line at a time: a huge file costs no memory */
    bool read_error;
    unsigned line_no;
    char line[160]; /* the current line, NUL-terminated; longer lines are malformed */
    bool cut;       /* the current line was longer than line[] or held a NUL */
} verifier;

static void say(verifier *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say(verifier *v, const char *fmt, ...)
{
    if (v->out == NULL)
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(v->out, fmt, ap);
    va_end(ap);
    fputc('\n', v->out);
}

/* The next line into v->line; false at the end of the file (or a read
 * error: v->read_error). */
static bool next(verifier *v)
{
    const char *s;
    size_t n;
    int got = lode_tf_lines_next(v->lines, &s, &n);
    if (got < 0) {
        v->read_error = true;
        say(v, "FAIL: read error after line %u: %s", v->line_no, strerror(errno));
    }
    if (got != 1)
        return false;
    v->line_no++;
    v->cut = n >= sizeof v->line || memchr(s, '\0', n) != NULL;
    if (n >= sizeof v->line)
        n = sizeof v->line - 1;
    memcpy(v->line, s, n);
    v->line[n] = '\0';
    return true;
}

/* The line shown in a message: printable ASCII, the rest as '?'. */
static const char *shown(verifier *v)
{
    static char buf[sizeof v->line + 8];
    size_t i = 0;
    for (; v->line[i] != '\0' && i < 80; i++)
        buf[i] = v->line[i] >= 0x20 && v->line[i] < 0x7f ? v->line[i] : '?';
    buf[i] = '\0';
    if (v->line[i] != '\0' || v->cut)
        snprintf(buf + i, sizeof buf - i, "...");
    return buf;
}

/* A decimal unsigned number: digits only, no sign, no leading zero (but
 * "0"), below 2^127. */
static bool parse_u128(const char *s, lode_u128 *q)
{
    size_t n = strlen(s);
    if (n == 0 || n > 39 || (s[0] == '0' && n > 1))
        return false;
    lode_u128 v = 0;
    const lode_u128 max = ((lode_u128)1 << 127) - 1;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (max - d) / 10)
            return false;
        v = 10 * v + d;
    }
    *q = v;
    return true;
}

static bool parse_u32(const char *s, uint32_t *out)
{
    lode_u128 v;
    if (!parse_u128(s, &v) || v > UINT32_MAX)
        return false;
    *out = (uint32_t)v;
    return true;
}

/* "key value": the value after "key ", or NULL. */
static const char *value_of(verifier *v, const char *key)
{
    size_t k = strlen(key);
    if (v->cut || strncmp(v->line, key, k) != 0 || v->line[k] != ' ')
        return NULL;
    return v->line + k + 1;
}

/* The line read last as the header line "key N" (one decimal number). */
static bool header_u32_here(verifier *v, const char *key, uint32_t *out)
{
    const char *s = value_of(v, key);
    if (s == NULL || !parse_u32(s, out)) {
        say(v, "FAIL: line %u: want \"%s N\", not \"%s\"", v->line_no, key, shown(v));
        return false;
    }
    return true;
}

/* The next line as the header line "key N". */
static bool header_u32(verifier *v, const char *key, uint32_t *out)
{
    if (!next(v)) {
        if (!v->read_error)
            say(v, "FAIL: the file ends before its \"%s\" line", key);
        return false;
    }
    return header_u32_here(v, key, out);
}

/* The "expected E" value and its printed decimals. */
static bool parse_expected(const char *s, double *e, int *decimals)
{
    size_t n = strlen(s), i = 0;
    if (n == 0 || n > 40)
        return false;
    while (i < n && s[i] >= '0' && s[i] <= '9')
        i++;
    if (i == 0)
        return false;
    *decimals = 0;
    if (i < n && s[i] == '.') {
        size_t d = ++i;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
        *decimals = (int)(i - d);
        if (*decimals == 0)
            return false;
    }
    if (i != n)
        return false;
    char *end;
    *e = strtod(s, &end);
    return *end == '\0' && isfinite(*e);
}

/* What the header says, and the expected count lode computes from it. */
typedef struct proof_header {
    uint32_t p, a, b, t, count;
    double e;
    char digest[65];
} proof_header;

/* The header's format, exponent, bits and t lines, each said ok. */
static bool read_assignment(verifier *v, proof_header *h)
{
    uint32_t format = 0;
    char why[160];
    if (!next(v)) {
        if (!v->read_error)
            say(v, "FAIL: the file is empty");
        return false;
    }
    if (!header_u32_here(v, "lode-tf-proof", &format))
        return false;
    if (format != LODE_TF_PROOF_FORMAT) {
        say(v, "FAIL: line 1: format %u, this lode reads format %d", format, LODE_TF_PROOF_FORMAT);
        return false;
    }
    say(v, "format %u: ok", format);
    if (!header_u32(v, "exponent", &h->p))
        return false;
    if (!next(v)) {
        say(v, "FAIL: the file ends before its \"bits\" line");
        return false;
    }
    const char *s = value_of(v, "bits");
    char a_s[16], b_s[16], extra;
    if (s == NULL || sscanf(s, "%15[0-9] %15[0-9]%c", a_s, b_s, &extra) != 2 || !parse_u32(a_s, &h->a) ||
        !parse_u32(b_s, &h->b) || strchr(s, '\t') != NULL || strstr(s, "  ") != NULL) {
        say(v, "FAIL: line %u: want \"bits A B\", not \"%s\"", v->line_no, shown(v));
        return false;
    }
    if (lode_tf_validate(h->p, h->a, h->b, why, sizeof why) != 0) {
        say(v, "FAIL: M%u from 2^%u to 2^%u is not a valid assignment: %s", h->p, h->a, h->b, why);
        return false;
    }
    say(v, "assignment M%u from 2^%u to 2^%u: ok (exponent prime, bits in bounds)", h->p, h->a, h->b);
    char n_cand[48]; /* "2599590", not 2.59959e+06 */
    lode_format_decimal(lode_tf_proof_candidates(h->p, h->a, h->b), 6, n_cand, sizeof n_cand);
    unsigned t_want = lode_tf_proof_bits(h->p, h->a, h->b);
    if (!header_u32(v, "t", &h->t))
        return false;
    if (h->t != t_want) {
        say(v, "FAIL: t %u: lode chooses t = %u for this assignment (N = %s candidate primes)", h->t, t_want,
            n_cand);
        return false;
    }
    say(v, "t %u: ok (N = %s candidate primes)", h->t, n_cand);
    return true;
}

/* The header's expected, count and sha256 lines. */
static bool read_totals(verifier *v, proof_header *h)
{
    h->e = lode_tf_proof_expected(h->p, h->a, h->b, h->t);
    double e_hdr;
    int decimals;
    if (!next(v)) {
        say(v, "FAIL: the file ends before its \"expected\" line");
        return false;
    }
    const char *s = value_of(v, "expected");
    if (s == NULL || !parse_expected(s, &e_hdr, &decimals)) {
        say(v, "FAIL: line %u: want \"expected E\", not \"%s\"", v->line_no, shown(v));
        return false;
    }
    double slack = fmax(1e-3 * h->e, pow(10.0, -decimals));
    if (fabs(e_hdr - h->e) > slack) {
        say(v, "FAIL: expected %s: lode computes %.4f for (p, a, b, t)", s, h->e);
        return false;
    }
    say(v, "expected %s: ok (lode computes %.4f)", s, h->e);
    if (!header_u32(v, "count", &h->count))
        return false;
    if (!next(v)) {
        say(v, "FAIL: the file ends before its \"sha256\" line");
        return false;
    }
    s = value_of(v, "sha256");
    if (s == NULL || strlen(s) != 64 || strspn(s, "0123456789abcdef") != 64) {
        say(v, "FAIL: line %u: want \"sha256\" and 64 lower-case hex digits, not \"%s\"", v->line_no, shown(v));
        return false;
    }
    memcpy(h->digest, s, 65);
    return true;
}

/* Why the number q cannot be the list's next entry after prev (listed so
 * far), or NULL when it can. */
static const char *bad_entry(const proof_header *h, lode_u128 q, lode_u128 prev, size_t listed)
{
    lode_u128 lo = (lode_u128)1 << h->a, hi = (lode_u128)1 << h->b, step = 2 * (lode_u128)h->p;
    if (listed > 0 && q == prev)
        return "repeated";
    if (listed > 0 && q < prev)
        return "not in ascending order (below the line before)";
    if (q < lo || q >= hi)
        return "outside the range [2^a, 2^b)";
    if ((q - 1) % step != 0)
        return "not of the form 2kp + 1";
    if ((q & 7) != 1 && (q & 7) != 7)
        return "not +-1 mod 8";
    if (!lode_tf_proof_condition(h->p, q, h->t))
        return "fails C(p, q, t): (2^(p+96) mod q) mod 2^t != (2^96 mod q) mod 2^t";
    if (!lode_tf_is_prime_u128(q))
        return "composite";
    return NULL;
}

/* The list up to its "end" line, each entry checked and hashed into ctx;
 * *listed counts them. */
static bool read_list(verifier *v, const proof_header *h, lode_ref_sha256_ctx *ctx, size_t *listed)
{
    lode_u128 prev = 0;
    bool ended = false;
    while (next(v)) {
        if (!v->cut && strcmp(v->line, "end") == 0) {
            ended = true;
            break;
        }
        lode_u128 q = 0;
        const char *bad = v->cut || !parse_u128(v->line, &q) ? "not a decimal number below 2^127"
                                                              : bad_entry(h, q, prev, *listed);
        if (bad != NULL) {
            say(v, "FAIL: line %u: q = %s: %s", v->line_no, shown(v), bad);
            return false;
        }
        char qs[48];
        lode_tf_u128_str(q, qs);
        size_t l = strlen(qs);
        qs[l++] = '\n';
        lode_ref_sha256_update(ctx, qs, l);
        prev = q;
        (*listed)++;
    }
    if (!ended) {
        say(v, "FAIL: no \"end\" line: the file is cut short (%zu q read)", *listed);
        return false;
    }
    if (next(v)) {
        say(v, "FAIL: line %u: text after the \"end\" line: \"%s\"", v->line_no, shown(v));
        return false;
    }
    return !v->read_error;
}

/* The list against the header: its count, its SHA-256 and the floor
 * E - 5 sqrt(E) a searched range stays above. */
static bool check_totals(verifier *v, const proof_header *h, lode_ref_sha256_ctx *ctx, size_t listed)
{
    say(v, "list: %zu q, each decimal, ascending without repeats, in [2^%u, 2^%u), 2kp + 1 with k >= 1, "
        "+-1 mod 8, passing C(p, q, %u), prime: ok", listed, h->a, h->b, h->t);
    if (listed != h->count) {
        say(v, "FAIL: count %u: the file lists %zu q", h->count, listed);
        return false;
    }
    say(v, "count %u: ok", h->count);
    uint8_t d[32];
    char got[65];
    lode_ref_sha256_final(ctx, d);
    hex_of(d, got);
    if (strcmp(got, h->digest) != 0) {
        say(v, "FAIL: sha256 %s: the list's SHA-256 is %s", h->digest, got);
        return false;
    }
    say(v, "sha256 %s: ok", h->digest);
    double floor5 = h->e - 5 * sqrt(h->e);
    if ((double)listed < floor5) {
        say(v, "FAIL: %zu q listed, below E - 5 sqrt(E) = %.1f (E = %.1f): part of the range was not searched",
            listed, floor5, h->e);
        return false;
    }
    say(v, "count %zu >= E - 5 sqrt(E) = %.1f (E = %.1f): ok", listed, floor5, h->e);
    return true;
}

int lode_tf_proof_verify(const char *path, FILE *out)
{
    verifier v = {.out = out};
    say(&v, "proof file %s", path);
    if ((v.lines = lode_tf_lines_open(path)) == NULL) {
        say(&v, "FAIL: cannot read %s: %s", path, strerror(errno));
        say(&v, "proof does NOT hold");
        return 1;
    }
    lode_tf_lines_stop_after(v.lines, sizeof v.line); /* a longer line fails: read no further */
    proof_header h = {0};
    lode_ref_sha256_ctx ctx;
    lode_ref_sha256_init(&ctx);
    size_t listed = 0;
    bool holds = read_assignment(&v, &h) && read_totals(&v, &h) && read_list(&v, &h, &ctx, &listed) &&
                 check_totals(&v, &h, &ctx, listed);
    say(&v, holds ? "proof holds" : "proof does NOT hold");
    lode_tf_lines_close(v.lines);
    return holds ? 0 : 1;
}
