/* The bit-matrix kernels: one table per popcount path. bits_kernels.c is
 * compiled once per path (vpopcnt: AVX-512 VPOPCNTDQ; avx2: nibble-lookup
 * vpshufb; popcnt: the scalar POPCNT instruction; reference: plain C with no
 * ISA flags) and src/cpu/bits.c picks the table that matches PK_CPU_ISA and
 * CPUID at run time. */
#ifndef PK_CPU_BITS_KERNELS_H
#define PK_CPU_BITS_KERNELS_H

#include <stdint.h>

/* The largest register block of any path: rows of A x rows of B. */
#define PK__BITS_MR_MAX 8
#define PK__BITS_NR_MAX 16

typedef struct pk__bits_kernels {
    const char *name;
    int mr, nr; /* this path's register block */
    /* 1: tile reads B as panels of nr rows stored word-major (word w of the
     * panel's rows l = 0..nr-1 at P[w * nr + l], the partial last word
     * already masked, missing rows 0: pk__bits_pack_panels), so that one
     * vector holds one word of nr rows and no horizontal sum is needed.
     * 0: tile reads B's rows in place (ldb words apart). */
    int panel;
    /* C[i*ldc + j] = base + scale * popcount(A_i ^ B_j) for i < mr <=
     * this->mr, j < nr <= this->nr, over fw full words plus, when tailmask
     * != 0, word fw masked by tailmask (the padding never counts). Rows of
     * A past mr are never read; B: see panel. */
    void (*tile)(const uint64_t *A, int64_t lda, const uint64_t *B,
                 int64_t ldb, int64_t fw, uint64_t tailmask, int mr, int nr,
                 int32_t base, int32_t scale, int32_t *C, int64_t ldc);
    /* The first j in [0, n) with d[j] < thr, or n (a vector scan). */
    int64_t (*first_below)(const int32_t *d, int64_t n, int32_t thr);
    /* Write the j in [0, n) with d[j] < thr, ascending, to sel (room for
     * n + 16); returns how many. */
    int64_t (*select_below)(const int32_t *d, int64_t n, int32_t thr, int32_t *sel);
    /* Pack one row of k elements into pk_bits_words(k) words (padding 0). */
    void (*pack_f32)(const float *x, int64_t k, uint64_t *w);
    void (*pack_u8)(const uint8_t *x, int64_t k, uint64_t *w);
} pk__bits_kernels;

extern const pk__bits_kernels pk__bits_kernels_vpopcnt;
extern const pk__bits_kernels pk__bits_kernels_avx2;
extern const pk__bits_kernels pk__bits_kernels_popcnt;
extern const pk__bits_kernels pk__bits_kernels_reference;

#endif
