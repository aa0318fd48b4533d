/* User-defined reductions on the CPU: operators and dtypes against
 * reference loops, the non-commutative case, ARG, both axes, C function
 * callbacks, the same bits for every thread count, compile errors and bad
 * arguments (tests/reducer_cases.h holds the cases shared with the GPU). */
#include "reducer_cases.h"

static void *host_mem(size_t bytes) { return pk_test_alloc(bytes); }
static void host_put(void *d, const void *s, size_t bytes) { if (bytes) memcpy(d, s, bytes); }
static void host_release(void *p) { free(p); }

static double sq(double x, int64_t i, void *u) { (void)i, (void)u; return x * x; }
static double add(double a, double b, void *u) { (void)u; return a + b; }
static double half(double r, void *u) { return r * *(double *)u; }
/* non-commutative: the later non-NaN wins */
static double last(double a, double b, void *u) { (void)u; return isnan(b) ? a : b; }

static void callbacks(pk_ctx *ctx)
{
    int64_t n = 300007;
    double *x = pk_test_alloc((size_t)n * 8), h = 0.5;
    long double ref = 0;
    for (int64_t i = 0; i < n; i++) x[i] = pk_test_uniform(-1, 1), ref += (long double)x[i] * x[i];
    pk_reducer_desc d = {.input = PK_F64, .acc = PK_F64, .map_fn = sq, .combine_fn = add,
                         .final_fn = half, .user = &h};
    pk_reducer *r = NULL;
    double out = 0;
    PK_CHECK(pk_reducer_create(ctx, &d, &r) == PK_OK, "callbacks: %s", pk_ctx_error(ctx));
    PK_CHECK(pk_reducer_reduce(ctx, r, x, n, &out) == PK_OK, "%s", pk_ctx_error(ctx));
    PK_CHECK(fabs(out - (double)(ref / 2)) <= 1e-12 * (double)ref, "callbacks %.17g vs %.17Lg",
             out, ref / 2);
    pk_reducer_destroy(r);
    /* mixed: expression map, C combine */
    pk_reducer_desc m = {.input = PK_F64, .acc = PK_F64, .map = "x < 0 ? NAN : x",
                         .combine_fn = last, .identity = NAN};
    PK_CHECK(pk_reducer_create(ctx, &m, &r) == PK_OK, "mixed: %s", pk_ctx_error(ctx));
    double want = NAN;
    for (int64_t i = 0; i < n; i++) if (x[i] >= 0) want = x[i];
    PK_CHECK(pk_reducer_reduce(ctx, r, x, n, &out) == PK_OK && out == want,
             "mixed last %.17g vs %.17g", out, want);
    pk_reducer_destroy(r);
    pk_reducer_desc both = {.input = PK_F64, .acc = PK_F64, .combine = "a+b", .combine_fn = add};
    PK_CHECK(pk_reducer_create(ctx, &both, &r) == PK_ERR_ARG, "expr and fn");
    free(x);
}

/* The same bits for 1..8 threads, for the lane path (a+b), the tree path
 * and ARG. */
static void determinism(pk_ctx *ctx)
{
    int64_t n = 3000017;
    float *x = pk_test_alloc((size_t)n * 4);
    for (int64_t i = 0; i < n; i++) x[i] = (float)pk_test_uniform(-1, 1);
    const char *comb[3] = {"a + b", "a + b*1", "fmax(a, b)"};
    pk_reducer_kind kind[3] = {PK_REDUCER_VALUE, PK_REDUCER_VALUE, PK_REDUCER_ARG};
    for (int a = 0; a < 2; a++)
        for (int c = 0; c < 3; c++) {
            pk_dtype acc = a ? PK_F64 : PK_F32;
            pk_reducer *r = rc_make(ctx, PK_F32, acc, kind[c], "x*x - 0.25", comb[c],
                                    kind[c] ? -INFINITY : 0, NULL);
            if (!r) continue;
            double first = 0;
            for (int t = 1; t <= 8; t++) {
                double out = 0;
                pk_ctx_set_threads(ctx, t);
                PK_CHECK(pk_reducer_reduce(ctx, r, x, n, &out) == PK_OK, "%s", pk_ctx_error(ctx));
                if (t == 1) first = out;
                PK_CHECK(!memcmp(&out, &first, 8), "threads %d %s acc %s: bits differ", t,
                         comb[c], pk_dtype_name(acc));
            }
            pk_ctx_set_threads(ctx, 0);
            pk_reducer_destroy(r);
        }
    free(x);
}

int main(void)
{
    pk_test_init("test_reducer");
    pk_ctx *ctx = pk_test_cpu_ctx();
    rc_sums(ctx, host_mem, host_put, host_release);
    rc_order(ctx, host_mem, host_put, host_release);
    rc_axes(ctx, host_mem, host_put, host_put, host_release);
    rc_errors(ctx);
    callbacks(ctx);
    determinism(ctx);
    pk_reducer *r = NULL;
    pk_reducer_desc d = {.input = PK_F32, .acc = PK_F32, .combine = "a+b"};
    PK_CHECK(pk_reducer_create(ctx, &d, &r) == PK_OK, "create");
    pk_reducer_info info;
    pk_reducer_get_info(r, &info);
    PK_CHECK(info.origin == PK_REDUCER_INTERPRETED, "origin %d", (int)info.origin);
    pk_reducer_destroy(r);
    pk_ctx_destroy(ctx);
    return pk_test_finish("test_reducer");
}
