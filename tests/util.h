/* Shared test helpers: a seeded RNG (fresh seed each run, printed on
 * failure, PK_TEST_SEED to replay), checks that count failures, the skip
 * convention (exit 77, which ctest reports as skipped), and the independent
 * references the tests compare pk against: exact summation (Shewchuk's
 * non-overlapping partials, as Python's math.fsum), NumPy's pairwise
 * summation, and element access by dtype. Nothing here calls pk's kernels. */
#ifndef PK_TEST_UTIL_H
#define PK_TEST_UTIL_H

#include "pk.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
#include <malloc.h>
#define PK_TEST_HAVE_MALLINFO2 1
#endif

#define PK_TEST_SKIP 77

/* Bytes of heap in use (glibc's mallinfo2; 0 without it): the leak checks
 * compare it before and after many calls. */
static inline size_t pk_test_heap_in_use(void)
{
#ifdef PK_TEST_HAVE_MALLINFO2
    return mallinfo2().uordblks;
#else
    return 0;
#endif
}

static uint64_t pk_test_seed;
static uint64_t pk_test_state;
static int pk_test_failures;
static long pk_test_checks;

static inline uint64_t pk_test_next(void)
{
    /* splitmix64 */
    uint64_t z = (pk_test_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [lo, hi). */
static inline double pk_test_uniform(double lo, double hi)
{
    return lo + (hi - lo) * (double)(pk_test_next() >> 11) * 0x1.0p-53;
}

/* Uniform integer in [0, n). */
static inline int64_t pk_test_below(int64_t n)
{
    return n <= 0 ? 0 : (int64_t)(pk_test_next() % (uint64_t)n);
}

static inline void pk_test_init(const char *name)
{
    const char *env = getenv("PK_TEST_SEED");
    pk_test_seed = env ? strtoull(env, NULL, 0)
                       : (uint64_t)time(NULL) ^ ((uint64_t)clock() << 32);
    pk_test_state = pk_test_seed;
    setvbuf(stdout, NULL, _IONBF, 0);
    const char *isa = getenv("PK_CPU_ISA");
    printf("%s: seed %" PRIu64 " (replay with PK_TEST_SEED=%" PRIu64 ")%s%s\n",
           name, pk_test_seed, pk_test_seed, isa ? ", PK_CPU_ISA=" : "",
           isa ? isa : "");
}

/* Failures past this many are counted but not printed. */
#define PK_TEST_MAX_PRINTED 40

#define PK_CHECK(cond, ...)                                                   \
    do {                                                                      \
        pk_test_checks++;                                                     \
        if (!(cond)) {                                                        \
            if (pk_test_failures++ < PK_TEST_MAX_PRINTED) {                   \
                printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);        \
                printf(__VA_ARGS__);                                          \
                printf(" [seed %" PRIu64 "]\n", pk_test_seed);                \
            }                                                                 \
        }                                                                     \
    } while (0)

/* Returns the process exit code: 0 when every check passed. */
static inline int pk_test_finish(const char *name)
{
    if (pk_test_failures)
        printf("%s: %d of %ld checks failed; replay with PK_TEST_SEED=%" PRIu64
               "\n", name, pk_test_failures, pk_test_checks, pk_test_seed);
    else
        printf("%s: all %ld checks passed\n", name, pk_test_checks);
    return pk_test_failures ? 1 : 0;
}

/* ---- Contexts and memory ---------------------------------------------- */

/* A CPU context. Exits 77 (skipped) when PK_CPU_ISA names a path this CPU
 * lacks, 1 on any other failure. */
static inline pk_ctx *pk_test_cpu_ctx(void)
{
    pk_ctx *ctx = NULL;
    pk_status s = pk_ctx_create(&ctx, PK_BACKEND_CPU, 0);
    if (s == PK_ERR_UNSUPPORTED) {
        printf("skipped: %s\n", pk_last_create_error());
        exit(PK_TEST_SKIP);
    }
    if (s != PK_OK) {
        printf("FAIL: pk_ctx_create: %s: %s\n", pk_status_str(s),
               pk_last_create_error());
        exit(1);
    }
    return ctx;
}

static inline void *pk_test_alloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        printf("FAIL: malloc(%zu) failed\n", bytes);
        exit(1);
    }
    return p;
}

