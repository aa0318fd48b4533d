/* The plain OpenMP loops pk is measured against (see cpu_peers.h). This file
 * is compiled once per SIMD path with that path's flags; PK_LOOPS_SYMBOL and
 * PK_LOOPS_ISA name the table it defines. Each loop is the one a user would
 * write: `#pragma omp parallel for simd reduction(op:acc)`, with an
 * accumulator of the result dtype (so f32 sums accumulate in f32). */
#include "cpu_loops.h"

#include <omp.h>
#include <string.h>
#include <time.h>

static double pk_loops_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Integer sums and products wrap modulo 2^64, as pk's: accumulate in
 * uint64_t. Floats accumulate in their own type. */
#define FOR_DTYPES(X)                  \
    X(f32, PK_F32, float, float)       \
    X(f64, PK_F64, double, double)     \
    X(i32, PK_I32, int32_t, uint64_t)  \
    X(i64, PK_I64, int64_t, uint64_t)  \
    X(u32, PK_U32, uint32_t, uint64_t) \
    X(u64, PK_U64, uint64_t, uint64_t)

/* argmin/argmax: each thread scans its static chunk (first occurrence wins
 * within it), then the team keeps the best value, lowest index on ties. */
#define ARG_LOOP(D, T, NAME, BETTER)                                        \
    static void NAME##_##D(const T *x, int64_t n, int64_t *out)             \
    {                                                                       \
        T best = x[0];                                                      \
        int64_t best_i = 0;                                                 \
        _Pragma("omp parallel")                                             \
        {                                                                   \
            T v = x[0];                                                     \
            int64_t vi = 0;                                                 \
            _Pragma("omp for schedule(static) nowait")                      \
            for (int64_t i = 0; i < n; i++)                                 \
                if (BETTER(x[i], v)) v = x[i], vi = i;                      \
            _Pragma("omp critical")                                         \
            if (BETTER(v, best) || (v == best && vi < best_i))              \
                best = v, best_i = vi;                                      \
        }                                                                   \
        *out = best_i;                                                      \
    }
#define LESS(a, b) ((a) < (b))
#define GREATER(a, b) ((a) > (b))

#define DEFINE_LOOPS(D, E, T, AT)                                           \
    static void sum_##D(const T *x, int64_t n, void *out)                   \
    {                                                                       \
        AT s = 0;                                                           \
        _Pragma("omp parallel for simd reduction(+:s)")                     \
        for (int64_t i = 0; i < n; i++) s += (AT)x[i];                      \
        memcpy(out, &s, sizeof s);                                          \
    }                                                                       \
    static void prod_##D(const T *x, int64_t n, void *out)                  \
    {                                                                       \
        AT p = 1;                                                           \
        _Pragma("omp parallel for simd reduction(*:p)")                     \
        for (int64_t i = 0; i < n; i++) p *= (AT)x[i];                      \
        memcpy(out, &p, sizeof p);                                          \
    }                                                                       \
    static void min_##D(const T *x, int64_t n, void *out)                   \
    {                                                                       \
        T m = x[0];                                                         \
        _Pragma("omp parallel for simd reduction(min:m)")                   \
        for (int64_t i = 0; i < n; i++) m = x[i] < m ? x[i] : m;            \
        memcpy(out, &m, sizeof m);                                          \
    }                                                                       \
    static void max_##D(const T *x, int64_t n, void *out)                   \
    {                                                                       \
        T m = x[0];                                                         \
        _Pragma("omp parallel for simd reduction(max:m)")                   \
        for (int64_t i = 0; i < n; i++) m = x[i] > m ? x[i] : m;            \
        memcpy(out, &m, sizeof m);                                          \
    }                                                                       \
    ARG_LOOP(D, T, argmin, LESS)                                            \
    ARG_LOOP(D, T, argmax, GREATER)
FOR_DTYPES(DEFINE_LOOPS)

static int loops_reduce(pk_op op, pk_dtype t, const void *x, int64_t n,
                        void *out)
{
    if (n < 1) return -1;
    switch (t) {
#define CASE(D, E, T, AT)                                                  \
    case E:                                                                 \
        switch (op) {                                                       \
        case PK_SUM: sum_##D(x, n, out); return 0;                          \
        case PK_PROD: prod_##D(x, n, out); return 0;                        \
        case PK_MIN: min_##D(x, n, out); return 0;                          \
        case PK_MAX: max_##D(x, n, out); return 0;                          \
        case PK_ARGMIN: argmin_##D(x, n, out); return 0;                    \
        case PK_ARGMAX: argmax_##D(x, n, out); return 0;                    \
        default: return -1;                                                 \
        }
        FOR_DTYPES(CASE)
#undef CASE
    default:
        return -1;
    }
}

