/* The building blocks of the compensated float sums in reduce_kernels.c
 * (compiled once per ISA with it): the TwoSum steps, f32 error terms widened
 * into f64, the f32 sums' exact sub-blocks and the f32 column sweep of axis
 * 0. The whole-array, row and axis kernels that use them (PK__COMP_SUM) stay
 * in reduce_kernels.c. */
#ifndef PK_CPU_COMP_SUM_H
#define PK_CPU_COMP_SUM_H

#include "acc.h"
#include "axis_sweep.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#define INLINE static inline __attribute__((always_inline))

#if defined(__AVX512F__) || defined(__FMA__) || defined(__AVX2__)
#include <immintrin.h> /* FMA, the widening below, unsigned min / max */
#endif

/* f32 -> f64, exact. GCC lowers the generic conversion of 8 floats to a
 * zmm into extract/convert/insert; AVX-512 does it in one instruction. */
#if defined(__AVX512F__)
static inline vf64 pk__widen_f32(vf32h v) { return (vf64)_mm512_cvtps_pd((__m256)v); }
#else
static inline vf64 pk__widen_f32(vf32h v) { return __builtin_convertvector(v, vf64); }
#endif

/* ---- Float sums: compensated in the input's own precision -----------------
 * TwoSum keeps each addition's rounding error exactly (s + e == a + b), in f32
 * for f32 data (16 lanes a vector: twice the lanes of f64, which is what makes
 * it as fast as a plain f32 loop) and in f64 for f64 data. Cancellation such as
 * 1e30 - 1e30 among small values loses nothing. Block partials are folded into
 * f64 double-double in a fixed lane order. */

#define PK__COMP_STEP(v, s, c)                                              \
    do {                                                                    \
        __typeof__(s) t_, e_;                                               \
        PK__TWO_SUM(s, v, t_, e_);                                          \
        (s) = t_;                                                           \
        (c) += e_;                                                          \
    } while (0)
/* The same, the error added into f64 accumulators c (pk__err_add_D). */
#define PK__COMP_STEP_WIDE(D, v, s, c)                                      \
    do {                                                                    \
        __typeof__(s) t_, e_;                                               \
        PK__TWO_SUM(s, v, t_, e_);                                          \
        (s) = t_;                                                           \
        pk__err_add_##D(e_, c);                                             \
    } while (0)

/* l where h is finite, else 0, on the bits (float or double): a select on
 * a float compare does not vectorise under GCC's default -ftrapping-math,
 * and a scalar final pass made shallow column sums (8 x 8*10^6) 1.4x
 * slower. */
#define PK__ZERO_UNLESS_FINITE(h, l)                                        \
    ({                                                                      \
        __typeof__(l) r_ = (l), h_ = (h);                                   \
        if (sizeof r_ == 4) {                                               \
            uint32_t hb_, rb_;                                              \
            memcpy(&hb_, &h_, 4), memcpy(&rb_, &r_, 4);                     \
            rb_ &= -(uint32_t)((hb_ & 0x7f800000u) != 0x7f800000u);         \
            memcpy(&r_, &rb_, 4);                                           \
        } else {                                                            \
            uint64_t hb_, rb_;                                              \
            memcpy(&hb_, &h_, 8), memcpy(&rb_, &r_, 8);                     \
            rb_ &= -(uint64_t)((hb_ & 0x7ff0000000000000u) != 0x7ff0000000000000u); \
            memcpy(&r_, &rb_, 8);                                           \
        }                                                                   \
        r_;                                                                 \
    })

/* The 16 floats at p as two vectors of doubles (exact), each converted
 * straight from memory. */
INLINE void pk__widen_halves(const float *p, vf64 *h)
{
    h[0] = pk__widen_f32(PK__LOAD(vf32h, p));
    h[1] = pk__widen_f32(PK__LOAD(vf32h, p + 8));
}

