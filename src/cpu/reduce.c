/* CPU drivers for reductions, dot and axpy. Determinism comes from here: the
 * data are cut into blocks at fixed positions (PK__BLOCK elements; for axis 0,
 * row blocks fixed by the shape), each block gives a partial, and partials are
 * combined in data order. Threads only decide who computes which block, so
 * the bits never depend on the thread count. */
#include "cpu.h"

#include "kernels/dd.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>

#define KERNELS(ctx) ((const pk__cpu_kernels *)(ctx)->impl)
#define AT(p, i, size) ((const char *)(p) + (i) * (int64_t)(size))

/* Whether (op, t) is a float sum (its partials combine as a chain below). */
#define FSUM(op, t) ((op) == PK_SUM && ((t) == PK_F32 || (t) == PK_F64))

/* Partials kept on the stack up to this many blocks. */
#define STACK_PARTS 256

/* Chains of float sums' partials are combined in three parts (pk__td,
 * kernels/dd.h): through pk__dd_add alone a giant among the partials
 * rounded the small ones' low parts at each step (+-1e20 8 apart down an
 * n x 1 column, whose partials are the folded view's columns, erred past
 * NumPy's; issue 55). idx: the flag of acc_type.h, OR-ed. */
typedef struct chain {
    pk__td t;
    int64_t flag;
} chain;
static void chain_start(chain *c, const pk__acc *a)
{
    c->t = (pk__td){a->v.f, isfinite(a->v.f) ? a->lo : 0.0, 0.0};
    c->flag = a->idx;
}
static void chain_add(chain *c, const pk__acc *b)
{
    pk__td_add(&c->t, b->v.f);
    pk__td_add(&c->t, b->lo);
    c->flag |= b->idx;
}
static void chain_end(const chain *c, pk__acc *a)
{
    *a = pk__td_acc(&c->t);
    a->idx = c->flag;
}
/* *a followed by b[0], b[step], ... (count of them); fsum: a float sum. */
static void combine_run(const pk__reduce_fns *f, int fsum, pk__acc *a, const pk__acc *b,
                        int64_t count, int64_t step)
{
    if (!fsum) {
        for (int64_t i = 0; i < count; i++) f->combine(a, &b[i * step]);
        return;
    }
    chain c;
    chain_start(&c, a);
    for (int64_t i = 0; i < count; i++) chain_add(&c, &b[i * step]);
    chain_end(&c, a);
}

/* The whole-array reduction of x[0..n) (n >= 1) into *acc. y != NULL makes
 * it a dot (block_dot) instead of a reduction (f->block). big (float sums
 * and dots, or NULL): the largest |high part| of the block partials. */
static pk_status reduce_blocks(pk_ctx *ctx, const pk__reduce_fns *f, int fsum,
                               void (*block_dot)(const void *, const void *,
                                                 int64_t, pk__acc *),
                               const void *x, const void *y, int64_t n,
                               size_t size, int threads, pk__acc *acc, double *big)
{
    int64_t nb = (n + PK__BLOCK - 1) / PK__BLOCK;
    if (big) *big = 0.0;
    if (threads <= 1) {
        chain c;
        for (int64_t b = 0; b < nb; b++) {
            int64_t at = b * PK__BLOCK, len = n - at < PK__BLOCK ? n - at : PK__BLOCK;
            pk__acc part;
            if (y) block_dot(AT(x, at, size), AT(y, at, size), len, &part);
            else f->block(AT(x, at, size), len, at, &part);
            if (b == 0) *acc = part;
            else if (!fsum) f->combine(acc, &part);
            if (fsum) b == 0 ? chain_start(&c, &part) : chain_add(&c, &part);
            if (big && fabs(part.v.f) > *big) *big = fabs(part.v.f);
        }
        if (fsum && nb > 1) chain_end(&c, acc);
        return PK_OK;
    }
    pk__acc stack_parts[STACK_PARTS];
    pk__acc *parts = stack_parts;
    if (nb > STACK_PARTS && !(parts = pk__malloc((size_t)nb * sizeof *parts)))
        return pk__fail(ctx, PK_ERR_NOMEM, "reduce: no memory for %lld partials",
                        (long long)nb);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t b = 0; b < nb; b++) {
        int64_t at = b * PK__BLOCK, len = n - at < PK__BLOCK ? n - at : PK__BLOCK;
        if (y) block_dot(AT(x, at, size), AT(y, at, size), len, &parts[b]);
        else f->block(AT(x, at, size), len, at, &parts[b]);
    }
    *acc = parts[0];
    combine_run(f, fsum, acc, parts + 1, nb - 1, 1);
    for (int64_t b = 0; big && b < nb; b++)
        if (fabs(parts[b].v.f) > *big) *big = fabs(parts[b].v.f);
    if (parts != stack_parts) pk__free(parts);
    return PK_OK;
}

