/* Numerical edge cases of float sums, dots and products that every CPU
 * path must get right (tests/CMakeLists.txt reruns this per path):
 *  - f64 sums with giants that cancel among small values: the small terms
 *    are kept exactly while a giant is the high part (error at or below
 *    NumPy's pairwise sum, against Shewchuk's exact sum in util.h);
 *  - f64 dots whose products cancel exactly give exactly 0;
 *  - a NaN result of a float sum, dot or product is the default NaN
 *    (0x7fc00000, 0x7ff8000000000000) whatever NaNs the data hold;
 *  - a float product whose partial products overflow or underflow gives
 *    the same result on every path (the product of the exact range). */
#include "util.h"

static pk_ctx *ctx;

/* ---- f64 sums with cancelling giants ----------------------------------- */

/* x (n doubles) summed by every entry point: pk_reduce, pk_dot with ones,
 * one row (axis 1), one column (axis 0), and 3 equal rows. Each result's
 * error must be at or below NumPy's pairwise error or half an ulp. */
static void judge_sum_f64(const double *x, int64_t n, const char *what)
{
    double *ones = pk_test_alloc((size_t)n * 8), *m3 = pk_test_alloc((size_t)n * 3 * 8);
    for (int64_t i = 0; i < n; i++) ones[i] = 1.0, m3[i] = m3[n + i] = m3[2 * n + i] = x[i];
    pk_test_xsum xs;
    pk_test_xsum_init(&xs);
    for (int64_t i = 0; i < n; i++) pk_test_xsum_add(&xs, x[i]);
    const double exact = pk_test_xsum_value(&xs), np = pk_test_pairwise_f64(x, n);
    const double nerr = pk_test_xsum_err(&xs, np);
    const double half = 0.5 * pk_test_ulp(PK_F64, exact) * (1 + 0x1p-20);
    double got[7];
    pk_status s[5];
    s[0] = pk_reduce(ctx, PK_SUM, PK_F64, x, n, &got[0]);
    s[1] = pk_dot(ctx, PK_F64, n, x, ones, &got[1]);
    s[2] = pk_reduce_axis(ctx, PK_SUM, PK_F64, x, 1, n, n, 1, &got[2]);
    s[3] = pk_reduce_axis(ctx, PK_SUM, PK_F64, x, n, 1, 1, 0, &got[3]);
    s[4] = pk_reduce_axis(ctx, PK_SUM, PK_F64, m3, 3, n, n, 1, &got[4]);
    static const char *const via[] = {"pk_reduce", "pk_dot", "axis 1", "axis 0", "3 rows",
                                      "3 rows", "3 rows"};
    for (int k = 0; k < 7; k++) {
        const double err = pk_test_xsum_err(&xs, got[k]);
        PK_CHECK(s[k < 4 ? k : 4] == PK_OK && (err <= nerr || err <= half),
                 "%s n=%lld via %s: %.17g, exact %.17g, |error| %.3g > NumPy's %.3g", what,
                 (long long)n, via[k], got[k], exact, err, nerr);
    }
    free(ones), free(m3);
}

static void sum_giants_f64(void)
{
    /* The acceptance run's case: exact (and NumPy) 1.0999999999999999,
     * pk gave 1.1 (the lane fold added the small terms in plain double
     * while 1e300 was the high part). */
    double rep[17] = {1e300, 0.3, 0.1, 0.7, 0, 0, 0, 0, -1e300};
    judge_sum_f64(rep, 17, "1e300 - 1e300 + 0.3 + 0.1 + 0.7");
    double got;
    PK_CHECK(pk_reduce(ctx, PK_SUM, PK_F64, rep, 17, &got) == PK_OK && got == 1.0999999999999999,
             "1e300 repro: %.17g, want 1.0999999999999999", got);
    /* +-1e20 placed 8 apart among U(-1, 1): NumPy's 8 accumulators cancel
     * them exactly; pk must keep the terms that meet a giant as well. */
    const int64_t ns[] = {17, 33, 65, 100, 129, 300, 1000, 4097, 20000, 40000};
    double *x = pk_test_alloc(40000 * 8);
    for (int rep_i = 0; rep_i < 400; rep_i++) {
        const int64_t n = ns[rep_i % 10];
        for (int64_t i = 0; i < n; i++) x[i] = pk_test_uniform(-1, 1);
        const int64_t pairs = 1 + pk_test_below(n / 40 + 1);
        for (int64_t k = 0; k < pairs; k++) {
            const int64_t p = pk_test_below(n - 8);
            const double g = (pk_test_next() & 1 ? 1e20 : -1e20) * pk_test_uniform(1, 2);
            x[p] = g, x[p + 8] = -g;
        }
        judge_sum_f64(x, n, "+-1e20 8 apart");
    }
    free(x);
}

