/* Accuracy of f32/f64 sums and dots (pk_reduce SUM, pk_reduce_axis SUM on
 * both axes, pk_dot): the error against the exact result (Shewchuk's exact
 * summation, products split exactly with fma) must be at most the error of
 * NumPy's pairwise summation on the same data (implemented in util.h), or
 * half a unit in the last place (a correctly rounded answer can do no
 * better). Data: well- and ill-conditioned, wide dynamic range, heavy
 * cancellation, and huge cancelling values among small ones. Then sums with
 * a known answer on every path: float midpoints (rounded once), giants
 * that overflow partial sums, and -0. */
#include "util.h"

static pk_ctx *ctx;

enum kind { UNIFORM, POSITIVE, WIDE, CANCEL, GIANTS, SPARSE_BIG, KINDS };
static const char *const kind_names[] = {"uniform", "positive", "wide-range",
                                         "cancelling", "giants", "sparse-big"};

static void fill(pk_dtype t, void *x, int64_t n, enum kind k)
{
    bool f32 = t == PK_F32;
    double big = f32 ? 1e30 : 1e300;
    for (int64_t i = 0; i < n; i++) {
        double v = 0;
        double sign = pk_test_next() & 1 ? -1.0 : 1.0;
        switch (k) {
        case UNIFORM: v = pk_test_uniform(-1, 1); break;
        case POSITIVE: v = pk_test_uniform(0, 1); break;
        case WIDE: /* magnitudes over 2^-40 .. 2^40 (f32) or 2^-400 .. 2^400 */
            v = sign * ldexp(pk_test_uniform(1, 2), (int)pk_test_below(f32 ? 81 : 801) -
                                                        (f32 ? 40 : 400));
            break;
        case CANCEL: /* pairs v, -v (at random distances) plus noise */
            if (i % 2 == 0 || i == 0) v = sign * ldexp(pk_test_uniform(1, 2), (int)pk_test_below(40));
            else v = -pk_test_getf(t, x, pk_test_below(i)) * (pk_test_below(8) ? 1 : 1.0000001);
            break;
        case GIANTS: /* two huge values cancelling, then small ones */
            v = i == 0 ? big : i == 1 ? -big : pk_test_uniform(0.5, 1.5);
            break;
        case SPARSE_BIG: /* rare +-1e10 among O(1) values: 2^33 apart, so
                          * f32 data span 2^57 and f64 data 2^86: past f64's
                          * 53 bits (summed in plain f64 the small values
                          * lose bits) but within what pk's compensated sums
                          * keep exactly (docs/ARCHITECTURE.md "Accuracy":
                          * f32 errors summed in f64, f64 in double-double).
                          * At 1e20 (f64: 2^119) no double-double method is
                          * exact, the reference kernel's included, and
                          * NumPy, usually far worse, is now and then exact
                          * by luck: a test of luck. (At 1e200 apart the
                          * rounding errors of the big values alone dwarf
                          * the small ones.) */
            v = pk_test_below(64) == 0 ? sign * 1e10 : pk_test_uniform(-1, 1);
            break;
        default: break;
        }
        pk_test_setf(t, x, i, v);
    }
}

/* NumPy's pairwise sum of x[i*stride], i < n, in the dtype. */
static double numpy_sum(pk_dtype t, const void *x, int64_t n, int64_t stride)
{
    if (stride == 1)
        return t == PK_F32 ? pk_test_pairwise_f32(x, n) : pk_test_pairwise_f64(x, n);
    size_t sz = pk_test_size(t);
    void *tmp = pk_test_alloc((size_t)n * sz);
    for (int64_t i = 0; i < n; i++) memcpy((char *)tmp + i * sz, (const char *)x + i * stride * sz, sz);
    double r = numpy_sum(t, tmp, n, 1);
    free(tmp);
    return r;
}

static void exact_sum(pk_dtype t, const void *x, int64_t n, int64_t stride, pk_test_xsum *s)
{
    pk_test_xsum_init(s);
    for (int64_t i = 0; i < n; i++) pk_test_xsum_add(s, pk_test_getf(t, x, i * stride));
}

static long compared, at_half_ulp;