/* Error terms of f32 data accumulate in f64, every step, lane k in
 * element k of c[0..1]. Summed in f32 (up to this change: moved into f64
 * every 32 steps) a giant's rounding error (1e20 + 1e20 + 1e20 is inexact
 * in f32: ~1e13) swallowed the O(1) terms that followed it, 10^0..10^1 off
 * where NumPy was exact (30001 x 2 column sums of +-1e20 among O(1) values;
 * test_accuracy sparse-big failed ~1 run in 100). Errors are at most 2^-24
 * |s| and the f64 error sum keeps them all while the data's span (largest
 * partial over smallest bit) stays within ~2^(77 - log2 steps); past that
 * it rounds at 2^-53 of the error sum, still far inside NumPy's error in
 * all but its lucky cases. Summing f32 data in f64 throughout (TwoSum on
 * widened values: a 2^106 span) cost 4-12% of the f32 sums' speed here
 * (the loop turned compute-bound), so it is not done. f64 data keep their
 * errors in f64 as they are (c[0]). */
INLINE void pk__err_add_f32(vf32 e, vf64 *c)
{
    c[0] += pk__widen_f32(__builtin_shufflevector(e, e, 0, 1, 2, 3, 4, 5, 6, 7));
    c[1] += pk__widen_f32(__builtin_shufflevector(e, e, 8, 9, 10, 11, 12, 13, 14, 15));
}
INLINE void pk__err_add_f64(vf64 e, vf64 *c) { c[0] += e; }

/* ---- f32 sums: exact sub-blocks ------------------------------------------
 * Summing f32 values in f64 is exact while each partial sum fits 53 bits of
 * the smallest input's ulp. Per sub-block of 512 floats (16 a lane of 32)
 * each lane tracks the largest and smallest nonzero |x| on the bits (one
 * unsigned max, one unsigned min of bits - 1, which skips zeros); when every
 * lane's exponent span is at most 24 (16 values of magnitude < 2^(emax -
 * 126) sum to < 2^(emax - 122), a multiple of 2^(emin - 150): span + 28 <=
 * 53 bits) the lane's f64 sum is exact and is added into a double-double
 * per lane. Otherwise (cancelling giants, tiny values beside large ones,
 * Inf or NaN) the sub-block is redone with TwoSum as before. Exact sums do
 * not depend on the order, so every ISA returns the same bits. About 8
 * vector operations per 16 floats against TwoSum's 11 (2-core EPYC, old
 * and new libpk in one process: one thread in L2 48 -> 70 GB/s, two in L3
 * 92 -> 104 GB/s; docs/ARCHITECTURE.md). */
#define PK__EXACT_SUB 512
/* Whether any lane of w is nonzero (GCC turns the plain loop into 16
 * extracts). */
INLINE int pk__any_i32(vi32 w)
{
#if defined(__AVX512F__)
    return _mm512_test_epi32_mask((__m512i)w, (__m512i)w) != 0;
#elif defined(__AVX2__)
    __m256i h[2];
    memcpy(h, &w, sizeof h);
    const __m256i o = _mm256_or_si256(h[0], h[1]);
    return !_mm256_testz_si256(o, o);
#else
    uint64_t u[8];
    memcpy(u, &w, sizeof u);
    return (u[0] | u[1] | u[2] | u[3] | u[4] | u[5] | u[6] | u[7]) != 0;
#endif
}
INLINE void pk__dd_merge(vf64 *h, vf64 *l, vf64 a)
{
    vf64 t, e;
    PK__TWO_SUM(*h, a, t, e);
    *h = t;
    *l += e;
}
/* Adds a 16-lane f32 TwoSum state (sums s; their errors in c, lane k in
 * element k % 8 of c[k / 8]) into the double-double lanes h[0..1] + l[0..1]. */