/* Float sums and dots over several blocks whose result cancelled to below
 * 2^-40 of a block partial: each partial may be off by ~2^-56 of itself
 * (pk__lanes_unsure; f32 data far less), which may be all of such a
 * result, so the whole is summed exactly (an exact cancellation gives 0;
 * rare data, serial and slow). Within a block the kernels see to it. */
static void exact_if_cancelled(pk_dtype t, const void *x, const void *y, int64_t n, double big,
                               pk__acc *acc)
{
    if ((t == PK_F32 || t == PK_F64) && n > PK__BLOCK && isfinite(acc->v.f) &&
        fabs(acc->v.f) < 0x1p-40 * big)
        (void)pk__cpu_exact_sum(t, x, y, n, acc);
}

pk_status pk__cpu_reduce(pk_ctx *ctx, pk_op op, pk_dtype t, const void *x,
                         int64_t n, void *out)
{
    const pk__reduce_fns *f = &KERNELS(ctx)->reduce[op][t];
    pk__acc acc;
    if (n > 0 && n <= PK__SERIAL_MAX) {
        f->rows(x, 1, n, n, out); /* bits depend only on the data, as always */
        pk__cpu_fix_results(op, t, x, 1, 0, n, 1, out); /* (f64 sums rescued there) */
        return PK_OK;
    }
    if (n == 0) {
        f->empty(&acc);
    } else {
        int threads = pk__cpu_team(ctx, n, (n + PK__BLOCK - 1) / PK__BLOCK);
        double big;
        pk_status s = reduce_blocks(ctx, f, FSUM(op, t), NULL, x, NULL, n,
                                    pk__dtypes[t].size, threads, &acc, &big);
        if (s != PK_OK) return s;
        if (op == PK_SUM) exact_if_cancelled(t, x, NULL, n, big, &acc);
    }
    f->finish(&acc, out);
    /* f64 sums that overflowed, unless a term was seen to be Inf or NaN. */
    if (op == PK_SUM && t == PK_F64 && n > 0 && !acc.idx)
        pk__cpu_rescue_sums_f64(x, NULL, 1, 0, n, out);
    pk__cpu_fix_results(op, t, x, 1, 0, n, 1, out);
    return PK_OK;
}

pk_status pk__cpu_reduce_partial(pk_ctx *ctx, pk_op op, pk_dtype t,
                                 const void *x, int64_t n, pk__acc *acc)
{
    const pk__reduce_fns *f = &KERNELS(ctx)->reduce[op][t];
    int threads = pk__cpu_team(ctx, n, (n + PK__BLOCK - 1) / PK__BLOCK);
    return reduce_blocks(ctx, f, FSUM(op, t), NULL, x, NULL, n, pk__dtypes[t].size, threads,
                         acc, NULL);
}

pk_status pk__cpu_dot(pk_ctx *ctx, pk_dtype t, int64_t n, const void *x,
                      const void *y, void *out)
{
    const pk__cpu_kernels *k = KERNELS(ctx);
    const pk__reduce_fns *f = &k->reduce[PK_SUM][t];
    pk__acc acc;
    if (n == 0) {
        f->empty(&acc);
    } else {
        int threads = pk__cpu_team(ctx, 2 * n, (n + PK__BLOCK - 1) / PK__BLOCK);
        double big;
        pk_status s = reduce_blocks(ctx, f, 1, k->dot_block[t == PK_F64], x, y, n,
                                    pk__dtypes[t].size, threads, &acc, &big);
        if (s != PK_OK) return s;
        exact_if_cancelled(t, x, y, n, big, &acc);
    }
    f->finish(&acc, out);
    if (t == PK_F64 && n > 0 && !acc.idx) pk__cpu_rescue_sums_f64(x, y, 1, 0, n, out);
    pk__cpu_canon_nan(t, out, 1);
    return PK_OK;
}

