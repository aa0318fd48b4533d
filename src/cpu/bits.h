/* The CPU backend's bit-matrix kernels (bits.c, bits_topk.c): shared
 * geometry and the table of popcount kernels in use. */
#ifndef PK_CPU_BITS_H
#define PK_CPU_BITS_H

#include "cpu.h"
#include "kernels/bits_kernels.h"

#include <stdlib.h>

/* The popcount kernels matching pk_cpu_isa(): avx512 takes VPOPCNTDQ when
 * CPUID has it (a feature of its own, absent on Skylake-X) and the AVX2
 * kernels otherwise; generic takes scalar POPCNT when present. */
const pk__bits_kernels *pk__bits_table(void);

/* How a row of k bits is walked: full words, and the mask of the partial
 * last word (0 when k is a multiple of 64). */
typedef struct pk__bits_geom {
    int64_t fw;
    uint64_t tailmask;
    int64_t words;
} pk__bits_geom;

static inline pk__bits_geom pk__bits_geometry(int64_t k)
{
    pk__bits_geom g = {k / 64, k % 64 ? ((uint64_t)1 << (k % 64)) - 1 : 0,
                       pk_bits_words(k)};
    return g;
}

/* Rows of B (database) per cache block: their bytes stay in L2 while every
 * row tile of A passes over them. A multiple of nr. */
int64_t pk__bits_block_rows(int64_t words, int64_t n, int nr);

/* For the panel paths (kt->panel): copy rows [0, rows) of B into
 * ceil(rows / kt->nr) panels at P (kt->nr * g.words words each, word-major,
 * the last word masked, missing rows 0). */
void pk__bits_pack_panels(const pk__bits_kernels *kt, const uint64_t *B,
                          int64_t ldb, int64_t rows, pk__bits_geom g,
                          uint64_t *P);

/* words 64-bit words on a cache-line boundary (vector loads of panels
 * must not straddle lines), or NULL. Free with pk__free(). */
static inline uint64_t *pk__bits_alloc_words(int64_t words)
{
    size_t bytes = ((size_t)(words > 0 ? words : 1) * 8 + 63) & ~(size_t)63;
    return (uint64_t *)pk__aligned_alloc(64, bytes);
}

/* The B operand of the tile starting at row j of a block: its panel when
 * packed (P holds the block's panels), else the row itself. */
static inline const uint64_t *pk__bits_b_tile(const pk__bits_kernels *kt,
                                              const uint64_t *B, int64_t ldb,
                                              const uint64_t *P, int64_t words,
                                              int64_t j)
{
    return kt->panel ? P + j / kt->nr * kt->nr * words : B + j * ldb;
}

pk_status pk__cpu_bits_pack(pk_ctx *ctx, pk_bits_format fmt, int64_t rows,
                            int64_t k, const void *x, int64_t ldx,
                            uint64_t *bits, int64_t ldw);
pk_status pk__cpu_bits_unpack(pk_ctx *ctx, pk_bits_format fmt, int64_t rows,
                              int64_t k, const uint64_t *bits, int64_t ldw,
                              void *x, int64_t ldx);
pk_status pk__cpu_bgemm(pk_ctx *ctx, const pk__bits_args *a, int32_t *C,
                        int64_t ldc);
pk_status pk__cpu_hamming(pk_ctx *ctx, const pk__bits_args *a,
                          pk_hamming_dtype dt, void *D, int64_t ldd);
pk_status pk__cpu_hamming_topk(pk_ctx *ctx, const pk__bits_args *a,
                               int64_t topk, int32_t *dist, int64_t *idx);

#endif