/* ---- Element access by dtype ------------------------------------------- */

static const pk_dtype pk_test_dtypes[] = {PK_F32, PK_F64, PK_I32,
                                         PK_I64, PK_U32, PK_U64};
#define PK_TEST_NDTYPES 6
static const pk_op pk_test_ops[] = {PK_SUM, PK_PROD,   PK_MIN,
                                   PK_MAX, PK_ARGMIN, PK_ARGMAX};
#define PK_TEST_NOPS 6

static inline bool pk_test_is_float(pk_dtype t) { return t == PK_F32 || t == PK_F64; }
static inline bool pk_test_is_signed(pk_dtype t) { return t == PK_I32 || t == PK_I64; }
static inline size_t pk_test_size(pk_dtype t)
{
    return (t == PK_F32 || t == PK_I32 || t == PK_U32) ? 4 : 8;
}

/* Float element i as double (exact). */
static inline double pk_test_getf(pk_dtype t, const void *x, int64_t i)
{
    return t == PK_F32 ? (double)((const float *)x)[i] : ((const double *)x)[i];
}
/* Integer element i, sign- or zero-extended to 64 bits. */
static inline uint64_t pk_test_getu(pk_dtype t, const void *x, int64_t i)
{
    switch (t) {
    case PK_I32: return (uint64_t)(int64_t)((const int32_t *)x)[i];
    case PK_I64: return (uint64_t)((const int64_t *)x)[i];
    case PK_U32: return ((const uint32_t *)x)[i];
    default: return ((const uint64_t *)x)[i];
    }
}
static inline void pk_test_setf(pk_dtype t, void *x, int64_t i, double v)
{
    if (t == PK_F32) ((float *)x)[i] = (float)v;
    else ((double *)x)[i] = v;
}
static inline void pk_test_setu(pk_dtype t, void *x, int64_t i, uint64_t v)
{
    switch (t) {
    case PK_I32: ((int32_t *)x)[i] = (int32_t)(uint32_t)v; break;
    case PK_I64: ((int64_t *)x)[i] = (int64_t)v; break;
    case PK_U32: ((uint32_t *)x)[i] = (uint32_t)v; break;
    default: ((uint64_t *)x)[i] = v; break;
    }
}

/* ---- Random data ---------------------------------------------------------- */

/* Kinds of random data: uniform floats in [-1, 1) or random integer bits;
 * small integers in [-3, 3] ([0, 6] unsigned: many ties); values near 1 in
 * magnitude (float products stay in range; odd integers, so that integer
 * products do not collapse to 0); as near-one with a NaN or Inf about every
 * 500 elements (floats). */
enum pk_test_kind { PK_TEST_UNIFORM, PK_TEST_SMALL, PK_TEST_NEARONE, PK_TEST_WITH_NAN };

static inline void pk_test_fill(pk_dtype t, void *x, int64_t n, enum pk_test_kind k)
{
    for (int64_t i = 0; i < n; i++) {
        if (pk_test_is_float(t)) {
            double v;
            if (k == PK_TEST_UNIFORM) v = pk_test_uniform(-1, 1);
            else if (k == PK_TEST_SMALL) v = (double)(pk_test_below(7) - 3);
            else v = exp(pk_test_uniform(-0.02, 0.02)) * (pk_test_next() & 1 ? -1 : 1);
            if (k == PK_TEST_WITH_NAN && pk_test_below(500) == 0)
                v = pk_test_next() & 1 ? NAN : INFINITY;
            pk_test_setf(t, x, i, v);
        } else {
            uint64_t v;
            if (k == PK_TEST_UNIFORM) v = pk_test_next();
            else if (k == PK_TEST_SMALL)
                v = (uint64_t)(pk_test_below(7) - (pk_test_is_signed(t) ? 3 : 0));
            else v = pk_test_next() | 1;
            pk_test_setu(t, x, i, v);
        }
    }
}

/* Whether element a is strictly below element b (integers by their own
 * signedness, floats as doubles: false if either is NaN). */
