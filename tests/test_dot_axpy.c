/* pk_dot and pk_axpy, f32 and f64, many sizes. dot: within one ulp of the
 * exact dot (products split exactly, summed exactly), x == y allowed, NaN
 * and Inf as NumPy (NaN propagates, Inf*0 and Inf-Inf give NaN), n = 0
 * gives 0. axpy: every element bit-equal to round(round(alpha*x) + y) (no
 * fused multiply-add), x == y allowed, x and y misaligned (1 and 3 elements
 * past malloc's alignment), x never written, nothing written
 * past y[n-1], n = 0 writes nothing. */
#include "util.h"

static pk_ctx *ctx;

/* axpy walks 2^16 f32 / 2^15 f64 elements or more as two halves in turns
 * (the l1 profile, vec.h): 32767/32768 and 65535/65536 cross the threshold,
 * 100003 (one thread, below PK__PAR_MIN) ends both halves in partial turns
 * and leaves a tail; 65536 is also the multi-threaded driver's chunk. */
static const int64_t sizes[] = {0,     1,     2,     3,     7,     8,     9,      15,
                                16,    17,    31,    32,    33,    63,    64,     65,
                                127,   128,   129,   1000,  4095,  4096,  4097,   16383,
                                16384, 16385, 32767, 32768, 32769, 65535, 65536,  65537,
                                100003, 131073, 1000003};
#define NSIZES (int)(sizeof sizes / sizeof *sizes)
#define NMAX 1000003

static void check_dot(pk_dtype t, const void *x, const void *y, int64_t n, const char *what)
{
    unsigned char out[16];
    memset(out, 0xA5, sizeof out);
    pk_status s = pk_dot(ctx, t, n, x, y, out);
    PK_CHECK(s == PK_OK, "dot %s n=%lld: %s", pk_dtype_name(t), (long long)n, pk_ctx_error(ctx));
    for (size_t i = pk_test_size(t); i < sizeof out; i++)
        PK_CHECK(out[i] == 0xA5, "dot %s wrote past its result", pk_dtype_name(t));
    pk_test_xsum xs;
    pk_test_xsum_init(&xs);
    bool nan = false;
    for (int64_t i = 0; i < n; i++) {
        double a = pk_test_getf(t, x, i), b = pk_test_getf(t, y, i), p, e;
        if (!isfinite(a * b)) { /* NaN, Inf, Inf*0 */
            nan |= isnan(a * b);
            pk_test_xsum_add(&xs, a * b);
            continue;
        }
        pk_test_two_prod(a, b, &p, &e);
        pk_test_xsum_add(&xs, p);
        pk_test_xsum_add(&xs, e);
    }
    double got = pk_test_getf(t, out, 0), exact = pk_test_xsum_value(&xs);
    if (t == PK_F32) exact = (float)exact;
    if (nan || xs.has_special || !isfinite(exact)) {
        PK_CHECK((isnan(got) && isnan(exact)) || got == exact, "dot %s n=%lld %s: got %g, want %g",
                 pk_dtype_name(t), (long long)n, what, got, exact);
        return;
    }
    double err = pk_test_xsum_err(&xs, got);
    PK_CHECK(err <= pk_test_ulp(t, exact), "dot %s n=%lld %s: got %.17g, exact %.17g",
             pk_dtype_name(t), (long long)n, what, got, exact);
}

static void dots(void)
{
    double *x = pk_test_alloc(NMAX * 8), *y = pk_test_alloc(NMAX * 8);
    for (int d = 0; d < 2; d++) {
        pk_dtype t = d ? PK_F64 : PK_F32;
        for (int si = 0; si < NSIZES; si++) {
            int64_t n = sizes[si];
            for (int64_t i = 0; i < n; i++) {
                pk_test_setf(t, x, i, pk_test_uniform(-1, 1));
                pk_test_setf(t, y, i, pk_test_uniform(-1, 1));
            }
            check_dot(t, x, y, n, "uniform");
            check_dot(t, x, x, n, "x == y");
            if (n == 0) continue;
            int64_t at = pk_test_below(n), at2 = pk_test_below(n);
            pk_test_setf(t, x, at, NAN);
            check_dot(t, x, y, n, "NaN in x");
            pk_test_setf(t, x, at, INFINITY);
            check_dot(t, x, y, n, "Inf in x");
            pk_test_setf(t, y, at, 0.0);
            check_dot(t, x, y, n, "Inf * 0");
            pk_test_setf(t, y, at, 1.0);
            if (at2 != at) {
                pk_test_setf(t, y, at2, -INFINITY);
                pk_test_setf(t, x, at2, 2.0);
                check_dot(t, x, y, n, "Inf - Inf");
            }
        }
    }
    /* n = 0 gives 0, with NULL inputs. */
    double out = 5;
    PK_CHECK(pk_dot(ctx, PK_F64, 0, NULL, NULL, &out) == PK_OK && out == 0.0, "empty dot");
    float outf = 5;
    PK_CHECK(pk_dot(ctx, PK_F32, 0, NULL, NULL, &outf) == PK_OK && outf == 0.0f, "empty dot");
    free(x);
    free(y);
}

/* Every element of y bit-equal to round(round(alpha*x0) + y0); at most three
 * mismatches reported. */
