/* pk_dot and pk_axpy on the CUDA backend: dots against a compensated host
 * reference (f32 within one f32 ulp of the exact value), the same bits on
 * every run and for every pointer kind; axpy bitwise against the host's
 * y = (alpha*x rounded) + y rounded, and against the CPU backend, with x and y
 * in host or device memory, x == y, unaligned pointers; NaN and Inf. */
#include "cuda_util.h"

static const int64_t sizes[] = {0,     1,     2,     3,     5,      255,    256,
                                257,   1023,  1024,  1025,  4097,   16385,  65537,
                                262147, 1000003, 3000001};
#define NSIZES (int)(sizeof sizes / sizeof sizes[0])

/* PK_TEST_QUICK (set under compute-sanitizer): small sizes only. */
static int64_t max_n(void) { return getenv("PK_TEST_QUICK") ? 70000 : INT64_MAX; }

static bool dot_ok(pk_dtype t, const void *x, const void *y, int64_t n,
                   const void *got, char *why, size_t len)
{
    cu_sum a = {0};
    for (int64_t i = 0; i < n; i++) {
        double xi = cu_getf(t, x, i), yi = cu_getf(t, y, i);
        double p = xi * yi, e = fma(xi, yi, -p); /* p + e == xi*yi exactly */
        cu_sum_add(&a, p);
        if (isfinite(p)) cu_sum_add(&a, e);
    }
    double w = cu_sum_value(&a), g = cu_getf(t, got, 0);
    snprintf(why, len, "%.17g, expected %.17g", g, w);
    if (a.has_special) return (isnan(w) && isnan(g)) || g == w;
    if (t == PK_F32) {
        float wf = (float)w;
        return fabs(g - w) <= (double)nextafterf(fabsf(wf), INFINITY) - fabs((double)wf);
    }
    double ulp = nextafter(fabs(w), INFINITY) - fabs(w);
    return fabs(g - w) <= 2 * ulp + 8.0 * (double)n * 0x1p-104 * a.mag + DBL_MIN;
}

static pk_status run_dot(pk_ctx *ctx, pk_dtype t, int64_t n, const void *x,
                         const void *y, int out_dev, void *res)
{
    if (!out_dev) return pk_dot(ctx, t, n, x, y, res);
    void *d = cu_dev(16);
    pk_status s = pk_dot(ctx, t, n, x, y, d);
    if (s == PK_OK) s = pk_ctx_sync(ctx);
    cu_get(res, d, cu_size(t));
    cu_free(d);
    return s;
}

static void check_dot(pk_ctx *ctx)
{
    char why[256];
    for (int ti = 0; ti < 2; ti++) {
        pk_dtype t = ti ? PK_F64 : PK_F32;
        size_t sz = cu_size(t);
        for (int si = 0; si < NSIZES; si++) {
            int64_t n = sizes[si];
            if (n > max_n()) continue;
            size_t bytes = (size_t)n * sz;
            void *hx = cu_host(bytes), *hy = cu_host(bytes);
            cu_fill(t, hx, n, -1.0, 1.0);
            cu_fill(t, hy, n, -1.0, 1.0);
            void *dx = NULL, *dy = NULL;
            if (CU_HAVE_RT) {
                dx = cu_dev(bytes);
                dy = cu_dev(bytes);
                cu_put(dx, hx, bytes);
                cu_put(dy, hy, bytes);
            }
            unsigned char first[8];
            /* c: bit 0 x on device, bit 1 y on device, bit 2 out on device */
            for (int c = 0; c < (CU_HAVE_RT ? 8 : 1); c++) {
                const void *x = c & 1 ? dx : hx, *y = c & 2 ? dy : hy;
                unsigned char res[8], again[8];
                pk_status s = run_dot(ctx, t, n, x, y, c >> 2, res);
                PK_CHECK(s == PK_OK, "dot %s n=%lld combo %d: %s", pk_dtype_name(t),
                         (long long)n, c, pk_ctx_error(ctx));
                if (s) continue;
                PK_CHECK(dot_ok(t, hx, hy, n, res, why, sizeof why),
                         "dot %s n=%lld combo %d: %s", pk_dtype_name(t), (long long)n, c,
                         why);
                if (c == 0) memcpy(first, res, sz);
                PK_CHECK(memcmp(first, res, sz) == 0, "dot %s n=%lld combo %d: other bits",
                         pk_dtype_name(t), (long long)n, c);
                run_dot(ctx, t, n, x, y, c >> 2, again);
                PK_CHECK(memcmp(again, res, sz) == 0, "dot %s n=%lld: second run differs",
                         pk_dtype_name(t), (long long)n);
            }
            /* x == y */
            unsigned char r1[8];
            PK_CHECK(pk_dot(ctx, t, n, hx, hx, r1) == PK_OK, "%s", pk_ctx_error(ctx));
            PK_CHECK(dot_ok(t, hx, hx, n, r1, why, sizeof why), "dot x.x %s n=%lld: %s",
                     pk_dtype_name(t), (long long)n, why);
            if (dx) cu_free(dx), cu_free(dy);
            free(hx), free(hy);
        }
        /* NaN and Inf */
        int64_t n = 5003;
        size_t bytes = (size_t)n * sz;
        void *hx = cu_host(bytes), *hy = cu_host(bytes);
        for (int kind = 0; kind < 3; kind++) {
            cu_fill(t, hx, n, -1.0, 1.0);
            cu_fill(t, hy, n, -1.0, 1.0);
            cu_setf(t, hx, cu_below(n), kind == 0 ? NAN : INFINITY);
            if (kind == 2) cu_setf(t, hy, cu_below(n), -INFINITY);
            unsigned char res[8];
            PK_CHECK(pk_dot(ctx, t, n, hx, hy, res) == PK_OK, "%s", pk_ctx_error(ctx));
            PK_CHECK(dot_ok(t, hx, hy, n, res, why, sizeof why), "dot special %d %s: %s",
                     kind, pk_dtype_name(t), why);
        }
        free(hx), free(hy);
    }
}

