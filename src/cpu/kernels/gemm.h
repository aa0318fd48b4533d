/* The CPU GEMM's kernels for one ISA: the register-blocked microkernel and
 * the packing routines it reads from, plus the cache blocking they are tuned
 * for. src/cpu/kernels/gemm_kernels.c is compiled once per ISA into one
 * pk__gemm_kernels each; the driver (src/cpu/gemm.c) runs the BLIS loops
 * around them. */
#ifndef PK_CPU_GEMM_H
#define PK_CPU_GEMM_H

#include <stdint.h>

/* One dtype's kernel set. Packed A is a sequence of micro-panels of mr rows:
 * panel element (i, p) at p*mr + i; packed B one of nr columns: (p, j) at
 * p*nr + j. Edge panels are zero-padded, so the microkernel always runs a
 * full mr x nr tile and writes back only the valid part. */
typedef struct pk__gemm_kernel {
    int mr, nr;         /* microtile */
    int64_t kc, mc, nc; /* cache blocks: kc x nr of B in L1, mc x kc of A in
                           L2, kc x nc of B in L3 */
    /* C[0..rows) x [0..cols) = alpha * Ap * Bp (+ beta * C); beta == NULL
     * means C is not read (beta = 0). rows <= mr, cols <= nr. alpha, beta
     * point to one value of the dtype. */
    void (*ukr)(int64_t kc, const void *Ap, const void *Bp, void *C,
                int64_t ldc, int rows, int cols, const void *alpha,
                const void *beta);
    /* Pack rows [0, rows) x cols [0, kc) of op(A) (A at its first element,
     * trans: A is stored transposed) into mr-row micro-panels. */
    void (*pack_a)(const void *A, int64_t lda, int trans, int64_t rows,
                   int64_t kc, void *Ap);
    /* Pack rows [0, kc) x cols [0, cols) of op(B) into nr-column panels. */
    void (*pack_b)(const void *B, int64_t ldb, int trans, int64_t kc,
                   int64_t cols, void *Bp);
} pk__gemm_kernel;

typedef struct pk__gemm_kernels {
    pk__gemm_kernel f32, f64;
} pk__gemm_kernels;

extern const pk__gemm_kernels pk__gemm_kernels_avx512;
extern const pk__gemm_kernels pk__gemm_kernels_avx2;
extern const pk__gemm_kernels pk__gemm_kernels_generic;

#endif
