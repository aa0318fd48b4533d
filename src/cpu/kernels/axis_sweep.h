/* The loop skeletons of the axis kernels, shared by every (op, dtype)
 * generator in reduce_kernels.c: the short-row kernel of axis 1
 * (PK__ROWS_KERNEL) and the axis-0 column sweep (PK__COL_SWEEP). Each op
 * plugs in its per-row function or its per-column state and step. */
#ifndef PK_CPU_AXIS_SWEEP_H
#define PK_CPU_AXIS_SWEEP_H

#include "kernels.h"
#include "vec.h"

/* Per-row kernel for axis 1: specialises the common contiguous short rows
 * (ld == cols <= 4) so that the compiler unrolls and vectorises across rows,
 * in strips of 64 rows whose lines are prefetched ahead (a short-row loop is
 * a single read stream, latency-bound like the block kernels). FIX(r0, nr,
 * len, ld) runs after each strip, and after all rows otherwise, on results
 * still in cache (f64 sums: the overflow rescue; PK__ROWS_NO_FIX else). */
#define PK__ROWS_STRIPS(ROWFN, C, FIX)                                      \
    for (int64_t r0 = 0; r0 < rows; r0 += 64) {                             \
        int64_t r1 = rows - r0 < 64 ? rows : r0 + 64;                       \
        PK__PREFETCH_RANGE(x + r0 * (C), 64 * (C) * (int64_t)sizeof(*x));   \
        for (int64_t r = r0; r < r1; r++) out[r] = ROWFN(x + (C) * r, C);   \
        FIX(r0, r1 - r0, C, C);                                             \
    }
#define PK__ROWS_NO_FIX(r0, nr, len, ld) ((void)0)
#define PK__ROWS_KERNEL(NAME, T, RT, ROWFN, FIX)                            \
    static void NAME##_rows(const void *xv, int64_t rows, int64_t cols,     \
                            int64_t ld, void *outv)                         \
    {                                                                       \
        const T *x = xv;                                                    \
        RT *out = outv;                                                     \
        if (ld == cols && cols <= 4) {                                      \
            switch (cols) {                                                 \
            case 1: PK__ROWS_STRIPS(ROWFN, 1, FIX); return;                 \
            case 2: PK__ROWS_STRIPS(ROWFN, 2, FIX); return;                 \
            case 3: PK__ROWS_STRIPS(ROWFN, 3, FIX); return;                 \
            default: PK__ROWS_STRIPS(ROWFN, 4, FIX); return;                \
            }                                                               \
        }                                                                   \
        for (int64_t r = 0; r < rows; r++) {                                \
            if (r + 8 < rows) PK__PREFETCH_ROW(x + (r + 8) * ld, cols * sizeof(T)); \
            out[r] = ROWFN(x + r * ld, cols);                               \
        }                                                                   \
        FIX(0, rows, cols, ld);                                             \
    }

/* ---- Axis-0 sweeps ------------------------------------------------------
 * An axis-0 kernel keeps one state per column in the caller's scratch and
 * sweeps its rows PK__COL_ROWS at a time: a column's state is loaded once,
 * the group's rows are applied in row order, and it is stored back. Each
 * column still sees its rows in order (the bits of a row-by-row loop), and
 * a full-width task reads its rows as one forward stream. Every line of the
 * group's rows is hinted ahead in its row's stream (PK__AXIS_HINT_GROUP),
 * a block of PK__COL_BLOCK bytes a row at a time (a hint per line: longer
 * bursts of hints stalled). Measured on the 2-core EPYC, 8192^2 against
 * the whole-array sum of the same data: 8 rows and no hints (the hardware
 * prefetcher alone: 8 interleaved streams) 0.73-0.78 for f32 sum, max,
 * argmax and f64 sum; 4 rows with hints 0.93-0.97 (256-byte blocks 0.88-0.96,
 * 64-byte 0.92-0.98; 8 rows with hints 0.75-0.80). LOAD declares column
 * c_'s state, STEP applies the value X_ of row R_, STORE writes the state
 * back. The sweep lives in a function whose state arrays are restrict
 * parameters: without that GCC does not vectorise it. f32 sums have their
 * own sweep (pk__sum_f32_sweep).
 * Shallow tasks (at most PK__SHALLOW_SWEEP rows; the driver gives them 512
 * columns, whose states stay in L1) go row by row, the segment 4 rows on
 * hinted into L2, as before the grouping: there 8 short segments pages
 * apart, interleaved, were slower (8 x 8*10^6 f32: 0.66 -> 0.46). */
#define PK__COL_ROWS 4
#define PK__COL_BLOCK 128
/* PK__COL_GROUP spells out the group's rows. */
_Static_assert(PK__COL_ROWS == 4, "PK__COL_GROUP applies 4 rows");
#define PK__SLOT(work, k, type, cols) ((type *)((char *)(work) + (k) * PK__COL_SLOT(cols)))
#define PK__COL_APPLY(STEP, val, row)                                       \
    {                                                                       \
        const __typeof__(val) X_ = (val);                                   \
        const int64_t R_ = (row);                                           \
        (void)R_;                                                           \
        STEP;                                                               \
    }