/* got's error must be <= NumPy's, or <= half an ulp of the exact value. */
static void judge(pk_dtype t, const pk_test_xsum *xs, double got, double np, const char *what,
                  int64_t n)
{
    double exact = pk_test_xsum_value(xs);
    if (xs->has_special) return; /* overflowed: not an accuracy case */
    double err = pk_test_xsum_err(xs, got), nerr = pk_test_xsum_err(xs, np);
    double half = 0.5 * pk_test_ulp(t, exact) * (1 + 0x1p-20);
    compared++;
    if (err > nerr && err <= half) at_half_ulp++;
    PK_CHECK(err <= nerr || err <= half,
             "%s %s n=%lld: |error| %.3g > NumPy pairwise's %.3g (got %.17g, numpy %.17g, "
             "exact %.17g)",
             what, pk_dtype_name(t), (long long)n, err, nerr, got, np, exact);
}

static void sums(void)
{
    const int64_t ns[] = {1, 7, 8, 9, 100, 128, 129, 1000, 4097, 16383, 16385, 100003,
                          (1 << 20) + 5};
    void *x = pk_test_alloc(((1 << 20) + 5) * 8);
    for (int d = 0; d < 2; d++) {
        pk_dtype t = d ? PK_F64 : PK_F32;
        for (size_t si = 0; si < sizeof ns / sizeof *ns; si++) {
            int64_t n = ns[si];
            for (int k = 0; k < KINDS; k++) {
                if (k == GIANTS && n < 3) continue;
                fill(t, x, n, (enum kind)k);
                double out[1];
                pk_status s = pk_reduce(ctx, PK_SUM, t, x, n, out);
                PK_CHECK(s == PK_OK, "sum: %s", pk_ctx_error(ctx));
                pk_test_xsum xs;
                exact_sum(t, x, n, 1, &xs);
                char what[64];
                snprintf(what, sizeof what, "sum %s", kind_names[k]);
                judge(t, &xs, pk_test_getf(t, out, 0), numpy_sum(t, x, n, 1), what, n);
            }
        }
    }
    free(x);
}

/* Sums along both axes: each output against its own row or column. */
static void axis_sums(void)
{
    const int64_t shapes[][3] = {{100, 100, 100}, {1000, 37, 40}, {3, 70000, 70001},
                                 {70000, 3, 3},  {1, 20000, 20000}, {20000, 1, 1},
                                 {600, 1500, 1503}, {50001, 2, 2},  {30001, 4, 4},
                                 {2, 30001, 30001}, {4100, 130, 131}};
    for (int d = 0; d < 2; d++) {
        pk_dtype t = d ? PK_F64 : PK_F32;
        for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++) {
            int64_t rows = shapes[si][0], cols = shapes[si][1], ld = shapes[si][2];
            int64_t count = rows * ld;
            void *x = pk_test_alloc((size_t)count * 8);
            void *out = pk_test_alloc((size_t)(rows > cols ? rows : cols) * 8);
            for (int k = 0; k < KINDS; k++) {
                fill(t, x, count, (enum kind)k);
                for (int axis = 0; axis < 2; axis++) {
                    pk_status s = pk_reduce_axis(ctx, PK_SUM, t, x, rows, cols, ld, axis, out);
                    PK_CHECK(s == PK_OK, "reduce_axis: %s", pk_ctx_error(ctx));
                    int64_t nout = axis ? rows : cols, len = axis ? cols : rows;
                    int64_t stride = axis ? 1 : ld;
                    char what[64];
                    snprintf(what, sizeof what, "axis-%d sum %lldx%lld %s", axis,
                             (long long)rows, (long long)cols, kind_names[k]);
                    /* Every output of small shapes, a sample of large ones. */
                    for (int64_t o = 0; o < nout; o += nout > 200 ? nout / 97 : 1) {
                        const char *start = (const char *)x +
                                            (axis ? o * ld : o) * (int64_t)pk_test_size(t);
                        pk_test_xsum xs;
                        exact_sum(t, start, len, stride, &xs);
                        judge(t, &xs, pk_test_getf(t, out, o), numpy_sum(t, start, len, stride),
                              what, len);
                    }
                }
            }
            free(x);
            free(out);
        }
    }
}

