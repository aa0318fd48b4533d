/* CPU user-defined reductions (pk_reducer): a bytecode interpreter over
 * blocks (udr_tmpl.h, one instance per accumulator type) driven as the
 * built-in reductions are (reduce.c): tasks of UDR_TASK elements at fixed
 * positions, one partial each, partials combined in data order. Threads
 * only decide who computes which task: the bits never depend on them. */
#include "cpu.h"
#include "../core/reducer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <tgmath.h>

#define UDR_BLK 512                   /* elements per interpreted block  */
#define UDR_TASK ((int64_t)1 << 16)   /* elements per task (partial)      */

/* A partial: the value (exact in double for either accumulator type) and,
 * for ARG, the index. */
typedef struct udr_part {
    double v;
    int64_t i;
} udr_part;

typedef struct udr_fns {
    void *(*ws_new)(const pk_reducer *red);
    void (*ws_free)(void *w);
    void (*task)(const pk_reducer *red, void *w, const void *x, int64_t n,
                 int64_t base, udr_part *out);
    void (*combine)(const pk_reducer *red, void *w, udr_part *acc, const udr_part *b);
    void (*finish)(const pk_reducer *red, void *w, const udr_part *acc, void *out);
    void (*cols)(const pk_reducer *red, void *w, const void *x, int64_t rows,
                 int64_t nc, int64_t ld, void *out);
} udr_fns;

/* The hot loops are built for AVX-512F, AVX2 and the baseline, picked at
 * load time (ifunc). Lane-wise operations without contraction round the same in
 * both, so the bits do not depend on the choice. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define UDR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define UDR_CLONES
#endif

/* Software prefetch of the block after next (to L1) and further ahead (to
 * L2), as the built-in kernels do (kernels/vec.h): one core's read stream
 * is latency-bound without it. Past the end is harmless. */
static inline void udr_prefetch(const char *p, int64_t bytes)
{
    for (int64_t o = 0; o < bytes; o += 64) {
        __builtin_prefetch(p + o + 2048, 0, 3);
        __builtin_prefetch(p + o + 8192, 0, 2);
    }
}

/* Maps of the fused loops (udr_tmpl.h), or 0. Kept in red->impl. */
enum { UDR_MAP_X = 1, UDR_MAP_SQ, UDR_MAP_ABS };

static int udr_fusable(const pk_reducer *red) { return (int)(intptr_t)red->impl; }

static int map_pattern(const pk_reducer *red)
{
    const pk__expr *e = &red->expr[PK__R_MAP];
    const pk__xnode *r = &e->node[e->root];
    if (red->d.map_fn || (red->d.input != PK_F32 && red->d.input != PK_F64)) return 0;
#define IS_X(k) ((k) >= 0 && e->node[k].op == PK__X_VAR && e->node[k].var == PK__V_X)
    if (r->op == PK__X_VAR && r->var == PK__V_X) return UDR_MAP_X;
    if (r->op == PK__X_MUL && IS_X(r->k[0]) && IS_X(r->k[1])) return UDR_MAP_SQ;
    if (r->op == PK__X_FABS && IS_X(r->k[0])) return UDR_MAP_ABS;
#undef IS_X
    return 0;
}

#define T float
#define TB uint32_t /* T's bits */
#define SFX f32
#include "udr_tmpl.h"
#undef T
#undef TB
#undef SFX
#define T double
#define TB uint64_t
#define SFX f64
#include "udr_tmpl.h"
#undef T
#undef TB
#undef SFX

static const udr_fns *fns_of(const pk_reducer *red)
{
    return red->d.acc == PK_F32 ? &fns_f32 : &fns_f64;
}

static pk_status nomem(pk_ctx *ctx)
{
    return pk__fail(ctx, PK_ERR_NOMEM, "pk_reducer: no memory for the workspace");
}

/* x[0..n) (n >= 1), indices from ibase, into *acc with `threads` threads. */
static pk_status reduce_range(pk_ctx *ctx, const pk_reducer *red, const void *x,
                              int64_t n, int64_t ibase, int threads, udr_part *acc)
{
    const udr_fns *f = fns_of(red);
    const size_t size = pk__dtypes[red->d.input].size;
    int64_t nt = (n + UDR_TASK - 1) / UDR_TASK;
    udr_part one, *parts = nt == 1 ? &one : malloc((size_t)nt * sizeof *parts);
    if (!parts) return nomem(ctx);
    int failed = 0;
#pragma omp parallel num_threads(threads) if (threads > 1) reduction(| : failed)
    {
        void *w = f->ws_new(red);
        if (!w) failed = 1;
#pragma omp for schedule(static)
        for (int64_t t = 0; t < nt; t++) {
            int64_t at = t * UDR_TASK, len = n - at < UDR_TASK ? n - at : UDR_TASK;
            if (w)
                f->task(red, w, (const char *)x + at * (int64_t)size, len, ibase + at,
                        &parts[t]);
        }
        f->ws_free(w);
    }
    if (failed) {
        if (parts != &one) free(parts);
        return nomem(ctx);
    }
    void *w = nt > 1 ? f->ws_new(red) : NULL;
    if (nt > 1 && !w) failed = 1;
    *acc = parts[0];
    for (int64_t t = 1; t < nt && w; t++) f->combine(red, w, acc, &parts[t]);
    f->ws_free(w);
    if (parts != &one) free(parts);
    return failed ? nomem(ctx) : PK_OK;
}

