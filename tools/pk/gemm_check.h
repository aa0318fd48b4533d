/* `pk gemm --check`: the result against a reference in higher precision. */
#ifndef PK_GEMM_CHECK_H
#define PK_GEMM_CHECK_H

#include "pk.h"

#include <stddef.h>

typedef struct gemm_check_args {
    pk_dtype t; /* PK_F32 or PK_F64 */
    pk_gemm_mode mode;
    int ta, tb;
    int64_t m, n, k;
    double alpha;
    const void *A;
    int64_t lda;
    const void *B;
    int64_t ldb;
    double beta;
    const void *C0; /* NULL: no beta*C0 term */
    const void *C;  /* the result, m x n, row-major, ld = n */
} gemm_check_args;

/* The largest over the elements of
 *   max(0, |C - ref| - (k+2) * tiny) / (|alpha| sum_l |a_il b_lj| + |beta| |c0|)
 * with ref = alpha*op(A)*op(B) + beta*C0 from exact products summed in
 * double for f32 inputs (errors 2^29 times below f32's) and in long double
 * for f64; tiny = the dtype's smallest normal number (absorbs flushed
 * subnormals). NaN and infinities must match the reference's (rounded to
 * the dtype) exactly, else the error is infinite. A zero denominator allows
 * only the slack. Returns 0 with *err set, or -1 when there is no memory
 * for the reference (op(A) and op(B) as doubles: gemm_check_bytes). */
int gemm_max_rel_error(const gemm_check_args *g, double *err);
/* The bytes the reference allocates. */
double gemm_check_bytes(const gemm_check_args *g);
/* What to say when the reference cannot be allocated: one line naming
 * --check and the memory it needs. */
void gemm_check_nomem_text(char *buf, size_t len, const gemm_check_args *g);
/* What no correct result exceeds: 2((k+2)u + 2v), u the unit roundoff of
 * the accumulation (2^-24 f32, 2^-53 f64), v the rounding of the inputs
 * (TF32: 2^-10, allowing truncation; else 0). */
double gemm_error_bound(pk_dtype t, pk_gemm_mode mode, int64_t k);

#endif
