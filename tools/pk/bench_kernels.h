/* `pk bench`'s kernel registry (bench_kernels.c): one entry per kernel with
 * its name, id, family, dtypes, backends, CPU runner, and what its rows
 * measure and show (bytes, operations, rate, output columns). Everything
 * else asks the registry or switches on the id; nothing compares names.
 *
 * Adding a kernel: an id in bench/gpu.h (pk_bench_kernel), an entry in
 * bench_kernels.c, a CPU runner (bench.h) and a CUDA runner reached from
 * pk_bench_gpu_run's switch (bench/gpu_bench.cu); its cases in
 * bench_plan.c. A new family also needs its bytes and operations
 * (bench_kernels.c), its case id and size column (report.c) and its
 * memory estimate (bench_plan.c). */
#ifndef PK_BENCH_KERNELS_H
#define PK_BENCH_KERNELS_H

#include "gpu.h"

#include "pk.h"

struct bench_case;
struct bench_cpu;
struct bench_device;
struct bench_row;

/* What a kernel's case is made of; picks the case id, the size column, the
 * CUDA runner and the formulas. */
typedef enum bench_family {
    BENCH_F_REDUCE, /* pk_reduce: n elements to one result */
    BENCH_F_BLAS1,  /* dot, axpy: two vectors of n */
    BENCH_F_AXIS,   /* reduce_axis: rows x cols along an axis */
    BENCH_F_GEMM,   /* m x n x k, floating point */
    BENCH_F_BITS,   /* bgemm: m x n x k bits */
    BENCH_F_TOPK,   /* hamming_topk: m queries, n codes of k bits, topk */
    BENCH_F_CUSTOM  /* user-defined reductions: k picks the reducer; n
                       elements, or rows x cols along an axis */
} bench_family;

/* The rate column: bytes (memory-bound kernels) or operations per second. */
typedef enum bench_rate { BENCH_RATE_GBPS, BENCH_RATE_GFLOPS, BENCH_RATE_TOPS } bench_rate;

/* What its operations count (ops_unit). */
typedef enum bench_unit {
    BENCH_UNIT_OP,      /* compares, integer and user-defined operations */
    BENCH_UNIT_FLOP,
    BENCH_UNIT_FLOP_FP, /* flop on f32 and f64, op on integers */
    BENCH_UNIT_BITOP
} bench_unit;

/* The columns of its rows beyond the common ones (JSON keys, CSV cells). */
enum {
    BENCH_COL_MNK = 1,    /* m, k and topk (when set); n is n of m x n x k */
    BENCH_COL_AXIS = 2,   /* rows, cols, axis: the cases with rows */
    BENCH_COL_OP = 4,     /* JSON: the op (reduce_axis times sums) */
    BENCH_COL_REDUCER = 8 /* the user-defined reducer */
};

/* A CPU runner: one case measured into row (bench_cpu_run calls it). */
typedef void bench_cpu_runner(struct bench_cpu *b, pk_ctx *ctx, const struct bench_case *c,
                              const struct bench_device *dev, struct bench_row *row);

typedef struct bench_kernel {
    const char *name;
    pk_bench_kernel id;  /* its index in bench_kernels */
    bench_family family;
    unsigned dtypes;     /* bit per pk_dtype: those it takes (--dtype picks
                            among them; f32 by default) */
    int bits;            /* bit matrices in u64 words: dtype column "b1",
                            --dtype does not apply */
    bench_cpu_runner *cpu; /* NULL: CUDA only */
    int elem_ops;        /* operations per element where the runner counts
                            none (every row but the timed compute ones) */
    bench_unit unit;
    bench_rate rate;
    unsigned cols;       /* BENCH_COL_* */
} bench_kernel;

extern const bench_kernel bench_kernels[PK_BENCH_NKERNELS];

static inline const bench_kernel *bench_kernel_of(const pk_bench_case *c)
{
    return &bench_kernels[c->id];
}

/* 1 for the kernels measured in operations per second (gemm*, bgemm,
 * hamming_topk) rather than bytes per second. */
int bench_is_compute(pk_bench_kernel k);
/* 1 for the bit-matrix kernels (bgemm, hamming_topk). */
int bench_is_bits(pk_bench_kernel k);
/* 1 when kernel k runs dtype t; dtypes: the --dtype set, 0 for f32. */
int bench_kernel_takes_dtype(pk_bench_kernel k, int t, unsigned dtypes);

/* Bytes a call must move (inputs read + outputs written) on a backend. */
double bench_case_moved(const struct bench_case *c, pk_backend backend);
/* Operations of one call: 2mnk for the compute kernels, elem_ops per
 * element otherwise. */
double bench_case_ops(const struct bench_case *c);

int bench_kernel_count(void);
int bench_kernel_find(const char *name); /* -1 when unknown */
const char *bench_kernel_name(int k);
/* 0 for the kernels with shapes of their own (reduce_axis, hamming_topk). */
int bench_kernel_takes_size(int k);
/* The kernels' names, space-separated. */
void bench_kernel_list(char *buf, size_t len);

#endif