INLINE void pk__merge_f32_state(vf32 s, const vf64 *c, vf64 *h, vf64 *l)
{
    pk__dd_merge(&h[0], &l[0], pk__widen_f32(__builtin_shufflevector(s, s, 0, 1, 2, 3, 4, 5, 6, 7)));
    pk__dd_merge(&h[1], &l[1], pk__widen_f32(__builtin_shufflevector(s, s, 8, 9, 10, 11, 12, 13, 14, 15)));
    l[0] += c[0];
    l[1] += c[1];
}
/* Folds nv vectors of double-double lanes (h + l; lane j of the state is
 * element j % 8 of h[j / 8], nv * 8 lanes, a power of two) down to `cols`
 * lanes (cols a power of two dividing nv * 8) by a fixed tree: lane j with
 * lane j + cols first, then with j + 2 cols, and so on (every stride a
 * multiple of cols, so lane c ends as column c). Neighbours first, as in
 * NumPy's pairwise combine: a giant and its negative at adjacent positions
 * cancel before small values meet them. Each node keeps three parts: a
 * TwoSum of the high parts, its error added to the low parts' sum by
 * TwoSum, and the errors of both in a third part t (plain: they are ~2^-53
 * of the low parts). While a giant is the high part, the small values live
 * in the low part, which used to be added in plain double: 1e300 + 0.3 +
 * 0.1 + 0.7 - 1e300 gave 1.1 where the exact sum is 1.0999999999999999
 * (issue 55). Each lane leaves as the renormalised (h + l, its error + t).
 * TwoSum's results do not depend on the operands' order, so a lane and its
 * partner hold the same value after each in-vector step. The sequential
 * scalar fold this replaces was a chain of 48-64 dependent steps a block,
 * about 9% of a whole-array sum's time in L2 (2-core EPYC). Non-finite
 * lanes leave a non-finite result (TwoSum of Inf gives a NaN error), which
 * the callers redo as a plain sum. */
INLINE void pk__dd_node(vf64 *h, vf64 *l, vf64 *t, vf64 h2, vf64 l2, vf64 t2)
{
    vf64 s, e, a, f, b, g;
    PK__TWO_SUM(*h, h2, s, e);
    PK__TWO_SUM(*l, l2, a, f);
    PK__TWO_SUM(a, e, b, g);
    *h = s;
    *l = b;
    *t = (*t + t2) + (f + g);
}
#define PK__DD_SWAP_NODE(h, l, t, ...)                                      \
    pk__dd_node(&(h), &(l), &(t), __builtin_shufflevector(h, h, __VA_ARGS__), \
                __builtin_shufflevector(l, l, __VA_ARGS__),                 \
                __builtin_shufflevector(t, t, __VA_ARGS__))
INLINE void pk__fold_lanes(vf64 *h, vf64 *l, int nv, int64_t cols, pk__acc *acc)
{
    vf64 t[4] = {{0}}; /* nv <= 4 */
    for (int v = 0; v < nv; v++) { /* strides 1, 2, 4: lane j with j ^ stride */
        if (cols <= 1) PK__DD_SWAP_NODE(h[v], l[v], t[v], 1, 0, 3, 2, 5, 4, 7, 6);
        if (cols <= 2) PK__DD_SWAP_NODE(h[v], l[v], t[v], 2, 3, 0, 1, 6, 7, 4, 5);
        if (cols <= 4) PK__DD_SWAP_NODE(h[v], l[v], t[v], 4, 5, 6, 7, 0, 1, 2, 3);
    }
    for (int s = cols > 8 ? (int)cols / 8 : 1; s < nv; s *= 2) /* vector v with v + s */
        for (int v = 0; v < nv; v++)
            if (!(v & s)) pk__dd_node(&h[v], &l[v], &t[v], h[v + s], l[v + s], t[v + s]);
    for (int64_t c = 0; c < cols; c++) {
        double hi, lo;
        PK__TWO_SUM(h[c / 8][c % 8], l[c / 8][c % 8], hi, lo);
        acc[c] = (pk__acc){.v.f = hi, .lo = lo + t[c / 8][c % 8]};
    }
}
/* Whether a block's f64 lanes cannot vouch for its sum acc: their error
 * sums c0, c1 were added in plain double, each step's rounding up to 2^-53
 * of them, over at most PK__BLOCK / 16 steps. Normally they are ~2^-48 of
 * the sum; they grow to its size when a giant sat in a lane's high part
 * (every small value then went whole into c) or when the sum cancelled
 * (dots [a, a].[b, -b] gave -6e-33 for 0). Then the block is summed
 * exactly (pk__cpu_exact_sum). */
