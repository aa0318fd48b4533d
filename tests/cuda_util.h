/* Helpers of the CUDA tests (tests/test_cuda_*.c): a CUDA context or a clean
 * skip, device memory through the CUDA runtime's C API (when tests/cuda.cmake
 * defines PK_TEST_CUDA; without it the tests run their host-pointer cases
 * only), random data by dtype, and independent references computed on the
 * host in higher precision. Nothing here calls pk's kernels. */
#ifndef PK_TEST_CUDA_UTIL_H
#define PK_TEST_CUDA_UTIL_H

#include "util.h"

#include <float.h>
#include <stdbool.h>

#ifdef PK_TEST_CUDA
#include <cuda_runtime_api.h>
#endif

/* A CUDA context on device 0, or exit 77 (skipped) with the reason. */
static inline pk_ctx *cu_ctx(void)
{
    pk_ctx *ctx = NULL;
    pk_status s = pk_ctx_create(&ctx, PK_BACKEND_CUDA, 0);
    if (s == PK_ERR_NO_DEVICE) {
        printf("skipped: %s\n", pk_last_create_error());
        exit(PK_TEST_SKIP);
    }
    if (s != PK_OK) {
        printf("FAIL: pk_ctx_create(CUDA): %s: %s\n", pk_status_str(s),
               pk_last_create_error());
        exit(1);
    }
    return ctx;
}

/* Uniform integer in [0, n). */
static inline int64_t cu_below(int64_t n)
{
    return n <= 0 ? 0 : (int64_t)(pk_test_next() % (uint64_t)n);
}

static inline size_t cu_size(pk_dtype t) { return pk_dtype_size(t); }
static inline bool cu_is_float(pk_dtype t) { return t == PK_F32 || t == PK_F64; }

static inline void *cu_host(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        printf("FAIL: malloc(%zu)\n", bytes);
        exit(1);
    }
    return p;
}

/* ---- device memory (PK_TEST_CUDA only) ----------------------------------- */

#ifdef PK_TEST_CUDA
#define CU_HAVE_RT 1
#define CU_OK(call)                                                          \
    do {                                                                     \
        cudaError_t e_ = (call);                                             \
        if (e_ != cudaSuccess) {                                             \
            printf("FAIL %s:%d: %s: %s\n", __FILE__, __LINE__, #call,        \
                   cudaGetErrorString(e_));                                  \
            exit(1);                                                         \
        }                                                                    \
    } while (0)
static inline void *cu_dev(size_t bytes)
{
    void *p = NULL;
    CU_OK(cudaMalloc(&p, bytes ? bytes : 16));
    return p;
}
static inline void cu_free(void *p) { CU_OK(cudaFree(p)); }
static inline void cu_put(void *dst, const void *src, size_t bytes)
{
    CU_OK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
}
static inline void cu_get(void *dst, const void *src, size_t bytes)
{
    CU_OK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
}
/* The device's free memory once its work is done (the leak checks). */
static inline size_t cu_free_memory(void)
{
    size_t fr = 0, total = 0;
    CU_OK(cudaDeviceSynchronize());
    CU_OK(cudaMemGetInfo(&fr, &total));
    return fr;
}
#else
#define CU_HAVE_RT 0
static inline void *cu_dev(size_t bytes) { (void)bytes; return NULL; }
static inline void cu_free(void *p) { (void)p; }
static inline void cu_put(void *d, const void *s, size_t b) { (void)d, (void)s, (void)b; }
static inline void cu_get(void *d, const void *s, size_t b) { (void)d, (void)s, (void)b; }
static inline size_t cu_free_memory(void) { return 0; }
#endif

/* Say once why device-pointer cases do not run. */
static inline void cu_note_no_rt(void)
{
    if (!CU_HAVE_RT)
        printf("note: built without PK_TEST_CUDA (tests/cuda.cmake not included): "
               "device-pointer cases skipped, host-pointer cases run\n");
}

/* ---- data ------------------------------------------------------------------ */

static inline double cu_getf(pk_dtype t, const void *x, int64_t i)
{
    return t == PK_F32 ? (double)((const float *)x)[i] : ((const double *)x)[i];
}
static inline void cu_setf(pk_dtype t, void *x, int64_t i, double v)
{
    if (t == PK_F32) ((float *)x)[i] = (float)v;
    else ((double *)x)[i] = v;
}
/* Integer element i extended to 64 bits by its signedness. */
static inline uint64_t cu_getu(pk_dtype t, const void *x, int64_t i)
{
    switch (t) {
    case PK_I32: return (uint64_t)(int64_t)((const int32_t *)x)[i];
    case PK_I64: return (uint64_t)((const int64_t *)x)[i];
    case PK_U32: return ((const uint32_t *)x)[i];
    default: return ((const uint64_t *)x)[i];
    }
}

/* Random elements: floats in [lo, hi), integers over their whole range. */
static inline void cu_fill(pk_dtype t, void *x, int64_t n, double lo, double hi)
{
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = pk_test_next();
        switch (t) {
        case PK_F32: ((float *)x)[i] = (float)pk_test_uniform(lo, hi); break;
        case PK_F64: ((double *)x)[i] = pk_test_uniform(lo, hi); break;
        case PK_I32: ((int32_t *)x)[i] = (int32_t)(uint32_t)r; break;
        case PK_U32: ((uint32_t *)x)[i] = (uint32_t)r; break;
        case PK_I64: ((int64_t *)x)[i] = (int64_t)r; break;
        default: ((uint64_t *)x)[i] = r; break;
        }
    }
}