static void dots(void)
{
    const int64_t ns[] = {1, 7, 9, 100, 129, 1000, 16385, 100003, (1 << 20) + 5};
    int64_t nmax = (1 << 20) + 5;
    void *x = pk_test_alloc((size_t)nmax * 8), *y = pk_test_alloc((size_t)nmax * 8);
    void *prod = pk_test_alloc((size_t)nmax * 8);
    for (int d = 0; d < 2; d++) {
        pk_dtype t = d ? PK_F64 : PK_F32;
        for (size_t si = 0; si < sizeof ns / sizeof *ns; si++) {
            int64_t n = ns[si];
            for (int k = 0; k < KINDS; k++) {
                if (k == GIANTS && n < 3) continue;
                fill(t, x, n, (enum kind)k);
                /* y near 1 keeps the products' structure (and range) of x. */
                for (int64_t i = 0; i < n; i++) pk_test_setf(t, y, i, pk_test_uniform(0.5, 1.5));
                if (k == GIANTS) { /* the giant products cancel exactly */
                    pk_test_setf(t, y, 0, 1.0);
                    pk_test_setf(t, y, 1, 1.0);
                }
                double out[1];
                pk_status s = pk_dot(ctx, t, n, x, y, out);
                PK_CHECK(s == PK_OK, "dot: %s", pk_ctx_error(ctx));
                pk_test_xsum xs;
                pk_test_xsum_init(&xs);
                for (int64_t i = 0; i < n; i++) {
                    double p, e;
                    pk_test_two_prod(pk_test_getf(t, x, i), pk_test_getf(t, y, i), &p, &e);
                    pk_test_xsum_add(&xs, p);
                    pk_test_xsum_add(&xs, e);
                    /* NumPy-style: products rounded to the dtype, summed pairwise. */
                    if (t == PK_F32)
                        ((float *)prod)[i] = ((const float *)x)[i] * ((const float *)y)[i];
                    else
                        ((double *)prod)[i] = ((const double *)x)[i] * ((const double *)y)[i];
                }
                char what[64];
                snprintf(what, sizeof what, "dot %s", kind_names[k]);
                judge(t, &xs, pk_test_getf(t, out, 0), numpy_sum(t, prod, n, 1), what, n);
            }
        }
    }
    free(x);
    free(y);
    free(prod);
}

/* Within the span pk keeps exactly, results are within an ulp of the exact
 * sum whatever NumPy does: rare cancelling pairs of giants of varied
 * mantissas (their partial sums round: ~2^-24 of them in f32) among O(1)
 * values. Before f32 error
 * terms were summed in f64 the giants' rounding errors swallowed the small
 * values: 30001 x 2 column sums 10^0..10^1 off. Whole sums, both axes
 * (every kernel path: block, lanes, sweep, rows) and dots. */
static void giants_within_span(void)
{
    const int64_t shapes[][3] = {{1, 100003, 100003}, {30001, 2, 2}, {1000, 37, 40},
                                 {2, 30001, 30001},    {100, 100, 100}, {20001, 16, 16},
                                 {3, 70000, 70001},    {4100, 130, 131}};
    for (int d = 0; d < 2; d++) {
        pk_dtype t = d ? PK_F64 : PK_F32;
        for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++) {
            int64_t rows = shapes[si][0], cols = shapes[si][1], ld = shapes[si][2];
            int64_t count = rows * ld, nmax = rows > cols ? rows : cols;
            void *x = pk_test_alloc((size_t)count * 8), *y = pk_test_alloc((size_t)count * 8);
            void *out = pk_test_alloc((size_t)nmax * 8);
            for (int axis = -1; axis < 2; axis++) {
                /* axis -1: the whole array as one sum and as a dot with y. */
                int64_t nout = axis < 0 ? 2 : axis ? rows : cols;
                int64_t nline = axis < 0 ? 1 : nout, len = axis < 0 ? count : axis ? cols : rows;
                for (int64_t i = 0; i < count; i++) {
                    pk_test_setf(t, x, i, pk_test_uniform(-1, 1));
                    pk_test_setf(t, y, i, pk_test_uniform(0.5, 1.5));
                }
                /* In each line, pairs g, -g at random places: the exact sum
                 * is O(1), the giants' partial sums are not exact. */
                for (int64_t o = 0; o < nline; o++)
                    for (int64_t k = 0; k < len / 32; k++) {
                        int64_t p = pk_test_below(len), q = pk_test_below(len);
                        p = axis < 0 ? p : axis ? o * ld + p : p * ld + o;
                        q = axis < 0 ? q : axis ? o * ld + q : q * ld + o;
                        if (p == q || fabs(pk_test_getf(t, x, p)) > 2 || fabs(pk_test_getf(t, x, q)) > 2)
                            continue;
                        double g = (pk_test_next() & 1 ? -1e10 : 1e10) * pk_test_uniform(1, 2);
                        pk_test_setf(t, x, p, g);
                        pk_test_setf(t, x, q, -g);
                        if (axis < 0) { /* the dot's products cancel too */
                            pk_test_setf(t, y, p, 1.0);
                            pk_test_setf(t, y, q, 1.0);
                        }
                    }
                pk_status s = axis < 0 ? pk_reduce(ctx, PK_SUM, t, x, count, out)
                                       : pk_reduce_axis(ctx, PK_SUM, t, x, rows, cols, ld, axis, out);
                PK_CHECK(s == PK_OK, "sum: %s", pk_ctx_error(ctx));
                if (axis < 0) {
                    s = pk_dot(ctx, t, count, x, y, (char *)out + pk_test_size(t));
                    PK_CHECK(s == PK_OK, "dot: %s", pk_ctx_error(ctx));
                }
                for (int64_t o = 0; o < nout; o++) {
                    pk_test_xsum xs;
                    pk_test_xsum_init(&xs);
                    for (int64_t i = 0; i < len; i++) {
                        int64_t at = axis < 0 ? i : axis ? o * ld + i : i * ld + o;
                        if (axis < 0 && o == 1) {
                            double p, e;
                            pk_test_two_prod(pk_test_getf(t, x, at), pk_test_getf(t, y, at), &p, &e);
                            pk_test_xsum_add(&xs, p);
                            pk_test_xsum_add(&xs, e);
                        } else {
                            pk_test_xsum_add(&xs, pk_test_getf(t, x, at));
                        }
                    }
                    double got = pk_test_getf(t, out, o), exact = pk_test_xsum_value(&xs);
                    double err = pk_test_xsum_err(&xs, got), ulp = pk_test_ulp(t, exact);
                    PK_CHECK(err <= ulp, "%s giants %lldx%lld ld %lld axis %d output %lld: |error| "
                             "%.3g > 1 ulp %.3g (got %.17g, exact %.17g)",
                             pk_dtype_name(t), (long long)rows, (long long)cols, (long long)ld,
                             axis, (long long)o, err, ulp, got, exact);
                }
            }
            free(x);
            free(y);
            free(out);
        }
    }
}