INLINE vf64 pk__vabs_f64(vf64 v) { return (vf64)((vu64)v & 0x7fffffffffffffffu); }
INLINE int pk__lanes_unsure(vf64 c0, vf64 c1, const pk__acc *acc)
{
    const vf64 a = pk__vabs_f64(c0) + pk__vabs_f64(c1);
    const double m = ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
    return m * 0x1p13 > fabs(acc->v.f) && isfinite(acc->v.f) && isfinite(acc->lo);
}
/* Unsigned lane max / min (GCC does not turn the generic select into
 * vpmaxud / vpminud; every form gives the same values). */
#if defined(__AVX512F__)
INLINE vu32 pk__umax(vu32 a, vu32 b) { return (vu32)_mm512_max_epu32((__m512i)a, (__m512i)b); }
INLINE vu32 pk__umin(vu32 a, vu32 b) { return (vu32)_mm512_min_epu32((__m512i)a, (__m512i)b); }
#elif defined(__AVX2__)
#define PK__U32_HALVES(OP, a, b)                                            \
    ({                                                                      \
        __m256i a_[2], b_[2];                                               \
        memcpy(a_, &(a), sizeof a_), memcpy(b_, &(b), sizeof b_);           \
        a_[0] = OP(a_[0], b_[0]), a_[1] = OP(a_[1], b_[1]);                 \
        vu32 r_;                                                            \
        memcpy(&r_, a_, sizeof r_);                                         \
        r_;                                                                 \
    })
INLINE vu32 pk__umax(vu32 a, vu32 b) { return PK__U32_HALVES(_mm256_max_epu32, a, b); }
INLINE vu32 pk__umin(vu32 a, vu32 b) { return PK__U32_HALVES(_mm256_min_epu32, a, b); }
#else
INLINE vu32 pk__umax(vu32 a, vu32 b) { return PK__SEL(vu32, vu32, a > b, a, b); }
INLINE vu32 pk__umin(vu32 a, vu32 b) { return PK__SEL(vu32, vu32, a < b, a, b); }
#endif

/* Whole sub-blocks of x[0, n): lane k (element i % 32) into h[k / 8][k % 8]
 * + l[...]. Returns the elements consumed (a multiple of PK__EXACT_SUB).
 * f64 data have none (PK__COMP_SUM calls pk__exact_sub_##D). */
static int64_t pk__exact_sub_f32(const float *x, int64_t n, vf64 h[4], vf64 l[4])
{
    int64_t i = 0;
    for (; i + PK__EXACT_SUB <= n; i += PK__EXACT_SUB) {
        const float *p = x + i;
        vf64 a[4] = {{0}};
        vu32 mx[2] = {{0}}, mn[2];
        mn[0] = mn[1] = (vu32){0} - 1u;
        for (int j = 0; j < PK__EXACT_SUB; j += 32) {
            PK__PREFETCH_SPAN(p + j, 32 * sizeof(float));
            PK__HINT_LINES(p + j, 32 * sizeof(float), PK__SUM_F32_FAR, 0, 2); /* l1 profile */
            for (int v = 0; v < 4; v++) a[v] += pk__widen_f32(PK__LOAD(vf32h, p + j + 8 * v));
            for (int v = 0; v < 2; v++) {
                const vu32 b = PK__LOAD(vu32, p + j + 16 * v) & 0x7fffffffu;
                mx[v] = pk__umax(mx[v], b);
                mn[v] = pk__umin(mn[v], b - 1u);
            }
        }
        vi32 wide = {0}; /* lanes whose span is too wide for an exact sum */
        for (int v = 0; v < 2; v++) {
            const vu32 lo = (mn[v] + 1u) >> 23, ehi = mx[v] >> 23;
            const vu32 elo = PK__SEL(vu32, vu32, lo < 1u, (vu32){0} + 1u, lo);
            wide |= (vi32)(ehi - elo) > 24;
        }
        if (!pk__any_i32(wide)) {
            for (int v = 0; v < 4; v++) pk__dd_merge(&h[v], &l[v], a[v]);
            continue;
        }
        /* TwoSum over the sub-block, lanes as above; its error sums are
         * small next to its own sums, so they join the low parts. */
        vf32 s[2] = {{0}};
        vf64 c[2][2] = {{{0}}};
        for (int j = 0; j < PK__EXACT_SUB; j += 32)
            for (int v = 0; v < 2; v++)
                PK__COMP_STEP_WIDE(f32, PK__LOAD(vf32, p + j + 16 * v), s[v], c[v]);
        for (int v = 0; v < 2; v++) pk__merge_f32_state(s[v], c[v], &h[2 * v], &l[2 * v]);
    }
    return i;
}
INLINE int64_t pk__exact_sub_f64(const double *x, int64_t n, vf64 h[4], vf64 l[4])
{
    (void)x, (void)n, (void)h, (void)l;
    return 0;
}

