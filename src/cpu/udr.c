/* CPU user-defined reductions (pk_reducer): a bytecode interpreter over
 * blocks (udr_tmpl.h, one instance per accumulator type) driven as the
 * built-in reductions are (reduce.c): tasks of UDR_TASK elements at fixed
 * positions, one partial each, partials combined in data order. Threads
 * only decide who computes which task: the bits never depend on them. */
#include "cpu.h"
#include "../core/reducer.h"
#include "kernels/udr_kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <tgmath.h>

#define UDR_BLK 512                   /* elements per interpreted block  */
#define UDR_TASK ((int64_t)1 << 16)   /* elements per task (partial)      */
/* Axis 1: rows shorter than UDR_SHORT_ROW, when there are at least
 * UDR_BLK of them, fold UDR_BLK rows at a time (F(lines)): a task per row
 * cost ~1 us of fixed work (its lanes' merge, the final step), 4 us a row
 * of two elements here. Axis 0: at most UDR_FEW_COLS columns and at least
 * 2 UDR_SEG rows go column by column through the tasks' vector pipeline in
 * segments of UDR_SEG rows (a step per row for two columns was all
 * overhead, and one thread's). */
#define UDR_SHORT_ROW 1024
#define UDR_FEW_COLS 16
#define UDR_SEG ((int64_t)8192)
/* ... except where F(lines) runs fused (one thread's vector pass over the
 * rows) and there are UDR_FEW_FUSED columns or more: 2 x 10^6 x 8 sum of
 * squares 7.7 ms that way against 8.8 by columns, x 16 14.9 against 18.4;
 * x 2 and x 4 20 and 17 ms against 10.5 and 8.9. Interpreted reducers
 * always go by columns (x 16: 55 ms by lines against 21). */
#define UDR_FEW_FUSED 8

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
                 int64_t base, int64_t stride, udr_part *out);
    void (*combine)(const pk_reducer *red, void *w, udr_part *acc, const udr_part *b);
    void (*finish)(const pk_reducer *red, void *w, const udr_part *acc, void *out);
    void (*lines)(const pk_reducer *red, void *w, const void *x, int64_t along,
                  int64_t nc, int64_t sa, int64_t sl, int from_identity, void *out);
} udr_fns;


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

/* The map of the fused loops (UDR_MAP_*, kernels/udr_kernels.h), or 0, is
 * kept in red->impl. */

static int udr_fusable(const pk_reducer *red) { return (int)(intptr_t)red->impl; }

/* How F(task) and F(lines) run a reducer: in lanes with the combine's own
 * operator (a commutative built-in combine, VALUE), fused with the map too
 * (then the map's UDR_MAP_*), or ARG lanes over fmin/fmax. */
static int udr_value_lanes(const pk_reducer *red)
{
    return red->d.kind == PK_REDUCER_VALUE && red->commutative >= 0;
}
static int udr_fused(const pk_reducer *red) { return udr_value_lanes(red) ? udr_fusable(red) : 0; }
static int udr_arg_lanes(const pk_reducer *red)
{
    return red->d.kind == PK_REDUCER_ARG &&
           (red->commutative == PK__X_FMIN || red->commutative == PK__X_FMAX);
}

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
    udr_part one, *parts = nt == 1 ? &one : pk__malloc((size_t)nt * sizeof *parts);
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
                f->task(red, w, (const char *)x + at * (int64_t)size, len, ibase + at, 1,
                        &parts[t]);
        }
        f->ws_free(w);
    }
    if (failed) {
        if (parts != &one) pk__free(parts);
        return nomem(ctx);
    }
    void *w = nt > 1 ? f->ws_new(red) : NULL;
    if (nt > 1 && !w) failed = 1;
    *acc = parts[0];
    for (int64_t t = 1; t < nt && w; t++) f->combine(red, w, acc, &parts[t]);
    f->ws_free(w);
    if (parts != &one) pk__free(parts);
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

/* The strided jobs: axis 0 of few columns (few_cols) and lines (lines). */
typedef struct udr_job {
    const pk_reducer *red;
    const char *x;
    int64_t along, nlines, sa, sl, ld;
    int from_identity;
    char *out;        /* lines: the outputs                       */
    udr_part *parts;  /* few_cols: [segment][column] partials     */
} udr_job;

/* fn(job, w, g) for g in [0, ng) on a team sized for `work` elements, each
 * thread with its own workspace. 0, or 1 when a workspace was not had. */