/* ---- references ------------------------------------------------------------ */

/* Neumaier's compensated sum in double of terms fed one at a time, plus the
 * sum of magnitudes (for error bounds) and non-finite handling as a plain
 * sum would do. */
typedef struct cu_sum {
    double s, c, mag, special;
    bool has_special;
} cu_sum;

static inline void cu_sum_add(cu_sum *a, double x)
{
    if (!isfinite(x)) {
        a->special += x;
        a->has_special = true;
        return;
    }
    double t = a->s + x;
    if (fabs(a->s) >= fabs(x)) a->c += (a->s - t) + x;
    else a->c += (x - t) + a->s;
    a->s = t;
    a->mag += fabs(x);
}
static inline double cu_sum_value(const cu_sum *a)
{
    return a->has_special ? a->special : a->s + a->c;
}

/* Whether a better than b for min (want_max = 0) / max, NumPy's NaN rules. */
static inline bool cu_better(pk_dtype t, bool want_max, const void *x, int64_t a,
                             int64_t b)
{
    if (cu_is_float(t)) {
        double va = cu_getf(t, x, a), vb = cu_getf(t, x, b);
        if (isnan(vb)) return false;
        if (isnan(va)) return true;
        return want_max ? va > vb : va < vb;
    }
    uint64_t ua = cu_getu(t, x, a), ub = cu_getu(t, x, b);
    if (t == PK_I32 || t == PK_I64)
        return want_max ? (int64_t)ua > (int64_t)ub : (int64_t)ua < (int64_t)ub;
    return want_max ? ua > ub : ua < ub;
}

/* Check got (a value of the result dtype of op on t) against the reduction of
 * x[i*stride], i < n. Returns true when it matches within the documented
 * accuracy: integers and order ops exactly, f32 sums within one f32 ulp of
 * the exact sum, f64 sums within 2 ulps plus the compensated bound, products
 * within a relative bound. */
static inline bool cu_check(pk_op op, pk_dtype t, const void *x, int64_t n,
                            int64_t stride, const void *got, char *why,
                            size_t whylen)
{
    why[0] = '\0';
    if (op == PK_ARGMIN || op == PK_ARGMAX || op == PK_MIN || op == PK_MAX) {
        bool mx = op == PK_ARGMAX || op == PK_MAX;
        int64_t best = 0;
        for (int64_t i = 1; i < n; i++)
            if (cu_better(t, mx, x, i * stride, best * stride)) best = i;
        if (op == PK_ARGMIN || op == PK_ARGMAX) {
            int64_t g = *(const int64_t *)got;
            snprintf(why, whylen, "index %lld, expected %lld", (long long)g,
                     (long long)best);
            return g == best;
        }
        size_t sz = cu_size(t);
        const char *want = (const char *)x + best * stride * (int64_t)sz;
        if (cu_is_float(t)) {
            double g = cu_getf(t, got, 0), w = cu_getf(t, want, 0);
            snprintf(why, whylen, "%.17g, expected %.17g", g, w);
            return (isnan(g) && isnan(w)) || g == w;
        }
        snprintf(why, whylen, "%llu, expected %llu",
                 (unsigned long long)cu_getu(t, got, 0),
                 (unsigned long long)cu_getu(t, want, 0));
        return memcmp(got, want, sz) == 0;
    }
    if (!cu_is_float(t)) {
        uint64_t acc = op == PK_SUM ? 0 : 1;
        for (int64_t i = 0; i < n; i++) {
            uint64_t v = cu_getu(t, x, i * stride);
            acc = op == PK_SUM ? acc + v : acc * v;
        }
        uint64_t g = *(const uint64_t *)got;
        snprintf(why, whylen, "%llu, expected %llu", (unsigned long long)g,
                 (unsigned long long)acc);
        return g == acc;
    }
    double g = cu_getf(t, got, 0);
    if (op == PK_PROD) {
        long double p = 1.0L;
        for (int64_t i = 0; i < n; i++) p *= (long double)cu_getf(t, x, i * stride);
        /* The exact product rounded to the result dtype (underflow and
         * overflow included); subnormal results are compared absolutely. */
        double w = t == PK_F32 ? (double)(float)p : (double)p;
        snprintf(why, whylen, "%.17g, expected %.17g", g, w);
        if (isnan(w) || isnan(g)) return isnan(w) && isnan(g);
        if (isinf(w)) return g == w;
        double tol = t == PK_F32 ? 0x1p-22 : (double)(n + 4) * 0x1p-52;
        double tiny = t == PK_F32 ? 2.0 * 0x1p-149 : 2.0 * 0x1p-1074;
        return fabs(g - w) <= tol * fabs(w) + tiny;
    }
    cu_sum a = {0};
    for (int64_t i = 0; i < n; i++) cu_sum_add(&a, cu_getf(t, x, i * stride));
    double w = cu_sum_value(&a);
    snprintf(why, whylen, "%.17g, expected %.17g", g, w);
    if (a.has_special) return (isnan(w) && isnan(g)) || g == w;
    if (t == PK_F32) {
        float wf = (float)w;
        double ulp = (double)nextafterf(fabsf(wf), INFINITY) - fabs((double)wf);
        return fabs(g - w) <= ulp;
    }
    double ulp = nextafter(fabs(w), INFINITY) - fabs(w);
    return fabs(g - w) <= 2 * ulp + 4.0 * (double)n * 0x1p-104 * a.mag + DBL_MIN;
}

#endif