/* ---- f64 dots that cancel exactly ---------------------------------------- */

static void dot_cancel(void)
{
    const int64_t ns[] = {34, 100, 2, 16, 200, 1002, 40000};
    for (int f64 = 0; f64 < 2; f64++) {
        const pk_dtype t = f64 ? PK_F64 : PK_F32;
        for (size_t ni = 0; ni < sizeof ns / sizeof *ns; ni++) {
            const int64_t n = ns[ni], h = n / 2;
            void *x = pk_test_alloc((size_t)n * 8), *y = pk_test_alloc((size_t)n * 8);
            for (int rep = 0; rep < (ni < 2 ? 100 : 10); rep++) {
                /* x = [a, a], y = [b, -b]; or interleaved: [a0, a0, a1, a1..] */
                const bool inter = rep & 1;
                for (int64_t i = 0; i < h; i++) {
                    const double a = pk_test_uniform(-1, 1) * ldexp(1, (int)pk_test_below(40) - 20);
                    const double b = pk_test_uniform(-1, 1);
                    const int64_t i0 = inter ? 2 * i : i, i1 = inter ? 2 * i + 1 : h + i;
                    pk_test_setf(t, x, i0, a), pk_test_setf(t, x, i1, a);
                    pk_test_setf(t, y, i0, b), pk_test_setf(t, y, i1, -b);
                }
                double out[1];
                PK_CHECK(pk_dot(ctx, t, n, x, y, out) == PK_OK && pk_test_getf(t, out, 0) == 0,
                         "%s dot [a, a] . [b, -b] n=%lld (%s): %g, want 0", pk_dtype_name(t),
                         (long long)n, inter ? "interleaved" : "halves", pk_test_getf(t, out, 0));
            }
            free(x), free(y);
        }
    }
}

/* ---- NaN results: the default NaN ------------------------------------------ */

static const uint32_t nan32[] = {0x7fc00000u, 0xffc00000u, 0x7fc12345u, 0xffd00001u,
                                 0x7f800001u /* signalling */};
static const uint64_t nan64[] = {0x7ff8000000000000u, 0xfff8000000000000u,
                                 0x7ff8000000012345u, 0xfffc000000000001u,
                                 0x7ff0000000000001u /* signalling */};

static void set_nan(pk_dtype t, void *x, int64_t i, int which)
{
    if (t == PK_F32) memcpy((float *)x + i, &nan32[which], 4);
    else memcpy((double *)x + i, &nan64[which], 8);
}

static bool is_default_nan(pk_dtype t, const void *out, int64_t i)
{
    if (t == PK_F32) {
        uint32_t b;
        memcpy(&b, (const float *)out + i, 4);
        return b == 0x7fc00000u;
    }
    uint64_t b;
    memcpy(&b, (const double *)out + i, 8);
    return b == 0x7ff8000000000000u;
}

static uint64_t bits_of(pk_dtype t, const void *out, int64_t i)
{
    uint64_t b = 0;
    memcpy(&b, (const char *)out + i * (int64_t)pk_test_size(t), pk_test_size(t));
    return b;
}

/* x: n values 1 with NaNs at positions `at` (their kinds `which`); the
 * sum, product and dot (with ones) through every entry point, each output
 * the default NaN. */