/* The host's axpy, one rounding each (volatile keeps the compiler from
 * fusing whatever its flags). */
static void axpy_ref(pk_dtype t, int64_t n, double alpha, const void *x, void *y)
{
    for (int64_t i = 0; i < n; i++) {
        if (t == PK_F32) {
            volatile float p = (float)alpha * ((const float *)x)[i];
            ((float *)y)[i] = p + ((float *)y)[i];
        } else {
            volatile double p = alpha * ((const double *)x)[i];
            ((double *)y)[i] = p + ((double *)y)[i];
        }
    }
}

static void check_axpy(pk_ctx *ctx)
{
    pk_ctx *cpu = NULL;
    PK_CHECK(pk_ctx_create(&cpu, PK_BACKEND_CPU, 0) == PK_OK, "%s", pk_last_create_error());
    for (int ti = 0; ti < 2; ti++) {
        pk_dtype t = ti ? PK_F64 : PK_F32;
        size_t sz = cu_size(t);
        for (int si = 0; si < NSIZES; si++) {
            int64_t n = sizes[si];
            if (n > max_n()) continue;
            size_t bytes = (size_t)n * sz;
            void *hx = cu_host(bytes + 16), *hy0 = cu_host(bytes + 16);
            void *want = cu_host(bytes + 16), *got = cu_host(bytes + 16);
            void *hy = cu_host(bytes + 16);
            cu_fill(t, hx, n + 1, -1.0, 1.0);
            cu_fill(t, hy0, n + 1, -1.0, 1.0);
            double alpha = pk_test_uniform(-2.0, 2.0);
            float af = (float)alpha;
            const void *ap = t == PK_F32 ? (const void *)&af : (const void *)&alpha;
            if (t == PK_F32) alpha = af;
            memcpy(want, hy0, bytes);
            axpy_ref(t, n, alpha, hx, want);
            /* c: bit 0 x on device, bit 1 y on device, bit 2 unaligned
             * (device pointers one element in). */
            for (int c = 0; c < (CU_HAVE_RT ? 8 : 1); c++) {
                size_t off = (c & 4) ? sz : 0;
                void *dx = NULL, *dy = NULL;
                if (CU_HAVE_RT) {
                    dx = cu_dev(bytes + 16);
                    dy = cu_dev(bytes + 16);
                    cu_put((char *)dx + off, hx, bytes);
                    cu_put((char *)dy + off, hy0, bytes);
                }
                memcpy(hy, hy0, bytes);
                const void *x = c & 1 ? (const void *)((char *)dx + off) : hx;
                void *y = c & 2 ? (void *)((char *)dy + off) : hy;
                pk_status s = pk_axpy(ctx, t, n, ap, x, y);
                if (s == PK_OK) s = pk_ctx_sync(ctx);
                PK_CHECK(s == PK_OK, "axpy %s n=%lld combo %d: %s", pk_dtype_name(t),
                         (long long)n, c, pk_ctx_error(ctx));
                if (c & 2) cu_get(got, (char *)dy + off, bytes);
                else memcpy(got, hy, bytes);
                PK_CHECK(memcmp(got, want, bytes) == 0, "axpy %s n=%lld combo %d: bits differ",
                         pk_dtype_name(t), (long long)n, c);
                if (dx) cu_free(dx), cu_free(dy);
            }
            /* The CPU backend gives the same bits. */
            memcpy(got, hy0, bytes);
            if (cpu) PK_CHECK(pk_axpy(cpu, t, n, ap, hx, got) == PK_OK, "%s", pk_ctx_error(cpu));
            PK_CHECK(!cpu || memcmp(got, want, bytes) == 0, "axpy %s n=%lld: CPU differs",
                     pk_dtype_name(t), (long long)n);
            /* x == y, in host and device memory. */
            memcpy(want, hy0, bytes);
            axpy_ref(t, n, alpha, hy0, want);
            memcpy(hy, hy0, bytes);
            PK_CHECK(pk_axpy(ctx, t, n, ap, hy, hy) == PK_OK, "%s", pk_ctx_error(ctx));
            PK_CHECK(memcmp(hy, want, bytes) == 0, "axpy x==y host %s n=%lld", pk_dtype_name(t),
                     (long long)n);
            if (CU_HAVE_RT) {
                void *d = cu_dev(bytes + 16);
                cu_put(d, hy0, bytes);
                PK_CHECK(pk_axpy(ctx, t, n, ap, d, d) == PK_OK, "%s", pk_ctx_error(ctx));
                PK_CHECK(pk_ctx_sync(ctx) == PK_OK, "%s", pk_ctx_error(ctx));
                cu_get(got, d, bytes);
                PK_CHECK(memcmp(got, want, bytes) == 0, "axpy x==y device %s n=%lld",
                         pk_dtype_name(t), (long long)n);
                cu_free(d);
            }
            free(hx), free(hy0), free(want), free(got), free(hy);
        }
    }
    pk_ctx_destroy(cpu);
}

int main(void)
{
    pk_test_init("test_cuda_blas1");
    pk_ctx *ctx = cu_ctx();
    cu_note_no_rt();
    check_dot(ctx);
    check_axpy(ctx);
    pk_ctx_destroy(ctx);
    return pk_test_finish("test_cuda_blas1");
}