#define DEFINE_BLAS1(D, T)                                                  \
    static void dot_##D(int64_t n, const T *x, const T *y, T *out)          \
    {                                                                       \
        T s = 0;                                                            \
        _Pragma("omp parallel for simd reduction(+:s)")                     \
        for (int64_t i = 0; i < n; i++) s += x[i] * y[i];                   \
        *out = s;                                                           \
    }                                                                       \
    static void axpy_##D(int64_t n, T a, const T *x, T *y)                  \
    {                                                                       \
        _Pragma("omp parallel for simd")                                    \
        for (int64_t i = 0; i < n; i++) y[i] += a * x[i];                   \
    }
DEFINE_BLAS1(f32, float)
DEFINE_BLAS1(f64, double)

static int loops_dot(pk_dtype t, int64_t n, const void *x, const void *y,
                     void *out)
{
    if (t == PK_F32) dot_f32(n, x, y, out);
    else if (t == PK_F64) dot_f64(n, x, y, out);
    else return -1;
    return 0;
}

static int loops_axpy(pk_dtype t, int64_t n, const void *alpha, const void *x,
                      void *y)
{
    if (t == PK_F32) axpy_f32(n, *(const float *)alpha, x, y);
    else if (t == PK_F64) axpy_f64(n, *(const double *)alpha, x, y);
    else return -1;
    return 0;
}

static uint64_t loops_read(const uint64_t *x, int64_t n)
{
    uint64_t s = 0;
#pragma omp parallel for simd reduction(+:s)
    for (int64_t i = 0; i < n; i++) s += x[i];
    return s;
}

/* The compute ceiling of GEMM: many independent FMA chains per thread, all
 * threads, with vectors as wide as the path's registers. The values converge to a
 * fixed point (x * 0.999 + 1e-3), never overflow or go subnormal. */
#if defined(__AVX512F__)
#define PEAK_BYTES 64
#elif defined(__AVX__)
#define PEAK_BYTES 32
#else
#define PEAK_BYTES 16
#endif
/* 12 chains: >= 2 units x 4 cycles, and with m and c they fit in 16
 * registers (AVX2, SSE2). Named variables, each pinned to a register by an
 * empty asm, so that nothing is folded or spilled. */
#define PEAK_CHAINS 12
#define PEAK_X(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#define PEAK_DECL(i) , a##i = m + (i)
#define PEAK_STEP(i) a##i = a##i * m + c; __asm__("" : "+v"(a##i));
#define PEAK_SUM(i) + a##i
#define DEFINE_PEAK(D, T)                                                   \
    typedef T peak_##D __attribute__((vector_size(PEAK_BYTES)));            \
    static __attribute__((noinline)) T chains_##D(int64_t iters)            \
    {                                                                       \
        peak_##D m = (peak_##D){0} + (T)0.999,                              \
                 c = (peak_##D){0} + (T)1e-3 PEAK_X(PEAK_DECL);             \
        for (int64_t r = 0; r < iters; r++) { PEAK_X(PEAK_STEP) }           \
        peak_##D s = m PEAK_X(PEAK_SUM);                                    \
        return s[0];                                                        \
    }                                                                       \
    static double fma_##D(int64_t iters, double *flops)                    \
    {                                                                       \
        double t0 = 0, t1 = 0;                                              \
        volatile T sink = 0;                                                \
        int nt = 1;                                                         \
        _Pragma("omp parallel")                                             \
        {                                                                   \
            _Pragma("omp barrier")                                          \
            _Pragma("omp master")                                           \
            t0 = pk_loops_now();                                            \
            T r = chains_##D(iters);                                        \
            if (r < 0) sink = r; /* never: the values stay positive */     \
            _Pragma("omp barrier")                                          \
            _Pragma("omp master")                                           \
            {                                                               \
                t1 = pk_loops_now();                                        \
                nt = omp_get_num_threads();                                 \
            }                                                               \
        }                                                                   \
        (void)sink;                                                         \
        *flops = 2.0 * (double)nt * (double)iters * PEAK_CHAINS *           \
                 (double)(PEAK_BYTES / sizeof(T));                          \
        return t1 - t0;                                                     \
    }
DEFINE_PEAK(f32, float)
DEFINE_PEAK(f64, double)

static double loops_fma(pk_dtype t, int64_t iters, double *flops)
{
    return t == PK_F64 ? fma_f64(iters, flops) : fma_f32(iters, flops);
}

const pk_bench_loops PK_LOOPS_SYMBOL = {
    .isa = PK_LOOPS_ISA,
    .reduce = loops_reduce,
    .dot = loops_dot,
    .axpy = loops_axpy,
    .read = loops_read,
    .fma = loops_fma,
};