static void check_axpy(pk_dtype t, int64_t n, double alpha, const void *x0,
                       const void *y0, const void *y, const char *what)
{
    size_t sz = pk_test_size(t);
    int bad = 0;
    for (int64_t i = 0; i < n && bad < 3; i++) {
        unsigned char want[8];
        if (t == PK_F32) {
            float p = (float)alpha * ((const float *)x0)[i];
            float w = p + ((const float *)y0)[i];
            memcpy(want, &w, 4);
        } else {
            double p = alpha * ((const double *)x0)[i];
            double w = p + ((const double *)y0)[i];
            memcpy(want, &w, 8);
        }
        if (!pk_test_same_float(t, (const unsigned char *)y + i * sz, want)) {
            bad++;
            PK_CHECK(false, "axpy %s n=%lld alpha=%g%s: y[%lld] = %.17g, want %.17g",
                     pk_dtype_name(t), (long long)n, alpha, what, (long long)i,
                     pk_test_getf(t, y, i), pk_test_getf(t, want, 0));
        }
    }
}

/* x and y 1 and 3 elements past malloc's alignment, long enough for the
 * kernel's two halves (vec.h): no load or store may assume alignment. */
static void axpy_offsets(void)
{
    const int64_t n = 100003;
    for (int d = 0; d < 2; d++) {
        pk_dtype t = d ? PK_F64 : PK_F32;
        size_t sz = pk_test_size(t);
        unsigned char *xb = pk_test_alloc((size_t)(n + 4) * sz);
        unsigned char *yb = pk_test_alloc((size_t)(n + 4) * sz);
        unsigned char *y0 = pk_test_alloc((size_t)(n + 4) * sz);
        unsigned char *x = xb + sz, *y = yb + 3 * sz;
        for (int64_t i = 0; i < n; i++) {
            pk_test_setf(t, x, i, pk_test_uniform(-1, 1));
            pk_test_setf(t, y, i, pk_test_uniform(-1, 1));
        }
        memcpy(y0, y, (size_t)n * sz);
        double alpha = pk_test_uniform(-3, 3);
        float af = (float)alpha;
        if (t == PK_F32) alpha = af;
        const void *ap = t == PK_F32 ? (const void *)&af : (const void *)&alpha;
        pk_status s = pk_axpy(ctx, t, n, ap, x, y);
        PK_CHECK(s == PK_OK, "axpy: %s", pk_ctx_error(ctx));
        check_axpy(t, n, alpha, x, y0, y, " (x, y misaligned)");
        free(xb);
        free(yb);
        free(y0);
    }
}

static void axpys(void)
{
    size_t bytes = (NMAX + 4) * 8;
    unsigned char *x = pk_test_alloc(bytes), *y = pk_test_alloc(bytes);
    unsigned char *x0 = pk_test_alloc(bytes), *y0 = pk_test_alloc(bytes);
    for (int d = 0; d < 2; d++) {
        pk_dtype t = d ? PK_F64 : PK_F32;
        size_t sz = pk_test_size(t);
        for (int si = 0; si < NSIZES; si++) {
            int64_t n = sizes[si];
            for (int rep = 0; rep < 6; rep++) {
                double alpha = rep == 0 ? 0.0 : rep == 1 ? 1.0 : rep == 2 ? -1.0
                                                               : pk_test_uniform(-3, 3);
                for (int64_t i = 0; i < n + 4; i++) {
                    pk_test_setf(t, x, i, pk_test_uniform(-1, 1) * (rep == 5 ? 1e30 : 1));
                    pk_test_setf(t, y, i, pk_test_uniform(-1, 1));
                }
                if (rep == 4 && n > 2) { /* specials pass through */
                    pk_test_setf(t, x, pk_test_below(n), NAN);
                    pk_test_setf(t, x, pk_test_below(n), INFINITY);
                    pk_test_setf(t, y, pk_test_below(n), -INFINITY);
                }
                memcpy(x0, x, (size_t)(n + 4) * sz);
                memcpy(y0, y, (size_t)(n + 4) * sz);
                float af = (float)alpha;
                const void *ap = t == PK_F32 ? (const void *)&af : (const void *)&alpha;
                for (int alias = 0; alias < 2; alias++) {
                    if (alias) memcpy(y, y0, (size_t)(n + 4) * sz);
                    const void *xin = alias ? y : x;
                    pk_status s = pk_axpy(ctx, t, n, ap, xin, y);
                    PK_CHECK(s == PK_OK, "axpy: %s", pk_ctx_error(ctx));
                    check_axpy(t, n, alpha, alias ? y0 : x0, y0, y, alias ? " (x == y)" : "");
                    PK_CHECK(memcmp(y + n * sz, y0 + n * sz, 4 * sz) == 0,
                             "axpy %s n=%lld wrote past y[n-1]", pk_dtype_name(t), (long long)n);
                    if (!alias)
                        PK_CHECK(memcmp(x, x0, (size_t)(n + 4) * sz) == 0,
                                 "axpy %s n=%lld wrote x", pk_dtype_name(t), (long long)n);
                }
            }
        }
    }
    /* n = 0 writes nothing and accepts NULL arrays. */
    double a = 2;
    PK_CHECK(pk_axpy(ctx, PK_F64, 0, &a, NULL, NULL) == PK_OK, "empty axpy");
    free(x);
    free(y);
    free(x0);
    free(y0);
}

int main(void)
{
    pk_test_init("test_dot_axpy");
    ctx = pk_test_cpu_ctx();
    printf("context: %s\n", pk_ctx_describe(ctx));
    dots();
    axpys();
    axpy_offsets();
    pk_ctx_destroy(ctx);
    return pk_test_finish("test_dot_axpy");
}