/* Sums with a known exact answer, through every entry point (pk_reduce,
 * both axes of pk_reduce_axis, pk_dot with ones), laid out at position 0 of
 * arrays of several lengths (zeros after), so that each length takes
 * another kernel path: the serial one, the block kernels, the short-row and
 * long-row kernels, the column sweeps. want: the correctly rounded sum. */
static void known_sum(pk_dtype t, const double *vals, int nv, double want, const char *what)
{
    static const int64_t lens[] = {3, 8, 16, 33, 64, 1000, 5000, 70001};
    const size_t es = pk_test_size(t);
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
        const int64_t n = lens[li];
        if (n < nv) continue;
        void *x = pk_test_alloc((size_t)n * es), *ones = pk_test_alloc((size_t)n * es);
        void *out = pk_test_alloc(3 * 8);
        for (int64_t i = 0; i < n; i++) {
            pk_test_setf(t, x, i, i < nv ? vals[i] : 0.0);
            pk_test_setf(t, ones, i, 1.0);
        }
        double got[4];
        pk_status s[4];
        s[0] = pk_reduce(ctx, PK_SUM, t, x, n, out);
        got[0] = pk_test_getf(t, out, 0);
        s[1] = pk_dot(ctx, t, n, x, ones, out);
        got[1] = pk_test_getf(t, out, 0);
        /* One row (axis 1) and one column (axis 0, ld 1) of the same data. */
        s[2] = pk_reduce_axis(ctx, PK_SUM, t, x, 1, n, n, 1, out);
        got[2] = pk_test_getf(t, out, 0);
        s[3] = pk_reduce_axis(ctx, PK_SUM, t, x, n, 1, 1, 0, out);
        got[3] = pk_test_getf(t, out, 0);
        static const char *const via[] = {"pk_reduce", "pk_dot", "axis 1", "axis 0"};
        for (int k = 0; k < 4; k++)
            PK_CHECK(s[k] == PK_OK && got[k] == want && signbit(got[k]) == signbit(want),
                     "%s %s n=%lld via %s: %a, want %a (%s)", pk_dtype_name(t), what,
                     (long long)n, via[k], got[k], want, pk_ctx_error(ctx));
        free(x), free(ones), free(out);
    }
}

