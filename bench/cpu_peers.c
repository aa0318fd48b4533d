/* The CPU peers and ceilings of `pk bench` and `pk info` (cpu_peers.h). */
#include "cpu_peers.h"
#include "cpu_loops.h"

#include <limits.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <time.h>

#ifdef PK_HAVE_OPENBLAS
#include <cblas.h>
#endif

double pk_bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The loops compiled for the path pk uses (reference runs generic). */
static const pk_bench_loops *loops(void)
{
    const char *isa = pk_cpu_isa();
    if (strcmp(isa, "avx512") == 0) return &pk_bench_loops_avx512;
    if (strcmp(isa, "avx2") == 0) return &pk_bench_loops_avx2;
    return &pk_bench_loops_generic;
}

const char *pk_peer_loop_isa(void) { return loops()->isa; }

int pk_peer_loop_reduce(pk_op op, pk_dtype t, const void *x, int64_t n,
                        void *out)
{
    return loops()->reduce(op, t, x, n, out);
}

int pk_peer_loop_dot(pk_dtype t, int64_t n, const void *x, const void *y,
                     void *out)
{
    return loops()->dot(t, n, x, y, out);
}

int pk_peer_loop_axpy(pk_dtype t, int64_t n, const void *alpha,
                      const void *x, void *y)
{
    return loops()->axpy(t, n, alpha, x, y);
}

#ifdef PK_HAVE_OPENBLAS
const char *pk_peer_blas_config(void) { return openblas_get_config(); }

const char *pk_peer_blas_better_coretype(void)
{
    if (getenv("OPENBLAS_CORETYPE") || strcasecmp(openblas_get_corename(), "prescott") != 0)
        return NULL;
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl"))
        return "SkylakeX";
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
    return NULL;
}

int pk_peer_blas_set_threads(int n)
{
    openblas_set_num_threads(n);
    return openblas_get_num_threads();
}

int pk_peer_blas_dot(pk_dtype t, int64_t n, const void *x, const void *y,
                     void *out)
{
    if (n > INT_MAX) return -1;
    if (t == PK_F32) *(float *)out = cblas_sdot((int)n, x, 1, y, 1);
    else if (t == PK_F64) *(double *)out = cblas_ddot((int)n, x, 1, y, 1);
    else return -1;
    return 0;
}

int pk_peer_blas_axpy(pk_dtype t, int64_t n, const void *alpha,
                      const void *x, void *y)
{
    if (n > INT_MAX) return -1;
    if (t == PK_F32) cblas_saxpy((int)n, *(const float *)alpha, x, 1, y, 1);
    else if (t == PK_F64) cblas_daxpy((int)n, *(const double *)alpha, x, 1, y, 1);
    else return -1;
    return 0;
}

int pk_peer_blas_sgemm_pm1(int64_t m, int64_t n, int64_t k, const float *A,
                           const float *B, float *C)
{
    if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX) return -1;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)m, (int)n, (int)k, 1.0f, A,
                (int)k, B, (int)k, 0.0f, C, (int)n);
    return 0;
}