/* The f32 column-sum sweep (PK__COL_SWEEP's order and bits: each column's
 * rows in order, TwoSum in f32, its error added to an f64 sum) written with
 * whole vectors, each group's lines prefetched a vector at a time. GCC's
 * vectorisation of the macro loaded every element twice and needed the
 * prefetches in bursts; this form ran 8192^2 axis 0 at 0.95 of the
 * whole-array sum against 0.87-0.90 (2-core EPYC, memory at
 * ~45 GB/s; at ~80 GB/s axis 0 reaches 0.70-0.85, bound by its four
 * interleaved row streams, not by this arithmetic: an exact-sub-block sweep
 * with a third fewer instructions ran no faster from DRAM; see
 * docs/ARCHITECTURE.md, "Tried and not kept"). The errors' f64 sums stay
 * in registers (through pk__err_add_f32's array they went through the
 * stack). Tails (columns past the last whole vector, rows past the last
 * group) go one by one. */
INLINE void pk__sum_f32_col(const float *restrict x, int64_t nrows, int64_t ld,
                            float *restrict ws, double *restrict we2)
{
    float s = *ws;
    double e = *we2;
    for (int64_t k = 0; k < nrows; k++) {
        float v = x[k * ld], t, d;
        PK__TWO_SUM(s, v, t, d);
        s = t;
        e += d;
    }
    *ws = s;
    *we2 = e;
}
/* A group of G rows over columns [0, cols) by whole vectors (the tails are
 * the caller's). For the vector at column c, PRE(c) runs first, HINT(k)
 * before its row k and NEXT() after it. */
#define PK__SUM_F32_GROUP(G, g, ld, cols, ws, we2, PRE, HINT, NEXT)         \
    do {                                                                    \
        int64_t c_ = 0;                                                     \
        for (; c_ + 16 <= (cols); c_ += 16) {                               \
            PRE(c_);                                                        \
            vf32 s_ = PK__LOAD(vf32, (ws) + c_);                            \
            vf64 e0_ = PK__LOAD(vf64, (we2) + c_), e1_ = PK__LOAD(vf64, (we2) + c_ + 8); \
            for (int k_ = 0; k_ < (G); k_++) {                              \
                HINT(k_);                                                   \
                vf32 v_ = PK__LOAD(vf32, (g) + k_ * (ld) + c_), t_, d_;     \
                PK__TWO_SUM(s_, v_, t_, d_);                                \
                s_ = t_;                                                    \
                e0_ += pk__widen_f32(__builtin_shufflevector(d_, d_, 0, 1, 2, 3, 4, 5, 6, 7)); \
                e1_ += pk__widen_f32(__builtin_shufflevector(d_, d_, 8, 9, 10, 11, 12, 13, 14, 15)); \
            }                                                               \
            memcpy((ws) + c_, &s_, sizeof s_);                              \
            memcpy((we2) + c_, &e0_, sizeof e0_);                           \
            memcpy((we2) + c_ + 8, &e1_, sizeof e1_);                       \
            NEXT();                                                         \
        }                                                                   \
        for (; c_ < (cols); c_++) pk__sum_f32_col((g) + c_, (G), (ld), (ws) + c_, (we2) + c_); \
    } while (0)