static inline bool pk_test_less(pk_dtype t, const void *x, int64_t a, int64_t b)
{
    if (pk_test_is_float(t)) return pk_test_getf(t, x, a) < pk_test_getf(t, x, b);
    if (pk_test_is_signed(t))
        return (int64_t)pk_test_getu(t, x, a) < (int64_t)pk_test_getu(t, x, b);
    return pk_test_getu(t, x, a) < pk_test_getu(t, x, b);
}

/* Reference argmin (want_max = false) / argmax of x[i*stride], i < n, n >= 1,
 * with NumPy's rules: the first NaN if any, else the first extreme. */
static inline int64_t pk_test_argext(pk_dtype t, const void *x, int64_t n,
                                     int64_t stride, bool want_max)
{
    int64_t best = 0;
    for (int64_t i = 0; i < n; i++) {
        if (pk_test_is_float(t) && isnan(pk_test_getf(t, x, i * stride)))
            return i;
    }
    for (int64_t i = 1; i < n; i++) {
        bool better = want_max ? pk_test_less(t, x, best * stride, i * stride)
                               : pk_test_less(t, x, i * stride, best * stride);
        if (better) best = i;
    }
    return best;
}

/* ---- Exact summation (Shewchuk / math.fsum) ----------------------------- */

typedef struct pk_test_xsum {
    double p[80];        /* non-overlapping partials: at most ~40 for doubles */
    int n;
    double special;      /* sum of the non-finite inputs, plainly */
    bool has_special;
} pk_test_xsum;

static inline void pk_test_xsum_init(pk_test_xsum *s)
{
    s->n = 0;
    s->special = 0.0;
    s->has_special = false;
}

static inline void pk_test_xsum_add(pk_test_xsum *s, double x)
{
    if (!isfinite(x)) {
        s->special += x;
        s->has_special = true;
        return;
    }
    int i = 0;
    for (int j = 0; j < s->n; j++) {
        double y = s->p[j];
        if (fabs(x) < fabs(y)) {
            double t = x;
            x = y;
            y = t;
        }
        double hi = x + y;
        if (!isfinite(hi)) { /* overflow: record it as its Inf */
            s->special += hi;
            s->has_special = true;
            return;
        }
        double lo = y - (hi - x);
        if (lo != 0.0) s->p[i++] = lo;
        x = hi;
    }
    s->p[i++] = x;
    s->n = i;
}

/* The exact sum rounded to nearest double (overflowing partials aside). */
static inline double pk_test_xsum_value(const pk_test_xsum *s)
{
    if (s->has_special) return s->special;
    int n = s->n;
    if (n == 0) return 0.0;
    double hi = s->p[--n], lo = 0.0;
    while (n > 0) {
        double x = hi, y = s->p[--n];
        hi = x + y;
        double yr = hi - x;
        lo = y - yr;
        if (lo != 0.0) break;
    }
    if (n > 0 && ((lo < 0 && s->p[n - 1] < 0) || (lo > 0 && s->p[n - 1] > 0))) {
        double y = lo * 2, x = hi + y, yr = x - hi;
        if (y == yr) hi = x;
    }
    return hi;
}

/* |exact - r| where exact is the exact value held by s (finite only). */
static inline double pk_test_xsum_err(const pk_test_xsum *s, double r)
{
    pk_test_xsum t = *s;
    pk_test_xsum_add(&t, -r);
    return fabs(pk_test_xsum_value(&t));
}

/* Exact a*b = p + e (Dekker's product via fma, exact barring underflow). */
static inline void pk_test_two_prod(double a, double b, double *p, double *e)
{
    *p = a * b;
    *e = fma(a, b, -*p);
}

/* ---- NumPy's pairwise summation (numpy/_core/src/umath/loops_utils.h.src):
 * n < 8: a plain loop; n <= 128: eight accumulators, unrolled by 8, then the
 * remainder; else split at n/2 rounded down to a multiple of 8. The sum runs
 * in the array's own dtype (float32 accumulates in float32). */