int pk_peer_blas_gemm(pk_dtype t, int ta, int tb, int64_t m, int64_t n,
                      int64_t k, const void *alpha, const void *A, int64_t lda,
                      const void *B, int64_t ldb, const void *beta, void *C,
                      int64_t ldc)
{
    if (m > INT_MAX || n > INT_MAX || k > INT_MAX || lda > INT_MAX ||
        ldb > INT_MAX || ldc > INT_MAX)
        return -1;
    enum CBLAS_TRANSPOSE a = ta ? CblasTrans : CblasNoTrans;
    enum CBLAS_TRANSPOSE b = tb ? CblasTrans : CblasNoTrans;
    if (t == PK_F32)
        cblas_sgemm(CblasRowMajor, a, b, (int)m, (int)n, (int)k,
                    *(const float *)alpha, A, (int)lda, B, (int)ldb,
                    *(const float *)beta, C, (int)ldc);
    else if (t == PK_F64)
        cblas_dgemm(CblasRowMajor, a, b, (int)m, (int)n, (int)k,
                    *(const double *)alpha, A, (int)lda, B, (int)ldb,
                    *(const double *)beta, C, (int)ldc);
    else return -1;
    return 0;
}
#else
int pk_peer_blas_sgemm_pm1(int64_t m, int64_t n, int64_t k, const float *A,
                           const float *B, float *C)
{
    (void)m, (void)n, (void)k, (void)A, (void)B, (void)C;
    return -1;
}
const char *pk_peer_blas_config(void) { return NULL; }
const char *pk_peer_blas_better_coretype(void) { return NULL; }
int pk_peer_blas_set_threads(int n) { (void)n; return 0; }
int pk_peer_blas_dot(pk_dtype t, int64_t n, const void *x, const void *y,
                     void *out)
{
    (void)t, (void)n, (void)x, (void)y, (void)out;
    return -1;
}
int pk_peer_blas_axpy(pk_dtype t, int64_t n, const void *alpha,
                      const void *x, void *y)
{
    (void)t, (void)n, (void)alpha, (void)x, (void)y;
    return -1;
}
int pk_peer_blas_gemm(pk_dtype t, int ta, int tb, int64_t m, int64_t n,
                      int64_t k, const void *alpha, const void *A, int64_t lda,
                      const void *B, int64_t ldb, const void *beta, void *C,
                      int64_t ldc)
{
    (void)t, (void)ta, (void)tb, (void)m, (void)n, (void)k, (void)alpha;
    (void)A, (void)lda, (void)B, (void)ldb, (void)beta, (void)C, (void)ldc;
    return -1;
}
#endif

double pk_cpu_fma_peak(pk_dtype t)
{
    const pk_bench_loops *l = loops();
    double flops = 0, best = 0;
    int64_t iters = 1 << 14;
    l->fma(t, iters, &flops); /* warm-up: wakes the team, raises the clock */
    for (int pass = 0; pass < 10; pass++) { /* best of 10: other processes */
        double s = l->fma(t, iters, &flops);
        if (s < 5e-3 && iters < ((int64_t)1 << 30)) iters *= 2, pass--;
        else if (flops / s > best) best = flops / s;
    }
    return best;
}

int pk_cpu_ceilings(size_t bytes, int reps, double *read_gbps,
                    double *copy_gbps)
{
    size_t align = (size_t)2 << 20;
    bytes = (bytes + align - 1) / align * align;
    uint64_t *buf;
    if (posix_memalign((void **)&buf, align, bytes) != 0) return -1;
    madvise(buf, bytes, MADV_HUGEPAGE); /* fewer TLB misses; a hint only */
    int64_t n = (int64_t)(bytes / 8);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) buf[i] = (uint64_t)i * 0x9E3779B97F4A7C15ull + 1;

    const pk_bench_loops *l = loops();
    volatile uint64_t sink = 0;
    double best_read = 0, best_copy = 0;
    size_t half = bytes / 2;
    for (int r = 0; r <= reps; r++) { /* pass 0 warms up */
        double t0 = pk_bench_now();
        sink += l->read(buf, n);
        double t1 = pk_bench_now();
#pragma omp parallel
        {
            /* Each thread copies its own slice of the first half. */
            int nt = omp_get_num_threads(), id = omp_get_thread_num();
            size_t per = (half / (size_t)nt + 63) & ~(size_t)63;
            size_t at = per * (size_t)id;
            if (at < half) {
                size_t len = half - at < per ? half - at : per;
                memcpy((char *)buf + half + at, (char *)buf + at, len);
            }
        }
        double t2 = pk_bench_now();
        if (r == 0) continue;
        double rd = (double)bytes / (t1 - t0) * 1e-9;
        double cp = 2.0 * (double)half / (t2 - t1) * 1e-9;
        if (rd > best_read) best_read = rd;
        if (cp > best_copy) best_copy = cp;
    }
    (void)sink;
    free(buf);
    *read_gbps = best_read;
    *copy_gbps = best_copy;
    return 0;
}
