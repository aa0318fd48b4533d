/* The omp-loop peers, compiled once per SIMD path (cpu_loops.c); the table
 * symbol of each path is pk_bench_loops_<isa>. */
#ifndef PK_BENCH_CPU_LOOPS_H
#define PK_BENCH_CPU_LOOPS_H

#include "pk.h"

#include <stdint.h>

typedef struct pk_bench_loops {
    const char *isa;
    int (*reduce)(pk_op op, pk_dtype t, const void *x, int64_t n, void *out);
    int (*dot)(pk_dtype t, int64_t n, const void *x, const void *y, void *out);
    int (*axpy)(pk_dtype t, int64_t n, const void *alpha, const void *x,
                void *y);
    /* Read-bandwidth kernel: the wrapping sum of x[0..n). */
    uint64_t (*read)(const uint64_t *x, int64_t n);
    /* FMA throughput: seconds for `iters` rounds of FMA_PEAK_CHAINS
     * independent vector FMA chains on every OpenMP thread; *flops gets the
     * floating-point operations done (2 per lane per FMA). */
    double (*fma)(pk_dtype t, int64_t iters, double *flops);
} pk_bench_loops;

extern const pk_bench_loops pk_bench_loops_avx512;
extern const pk_bench_loops pk_bench_loops_avx2;
extern const pk_bench_loops pk_bench_loops_generic;

#endif