static void nan_case(pk_dtype t, int64_t n, const int64_t *at, const int *which, int nn)
{
    const size_t es = pk_test_size(t);
    void *x = pk_test_alloc((size_t)n * es * 2), *ones = pk_test_alloc((size_t)n * es * 2);
    void *out = pk_test_alloc((size_t)n * 2 * 8);
    for (int64_t i = 0; i < 2 * n; i++) pk_test_setf(t, x, i, 1.0), pk_test_setf(t, ones, i, 1.0);
    for (int k = 0; k < nn; k++) set_nan(t, x, at[k], which[k]);
    char what[96];
    int len = snprintf(what, sizeof what, "n=%lld NaNs", (long long)n);
    for (int k = 0; k < nn && len < 80; k++)
        len += snprintf(what + len, sizeof what - (size_t)len, " %lld:%d", (long long)at[k], which[k]);
    for (int op = 0; op < 2; op++) {
        const pk_op o = op ? PK_PROD : PK_SUM;
        const char *on = op ? "prod" : "sum";
        PK_CHECK(pk_reduce(ctx, o, t, x, n, out) == PK_OK && is_default_nan(t, out, 0),
                 "%s %s %s pk_reduce: bits %#llx", pk_dtype_name(t), on, what,
                 (unsigned long long)bits_of(t, out, 0));
        PK_CHECK(pk_reduce_axis(ctx, o, t, x, 1, n, n, 1, out) == PK_OK && is_default_nan(t, out, 0),
                 "%s %s %s axis 1: bits %#llx", pk_dtype_name(t), on, what,
                 (unsigned long long)bits_of(t, out, 0));
        PK_CHECK(pk_reduce_axis(ctx, o, t, x, n, 1, 1, 0, out) == PK_OK && is_default_nan(t, out, 0),
                 "%s %s %s axis 0: bits %#llx", pk_dtype_name(t), on, what,
                 (unsigned long long)bits_of(t, out, 0));
        /* x twice as a 2 x n matrix, and as n x 2 (the pair sums): every
         * output that is NaN must be the default NaN. */
        memcpy((char *)x + n * es, x, n * es);
        for (int axis = 0; axis < 2; axis++) {
            const int64_t rows = axis ? n : 2, cols = axis ? 2 : n;
            const pk_status s = pk_reduce_axis(ctx, o, t, x, rows, cols, cols, axis, out);
            for (int64_t i = 0; i < n; i++)
                PK_CHECK(s == PK_OK && (pk_test_getf(t, out, i) == pk_test_getf(t, out, i) ||
                                        is_default_nan(t, out, i)),
                         "%s %s %s as %lldx%lld, axis %d, output %lld: bits %#llx",
                         pk_dtype_name(t), on, what, (long long)rows, (long long)cols, axis,
                         (long long)i, (unsigned long long)bits_of(t, out, i));
        }
    }
    PK_CHECK(pk_dot(ctx, t, n, x, ones, out) == PK_OK && is_default_nan(t, out, 0),
             "%s dot %s: bits %#llx", pk_dtype_name(t), what, (unsigned long long)bits_of(t, out, 0));
    PK_CHECK(pk_dot(ctx, t, n, ones, x, out) == PK_OK && is_default_nan(t, out, 0),
             "%s dot (NaN in y) %s: bits %#llx", pk_dtype_name(t), what,
             (unsigned long long)bits_of(t, out, 0));
    free(x), free(ones), free(out);
}

static void nan_results(void)
{
    const int64_t ns[] = {1, 2, 3, 16, 17, 33, 100, 20000, 40000};
    for (int f64 = 0; f64 < 2; f64++) {
        const pk_dtype t = f64 ? PK_F64 : PK_F32;
        for (size_t ni = 0; ni < sizeof ns / sizeof *ns; ni++) {
            const int64_t n = ns[ni];
            /* The acceptance run's: +NaN first, -NaN last. */
            const int64_t ends[] = {0, n - 1};
            const int w01[] = {0, 1}, w10[] = {1, 0};
            nan_case(t, n, ends, w01, n > 1 ? 2 : 1);
            nan_case(t, n, ends, w10, n > 1 ? 2 : 1);
            for (int which = 0; which < 5; which++) nan_case(t, n, ends, &which, 1);
            for (int rep = 0; rep < 3; rep++) { /* random places and kinds */
                int64_t at[4];
                int w[4];
                for (int k = 0; k < 4; k++) at[k] = pk_test_below(n), w[k] = (int)pk_test_below(5);
                nan_case(t, n, at, w, 4);
            }
        }
    }
}

