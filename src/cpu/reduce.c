/* CPU drivers for reductions, dot and axpy. Determinism comes from here: the
 * data are cut into blocks at fixed positions (PK__BLOCK elements; for axis 0,
 * row blocks fixed by the shape), each block gives a partial, and partials are
 * combined in data order. Threads only decide who computes which block, so
 * the bits never depend on the thread count. */
#include "cpu.h"

#include <stdlib.h>

#define KERNELS(ctx) ((const pk__cpu_kernels *)(ctx)->impl)
#define AT(p, i, size) ((const char *)(p) + (i) * (int64_t)(size))

/* Partials kept on the stack up to this many blocks. */
#define STACK_PARTS 256

/* The whole-array reduction of x[0..n) (n >= 1) into *acc. y != NULL makes
 * it a dot (block_dot) instead of a reduction (f->block). */
static pk_status reduce_blocks(pk_ctx *ctx, const pk__reduce_fns *f,
                               void (*block_dot)(const void *, const void *,
                                                 int64_t, pk__acc *),
                               const void *x, const void *y, int64_t n,
                               size_t size, int threads, pk__acc *acc)
{
    int64_t nb = (n + PK__BLOCK - 1) / PK__BLOCK;
    if (threads <= 1) {
        for (int64_t b = 0; b < nb; b++) {
            int64_t at = b * PK__BLOCK, len = n - at < PK__BLOCK ? n - at : PK__BLOCK;
            pk__acc part;
            if (y) block_dot(AT(x, at, size), AT(y, at, size), len, &part);
            else f->block(AT(x, at, size), len, at, &part);
            if (b == 0) *acc = part;
            else f->combine(acc, &part);
        }
        return PK_OK;
    }
    pk__acc stack_parts[STACK_PARTS];
    pk__acc *parts = stack_parts;
    if (nb > STACK_PARTS && !(parts = malloc((size_t)nb * sizeof *parts)))
        return pk__fail(ctx, PK_ERR_NOMEM, "reduce: no memory for %lld partials",
                        (long long)nb);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t b = 0; b < nb; b++) {
        int64_t at = b * PK__BLOCK, len = n - at < PK__BLOCK ? n - at : PK__BLOCK;
        if (y) block_dot(AT(x, at, size), AT(y, at, size), len, &parts[b]);
        else f->block(AT(x, at, size), len, at, &parts[b]);
    }
    *acc = parts[0];
    for (int64_t b = 1; b < nb; b++) f->combine(acc, &parts[b]);
    if (parts != stack_parts) free(parts);
    return PK_OK;
}

pk_status pk__cpu_reduce(pk_ctx *ctx, pk_op op, pk_dtype t, const void *x,
                         int64_t n, void *out)
{
    const pk__reduce_fns *f = &KERNELS(ctx)->reduce[op][t];
    pk__acc acc;
    if (n > 0 && n <= PK__SERIAL_MAX) {
        f->rows(x, 1, n, n, out); /* bits depend only on the data, as always */
        return PK_OK;
    }
    if (n == 0) {
        f->empty(&acc);
    } else {
        int threads = pk__cpu_team(ctx, n, (n + PK__BLOCK - 1) / PK__BLOCK);
        pk_status s = reduce_blocks(ctx, f, NULL, x, NULL, n,
                                    pk__dtypes[t].size, threads, &acc);
        if (s != PK_OK) return s;
    }
    f->finish(&acc, out);
    return PK_OK;
}

pk_status pk__cpu_reduce_partial(pk_ctx *ctx, pk_op op, pk_dtype t,
                                 const void *x, int64_t n, pk__acc *acc)
{
    const pk__reduce_fns *f = &KERNELS(ctx)->reduce[op][t];
    int threads = pk__cpu_team(ctx, n, (n + PK__BLOCK - 1) / PK__BLOCK);
    return reduce_blocks(ctx, f, NULL, x, NULL, n, pk__dtypes[t].size, threads, acc);
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
        pk_status s = reduce_blocks(ctx, f, k->dot_block[t == PK_F64], x, y, n,
                                    pk__dtypes[t].size, threads, &acc);
        if (s != PK_OK) return s;
    }
    f->finish(&acc, out);
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
static pk_status reduce_rows(pk_ctx *ctx, const pk__reduce_fns *f,
                             size_t size, size_t osize, const void *x,
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
        }
        return PK_OK;
    }
    int threads = pk__cpu_team(ctx, elems, rows);
    if (threads > 1 && rows >= 2 * (int64_t)threads) {
#pragma omp parallel for schedule(static) num_threads(threads)
        for (int64_t r = 0; r < rows; r++) {
            pk__acc acc;
            reduce_blocks(ctx, f, NULL, AT(x, r * ld, size), NULL, cols, size, 1, &acc);
            f->finish(&acc, (char *)out + r * (int64_t)osize);
        }
        return PK_OK;
    }
    for (int64_t r = 0; r < rows; r++) {
        pk__acc acc;
        int row_threads = pk__cpu_team(ctx, cols, (cols + PK__BLOCK - 1) / PK__BLOCK);
        pk_status s = reduce_blocks(ctx, f, NULL, AT(x, r * ld, size), NULL, cols,
                                    size, row_threads, &acc);
        if (s != PK_OK) return s;
        f->finish(&acc, (char *)out + r * (int64_t)osize);
    }
    return PK_OK;
}

