/* Bit matrices on the CPU: packing, and the distance drivers of pk_bgemm and
 * pk_hamming (cache blocks of B rows, OpenMP over blocks, the register-
 * blocked tiles of kernels/bits_kernels.c inside). */
#include "bits.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* Bytes of B rows per cache block (a half of this CPU's 2 MiB L2 would do;
 * a quarter leaves room for A and C). */
#define BLOCK_BYTES ((int64_t)512 << 10)
/* Rows of A per task: the tiles of one task share its B block. */
#define TASK_ROWS 64

int64_t pk__bits_block_rows(int64_t words, int64_t n, int nr)
{
    int64_t rows = BLOCK_BYTES / (words > 0 ? words * 8 : 8);
    int64_t all = (n + nr - 1) / nr * nr;
    rows = rows / nr * nr;
    if (rows < nr) rows = nr;
    return rows < all ? rows : all;
}

void pk__bits_pack_panels(const pk__bits_kernels *kt, const uint64_t *B,
                          int64_t ldb, int64_t rows, pk__bits_geom g,
                          uint64_t *P)
{
    int nr = kt->nr;
    int64_t panels = (rows + nr - 1) / nr;
    for (int64_t p = 0; p < panels; p++) {
        uint64_t *dst = P + p * nr * g.words;
        for (int l = 0; l < nr; l++) {
            int64_t r = p * nr + l;
            if (r >= rows) {
                for (int64_t w = 0; w < g.words; w++) dst[w * nr + l] = 0;
                continue;
            }
            const uint64_t *src = B + r * ldb;
            for (int64_t w = 0; w < g.fw; w++) dst[w * nr + l] = src[w];
            if (g.tailmask) dst[g.fw * nr + l] = src[g.fw] & g.tailmask;
        }
    }
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
    int nt = pk__cpu_team(ctx, rows * k, rows);
    /* Each row's own words only: those between rows (ldw larger) are not
     * the matrix's, and the last row's would lie past the buffer. */
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        uint64_t *w = bits + r * ldw;
        if (fmt == PK_BITS_F32_SIGN) kt->pack_f32((const float *)x + r * ldx, k, w);
        else kt->pack_u8((const uint8_t *)x + r * ldx, k, w);
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
                      pk__bits_geom g, const uint64_t *P, const dist_out *o,
                      int64_t i0, int64_t i1, int64_t j0, int64_t j1)
{
    int32_t tmp[PK__BITS_MR_MAX * PK__BITS_NR_MAX];
    for (int64_t i = i0; i < i1; i += kt->mr) {
        int mr = i1 - i < kt->mr ? (int)(i1 - i) : kt->mr;
        for (int64_t j = j0; j < j1; j += kt->nr) {
            int nr = j1 - j < kt->nr ? (int)(j1 - j) : kt->nr;
            const uint64_t *A = a->A + i * a->lda;
            const uint64_t *B = pk__bits_b_tile(kt, a->B, a->ldb, P, g.words, j);
            if (o->c32) {
                kt->tile(A, a->lda, B, a->ldb, g.fw, g.tailmask, mr, nr, o->base,
                         o->scale, o->c32 + i * o->ld + j, o->ld);
                continue;
            }
            kt->tile(A, a->lda, B, a->ldb, g.fw, g.tailmask, mr, nr, 0, 1, tmp,
                     PK__BITS_NR_MAX);
            for (int r = 0; r < mr; r++)
                for (int c = 0; c < nr; c++)
                    o->c16[(i + r) * o->ld + j + c] = (uint16_t)tmp[r * PK__BITS_NR_MAX + c];
        }
    }
}

static pk_status distances(pk_ctx *ctx, const char *fn, const pk__bits_args *a,
                           const dist_out *o)
{
    if (a->k == 0) {
        /* Every distance is 0 and A, B hold no words (they may be NULL, and
         * offsets from NULL are undefined): write base, read nothing. */
        int nt = team(ctx, a->m, a->n, 1, a->m);
#pragma omp parallel for num_threads(nt) schedule(static)
        for (int64_t i = 0; i < a->m; i++)
            for (int64_t j = 0; j < a->n; j++) {
                if (o->c32) o->c32[i * o->ld + j] = o->base;
                else o->c16[i * o->ld + j] = 0;
            }
        return PK_OK;
    }
    const pk__bits_kernels *kt = pk__bits_table();
    pk__bits_geom g = pk__bits_geometry(a->k);
    int64_t nb = pk__bits_block_rows(g.words, a->n, kt->nr);
    int64_t rt = (a->m + TASK_ROWS - 1) / TASK_ROWS, ct = (a->n + nb - 1) / nb;
    int nt = team(ctx, a->m, a->n, g.words, rt * ct);
    uint64_t *P = NULL;
    int64_t panels = (a->n + kt->nr - 1) / kt->nr;
    if (kt->panel) {
        /* B once into panels (a copy of B's size; cheap next to m x n). */
        P = pk__bits_alloc_words(panels * kt->nr * g.words);
        if (!P)
            return pk__fail(ctx, PK_ERR_NOMEM, "%s: out of memory for a copy of B "
                            "(%lld rows)", fn, (long long)a->n);
    }
    /* One team for both loops: a second wake-up costs milliseconds on a
     * busy machine. */
#pragma omp parallel num_threads(nt)
    {
        if (P) {
#pragma omp for schedule(static)
            for (int64_t p = 0; p < panels; p++) {
                int64_t r0 = p * kt->nr, rows = a->n - r0 < kt->nr ? a->n - r0 : kt->nr;
                pk__bits_pack_panels(kt, a->B + r0 * a->ldb, a->ldb, rows, g,
                                     P + r0 * g.words);
            }
        }
        /* Column blocks outermost: threads on neighbouring tasks share B. */
#pragma omp for schedule(dynamic)
        for (int64_t t = 0; t < rt * ct; t++) {
            int64_t ib = t % rt, jb = t / rt;
            int64_t i0 = ib * TASK_ROWS, j0 = jb * nb;
            int64_t i1 = i0 + TASK_ROWS < a->m ? i0 + TASK_ROWS : a->m;
            int64_t j1 = j0 + nb < a->n ? j0 + nb : a->n;
            dist_task(kt, a, g, P, o, i0, i1, j0, j1);
        }
    }
    pk__free(P);
    return PK_OK;
}

pk_status pk__cpu_bgemm(pk_ctx *ctx, const pk__bits_args *a, int32_t *C,
                        int64_t ldc)
{
    dist_out o = {(int32_t)a->k, -2, C, NULL, ldc};
    return distances(ctx, "pk_bgemm", a, &o);
}

pk_status pk__cpu_hamming(pk_ctx *ctx, const pk__bits_args *a,
                          pk_hamming_dtype dt, void *D, int64_t ldd)
{
    dist_out o = {0, 1, dt == PK_HAMMING_I32 ? (int32_t *)D : NULL,
                  dt == PK_HAMMING_U16 ? (uint16_t *)D : NULL, ldd};
    return distances(ctx, "pk_hamming", a, &o);
}