pk_status pk__cpu_axpy(pk_ctx *ctx, pk_dtype t, int64_t n, const void *alpha,
                       const void *x, void *y)
{
    void (*axpy)(int64_t, const void *, const void *, void *) =
        KERNELS(ctx)->axpy[t == PK_F64];
    size_t size = pk__dtypes[t].size;
    int64_t chunk = 1 << 16, nc = (n + chunk - 1) / chunk;
    int threads = pk__cpu_team(ctx, n, nc);
    if (threads <= 1) {
        axpy(n, alpha, x, y);
        return PK_OK;
    }
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t c = 0; c < nc; c++) {
        int64_t at = c * chunk, len = n - at < chunk ? n - at : chunk;
        axpy(len, alpha, AT(x, at, size), (char *)y + at * (int64_t)size);
    }
    return PK_OK;
}

/* axis = 1: one value per row. Short rows go through the rows kernel in row
 * chunks; long rows through the whole-array scheme, one row per thread when
 * there are enough rows, else one row at a time with every thread. Either
 * way a row's bits do not depend on the thread count. */
static pk_status reduce_rows(pk_ctx *ctx, const pk__reduce_fns *f, pk_op op, pk_dtype t,
                             int rescue, size_t size, size_t osize, const void *x,
                             int64_t rows, int64_t cols, int64_t ld, void *out)
{
    int64_t elems = rows * cols;
    if (cols <= PK__SHORT_ROW) {
        int64_t chunk = 4096, nc = (rows + chunk - 1) / chunk;
        int threads = pk__cpu_team(ctx, elems, nc);
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
        for (int64_t c = 0; c < nc; c++) {
            int64_t r0 = c * chunk, nr = rows - r0 < chunk ? rows - r0 : chunk;
            f->rows(AT(x, r0 * ld, size), nr, cols, ld, (char *)out + r0 * (int64_t)osize);
            pk__cpu_fix_results(op, t, AT(x, r0 * ld, size), nr, ld, cols, 1,
                                (char *)out + r0 * (int64_t)osize);
        }
        return PK_OK;
    }
    int threads = pk__cpu_team(ctx, elems, rows);
    if (threads > 1 && rows >= 2 * (int64_t)threads) {
#pragma omp parallel for schedule(static) num_threads(threads)
        for (int64_t r = 0; r < rows; r++) {
            pk__acc acc;
            double big;
            reduce_blocks(ctx, f, FSUM(op, t), NULL, AT(x, r * ld, size), NULL, cols, size, 1,
                          &acc, &big);
            if (op == PK_SUM) exact_if_cancelled(t, AT(x, r * ld, size), NULL, cols, big, &acc);
            f->finish(&acc, (char *)out + r * (int64_t)osize);
            if (rescue && !acc.idx)
                pk__cpu_rescue_sums_f64((const double *)x + r * ld, NULL, 1, 0, cols,
                                        (double *)out + r);
            pk__cpu_fix_results(op, t, AT(x, r * ld, size), 1, 0, cols, 1,
                                (char *)out + r * (int64_t)osize);
        }
        return PK_OK;
    }
    for (int64_t r = 0; r < rows; r++) {
        pk__acc acc;
        int row_threads = pk__cpu_team(ctx, cols, (cols + PK__BLOCK - 1) / PK__BLOCK);
        double big;
        pk_status s = reduce_blocks(ctx, f, FSUM(op, t), NULL, AT(x, r * ld, size), NULL, cols,
                                    size, row_threads, &acc, &big);
        if (s != PK_OK) return s;
        if (op == PK_SUM) exact_if_cancelled(t, AT(x, r * ld, size), NULL, cols, big, &acc);
        f->finish(&acc, (char *)out + r * (int64_t)osize);
        if (rescue && !acc.idx)
            pk__cpu_rescue_sums_f64((const double *)x + r * ld, NULL, 1, 0, cols,
                                    (double *)out + r);
        pk__cpu_fix_results(op, t, AT(x, r * ld, size), 1, 0, cols, 1,
                            (char *)out + r * (int64_t)osize);
    }
    return PK_OK;
}