static pk_status finish(pk_ctx *ctx, const pk_reducer *red, const udr_part *acc, void *out)
{
    const udr_fns *f = fns_of(red);
    void *w = f->ws_new(red);
    if (!w) return nomem(ctx);
    f->finish(red, w, acc, out);
    f->ws_free(w);
    return PK_OK;
}

pk_status pk__cpu_reducer_reduce(pk_ctx *ctx, const pk_reducer *red,
                                    const void *x, int64_t n, int64_t ibase, void *out)
{
    udr_part acc = {red->d.identity, -1};
    if (n > 0) {
        int threads = pk__cpu_team(ctx, n, (n + UDR_TASK - 1) / UDR_TASK);
        pk_status s = reduce_range(ctx, red, x, n, ibase, threads, &acc);
        if (s) return s;
    }
    return finish(ctx, red, &acc, out);
}

pk_status pk__cpu_reducer_axis(pk_ctx *ctx, const pk_reducer *red,
                                  const void *x, int64_t rows, int64_t cols,
                                  int64_t ld, int axis, void *out)
{
    const udr_fns *f = fns_of(red);
    const size_t size = pk__dtypes[red->d.input].size;
    const size_t osize = red->d.kind == PK_REDUCER_ARG ? 8 : pk__dtypes[red->d.acc].size;
    int64_t nout = axis == 0 ? cols : rows, along = axis == 0 ? rows : cols;
    if (along == 0) { /* VALUE only (checked): final(identity) */
        udr_part acc = {red->d.identity, -1};
        for (int64_t j = 0; j < nout; j++) {
            pk_status s = finish(ctx, red, &acc, (char *)out + j * (int64_t)osize);
            if (s) return s;
        }
        return PK_OK;
    }
    int failed = 0;
    if (axis == 0) {
        int64_t nch = (cols + UDR_BLK - 1) / UDR_BLK;
        int threads = pk__cpu_team(ctx, rows * cols, nch);
#pragma omp parallel num_threads(threads) if (threads > 1) reduction(| : failed)
        {
            void *w = f->ws_new(red);
            if (!w) failed = 1;
#pragma omp for schedule(static)
            for (int64_t c = 0; c < nch; c++) {
                int64_t c0 = c * UDR_BLK, nc = cols - c0 < UDR_BLK ? cols - c0 : UDR_BLK;
                if (w)
                    f->cols(red, w, (const char *)x + c0 * (int64_t)size, rows, nc, ld,
                            (char *)out + c0 * (int64_t)osize);
            }
            f->ws_free(w);
        }
        return failed ? nomem(ctx) : PK_OK;
    }
    int threads = pk__cpu_team(ctx, rows * cols, rows);
    if (threads > 1 && rows >= 2 * (int64_t)threads) { /* a row per thread */
#pragma omp parallel num_threads(threads) reduction(| : failed)
        {
            void *w = f->ws_new(red);
            if (!w) failed = 1;
#pragma omp for schedule(static)
            for (int64_t r = 0; r < rows; r++) {
                if (!w) continue;
                const char *row = (const char *)x + r * ld * (int64_t)size;
                udr_part acc, p;
                for (int64_t at = 0; at < cols; at += UDR_TASK) {
                    int64_t len = cols - at < UDR_TASK ? cols - at : UDR_TASK;
                    f->task(red, w, row + at * (int64_t)size, len, at, at ? &p : &acc);
                    if (at) f->combine(red, w, &acc, &p);
                }
                f->finish(red, w, &acc, (char *)out + r * (int64_t)osize);
            }
            f->ws_free(w);
        }
        return failed ? nomem(ctx) : PK_OK;
    }
    for (int64_t r = 0; r < rows; r++) { /* few long rows: threads within a row */
        udr_part acc;
        int rt = pk__cpu_team(ctx, cols, (cols + UDR_TASK - 1) / UDR_TASK);
        pk_status s = reduce_range(ctx, red, (const char *)x + r * ld * (int64_t)size,
                                   cols, 0, rt, &acc);
        if (s || (s = finish(ctx, red, &acc, (char *)out + r * (int64_t)osize))) return s;
    }
    return PK_OK;
}

pk_status pk__cpu_reducer_init(pk_ctx *ctx, pk_reducer *red)
{
    (void)ctx;
    red->info.origin = PK_REDUCER_INTERPRETED;
    red->impl = (void *)(intptr_t)map_pattern(red);
    return PK_OK;
}

