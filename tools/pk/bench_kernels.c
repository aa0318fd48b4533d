/* `pk bench`'s kernel registry (bench_kernels.h) and the formulas of what a
 * case moves and computes. */
#include "bench.h"

#include <stdio.h>
#include <string.h>

#define ALL_DTYPES ((1u << PK_DTYPE_COUNT) - 1)
#define FLOATS (1u << PK_F32 | 1u << PK_F64)
#define F32 (1u << PK_F32)
#define MNK BENCH_COL_MNK
#define AXIS BENCH_COL_AXIS

/* pk_reduce's kernels are numbered as their op (add_case relies on it). */
_Static_assert(PK_BENCH_SUM == (int)PK_SUM && PK_BENCH_PROD == (int)PK_PROD &&
                   PK_BENCH_MIN == (int)PK_MIN && PK_BENCH_MAX == (int)PK_MAX &&
                   PK_BENCH_ARGMIN == (int)PK_ARGMIN && PK_BENCH_ARGMAX == (int)PK_ARGMAX,
               "pk_bench_kernel's reductions follow pk_op");

/* The entry of kernel id, at its index: id, name, family, dtypes, bits, CPU
 * runner, ops per element, unit, rate, columns. */
#define KERNEL(id, name, ...) [id] = {name, id, __VA_ARGS__}
#define REDUCE(id, name, unit)                                                                     \
    KERNEL(id, name, BENCH_F_REDUCE, ALL_DTYPES, 0, bench_cpu_run_memory, 1, unit,                 \
           BENCH_RATE_GBPS, 0)
const bench_kernel bench_kernels[PK_BENCH_NKERNELS] = {
    REDUCE(PK_BENCH_SUM, "sum", BENCH_UNIT_FLOP_FP),
    REDUCE(PK_BENCH_PROD, "prod", BENCH_UNIT_FLOP_FP),
    REDUCE(PK_BENCH_MIN, "min", BENCH_UNIT_OP),
    REDUCE(PK_BENCH_MAX, "max", BENCH_UNIT_OP),
    REDUCE(PK_BENCH_ARGMIN, "argmin", BENCH_UNIT_OP),
    REDUCE(PK_BENCH_ARGMAX, "argmax", BENCH_UNIT_OP),
    KERNEL(PK_BENCH_DOT, "dot", BENCH_F_BLAS1, FLOATS, 0, bench_cpu_run_memory, 2,
           BENCH_UNIT_FLOP, BENCH_RATE_GBPS, 0),
    KERNEL(PK_BENCH_AXPY, "axpy", BENCH_F_BLAS1, FLOATS, 0, bench_cpu_run_memory, 2,
           BENCH_UNIT_FLOP, BENCH_RATE_GBPS, 0),
    KERNEL(PK_BENCH_REDUCE_AXIS, "reduce_axis", BENCH_F_AXIS, ALL_DTYPES, 0,
           bench_cpu_run_memory, 1, BENCH_UNIT_FLOP_FP, BENCH_RATE_GBPS, AXIS | BENCH_COL_OP),
    KERNEL(PK_BENCH_GEMM, "gemm", BENCH_F_GEMM, FLOATS, 0, bench_cpu_run_gemm, 1,
           BENCH_UNIT_FLOP, BENCH_RATE_GFLOPS, MNK),
    /* the CPU has no TF32, and its FP32_ACCURATE is plain FP32 */
    KERNEL(PK_BENCH_GEMM_TF32, "gemm_tf32", BENCH_F_GEMM, F32, 0, NULL, 1, BENCH_UNIT_FLOP,
           BENCH_RATE_GFLOPS, MNK),
    KERNEL(PK_BENCH_GEMM_FP32_ACCURATE, "gemm_fp32_accurate", BENCH_F_GEMM, F32, 0, NULL, 1,
           BENCH_UNIT_FLOP, BENCH_RATE_GFLOPS, MNK),
    KERNEL(PK_BENCH_BGEMM, "bgemm", BENCH_F_BITS, 1u << PK_U64, 1, bench_cpu_run_bits, 1,
           BENCH_UNIT_BITOP, BENCH_RATE_TOPS, MNK),
    KERNEL(PK_BENCH_HAMMING_TOPK, "hamming_topk", BENCH_F_TOPK, 1u << PK_U64, 1,
           bench_cpu_run_bits, 1, BENCH_UNIT_BITOP, BENCH_RATE_TOPS, MNK),
    KERNEL(PK_BENCH_CUSTOM, "custom", BENCH_F_CUSTOM, F32, 0, bench_cpu_run_custom, 1,
           BENCH_UNIT_OP, BENCH_RATE_GBPS, AXIS | BENCH_COL_REDUCER),
};