static void known_sums(void)
{
    /* Rounded once: to double first, 1 + 2^-24 + 2^-60 became 1 + 2^-24,
     * a float midpoint, and then 1. */
    const double mid[] = {1.0, 0x1p-24, 0x1p-60};
    known_sum(PK_F32, mid, 3, 0x1.000002p0, "midpoint + tie-breaker");
    const double mid2[] = {1.0, -0x1p-48, 0, 0, 0x1p-24, 0x1p-48 + 0x1p-60, 0, 0};
    known_sum(PK_F32, mid2, 8, 0x1.000002p0, "midpoint over 8");
    const double below[] = {-1.0, -0x1p-24, 0x1p-60};
    known_sum(PK_F32, below, 3, -1.0, "midpoint, tie-breaker toward zero");
    /* f32 giants that overflow an f32 TwoSum: the small term must stay. */
    double g32[64] = {0};
    g32[0] = FLT_MAX, g32[1] = 1, g32[8] = -FLT_MAX, g32[32] = FLT_MAX, g32[40] = -FLT_MAX;
    known_sum(PK_F32, g32, 64, 1.0, "FLT_MAX giants");
    /* f64 giants whose partial sums overflow double although the sum is
     * small: the double-double tree alone gave Inf. */
    const double M = 0.75 * DBL_MAX;
    double g64[32] = {0};
    g64[0] = g64[1] = M, g64[8] = g64[9] = -M;
    known_sum(PK_F64, g64, 16, 0.0, "cancelling 0.75 DBL_MAX");
    g64[16] = g64[17] = M, g64[24] = g64[25] = -M, g64[2] = 1;
    known_sum(PK_F64, g64, 32, 1.0, "cancelling 0.75 DBL_MAX, + 1");
    g64[3] = 0x1p-1060; /* a subnormal among the giants */
    known_sum(PK_F64, g64, 32, 1.0, "cancelling 0.75 DBL_MAX, + 1 + subnormal");
    /* 1.5 + 1.5 - 1.25 = 1.75 (times 2^1023): the partial overflows, the
     * sum does not. */
    const double over[] = {0x1.8p1023, 0x1.8p1023, -0x1.4p1023};
    known_sum(PK_F64, over, 3, 0x1.cp1023, "overflowing partial, finite sum");
    /* Giants that cancel to a small residual, with smaller terms beside. */
    const double resid[] = {M, M, -M, -M, 0x1p-799, -0x1p-799, 0x1p-900};
    known_sum(PK_F64, resid, 7, 0x1p-900, "giants cancelling to a tiny sum");
    const double inf_sum[] = {M, M, 0.5 * M};
    known_sum(PK_F64, inf_sum, 3, INFINITY, "sum beyond DBL_MAX");
    /* Inf and NaN among giants stay as a plain sum gives them. */
    const double with_inf[] = {M, M, -M, -M, INFINITY};
    known_sum(PK_F64, with_inf, 5, INFINITY, "giants and Inf");
}

/* -0 + -0: +0 on every path (the sums start from +0), the two-row and
 * two-column axis sums included. */
static void negative_zeros(void)
{
    for (int f64 = 0; f64 < 2; f64++) {
        const pk_dtype t = f64 ? PK_F64 : PK_F32;
        for (int64_t len = 1; len <= 5; len++) {
            void *x = pk_test_alloc((size_t)(len * 5) * 8), *out = pk_test_alloc(5 * 8);
            for (int64_t i = 0; i < len * 5; i++) pk_test_setf(t, x, i, -0.0);
            for (int axis = 0; axis < 2; axis++) {
                const int64_t rows = axis == 0 ? len : 5, cols = axis == 0 ? 5 : len;
                pk_status s = pk_reduce_axis(ctx, PK_SUM, t, x, rows, cols, cols, axis, out);
                for (int64_t i = 0; i < 5; i++)
                    PK_CHECK(s == PK_OK && !signbit(pk_test_getf(t, out, i)),
                             "%s sum of %lld -0 (axis %d): %g", pk_dtype_name(t),
                             (long long)len, axis, pk_test_getf(t, out, i));
            }
            PK_CHECK(pk_reduce(ctx, PK_SUM, t, x, len, out) == PK_OK &&
                         !signbit(pk_test_getf(t, out, 0)),
                     "%s pk_reduce of %lld -0", pk_dtype_name(t), (long long)len);
            free(x), free(out);
        }
    }
}

int main(void)
{
    pk_test_init("test_accuracy");
    ctx = pk_test_cpu_ctx();
    printf("context: %s\n", pk_ctx_describe(ctx));
    sums();
    axis_sums();
    dots();
    giants_within_span();
    known_sums();
    negative_zeros();
    printf("%ld results compared with NumPy's pairwise error; %ld worse than NumPy "
           "but within half an ulp\n",
           compared, at_half_ulp);
    pk_ctx_destroy(ctx);
    return pk_test_finish("test_accuracy");
}