#define PK_TEST_PAIRWISE(NAME, T)                                              \
    static inline T NAME(const T *a, int64_t n)                                     \
    {                                                                          \
        if (n < 8) {                                                           \
            T res = (T)0;                                                      \
            for (int64_t i = 0; i < n; i++) res += a[i];                       \
            return res;                                                        \
        }                                                                      \
        if (n <= 128) {                                                        \
            T r[8];                                                            \
            for (int j = 0; j < 8; j++) r[j] = a[j];                           \
            int64_t i;                                                         \
            for (i = 8; i < n - (n % 8); i += 8)                               \
                for (int j = 0; j < 8; j++) r[j] += a[i + j];                  \
            T res = ((r[0] + r[1]) + (r[2] + r[3])) +                          \
                    ((r[4] + r[5]) + (r[6] + r[7]));                           \
            for (; i < n; i++) res += a[i];                                    \
            return res;                                                        \
        }                                                                      \
        int64_t n2 = n / 2;                                                    \
        n2 -= n2 % 8;                                                          \
        return NAME(a, n2) + NAME(a + n2, n - n2);                             \
    }
PK_TEST_PAIRWISE(pk_test_pairwise_f32, float)
PK_TEST_PAIRWISE(pk_test_pairwise_f64, double)

/* Distance to the next representable value above |v|. */
static inline double pk_test_ulp(pk_dtype t, double v)
{
    v = fabs(v);
    if (t == PK_F32) {
        float f = (float)v;
        return (double)nextafterf(f, INFINITY) - (double)f;
    }
    return nextafter(v, INFINITY) - v;
}

/* Bitwise equality of two floats of dtype t, or both NaN. */
static inline bool pk_test_same_float(pk_dtype t, const void *a, const void *b)
{
    double x = t == PK_F32 ? *(const float *)a : *(const double *)a;
    double y = t == PK_F32 ? *(const float *)b : *(const double *)b;
    if (isnan(x) && isnan(y)) return true;
    return memcmp(a, b, pk_test_size(t)) == 0;
}

/* ---- The reference of one reduction ------------------------------------ */

/* Checks that out holds pk's result of reducing x[i*stride], i < n (n >= 1
 * unless op is SUM or PROD), with op: the first extreme (or first NaN) for
 * min/max/argmin/argmax, exactly; wrapping 64-bit sums and products for
 * integers, exactly; float sums within one ulp of the exact sum; float
 * products within one ulp plus n roundings of the long double product. */
static inline void pk_test_expect(pk_op op, pk_dtype t, const void *x, int64_t n,
                                  int64_t stride, const void *out, const char *what)
{
    const char *on = pk_op_name(op), *tn = pk_dtype_name(t);
    if (op == PK_ARGMIN || op == PK_ARGMAX || op == PK_MIN || op == PK_MAX) {
        bool want_max = op == PK_ARGMAX || op == PK_MAX;
        int64_t want = pk_test_argext(t, x, n, stride, want_max);
        if (op == PK_ARGMIN || op == PK_ARGMAX) {
            int64_t got;
            memcpy(&got, out, 8);
            PK_CHECK(got == want, "%s %s n=%lld %s: got index %lld, want %lld", on,
                     tn, (long long)n, what, (long long)got, (long long)want);
        } else if (pk_test_is_float(t)) {
            double got = pk_test_getf(t, out, 0), w = pk_test_getf(t, x, want * stride);
            PK_CHECK((isnan(got) && isnan(w)) || got == w,
                     "%s %s n=%lld %s: got %.17g, want %.17g", on, tn, (long long)n,
                     what, got, w);
        } else {
            uint64_t got = pk_test_getu(t, out, 0), w = pk_test_getu(t, x, want * stride);
            PK_CHECK(got == w, "%s %s n=%lld %s: got %#" PRIx64 ", want %#" PRIx64,
                     on, tn, (long long)n, what, got, w);
        }
        return;
    }
    if (!pk_test_is_float(t)) { /* wrapping 64-bit sum or product */
        uint64_t want = op == PK_SUM ? 0 : 1, got;
        for (int64_t i = 0; i < n; i++) {
            uint64_t v = pk_test_getu(t, x, i * stride);
            want = op == PK_SUM ? want + v : want * v;
        }
        memcpy(&got, out, 8);
        PK_CHECK(got == want, "%s %s n=%lld %s: got %#" PRIx64 ", want %#" PRIx64, on,
                 tn, (long long)n, what, got, want);
        return;
    }
    double got = pk_test_getf(t, out, 0);
    if (op == PK_SUM) {
        pk_test_xsum xs;
        pk_test_xsum_init(&xs);
        for (int64_t i = 0; i < n; i++) pk_test_xsum_add(&xs, pk_test_getf(t, x, i * stride));
        double exact = pk_test_xsum_value(&xs);
        if (t == PK_F32) exact = (float)exact; /* Inf past FLT_MAX */
        if (xs.has_special || !isfinite(exact)) {
            PK_CHECK((isnan(got) && isnan(exact)) || got == exact,
                     "sum %s n=%lld %s: got %g, want %g", tn, (long long)n, what, got,
                     exact);
            return;
        }
        /* Accurate to within one unit in the last place of the exact sum
         * (test_accuracy compares against NumPy's error). */
        double err = pk_test_xsum_err(&xs, got);
        PK_CHECK(err <= pk_test_ulp(t, exact), "sum %s n=%lld %s: got %.17g, exact %.17g",
                 tn, (long long)n, what, got, exact);
        return;
    }
    long double p = 1.0L;
    for (int64_t i = 0; i < n; i++) p *= (long double)pk_test_getf(t, x, i * stride);
    double want = t == PK_F32 ? (double)(float)p : (double)p;
    if (!isfinite(want)) {
        PK_CHECK((isnan(got) && isnan(want)) || got == want,
                 "prod %s n=%lld %s: got %g, want %g", tn, (long long)n, what, got, want);
        return;
    }
    double tol = pk_test_ulp(t, want) + (double)(n + 1) * DBL_EPSILON * fabs(want) *
                                            (t == PK_F64 ? 2.0 : 1.0);
    PK_CHECK(fabs(got - want) <= tol, "prod %s n=%lld %s: got %.17g, want %.17g", tn,
             (long long)n, what, got, want);
}