/* ---- products that leave the range ------------------------------------------ */

/* Every entry point's product of x (n values of t) must be `want` (bits;
 * NaN the default NaN). */
static void known_prod(pk_dtype t, const double *vals, int nv, double want, const char *what)
{
    static const int64_t lens[] = {4, 16, 17, 33, 64, 100, 1000, 20000};
    const size_t es = pk_test_size(t);
    for (size_t li = 0; li < sizeof lens / sizeof *lens; li++) {
        const int64_t n = lens[li];
        if (n < nv) continue;
        void *x = pk_test_alloc((size_t)n * es), *out = pk_test_alloc(8);
        for (int64_t i = 0; i < n; i++) pk_test_setf(t, x, i, i < nv ? vals[i] : 1.0);
        for (int via = 0; via < 3; via++) {
            const pk_status s = via == 0   ? pk_reduce(ctx, PK_PROD, t, x, n, out)
                                : via == 1 ? pk_reduce_axis(ctx, PK_PROD, t, x, 1, n, n, 1, out)
                                           : pk_reduce_axis(ctx, PK_PROD, t, x, n, 1, 1, 0, out);
            const double got = pk_test_getf(t, out, 0);
            const bool ok = want != want ? is_default_nan(t, out, 0)
                                         : got == want && signbit(got) == signbit(want);
            PK_CHECK(s == PK_OK && ok, "%s prod %s n=%lld via %s: %a, want %a", pk_dtype_name(t),
                     what, (long long)n, via == 0 ? "pk_reduce" : via == 1 ? "axis 1" : "axis 0",
                     got, want);
        }
        free(x), free(out);
    }
}

static void prod_range(void)
{
    const double m = 0.75 * DBL_MAX;
    /* The acceptance run's: NaN (Inf x 0) on the reference path, 0 on the
     * others. The exact product is 0. Zeros after the giants too. */
    double v[17] = {m, m, -m, -m};
    known_prod(PK_F64, v, 17, 0.0, "m m -m -m 0 (m = 0.75 DBL_MAX)");
    v[5] = -1;
    known_prod(PK_F64, v, 17, -0.0, "m m -m -m 0 -1");
    /* Partial products out of range, the product not (powers of 2: the
     * product is exact whatever the order). */
    const double back[] = {0x1p600, 0x1p600, 0x1p-600, 0x1p-600, 3};
    known_prod(PK_F64, back, 5, 3.0, "2^600 2^600 2^-600 2^-600 3");
    const double under[] = {0x1p-600, 0x1p-600, 0x1p600, 0x1p600, -2};
    known_prod(PK_F64, under, 5, -2.0, "underflow and back");
    const double over[] = {m, m, 0.5};
    known_prod(PK_F64, over, 3, INFINITY, "overflowing product");
    const double over0[] = {m, m, 0.0, -m};
    known_prod(PK_F64, over0, 4, -0.0, "zero among giants");
    const double inf0[] = {INFINITY, 0.0};
    known_prod(PK_F64, inf0, 2, NAN, "Inf x 0");
    known_prod(PK_F32, inf0, 2, NAN, "Inf x 0");
    const double infm[] = {INFINITY, -2.0, m, m};
    known_prod(PK_F64, infm, 4, -INFINITY, "Inf among giants");
    /* f32 products accumulate in f64: 3e38^9 overflows it, 0 after. */
    double f[40] = {0};
    for (int i = 0; i < 36; i++) f[i] = i % 2 ? 3e38 : -3e38;
    known_prod(PK_F32, f, 40, 0.0, "f32 giants then 0");
    for (int i = 0; i < 18; i++) f[i] = i < 9 ? 0x1p127 : 0x1p-126;
    known_prod(PK_F32, f, 18, 512.0, "2^127 x 9, 2^-126 x 9 (f32)");
}

int main(void)
{
    pk_test_init("test_numerics");
    ctx = pk_test_cpu_ctx();
    printf("context: %s\n", pk_ctx_describe(ctx));
    sum_giants_f64();
    dot_cancel();
    nan_results();
    prod_range();
    pk_ctx_destroy(ctx);
    return pk_test_finish("test_numerics");
}