/* axis = 0: one value per column. Row blocks fixed by the shape (at least
 * ROW_BLOCK rows and about TASK_ELEMS elements) give one partial per column
 * each, combined down each column in row-block order: the bits never depend
 * on the threads.
 * Tasks are (row block, column chunk); the chunk width does not change the
 * bits, so it is as wide as PK__COL_CHUNK allows while every thread still
 * gets two tasks: full-width rows are read as one stream.
 *
 * A narrow contiguous matrix (ld == cols, a few columns) is viewed as a wide
 * one: `fold` consecutive rows side by side make one row of fold * cols
 * (about FOLD_WIDTH) columns, so the cols kernel stays vectorised; partial j
 * of the wide view belongs to column j % cols. Each row block's fold
 * partials are combined first (in parallel over row blocks), in a fixed
 * order (arg ops break ties by index, so that order does not matter there).
 * Rows left over after the last full fold form one more, narrow, task.
 *
 * f64 sums keep partials few (fold width 512 and tall row blocks for narrow
 * matrices): with 2048 and 512-row blocks, and partials then combined with
 * the low parts added in plain double, short f64 columns of +-1e20 among
 * O(1) values erred past NumPy's (test_accuracy seed 11220249894731).
 * Partials now combine as a chain in three parts (chain_add above); the
 * f64 widths were kept, not re-measured.
 * Row blocks are at least ROW_BLOCK rows because every block costs a
 * combine per column, ~4 ns (a call and a double-double add; chains of one
 * column overlap only when the loop runs across columns, hence the strips):
 * 8192^2 f32 with 512-row blocks spent ~10% of its time combining (0.87 ->
 * 0.95 of the whole sum at 2048 rows, 2-core EPYC). Wide
 * matrices keep their parallelism through column chunks. */
#define ROW_BLOCK 2048
#define TASK_ELEMS ((int64_t)1 << 18)
#define FOLD_WIDTH 2048
#define FOLD_WIDTH_F64 512
#define MIN_CHUNK 512
#define COMBINE_STRIP 256