/* Sums that overflow only when rounded: MAX + a quarter ulp + a quarter ulp
 * is MAX + half an ulp exactly, which rounds (to even) to Inf. Every path
 * (whole array, axis 0, axis 1) must say Inf, not NaN from the error
 * terms, nor MAX from a plain redo. Host operands (any backend). */
static inline void pk_test_overflowing_sums(pk_ctx *ctx)
{
    for (int d = 0; d < 2; d++) {
        const pk_dtype t = d ? PK_F64 : PK_F32;
        for (int sign = 1; sign >= -1; sign -= 2) {
            const double big = sign * (d ? DBL_MAX : (double)FLT_MAX);
            const double q = sign * (d ? ldexp(1.0, 969) : ldexp(1.0, 102));
            const double want = sign * (double)INFINITY;
            double col[3 * 5], row[5 * 3], out[5];
            float colf[3 * 5], rowf[5 * 3], outf[5];
            for (int r = 0; r < 3; r++)
                for (int c = 0; c < 5; c++) {
                    const double v = r == 0 ? big : q;
                    col[r * 5 + c] = row[c * 3 + r] = v;
                    colf[r * 5 + c] = rowf[c * 3 + r] = (float)v;
                }
            const void *X0 = d ? (const void *)col : (const void *)colf;
            const void *X1 = d ? (const void *)row : (const void *)rowf;
            void *o = d ? (void *)out : (void *)outf;
            for (int axis = 0; axis < 2; axis++)
                for (int n = 1; n <= 5; n += 4) { /* 1 and 5 outputs */
                    const int64_t rows = axis ? n : 3, cols = axis ? 3 : n;
                    pk_status s = pk_reduce_axis(ctx, PK_SUM, t, axis ? X1 : X0, rows, cols,
                                                 axis ? 3 : 5, axis, o);
                    PK_CHECK(s == PK_OK, "overflowing sum: %s", pk_ctx_error(ctx));
                    for (int i = 0; i < n; i++) {
                        const double v = d ? out[i] : (double)outf[i];
                        PK_CHECK(v == want, "%s sum of MAX + 2 quarter ulps, axis %d, %d "
                                 "outputs: output %d = %g, want %g", pk_dtype_name(t),
                                 axis, n, i, v, want);
                    }
                }
            pk_status s = pk_reduce(ctx, PK_SUM, t, X1, 3, o);
            const double v = d ? out[0] : (double)outf[0];
            PK_CHECK(s == PK_OK && v == want, "%s whole-array sum of MAX + 2 quarter ulps: %g",
                     pk_dtype_name(t), v);
        }
    }
}

#endif