/* axis = 0: one value per column. Tasks are (row block, column chunk) with
 * the row-block height fixed by the shape (about 2^18 elements a task); the
 * partials are combined down each column in row-block order.
 *
 * A narrow contiguous matrix (ld == cols, a few columns) is viewed as a wide
 * one: `fold` consecutive rows side by side make one row of fold * cols
 * columns, so the cols kernel stays vectorised; partial j of the wide view
 * belongs to column j % cols and the fold partials are combined in a fixed
 * order (arg ops break ties by index, so that order does not matter there).
 * Rows left over after the last full fold form one more, narrow, task. */
static pk_status reduce_cols(pk_ctx *ctx, const pk__reduce_fns *f,
                             size_t size, size_t osize, const void *x,
                             int64_t rows, int64_t cols, int64_t ld, void *out)
{
    int64_t fold = (ld == cols && 2 * cols <= PK__COL_CHUNK) ? PK__COL_CHUNK / cols : 1;
    if (rows < 2 * fold) fold = 1;
    int64_t wide = fold * cols, wrows = rows / fold, rest = rows - wrows * fold;
    int64_t wld = fold * ld;
    int64_t cw = wide < PK__COL_CHUNK ? wide : PK__COL_CHUNK;
    int64_t nchunks = (wide + cw - 1) / cw;
    int64_t rb = ((int64_t)1 << 18) / cw;
    if (rb < 1) rb = 1;
    int64_t nrb = (wrows + rb - 1) / rb;
    int64_t tasks = nrb * nchunks;
    int threads = pk__cpu_team(ctx, rows * cols, tasks);

    if (nrb == 1 && fold == 1) { /* one row block: final values directly */
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
        for (int64_t c0 = 0; c0 < cols; c0 += cw) {
            int64_t nc = cols - c0 < cw ? cols - c0 : cw;
            f->cols(AT(x, c0, size), rows, nc, ld, 0, NULL,
                    (char *)out + c0 * (int64_t)osize);
        }
        return PK_OK;
    }

    /* parts: nrb rows of `wide` partials, then `cols` for the leftover rows */
    pk__acc *parts = malloc((size_t)(nrb * wide + cols) * sizeof *parts);
    if (!parts)
        return pk__fail(ctx, PK_ERR_NOMEM, "reduce_axis: no memory for %lld partials",
                        (long long)(nrb * wide + cols));
    pk__acc *tail = parts + nrb * wide;
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
#pragma omp for schedule(static)
        for (int64_t task = 0; task <= tasks; task++) {
            if (task == tasks) { /* the rows that do not fill a fold */
                if (rest)
                    f->cols(AT(x, wrows * fold * ld, size), rest, cols, ld,
                            wrows * fold, tail, NULL);
                continue;
            }
            int64_t b = task / nchunks, c0 = (task % nchunks) * cw;
            int64_t r0 = b * rb, nr = wrows - r0 < rb ? wrows - r0 : rb;
            int64_t nc = wide - c0 < cw ? wide - c0 : cw;
            pk__acc *p = parts + b * wide + c0;
            f->cols(AT(x, r0 * wld + c0, size), nr, nc, wld, 0, p, NULL);
            for (int64_t j = 0; j < nc; j++) /* wide-view index -> real row */
                p[j].idx = (r0 + p[j].idx) * fold + (c0 + j) / cols;
        }
#pragma omp for schedule(static)
        for (int64_t c = 0; c < cols; c++) {
            pk__acc acc = parts[c];
            for (int64_t b = 0; b < nrb; b++)
                for (int64_t j = c; j < wide; j += cols)
                    if (b || j != c) f->combine(&acc, &parts[b * wide + j]);
            if (rest) f->combine(&acc, &tail[c]);
            f->finish(&acc, (char *)out + c * (int64_t)osize);
        }
    }
    free(parts);
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
    if (axis == 1) return reduce_rows(ctx, f, size, osize, x, rows, cols, ld, out);
    return reduce_cols(ctx, f, size, osize, x, rows, cols, ld, out);
}