static int run_groups(pk_ctx *ctx, const udr_job *job, int64_t work, int64_t ng,
                      void (*fn)(const udr_job *, void *, int64_t))
{
    const udr_fns *f = fns_of(job->red);
    int failed = 0;
    int threads = pk__cpu_team(ctx, work, ng);
#pragma omp parallel num_threads(threads) if (threads > 1) reduction(| : failed)
    {
        void *w = f->ws_new(job->red);
        if (!w) failed = 1;
#pragma omp for schedule(static)
        for (int64_t g = 0; g < ng; g++)
            if (w) fn(job, w, g);
        f->ws_free(w);
    }
    return failed;
}

/* Segment g of every column: a task over its rows (stride ld). */
static void few_cols_segment(const udr_job *j, void *w, int64_t g)
{
    const udr_fns *f = fns_of(j->red);
    const size_t size = pk__dtypes[j->red->d.input].size;
    const int64_t r0 = g * UDR_SEG, len = j->along - r0 < UDR_SEG ? j->along - r0 : UDR_SEG;
    for (int64_t c = 0; c < j->nlines; c++)
        f->task(j->red, w, j->x + (r0 * j->ld + c) * (int64_t)size, len, r0, j->ld,
                &j->parts[g * j->nlines + c]);
}

/* Axis 0 of few columns: each column in segments of UDR_SEG rows, each
 * segment a task over the column's elements (stride ld; the same tree as a
 * whole array of UDR_SEG elements), the segments' partials combined in
 * order. Threads take segments, all columns of one (its rows stay in
 * cache). */
static pk_status few_cols(pk_ctx *ctx, const pk_reducer *red, const void *x, int64_t rows,
                          int64_t cols, int64_t ld, void *out)
{
    const udr_fns *f = fns_of(red);
    const size_t osize = red->d.kind == PK_REDUCER_ARG ? 8 : pk__dtypes[red->d.acc].size;
    const int64_t nseg = (rows + UDR_SEG - 1) / UDR_SEG;
    udr_part *parts = pk__malloc((size_t)(nseg * cols) * sizeof *parts);
    if (!parts) return nomem(ctx);
    const udr_job job = {.red = red, .x = x, .along = rows, .nlines = cols, .ld = ld,
                         .parts = parts};
    void *w = run_groups(ctx, &job, rows * cols, nseg, few_cols_segment) ? NULL : f->ws_new(red);
    for (int64_t c = 0; c < cols && w; c++) {
        udr_part acc = parts[c];
        for (int64_t sg = 1; sg < nseg; sg++) f->combine(red, w, &acc, &parts[sg * cols + c]);
        f->finish(red, w, &acc, (char *)out + c * (int64_t)osize);
    }
    f->ws_free(w);
    pk__free(parts);
    return w ? PK_OK : nomem(ctx);
}

/* Lines [g * UDR_BLK, ...) of the job, a step at a time (F(lines)). */
static void lines_group(const udr_job *j, void *w, int64_t g)
{
    const size_t size = pk__dtypes[j->red->d.input].size;
    const size_t osize = j->red->d.kind == PK_REDUCER_ARG ? 8 : pk__dtypes[j->red->d.acc].size;
    const int64_t j0 = g * UDR_BLK, nj = j->nlines - j0 < UDR_BLK ? j->nlines - j0 : UDR_BLK;
    fns_of(j->red)->lines(j->red, w, j->x + j0 * j->sl * (int64_t)size, j->along, nj, j->sa,
                          j->sl, j->from_identity, j->out + j0 * (int64_t)osize);
}

/* nlines lines of `along` elements, element k of line j at x[k * sa + j *
 * sl], UDR_BLK lines at a time, into out[j]. */
static pk_status lines(pk_ctx *ctx, const pk_reducer *red, const void *x, int64_t along,
                       int64_t nlines, int64_t sa, int64_t sl, int from_identity, void *out)
{
    const udr_job job = {.red = red, .x = x, .along = along, .nlines = nlines, .sa = sa,
                         .sl = sl, .from_identity = from_identity, .out = out};
    return run_groups(ctx, &job, along * nlines, (nlines + UDR_BLK - 1) / UDR_BLK, lines_group)
               ? nomem(ctx)
               : PK_OK;
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
    if (axis == 0 && cols <= UDR_FEW_COLS && rows >= 2 * UDR_SEG &&
        (cols < UDR_FEW_FUSED || !udr_fused(red)))
        return few_cols(ctx, red, x, rows, cols, ld, out);
    if (axis == 1 && cols < UDR_SHORT_ROW && rows >= UDR_BLK) /* short rows: lines of stride 1, */
        return lines(ctx, red, x, cols, rows, 1, ld, /* from the identity as F(task)'s lanes */
                     udr_value_lanes(red) || udr_arg_lanes(red), out);
    if (axis == 0) /* columns: lines of stride ld, from their first elements */
        return lines(ctx, red, x, rows, cols, ld, 1, 0, out);
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
                    f->task(red, w, row + at * (int64_t)size, len, at, 1, at ? &p : &acc);
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