#define PK__COL_BLOCK_N(T) ((int)(PK__COL_BLOCK / sizeof(T)))
/* The axis-0 hints for `bytes` from column c (of cols, elements of T) in
 * each row of the group that starts at g: every line PK__AXIS_AHEAD bytes
 * ahead (PK__AXIS_LOCALITY) and, where the profile has one, PK__AXIS_FAR
 * bytes ahead into L2 (vec.h). Ahead means along the row's own stream, which
 * goes on in the same row of the next group, PK__COL_ROWS rows down
 * (PK__AXIS_WRAP: decided once a block, from its first column; a segment
 * shorter than the distance sends the hint a row or more past that, still
 * in rows soon read). Before, a hint within AHEAD of a segment's end fell
 * past it (on the start of the next row when ld == cols, which the group
 * was already reading), so every group's segments began unhinted. The
 * addresses are formed as integers: past the matrix's end they point at no
 * object, and the hint itself never faults. 2-core EPYC (Zen 5), 8192^2 f32 sum
 * against the whole-array sum, one process alternating builds: with the
 * memory in its fast phase (whole sum 67-73 GB/s), L1 hints 2 KiB ahead
 * 0.73-0.77, with the wrap 0.76-0.81, and L2 hints 12 KiB ahead too
 * 0.88-0.98 (4-8 KiB: 0.85-0.95); in its medium phase 0.90-0.91, 0.90-0.93
 * and 0.865-0.88: the far hint costs 2-4% there and gains 15-25% in the
 * fast phase. */
#define PK__AXIS_WRAP(T, c, cols, ld, ahead)                                \
    ((c) + (ahead) / (int64_t)sizeof(T) >= (cols)                           \
         ? (PK__COL_ROWS * (int64_t)(ld) - (cols)) * (int64_t)sizeof(T)     \
         : (int64_t)0)
#define PK__AXIS_HINT_GROUP(T, g, ld, c, cols, bytes)                       \
    do {                                                                    \
        const int64_t wn_ = PK__AXIS_WRAP(T, c, cols, ld, PK__AXIS_AHEAD);  \
        const int64_t wf_ = PK__AXIS_WRAP(T, c, cols, ld, PK__AXIS_FAR);    \
        for (int k_ = 0; k_ < PK__COL_ROWS; k_++) {                         \
            const uintptr_t q_ = (uintptr_t)((g) + k_ * (int64_t)(ld) + (c)); \
            for (int o_ = 0; o_ < (int)(bytes); o_ += 64) {                 \
                __builtin_prefetch((const void *)(q_ + (uintptr_t)(wn_ + o_ + PK__AXIS_AHEAD)), \
                                   0, PK__AXIS_LOCALITY);                   \
                if (PK__AXIS_FAR > 0)                                       \
                    __builtin_prefetch(                                     \
                        (const void *)(q_ + (uintptr_t)(wf_ + o_ + PK__AXIS_FAR)), 0, 2); \
            }                                                               \
        }                                                                   \
    } while (0)
/* Column c's state through rows r_ .. r_ + PK__COL_ROWS - 1 of g_. */
#define PK__COL_GROUP(c, ld, LOAD, STEP, STORE)                             \
    {                                                                       \
        const int64_t c_ = (c);                                             \
        LOAD;                                                               \
        PK__COL_APPLY(STEP, g_[c_], r_)                                     \
        PK__COL_APPLY(STEP, g_[(ld) + c_], r_ + 1)                          \
        PK__COL_APPLY(STEP, g_[2 * (ld) + c_], r_ + 2)                      \
        PK__COL_APPLY(STEP, g_[3 * (ld) + c_], r_ + 3)                      \
        STORE;                                                              \
    }
#define PK__COL_SWEEP(T, x, ld, r0, rows, cols, LOAD, STEP, STORE)          \
    do {                                                                    \
        int64_t r_ = (r0);                                                  \
        int shallow_ = (rows) <= PK__SHALLOW_SWEEP;                         \
        for (; !shallow_ && r_ + PK__COL_ROWS <= (rows); r_ += PK__COL_ROWS) { \
            const T *g_ = (x) + r_ * (ld);                                  \
            int64_t c0_ = 0;                                                \
            for (; c0_ + PK__COL_BLOCK_N(T) <= (cols); c0_ += PK__COL_BLOCK_N(T)) { \
                PK__AXIS_HINT_GROUP(T, g_, ld, c0_, cols, PK__COL_BLOCK);   \
                for (int j_ = 0; j_ < PK__COL_BLOCK_N(T); j_++)             \
                    PK__COL_GROUP(c0_ + j_, ld, LOAD, STEP, STORE)          \
            }                                                               \
            for (int64_t ct_ = c0_; ct_ < (cols); ct_++)                    \
                PK__COL_GROUP(ct_, ld, LOAD, STEP, STORE)                   \
        }                                                                   \
        for (; r_ < (rows); r_++) {                                         \
            const T *g_ = (x) + r_ * (ld);                                  \
            if (shallow_ && (rows) > PK__SHALLOW_ROWS && r_ + 4 < (rows))   \
                PK__PREFETCH_ROW(g_ + 4 * (ld), (cols) * sizeof(T));        \
            for (int64_t c_ = 0; c_ < (cols); c_++) {                       \
                LOAD;                                                       \
                PK__COL_APPLY(STEP, g_[c_], r_)                             \
                STORE;                                                      \
            }                                                               \
        }                                                                   \
    } while (0)

#endif
