/* Bit matrices on the CPU: packing, and the distance drivers of pk_bgemm and
 * pk_hamming (cache blocks of B rows, OpenMP over blocks, the register-
 * blocked tiles of kernels/bits_kernels.c inside). */
#include "bits.h"

#include <omp.h>
#include <string.h>

/* Bytes of B rows per cache block (a half of this CPU's 2 MiB L2 would do;
 * a quarter leaves room for A and C). */
#define BLOCK_BYTES ((int64_t)512 << 10)
/* Rows of A per task: the tiles of one task share its B block. */
#define TASK_ROWS 64

const pk__bits_kernels *pk__bits_table(void)
{
    const char *isa = pk_cpu_isa();
    __builtin_cpu_init();
    if (!strcmp(isa, "avx512") && __builtin_cpu_supports("avx512vpopcntdq"))
        return &pk__bits_kernels_vpopcnt;
    if (!strcmp(isa, "avx512") || !strcmp(isa, "avx2")) return &pk__bits_kernels_avx2;
    if (!strcmp(isa, "generic") && __builtin_cpu_supports("popcnt"))
        return &pk__bits_kernels_popcnt;
    return &pk__bits_kernels_reference;
}

int64_t pk__bits_block_rows(int64_t words, int64_t n)
{
    int64_t rows = BLOCK_BYTES / (words > 0 ? words * 8 : 8);
    int64_t nr = (n + PK__BITS_NR - 1) / PK__BITS_NR * PK__BITS_NR;
    rows = rows / PK__BITS_NR * PK__BITS_NR;
    if (rows < PK__BITS_NR) rows = PK__BITS_NR;
    return rows < nr ? rows : nr;
}

/* Threads for work of m x n pairs of `words` words in `tasks` tasks. */
static int team(const pk_ctx *ctx, int64_t m, int64_t n, int64_t words,
                int64_t tasks)
{
    double work = (double)m * (double)n * (double)(words > 0 ? words : 1);
    return pk__cpu_team(ctx, work > 1e18 ? INT64_MAX : (int64_t)work, tasks);
}

/* ---- Packing -------------------------------------------------------- */

pk_status pk__cpu_bits_pack(pk_ctx *ctx, pk_bits_format fmt, int64_t rows,
                            int64_t k, const void *x, int64_t ldx,
                            uint64_t *bits, int64_t ldw)
{
    const pk__bits_kernels *kt = pk__bits_table();
    int64_t words = pk_bits_words(k);
    int nt = pk__cpu_team(ctx, rows * k, rows);
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        uint64_t *w = bits + r * ldw;
        if (fmt == PK_BITS_F32_SIGN) kt->pack_f32((const float *)x + r * ldx, k, w);
        else kt->pack_u8((const uint8_t *)x + r * ldx, k, w);
        memset(w + words, 0, (size_t)(ldw - words) * sizeof *w);
    }
    return PK_OK;
}

pk_status pk__cpu_bits_unpack(pk_ctx *ctx, pk_bits_format fmt, int64_t rows,
                              int64_t k, const uint64_t *bits, int64_t ldw,
                              void *x, int64_t ldx)
{
    int nt = pk__cpu_team(ctx, rows * k, rows);
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        const uint64_t *w = bits + r * ldw;
        if (fmt == PK_BITS_F32_SIGN) {
            float *o = (float *)x + r * ldx;
            for (int64_t j = 0; j < k; j++) o[j] = w[j >> 6] >> (j & 63) & 1 ? 1.0f : -1.0f;
        } else {
            uint8_t *o = (uint8_t *)x + r * ldx;
            for (int64_t j = 0; j < k; j++) o[j] = (uint8_t)(w[j >> 6] >> (j & 63) & 1);
        }
    }
    return PK_OK;
}

/* ---- Distances: C = base + scale * Hamming --------------------------- */

typedef struct dist_out {
    int32_t base, scale;
    int32_t *c32;   /* int32 output, or NULL */
    uint16_t *c16;  /* u16 distances otherwise */
    int64_t ld;
} dist_out;

static void dist_task(const pk__bits_kernels *kt, const pk__bits_args *a,
                      pk__bits_geom g, const dist_out *o, int64_t i0, int64_t i1,
                      int64_t j0, int64_t j1)
{
    int32_t tmp[PK__BITS_MR * PK__BITS_NR];
    for (int64_t i = i0; i < i1; i += PK__BITS_MR) {
        int mr = i1 - i < PK__BITS_MR ? (int)(i1 - i) : PK__BITS_MR;
        for (int64_t j = j0; j < j1; j += PK__BITS_NR) {
            int nr = j1 - j < PK__BITS_NR ? (int)(j1 - j) : PK__BITS_NR;
            const uint64_t *A = a->A + i * a->lda, *B = a->B + j * a->ldb;
            if (o->c32) {
                kt->tile(A, a->lda, B, a->ldb, g.fw, g.tailmask, mr, nr, o->base,
                         o->scale, o->c32 + i * o->ld + j, o->ld);
                continue;
            }
            kt->tile(A, a->lda, B, a->ldb, g.fw, g.tailmask, mr, nr, 0, 1, tmp,
                     PK__BITS_NR);
            for (int r = 0; r < mr; r++)
                for (int c = 0; c < nr; c++)
                    o->c16[(i + r) * o->ld + j + c] = (uint16_t)tmp[r * PK__BITS_NR + c];
        }
    }
}

static pk_status distances(pk_ctx *ctx, const pk__bits_args *a, const dist_out *o)
{
    const pk__bits_kernels *kt = pk__bits_table();
    pk__bits_geom g = pk__bits_geometry(a->k);
    int64_t nb = pk__bits_block_rows(g.words, a->n);
    int64_t rt = (a->m + TASK_ROWS - 1) / TASK_ROWS, ct = (a->n + nb - 1) / nb;
    int nt = team(ctx, a->m, a->n, g.words, rt * ct);
    /* Column blocks outermost: threads on neighbouring tasks share B. */
#pragma omp parallel for num_threads(nt) schedule(dynamic)
    for (int64_t t = 0; t < rt * ct; t++) {
        int64_t ib = t % rt, jb = t / rt;
        int64_t i0 = ib * TASK_ROWS, j0 = jb * nb;
        int64_t i1 = i0 + TASK_ROWS < a->m ? i0 + TASK_ROWS : a->m;
        int64_t j1 = j0 + nb < a->n ? j0 + nb : a->n;
        dist_task(kt, a, g, o, i0, i1, j0, j1);
    }
    return PK_OK;
}

pk_status pk__cpu_bgemm(pk_ctx *ctx, const pk__bits_args *a, int32_t *C,
                        int64_t ldc)
{
    dist_out o = {(int32_t)a->k, -2, C, NULL, ldc};
    return distances(ctx, a, &o);
}

pk_status pk__cpu_hamming(pk_ctx *ctx, const pk__bits_args *a,
                          pk_dist_type dt, void *D, int64_t ldd)
{
    dist_out o = {0, 1, dt == PK_DIST_I32 ? (int32_t *)D : NULL,
                  dt == PK_DIST_U16 ? (uint16_t *)D : NULL, ldd};
    return distances(ctx, a, &o);
}