static pk_status reduce_cols(pk_ctx *ctx, const pk__reduce_fns *f, pk_op op, pk_dtype t,
                             int rescue, size_t size, size_t osize, const void *x,
                             int64_t rows, int64_t cols, int64_t ld, void *out)
{
    const int arg = op == PK_ARGMIN || op == PK_ARGMAX, fsum = FSUM(op, t);
    int64_t fw = t == PK_F64 ? FOLD_WIDTH_F64 : FOLD_WIDTH;
    int64_t fold = (ld == cols && 2 * cols <= fw) ? fw / cols : 1;
    if (rows < 2 * fold) fold = 1;
    int64_t wide = fold * cols, wrows = rows / fold, rest = rows - wrows * fold;
    int64_t wld = fold * ld;
    /* Shallow tasks keep their column states in L1 (512 columns). */
    int64_t cmax = wrows <= PK__SHALLOW_SWEEP ? MIN_CHUNK : PK__COL_CHUNK;
    int64_t span = wide < cmax ? wide : cmax;
    int64_t rb = (TASK_ELEMS / span) & ~(int64_t)7;
    if (rb < ROW_BLOCK) rb = ROW_BLOCK;
    int64_t nrb = (wrows + rb - 1) / rb;
    int threads = pk__cpu_team(ctx, rows * cols, nrb * ((wide + MIN_CHUNK - 1) / MIN_CHUNK));
    int64_t cw = span;
    while (cw > MIN_CHUNK && nrb * ((wide + cw - 1) / cw) < 2 * (int64_t)threads)
        cw = (cw / 2 + 15) & ~(int64_t)15;
    int64_t nchunks = (wide + cw - 1) / cw, tasks = nrb * nchunks;
    int64_t wbytes = PK__COL_WORK(cw > cols ? cw : cols);

    char *work = pk__aligned_alloc(64, (size_t)(threads * wbytes));
    if (!work)
        return pk__fail(ctx, PK_ERR_NOMEM, "reduce_axis: no memory for %d x %lld bytes of "
                        "scratch", threads, (long long)wbytes);
    if (nrb == 1 && fold == 1) { /* one row block: final values directly */
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
        for (int64_t c0 = 0; c0 < cols; c0 += cw) {
            int64_t nc = cols - c0 < cw ? cols - c0 : cw;
            f->cols(AT(x, c0, size), rows, nc, ld, 0, NULL,
                    (char *)out + c0 * (int64_t)osize, work + omp_get_thread_num() * wbytes);
            pk__cpu_fix_results(op, t, AT(x, c0, size), nc, 1, rows, ld,
                                (char *)out + c0 * (int64_t)osize);
        }
        pk__free(work);
        return PK_OK;
    }

    /* parts: nrb rows of `wide` partials, then `cols` for the leftover rows */
    pk__acc *parts = pk__malloc((size_t)(nrb * wide + cols) * sizeof *parts);
    if (!parts) {
        pk__free(work);
        return pk__fail(ctx, PK_ERR_NOMEM, "reduce_axis: no memory for %lld partials",
                        (long long)(nrb * wide + cols));
    }
    pk__acc *tail = parts + nrb * wide;
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
        char *w = work + omp_get_thread_num() * wbytes;
        /* dynamic: a few tasks a thread, of unequal sizes (the tail task) */
#pragma omp for schedule(dynamic, 1)
        for (int64_t task = 0; task <= tasks; task++) {
            if (task == tasks) { /* the rows that do not fill a fold */
                if (rest)
                    f->cols(AT(x, wrows * fold * ld, size), rest, cols, ld,
                            wrows * fold, tail, NULL, w);
                continue;
            }
            int64_t b = task / nchunks, c0 = (task % nchunks) * cw;
            int64_t r0 = b * rb, nr = wrows - r0 < rb ? wrows - r0 : rb;
            int64_t nc = wide - c0 < cw ? wide - c0 : cw;
            pk__acc *p = parts + b * wide + c0;
            f->cols(AT(x, r0 * wld + c0, size), nr, nc, wld, 0, p, NULL, w);
            for (int64_t j = 0; arg && j < nc; j++) /* wide-view index -> real row */
                p[j].idx = (r0 + p[j].idx) * fold + (c0 + j) / cols;
        }
        if (fold > 1) {
#pragma omp for schedule(static)
            for (int64_t b = 0; b < nrb; b++)
                for (int64_t c = 0; c < cols; c++)
                    combine_run(f, fsum, &parts[b * wide + c], &parts[b * wide + c + cols],
                                fold - 1, cols);
        }
        /* Down each column in row-block order, a strip of columns at a
         * time: one column's combines form a dependent chain, so the loop
         * over columns is the inner one (the chains overlap). */
#pragma omp for schedule(static)
        for (int64_t c0 = 0; c0 < cols; c0 += COMBINE_STRIP) {
            int64_t c1 = cols - c0 < COMBINE_STRIP ? cols : c0 + COMBINE_STRIP;
            if (fsum) { /* chains side by side, as below */
                chain ch[COMBINE_STRIP];
                for (int64_t c = c0; c < c1; c++) chain_start(&ch[c - c0], &parts[c]);
                for (int64_t b = 1; b < nrb; b++)
                    for (int64_t c = c0; c < c1; c++) chain_add(&ch[c - c0], &parts[b * wide + c]);
                for (int64_t c = c0; rest && c < c1; c++) chain_add(&ch[c - c0], &tail[c]);
                for (int64_t c = c0; c < c1; c++) chain_end(&ch[c - c0], &parts[c]);
            }
            for (int64_t b = 1; !fsum && b < nrb; b++)
                for (int64_t c = c0; c < c1; c++) f->combine(&parts[c], &parts[b * wide + c]);
            for (int64_t c = c0; !fsum && rest && c < c1; c++) f->combine(&parts[c], &tail[c]);
            for (int64_t c = c0; c < c1; c++) {
                f->finish(&parts[c], (char *)out + c * (int64_t)osize);
                /* f64 sums that overflowed, unless a term was Inf or NaN
                 * (sum_rescue.c; the one-row-block path above does it in
                 * the kernel). */
                if (rescue && !parts[c].idx)
                    pk__cpu_rescue_strided_f64((const double *)x + c, rows, ld, 0,
                                               (double *)out + c);
                pk__cpu_fix_results(op, t, AT(x, c, size), 1, 0, rows, ld,
                                    (char *)out + c * (int64_t)osize);
            }
        }
    }
    pk__free(parts);
    pk__free(work);
    return PK_OK;
}

/* Column sums of a contiguous f32 matrix whose width divides the block
 * kernel's lanes (10^7 x 2, n x 4, ...): the whole-array sum itself, over
 * the same fixed blocks, with its lanes kept per column; block partials are
 * combined down each column in block order. */
