/* The CPU kernel table. src/cpu/kernels/reduce_kernels.c is compiled once
 * per ISA (avx512, avx2, generic) into one table each; src/cpu/reference.c
 * holds plain serial loops with the same interface. The drivers in src/cpu
 * pick a table at run time (src/cpu/isa.c). */
#ifndef PK_CPU_KERNELS_H
#define PK_CPU_KERNELS_H

#include "pk.h"

#include "../../core/acc_type.h"

/* Elements per block of the whole-array reduction: partials are made per
 * block, at positions fixed by the data, and combined in order. */
#define PK__BLOCK 16384
/* Columns per task in axis-0 reductions, at most. A task's running values
 * (one state per column) live in the caller's 64-byte aligned scratch of
 * PK__COL_WORK(cols) bytes: three 8-byte arrays (slots) of cols, each
 * rounded up to whole lines. */
#define PK__COL_CHUNK 8192
/* Axis-0 tasks of at most this many rows are shallow: 512 columns, swept
 * row by row (reduce_kernels.c). */
#define PK__SHALLOW_SWEEP 128
#define PK__COL_SLOT(cols) ((int64_t)8 * (((cols) + 7) & ~(int64_t)7))
#define PK__COL_WORK(cols) (3 * PK__COL_SLOT(cols))
/* Lanes of the f32 sum's block kernel (2 vectors of 16; lane k and k + 16
 * always share a column when the width divides this). */
#define PK__SUM_LANES 16
/* Rows of at most this many columns use the short-row kernel on axis 1. */
#define PK__SHORT_ROW 64

/* f64 sums (dots when y) that came out Inf or NaN from finite terms, redone
 * without overflow (src/cpu/sum_rescue.c): out[i], i < nout, is the sum of
 * x[i * step + j] (times y[j]), j < len; strided: *out is the sum of
 * x[j * stride], j < n (checked: the terms are known to be finite). */
void pk__cpu_rescue_sums_f64(const double *x, const double *y, int64_t nout, int64_t step,
                             int64_t len, double *out);
void pk__cpu_rescue_strided_f64(const double *x, int64_t n, int64_t stride, int checked,
                                double *out);

/* src/cpu/exact.c. The exact sum of x[i] (times y[i] when y), i < n, of
 * dtype t (F32, F64), as the double-double (rounded sum, rounded rest) in
 * *acc; 0 when a term or a partial is not finite (*acc untouched). */
int pk__cpu_exact_sum(pk_dtype t, const void *x, const void *y, int64_t n, pk__acc *acc);
/* Results out[i], i < nout, of op over x + i * step (elements of t), len
 * elements stride apart: a float sum's or product's NaN becomes the default
 * NaN (0x7fc00000, 0x7ff8000000000000), and a float product that is Inf,
 * NaN, 0 or subnormal is redone over the exact range (so that every path
 * gives the same). Other ops and dtypes: nothing. */
void pk__cpu_fix_results(pk_op op, pk_dtype t, const void *x, int64_t nout, int64_t step,
                         int64_t len, int64_t stride, void *out);
/* The default NaN for each NaN among out[i], i < n (F32 / F64 only). */
void pk__cpu_canon_nan(pk_dtype t, void *out, int64_t n);

typedef struct pk__reduce_fns {
    /* acc = reduction of x[0..n), n >= 1; base = global index of x[0]. */
    void (*block)(const void *x, int64_t n, int64_t base, pk__acc *acc);
    /* acc[c] = reduction of column c over rows [0, rows), c < cols <=
     * PK__COL_CHUNK; row0 = global index of row 0 (for arg ops). With out
     * != NULL the final values go to out[c] (result dtype) instead. work:
     * PK__COL_WORK(cols) bytes of 64-byte aligned scratch. */
    void (*cols)(const void *x, int64_t rows, int64_t cols, int64_t ld,
                 int64_t row0, pk__acc *acc, void *out, void *work);
    /* out[r] = final value of the reduction of row r, cols >= 1. */
    void (*rows)(const void *x, int64_t rows, int64_t cols, int64_t ld,
                 void *out);
    /* *a = *a followed by *b (a covers earlier elements). */
    void (*combine)(pk__acc *a, const pk__acc *b);
    /* Write the result dtype's value of *a to out. */
    void (*finish)(const pk__acc *a, void *out);
    /* The partial of an empty range (SUM and PROD only). */
    void (*empty)(pk__acc *a);
} pk__reduce_fns;

typedef struct pk__cpu_kernels {
    const char *name;
    pk__reduce_fns reduce[PK_OP_COUNT][PK_DTYPE_COUNT];
    /* Index 0: f32, 1: f64. combine/finish/empty are those of PK_SUM. */
    void (*dot_block[2])(const void *x, const void *y, int64_t n,
                         pk__acc *acc);
    void (*axpy[2])(int64_t n, const void *alpha, const void *x, void *y);
    /* out[i] = a[i * stride] + b[i * stride] for i < n, in the sum's result
     * dtype: a sum of two elements is one rounding, the closest result.
     * stream: write out with non-temporal stores (a large output). */
    void (*sum_pair[PK_DTYPE_COUNT])(const void *a, const void *b, int64_t stride,
                                     int64_t n, int stream, void *out);
    /* acc[c] = the f32 sum of x[i], i = c mod cols, for cols dividing
     * PK__SUM_LANES: the whole-array block kernel with its lanes kept per
     * column. NULL in the reference table. f64 is left out: its block
     * kernel compensates without the second error sum that column sums
     * of cancelling giants need (see the axis-0 kernels). */
    void (*sum_lanes_f32)(const void *x, int64_t n, int64_t cols, pk__acc *acc);
    /* The GEMM microkernels and packing (gemm.h); NULL: reference loops. */
    const struct pk__gemm_kernels *gemm;
    /* The user-defined reductions' loops (udr_kernels.h). */
    const struct pk__udr_kernels *udr;
} pk__cpu_kernels;

extern const pk__cpu_kernels pk__cpu_kernels_avx512;
/* The same with L1 streaming hints (vec.h: PK__PREFETCH_L1_PROFILE). */
extern const pk__cpu_kernels pk__cpu_kernels_avx512_l1;
extern const pk__cpu_kernels pk__cpu_kernels_avx2;
extern const pk__cpu_kernels pk__cpu_kernels_generic;
extern const pk__cpu_kernels pk__cpu_kernels_reference;

#endif