int bench_is_compute(pk_bench_kernel k) { return bench_kernels[k].rate != BENCH_RATE_GBPS; }

int bench_is_bits(pk_bench_kernel k) { return bench_kernels[k].bits; }

int bench_kernel_takes_dtype(pk_bench_kernel k, int t, unsigned dtypes)
{
    if (bench_kernels[k].bits) return t == PK_U64;
    return ((dtypes ? dtypes : F32) & bench_kernels[k].dtypes) >> t & 1;
}

double bench_case_moved(const bench_case *bc, pk_backend backend)
{
    const pk_bench_case *c = &bc->c;
    const double sz = (double)pk_dtype_size(c->dtype);
    const int64_t m = c->rows, n = c->cols, k = c->k;
    switch (bench_kernels[c->id].family) {
    case BENCH_F_GEMM: /* A, B and C; CUDA's rows have always counted C twice:
                          kept, for their bytes to compare across runs */
        return sz * (double)(m * k + k * n + (backend == PK_BACKEND_CUDA ? 2 : 1) * m * n);
    case BENCH_F_BITS: /* packed operands; int32 distances */
        return (double)(m + n) * (double)pk_bits_words(k) * 8 + (double)m * (double)n * 4;
    case BENCH_F_TOPK: /* packed operands; topk (distance, index) pairs a query */
        return (double)(m + n) * (double)pk_bits_words(k) * 8 +
               (double)m * (double)c->topk * 12;
    case BENCH_F_CUSTOM: /* f32 inputs; one 4-byte output a line, or 8 bytes */
        return c->rows ? (double)c->n * 4 + (double)(c->axis ? m : n) * 4
                       : (double)c->n * 4 + 8;
    default: break;
    }
    /* The memory-bound kernels: their inputs, then their outputs (axpy's y
     * written back; one result a line along an axis). */
    const int axpy = c->id == PK_BENCH_AXPY, dot = c->id == PK_BENCH_DOT;
    const int64_t nout = c->id == PK_BENCH_REDUCE_AXIS ? (c->axis == 0 ? n : m)
                         : axpy                        ? c->n
                                                       : 1;
    const pk_dtype rt = dot || axpy ? c->dtype : pk_reduce_result_dtype(bc->op, c->dtype);
    return (double)c->n * sz * (dot || axpy ? 2 : 1) + (double)nout * (double)pk_dtype_size(rt);
}

double bench_case_ops(const bench_case *bc)
{
    const pk_bench_case *c = &bc->c;
    if (bench_is_compute(c->id)) return 2.0 * (double)c->rows * (double)c->cols * (double)c->k;
    return (double)c->n * bench_kernels[c->id].elem_ops;
}

/* ---- Names ------------------------------------------------------------ */

int bench_kernel_count(void) { return PK_BENCH_NKERNELS; }

int bench_kernel_find(const char *name)
{
    for (int k = 0; k < PK_BENCH_NKERNELS; k++)
        if (!strcmp(name, bench_kernels[k].name)) return k;
    return -1;
}

const char *bench_kernel_name(int k) { return bench_kernels[k].name; }

int bench_kernel_takes_size(int k)
{
    return bench_kernels[k].family != BENCH_F_AXIS && bench_kernels[k].family != BENCH_F_TOPK;
}

void bench_kernel_list(char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = 0;
    for (int k = 0; k < PK_BENCH_NKERNELS && at < len; k++)
        at += (size_t)snprintf(buf + at, len - at, "%s%s", k ? " " : "", bench_kernels[k].name);
}