static pk_status sum_lanes(pk_ctx *ctx, const pk__reduce_fns *f, const void *x, int64_t rows,
                           int64_t cols, void *out)
{
    void (*lanes)(const void *, int64_t, int64_t, pk__acc *) = KERNELS(ctx)->sum_lanes_f32;
    int64_t n = rows * cols, nb = (n + PK__BLOCK - 1) / PK__BLOCK;
    pk__acc *parts = pk__malloc((size_t)(nb * cols) * sizeof *parts);
    if (!parts)
        return pk__fail(ctx, PK_ERR_NOMEM, "reduce_axis: no memory for %lld partials",
                        (long long)(nb * cols));
    int threads = pk__cpu_team(ctx, n, nb);
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
#pragma omp for schedule(static)
        for (int64_t b = 0; b < nb; b++) {
            int64_t at = b * PK__BLOCK, len = n - at < PK__BLOCK ? n - at : PK__BLOCK;
            lanes(AT(x, at, 4), len, cols, parts + b * cols);
        }
#pragma omp for schedule(static)
        for (int64_t c = 0; c < cols; c++) {
            pk__acc acc = parts[c];
            combine_run(f, 1, &acc, &parts[cols + c], nb - 1, cols);
            f->finish(&acc, (char *)out + c * 4);
            pk__cpu_canon_nan(PK_F32, (char *)out + c * 4, 1);
        }
    }
    pk__free(parts);
    return PK_OK;
}

/* Sums of two elements (2 x n on axis 0, n x 2 on axis 1): one addition
 * per output and no partials, in chunks over the threads. */
typedef void (*pair_fn)(const void *, const void *, int64_t, int64_t, int, void *);
#define PAIR_CHUNK ((int64_t)1 << 16)
/* Outputs of at least this many bytes bypass the caches (they would not
 * stay there, and their lines need not be read first). */
#define PAIR_STREAM_BYTES ((int64_t)16 << 20)
static pk_status sum_pairs(pk_ctx *ctx, pair_fn pair, size_t size, size_t osize,
                           const void *a, const void *b, int64_t stride, int64_t n,
                           void *out)
{
    int64_t nch = (n + PAIR_CHUNK - 1) / PAIR_CHUNK;
    int threads = pk__cpu_team(ctx, 2 * n, nch);
    int stream = n * (int64_t)osize >= PAIR_STREAM_BYTES;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
    for (int64_t k = 0; k < nch; k++) {
        int64_t i0 = k * PAIR_CHUNK, len = n - i0 < PAIR_CHUNK ? n - i0 : PAIR_CHUNK;
        pair(AT(a, i0 * stride, size), AT(b, i0 * stride, size), stride, len, stream,
             (char *)out + i0 * (int64_t)osize);
    }
    return PK_OK;
}

pk_status pk__cpu_reduce_axis(pk_ctx *ctx, pk_op op, pk_dtype t,
                              const void *x, int64_t rows, int64_t cols,
                              int64_t ld, int axis, void *out)
{
    const pk__reduce_fns *f = &KERNELS(ctx)->reduce[op][t];
    size_t size = pk__dtypes[t].size;
    size_t osize = pk__dtypes[pk_reduce_result_dtype(op, t)].size;
    int64_t nout = axis == 0 ? cols : rows;
    if ((axis == 0 ? rows : cols) == 0) { /* SUM or PROD of nothing */
        pk__acc acc;
        f->empty(&acc);
        for (int64_t i = 0; i < nout; i++) f->finish(&acc, (char *)out + i * (int64_t)osize);
        return PK_OK;
    }
    if (op == PK_SUM && (axis == 0 ? rows : cols) == 2) {
        pair_fn pair = KERNELS(ctx)->sum_pair[t];
        if (axis == 0) return sum_pairs(ctx, pair, size, osize, x, AT(x, ld, size), 1, cols, out);
        return sum_pairs(ctx, pair, size, osize, x, AT(x, 1, size), ld, rows, out);
    }
    if (op == PK_SUM && t == PK_F32 && axis == 0 && ld == cols && PK__SUM_LANES % cols == 0 &&
        KERNELS(ctx)->sum_lanes_f32)
        return sum_lanes(ctx, f, x, rows, cols, out);
    /* f64 sums whose partials overflowed (sum_rescue.c; the short-row
     * kernels do it themselves, on results still in cache; long rows as
     * each is done); the pair sums above round once, so their overflows are
     * real. */
    const int rescue = op == PK_SUM && t == PK_F64;
    if (axis == 1) return reduce_rows(ctx, f, op, t, rescue, size, osize, x, rows, cols, ld, out);
    return reduce_cols(ctx, f, op, t, rescue, size, osize, x, rows, cols, ld, out);
}