#define PK__SUM_F32_ROW_HINTS(c) PK__AXIS_HINT_GROUP(float, g, ld, c, cols, 64)
#define PK__SUM_F32_NO_PRE(c) ((void)0)
#define PK__SUM_F32_NO_HINT(k) ((void)0)
/* "l2" profile, rows at most PK__COL_CHUNK elements apart: groups of
 * PK__AXIS_BLOCK_ROWS rows, and while one group is summed the next one is
 * hinted into L1 (prefetcht0), a line per line read, in address order
 * (hp_ walks the next group's row segments; with ld == cols that is one
 * forward stream per thread, as in the whole-array sum); the group's rows
 * are then read from L2. Twice the rows of a group halve the column states'
 * traffic (12 bytes a column, read and written once a group). Each hint
 * goes next to a row's load: the same hints as a burst of 8 before or after
 * the vector ran 3-10% slower. Rows further apart (a column chunk of a
 * wider matrix) keep the 4-row groups: there the hints walk 8 segments far
 * apart and ran 1-6% slower than the 4-row groups (300 x 10^5, 2000 x
 * 40000); 2-core EPYC (Zen 5). */
#define PK__SUM_F32_BLOCK_HINT(k)                                           \
    do {                                                                    \
        if (ahead_) __builtin_prefetch((const void *)(hp_ + 64 * (uintptr_t)(k)), 0, 3); \
    } while (0)
#define PK__SUM_F32_BLOCK_NEXT()                                            \
    do {                                                                    \
        hp_ += 64 * PK__AXIS_BLOCK_ROWS;                                    \
        while (hp_ >= hend_) { /* on to the next row's segment(s) */       \
            hrow_ += (uintptr_t)ld * sizeof(float);                         \
            hp_ = hrow_ + (hp_ - hend_);                                    \
            hend_ = hrow_ + rbytes_;                                        \
        }                                                                   \
    } while (0)
#define PK__SUM_F32_NO_NEXT() ((void)0)
/* Kept out of line: inlined into the cols kernel it ran 1-2% slower (the
 * loop's pointers spilled). */
__attribute__((noinline)) static void pk__sum_f32_sweep(const float *restrict x, int64_t rows,
                                                        int64_t cols, int64_t ld,
                                                        float *restrict ws,
                                                        double *restrict we2)
{
    int64_t r = 0;
#if PK__AXIS_BLOCK_ROWS > 0
    const uintptr_t rbytes_ = (uintptr_t)cols * sizeof(float);
    const int64_t deep = ld <= PK__COL_CHUNK ? rows : 0; /* rows for 8-row groups */
    for (; r + PK__AXIS_BLOCK_ROWS <= deep; r += PK__AXIS_BLOCK_ROWS) {
        const float *g = x + r * ld;
        const int ahead_ = r + 2 * PK__AXIS_BLOCK_ROWS <= rows;
        /* as an integer: past the last group it points past the matrix */
        uintptr_t hrow_ = (uintptr_t)g + (uintptr_t)(PK__AXIS_BLOCK_ROWS * ld) * sizeof(float),
                  hp_ = hrow_, hend_ = hrow_ + rbytes_;
        PK__SUM_F32_GROUP(PK__AXIS_BLOCK_ROWS, g, ld, cols, ws, we2, PK__SUM_F32_NO_PRE,
                          PK__SUM_F32_BLOCK_HINT, PK__SUM_F32_BLOCK_NEXT);
    }
#endif
    for (; r + PK__COL_ROWS <= rows; r += PK__COL_ROWS) {
        const float *g = x + r * ld;
        PK__SUM_F32_GROUP(PK__COL_ROWS, g, ld, cols, ws, we2, PK__SUM_F32_ROW_HINTS,
                          PK__SUM_F32_NO_HINT, PK__SUM_F32_NO_NEXT);
    }
    for (int64_t c = 0; r < rows && c < cols; c++)
        pk__sum_f32_col(x + r * ld + c, rows - r, ld, ws + c, we2 + c);
}

#endif
