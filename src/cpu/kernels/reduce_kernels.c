/* The fast CPU kernels. This one source is compiled once per ISA (see
 * CMakeLists.txt: PK_ISA_SYMBOL names the table, the flags pick the ISA) and
 * always with -ffp-contract=off: the lane structure is fixed here (32 lanes
 * for sums, products and dots, 2 vectors for min/max/arg), so every ISA
 * computes the same tree and returns the same bits. */
#include "acc.h"
#include "gemm.h"
#include "table.h"

#ifndef PK_ISA_SYMBOL
#error "PK_ISA_SYMBOL must name the table this build defines"
#endif

#define INLINE static inline __attribute__((always_inline))

#if defined(__AVX512F__) || defined(__FMA__)
#include <immintrin.h> /* the FMA of two_prod_err_f32, the widening below */
#endif

/* f32 -> f64, exact. GCC lowers the generic conversion of 8 floats to a
 * zmm into extract/convert/insert; AVX-512 does it in one instruction. */
#if defined(__AVX512F__)
static inline vf64 pk__widen_f32(vf32h v) { return (vf64)_mm512_cvtps_pd((__m256)v); }
#else
static inline vf64 pk__widen_f32(vf32h v) { return __builtin_convertvector(v, vf64); }
#endif

/* Per-row kernel for axis 1: specialises the common contiguous short rows
 * (ld == cols <= 4) so that the compiler unrolls and vectorises across rows,
 * in strips of 64 rows whose lines are prefetched ahead (a short-row loop is
 * a single read stream, latency-bound like the block kernels). */
#define PK__ROWS_STRIPS(ROWFN, C)                                           \
    for (int64_t r0 = 0; r0 < rows; r0 += 64) {                            \
        int64_t r1 = rows - r0 < 64 ? rows : r0 + 64;                      \
        PK__PREFETCH_RANGE(x + r0 * (C), 64 * (C) * (int64_t)sizeof(*x));   \
        for (int64_t r = r0; r < r1; r++) out[r] = ROWFN(x + (C) * r, C);  \
    }
#define PK__ROWS_KERNEL(NAME, T, RT, ROWFN)                                 \
    static void NAME##_rows(const void *xv, int64_t rows, int64_t cols,     \
                            int64_t ld, void *outv)                         \
    {                                                                       \
        const T *x = xv;                                                    \
        RT *out = outv;                                                     \
        if (ld == cols && cols <= 4) {                                      \
            switch (cols) {                                                 \
            case 1: PK__ROWS_STRIPS(ROWFN, 1); return;                      \
            case 2: PK__ROWS_STRIPS(ROWFN, 2); return;                      \
            case 3: PK__ROWS_STRIPS(ROWFN, 3); return;                      \
            default: PK__ROWS_STRIPS(ROWFN, 4); return;                     \
            }                                                               \
        }                                                                   \
        for (int64_t r = 0; r < rows; r++) {                                \
            if (r + 8 < rows) PK__PREFETCH_ROW(x + (r + 8) * ld, cols * sizeof(T)); \
            out[r] = ROWFN(x + r * ld, cols);                               \
        }                                                                   \
    }

/* ---- Sums and products without compensation: 4 x 8 lanes ------------- */
#define PK__WIDEN_F32(v, VA) pk__widen_f32(v)
#define PK__WIDEN_vf64(v, VA) (v)
#define PK__WIDEN_vi64(v, VA) ((VA)__builtin_convertvector(v, vi64))
#define PK__WIDEN_vu64(v, VA) ((VA)__builtin_convertvector(v, vu64))
/* VIN: 8 inputs; VW: 8 widened (same signedness); VA: 8 accumulators. */
#define PK__WIDE(NAME, T, VIN, VW, VA, A, FLD, RT, OP, IDENT)              \
    INLINE VA NAME##_cvt(VIN v) { return PK__WIDEN_##VW(v, VA); }         \
    static void NAME##_block(const void *xv, int64_t n, int64_t base,      \
                             pk__acc *acc)                                  \
    {                                                                       \
        (void)base;                                                         \
        const T *x = xv;                                                    \
        VA a0 = (VA){0} + (A)(IDENT), a1 = a0, a2 = a0, a3 = a0;            \
        int64_t i = 0;                                                      \
        for (; i + 32 <= n; i += 32) {                                      \
        PK__PREFETCH_SPAN(x + i, 32 * sizeof(T));                                          \
            a0 = a0 OP NAME##_cvt(PK__LOAD(VIN, x + i));                    \
            a1 = a1 OP NAME##_cvt(PK__LOAD(VIN, x + i + 8));                \
            a2 = a2 OP NAME##_cvt(PK__LOAD(VIN, x + i + 16));               \
            a3 = a3 OP NAME##_cvt(PK__LOAD(VIN, x + i + 24));               \
        }                                                                   \
        if (i < n) {                                                        \
            T pad[32];                                                      \
            for (int k = 0; k < 32; k++)                                    \
                pad[k] = i + k < n ? x[i + k] : (T)(IDENT);                 \
            a0 = a0 OP NAME##_cvt(PK__LOAD(VIN, pad));                      \
            a1 = a1 OP NAME##_cvt(PK__LOAD(VIN, pad + 8));                  \
            a2 = a2 OP NAME##_cvt(PK__LOAD(VIN, pad + 16));                 \
            a3 = a3 OP NAME##_cvt(PK__LOAD(VIN, pad + 24));                 \
        }                                                                   \
        a0 = (a0 OP a1) OP (a2 OP a3);                                      \
        A r = ((a0[0] OP a0[1]) OP (a0[2] OP a0[3])) OP                     \
              ((a0[4] OP a0[5]) OP (a0[6] OP a0[7]));                       \
        *acc = (pk__acc){.v.FLD = r};                                       \
    }                                                                       \
    static void NAME##_cols(const void *xv, int64_t rows, int64_t cols,     \
                            int64_t ld, int64_t row0, pk__acc *acc,         \
                            void *out)                                      \
    {                                                                       \
        (void)row0;                                                         \
        const T *x = xv;                                                    \
        PK__PREFETCH_NEXT_CHUNK(x, rows, cols, ld, sizeof(T));             \
        A a[PK__COL_CHUNK];                                                 \
        for (int64_t c = 0; c < cols; c++) a[c] = (A)(IDENT);               \
        for (int64_t r = 0; r < rows; r++) {                                \
            const T *row = x + r * ld;                                      \
            if (r + 4 < rows && rows > PK__SHALLOW_ROWS) PK__PREFETCH_ROW(row + 4 * ld, cols * sizeof(T)); \
            for (int64_t c = 0; c < cols; c++) a[c] = a[c] OP (A)row[c];    \
        }                                                                   \
        if (out)                                                            \
            for (int64_t c = 0; c < cols; c++) ((RT *)out)[c] = (RT)a[c];   \
        else                                                                \
            for (int64_t c = 0; c < cols; c++) acc[c] = (pk__acc){.v.FLD = a[c]}; \
    }                                                                       \
    INLINE RT NAME##_row(const T *row, int64_t cols)                        \
    {                                                                       \
        A a = (A)(IDENT);                                                   \
        for (int64_t c = 0; c < cols; c++) a = a OP (A)row[c];              \
        return (RT)a;                                                       \
    }                                                                       \
    PK__ROWS_KERNEL(NAME, T, RT, NAME##_row)

PK__WIDE(prod_f32, float, vf32h, F32, vf64, double, f, float, *, 1)
PK__WIDE(prod_f64, double, vf64, vf64, vf64, double, f, double, *, 1)
PK__WIDE(sum_i32, int32_t, vi32h, vi64, vu64, uint64_t, u, int64_t, +, 0)
PK__WIDE(prod_i32, int32_t, vi32h, vi64, vu64, uint64_t, u, int64_t, *, 1)
PK__WIDE(sum_u32, uint32_t, vu32h, vu64, vu64, uint64_t, u, uint64_t, +, 0)
PK__WIDE(prod_u32, uint32_t, vu32h, vu64, vu64, uint64_t, u, uint64_t, *, 1)
PK__WIDE(sum_i64, int64_t, vi64, vi64, vu64, uint64_t, u, int64_t, +, 0)
PK__WIDE(prod_i64, int64_t, vi64, vi64, vu64, uint64_t, u, int64_t, *, 1)
PK__WIDE(sum_u64, uint64_t, vu64, vu64, vu64, uint64_t, u, uint64_t, +, 0)
PK__WIDE(prod_u64, uint64_t, vu64, vu64, vu64, uint64_t, u, uint64_t, *, 1)

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

/* NAME: sum_f32 / sum_f64; VT: a vector of T; L: lanes in VT. */
#define PK__COMP_SUM(NAME, T, VT, L, RT)                                    \
    static void NAME##_plain(const T *x, int64_t n, pk__acc *acc)           \
    {                                                                       \
        double s = 0.0;                                                     \
        for (int64_t i = 0; i < n; i++) s += x[i];                          \
        *acc = (pk__acc){.v.f = s};                                         \
    }                                                                       \
    static void NAME##_block(const void *xv, int64_t n, int64_t base,      \
                             pk__acc *acc)                                  \
    {                                                                       \
        (void)base;                                                         \
        const T *x = xv;                                                    \
        VT s0 = {0}, c0 = {0}, s1 = {0}, c1 = {0}, zero = {0};              \
        /* f32 error terms are moved into f64 (cd) every 32 steps: summed \
         * in f32 over a whole block (1024 steps on AVX2) their own        \
         * roundings grew past NumPy's error on cancelling giants (CI seed \
         * 9266039771010, PK_CPU_ISA=avx2). */                              \
        double cd[L] = {0};                                                 \
        int64_t i = 0;                                                      \
        int steps = 0;                                                      \
        for (; i + 2 * L <= n; i += 2 * L) {                                \
            PK__PREFETCH_SPAN(x + i, 2 * L * sizeof(T));                    \
            PK__COMP_STEP(PK__LOAD(VT, x + i), s0, c0);                     \
            PK__COMP_STEP(PK__LOAD(VT, x + i + L), s1, c1);                 \
            if (sizeof(T) == 4 && ++steps == 32) {                          \
                steps = 0;                                                  \
                for (int k = 0; k < L; k++) cd[k] += (double)c0[k] + (double)c1[k]; \
                c0 = c1 = zero;                                             \
            }                                                               \
        }                                                                   \
        if (i < n) {                                                        \
            T pad[2 * L];                                                   \
            for (int k = 0; k < 2 * L; k++) pad[k] = i + k < n ? x[i + k] : 0; \
            PK__COMP_STEP(PK__LOAD(VT, pad), s0, c0);                       \
            PK__COMP_STEP(PK__LOAD(VT, pad + L), s1, c1);                   \
        }                                                                   \
        *acc = (pk__acc){.v.f = 0.0};                                       \
        for (int k = 0; k < L; k++) pk__dd_add(acc, s0[k], c0[k]);          \
        for (int k = 0; k < L; k++) pk__dd_add(acc, s1[k], c1[k]);          \
        if (sizeof(T) == 4)                                                 \
            for (int k = 0; k < L; k++) pk__dd_add(acc, cd[k], 0.0);        \
        /* TwoSum turns Inf into NaN: redo such a block as a plain sum. */  \
        if (!isfinite(acc->v.f) || !isfinite(acc->lo)) NAME##_plain(x, n, acc); \
    }                                                                       \
    static void NAME##_cols(const void *xv, int64_t rows, int64_t cols,     \
                            int64_t ld, int64_t row0, pk__acc *acc,         \
                            void *out)                                      \
    {                                                                       \
        (void)row0;                                                         \
        const T *x = xv;                                                    \
        PK__PREFETCH_NEXT_CHUNK(x, rows, cols, ld, sizeof(T));             \
        /* f64 data also compensate the error sum (e2), as _row does:     \
         * with cancelling giants e alone drifted an ulp past NumPy        \
         * (test_accuracy seed 5937440102693). f32 keeps e2 = 0. */        \
        T s[PK__COL_CHUNK], e[PK__COL_CHUNK], e2[PK__COL_CHUNK];            \
        for (int64_t c = 0; c < cols; c++) s[c] = e[c] = e2[c] = 0;         \
        for (int64_t r = 0; r < rows; r++) {                                \
            const T *row = x + r * ld;                                      \
            if (r + 4 < rows && rows > PK__SHALLOW_ROWS) PK__PREFETCH_ROW(row + 4 * ld, cols * sizeof(T)); \
            if (sizeof(T) == 8)                                             \
                for (int64_t c = 0; c < cols; c++) {                        \
                    T t, d;                                                 \
                    PK__TWO_SUM(s[c], row[c], t, d);                        \
                    s[c] = t;                                               \
                    PK__COMP_STEP(d, e[c], e2[c]);                          \
                }                                                           \
            else                                                            \
                for (int64_t c = 0; c < cols; c++) PK__COMP_STEP(row[c], s[c], e[c]); \
        }                                                                   \
        /* (s + e) + e2 in T is round_T of the exact sum: what the dd fold \
         * gives. Non-finite terms (Inf/NaN data) take the plain redo. */   \
        int bad = 0;                                                        \
        if (out)                                                            \
            for (int64_t c = 0; c < cols; c++) {                            \
                T h, l;                                                     \
                PK__TWO_SUM(s[c], e[c], h, l);                              \
                /* h infinite: s + e overflowed (l is NaN); Inf is right. */ \
                T r = isfinite(h) ? h + (l + e2[c]) : h;                    \
                ((RT *)out)[c] = (RT)r;                                     \
                bad |= !isfinite(s[c]) || !isfinite(e[c]) || !isfinite(e2[c]); \
            }                                                               \
        else                                                                \
            for (int64_t c = 0; c < cols; c++) {                            \
                acc[c] = (pk__acc){.v.f = 0.0};                             \
                pk__dd_add(&acc[c], s[c], e[c]);                            \
                pk__dd_add(&acc[c], e2[c], 0.0);                            \
                bad |= !isfinite(s[c]) || !isfinite(e[c]) || !isfinite(e2[c]); \
            }                                                               \
        for (int64_t c = 0; bad && c < cols; c++) {                         \
            if (isfinite(s[c]) && isfinite(e[c]) && isfinite(e2[c])) continue; \
            double p = 0.0;                                                 \
            for (int64_t r = 0; r < rows; r++) p += x[r * ld + c];          \
            if (out) ((RT *)out)[c] = (RT)p;                                \
            else acc[c] = (pk__acc){.v.f = p};                              \
        }                                                                   \
    }                                                                       \
    INLINE RT NAME##_row(const T *row, int64_t cols)                        \
    {                                                                       \
        /* Branch-free so that the short-row loop vectorises across rows:  \
         * the plain sum p stands in when compensation met Inf or NaN. f64 \
         * data also compensate the error sum (e2) and renormalise at the  \
         * end: with cancelling giants e alone drifted 1.5 ulp from the    \
         * exact sum (test_accuracy seed 9184435387077). f32 data give the \
         * same bits either way (e2 = 0, h + l = round(s + e) = h). */      \
        double s = 0.0, e = 0.0, e2 = 0.0, p = 0.0;                         \
        for (int64_t c = 0; c < cols; c++) {                                \
            double v = row[c], t, d;                                        \
            p += v;                                                         \
            PK__TWO_SUM(s, v, t, d);                                        \
            s = t;                                                          \
            if (sizeof(T) == 8) PK__COMP_STEP(d, e, e2);                    \
            else e += d;                                                    \
        }                                                                   \
        double h, l;                                                        \
        PK__TWO_SUM(s, e, h, l);                                            \
        /* h infinite with s and e finite: the sum overflowed (Inf is     \
         * right, l is NaN). */                                             \
        double r = isfinite(h) ? h + (l + e2) : h;                          \
        return (RT)(isfinite(s) && isfinite(e) && isfinite(e2) ? r : p);    \
    }                                                                       \
    PK__ROWS_KERNEL(NAME, T, RT, NAME##_row)

PK__COMP_SUM(sum_f32, float, vf32, 16, float)
PK__COMP_SUM(sum_f64, double, vf64, 8, double)

/* ---- Dots: Dot2, the exact error of each product (TwoProduct) plus TwoSum */

/* AVX2: x*y - p with one rounding, on the two 256-bit halves of 64-byte
 * vectors (FMS: the 256-bit fused multiply-subtract of H). */
#define PK__FMSUB_HALVES(VT, H, FMS, x, y, p)                               \
    ({                                                                      \
        H xs_[2], ys_[2], ps_[2], es_[2];                                   \
        memcpy(xs_, &(x), 64), memcpy(ys_, &(y), 64), memcpy(ps_, &(p), 64); \
        for (int h_ = 0; h_ < 2; h_++) es_[h_] = FMS(xs_[h_], ys_[h_], ps_[h_]); \
        VT e_;                                                              \
        memcpy(&e_, es_, 64);                                               \
        e_;                                                                 \
    })

/* The error of the f32 product p = fl(x*y): round_f32(x*y - p), where x*y - p
 * is exact. An FMA computes exactly that; without one, f64 arithmetic does
 * (x*y and x*y - p are exact in f64; one rounding to f32 follows), so every
 * ISA gives the same bits, subnormal cases included. */
INLINE vf32 two_prod_err_f32(vf32 x, vf32 y, vf32 p)
{
#if defined(__AVX512F__)
    return (vf32)_mm512_fmsub_ps((__m512)x, (__m512)y, (__m512)p);
#elif defined(__FMA__)
    return PK__FMSUB_HALVES(vf32, __m256, _mm256_fmsub_ps, x, y, p);
#else
    vf32h xs[2], ys[2], ps[2], es[2];
    memcpy(xs, &x, 64), memcpy(ys, &y, 64), memcpy(ps, &p, 64);
    for (int h = 0; h < 2; h++)
        es[h] = __builtin_convertvector(
            __builtin_convertvector(xs[h], vf64) * __builtin_convertvector(ys[h], vf64) -
                __builtin_convertvector(ps[h], vf64),
            vf32h);
    vf32 e;
    memcpy(&e, es, 64);
    return e;
#endif
}

/* The exact error of the f64 product p = fl(x*y): fma(x, y, -p). IEEE fma is
 * correctly rounded, so libm's (software) fma on the generic path returns the
 * same bits as the hardware one: slower there, identical everywhere. */
INLINE vf64 two_prod_err_f64(vf64 x, vf64 y, vf64 p)
{
#if defined(__AVX512F__)
    return (vf64)_mm512_fmsub_pd((__m512d)x, (__m512d)y, (__m512d)p);
#elif defined(__FMA__)
    return PK__FMSUB_HALVES(vf64, __m256d, _mm256_fmsub_pd, x, y, p);
#else
    vf64 e;
    for (int k = 0; k < 8; k++) e[k] = fma(x[k], y[k], -p[k]);
    return e;
#endif
}

/* Dot2 (Ogita, Rump, Oishi) in the input's precision: TwoProduct + TwoSum per
 * lane, 2 x L lanes, partials folded into f64 double-double. D: f32 / f64. */
#define PK__DOT(D, T, VT, L)                                                \
    INLINE void dot_##D##_step(VT x, VT y, VT *s, VT *c)                    \
    {                                                                       \
        VT t, e, p = x * y;                                                 \
        VT ep = two_prod_err_##D(x, y, p);                                  \
        PK__TWO_SUM(*s, p, t, e);                                           \
        *s = t;                                                             \
        *c += e + ep;                                                       \
    }                                                                       \
    static void dot_##D##_block(const void *xv, const void *yv, int64_t n, \
                                pk__acc *acc)                               \
    {                                                                       \
        const T *x = xv, *y = yv;                                           \
        VT s0 = {0}, c0 = {0}, s1 = {0}, c1 = {0};                          \
        int64_t i = 0;                                                      \
        for (; i + 2 * L <= n; i += 2 * L) {                                \
            PK__PREFETCH_SPAN(x + i, 128);                                  \
            PK__PREFETCH_SPAN(y + i, 128);                                  \
            dot_##D##_step(PK__LOAD(VT, x + i), PK__LOAD(VT, y + i), &s0, &c0); \
            dot_##D##_step(PK__LOAD(VT, x + i + L), PK__LOAD(VT, y + i + L), &s1, &c1); \
        }                                                                   \
        if (i < n) {                                                        \
            T px[2 * L], py[2 * L];                                         \
            for (int k = 0; k < 2 * L; k++) {                               \
                px[k] = i + k < n ? x[i + k] : 0;                           \
                py[k] = i + k < n ? y[i + k] : 0;                           \
            }                                                               \
            dot_##D##_step(PK__LOAD(VT, px), PK__LOAD(VT, py), &s0, &c0);   \
            dot_##D##_step(PK__LOAD(VT, px + L), PK__LOAD(VT, py + L), &s1, &c1); \
        }                                                                   \
        *acc = (pk__acc){.v.f = 0.0};                                       \
        for (int k = 0; k < L; k++) pk__dd_add(acc, s0[k], c0[k]);          \
        for (int k = 0; k < L; k++) pk__dd_add(acc, s1[k], c1[k]);          \
        /* Overflow, Inf or NaN: the error terms are meaningless; redo. */  \
        if (!isfinite(acc->v.f) || !isfinite(acc->lo)) {                    \
            double sum = 0.0;                                               \
            for (int64_t k = 0; k < n; k++) sum += (double)x[k] * y[k];     \
            *acc = (pk__acc){.v.f = sum};                                   \
        }                                                                   \
    }
PK__DOT(f32, float, vf32, 16)
PK__DOT(f64, double, vf64, 8)

/* ---- min / max: 2 vectors, NaN tracked in a mask ------------------------ */
/* VT: values; MT: compare result of VT; L: lanes; C: value class; CMP: < or
 * > (min or max); PAD: the identity. */
#define PK__ORDER(NAME, T, VT, MT, L, C, FLD, CMP, TAKES, PAD, ISF)         \
    static void NAME##_block(const void *xv, int64_t n, int64_t base,      \
                             pk__acc *acc)                                  \
    {                                                                       \
        (void)base;                                                         \
        const T *x = xv;                                                    \
        VT a0 = (VT){0} + (T)(PAD), a1 = a0;                                \
        MT nan = {0};                                                       \
        int64_t i = 0;                                                      \
        for (; i + 2 * L <= n; i += 2 * L) {                                \
            PK__PREFETCH_SPAN(x + i, 2 * L * sizeof(T));                    \
            VT v0 = PK__LOAD(VT, x + i), v1 = PK__LOAD(VT, x + i + L);      \
            a0 = PK__SEL(VT, MT, v0 CMP a0, v0, a0);                        \
            a1 = PK__SEL(VT, MT, v1 CMP a1, v1, a1);                        \
            if (ISF) nan |= (v0 != v0) | (v1 != v1);                        \
        }                                                                   \
        for (; i < n; i++) {                                                \
            if (ISF && x[i] != x[i]) nan[0] = -1;                           \
            if (x[i] CMP a0[0]) a0[0] = x[i];                               \
        }                                                                   \
        a0 = PK__SEL(VT, MT, a1 CMP a0, a1, a0);                            \
        T r = a0[0];                                                        \
        for (int k = 1; k < L; k++) if (TAKES(r, a0[k])) r = a0[k];         \
        if (ISF) {                                                          \
            MT any = nan;                                                   \
            int64_t bits = 0;                                               \
            for (int k = 0; k < L; k++) bits |= any[k];                     \
            if (bits) r = (T)NAN;                                           \
        }                                                                   \
        *acc = (pk__acc){.v.FLD = r};                                       \
    }                                                                       \
    static void NAME##_cols(const void *xv, int64_t rows, int64_t cols,     \
                            int64_t ld, int64_t row0, pk__acc *acc,         \
                            void *out)                                      \
    {                                                                       \
        (void)row0;                                                         \
        const T *x = xv;                                                    \
        PK__PREFETCH_NEXT_CHUNK(x, rows, cols, ld, sizeof(T));             \
        T a[PK__COL_CHUNK];                                                 \
        for (int64_t c = 0; c < cols; c++) a[c] = x[c];                     \
        for (int64_t r = 1; r < rows; r++) {                                \
            const T *row = x + r * ld;                                      \
            if (r + 4 < rows && rows > PK__SHALLOW_ROWS) PK__PREFETCH_ROW(row + 4 * ld, cols * sizeof(T)); \
            for (int64_t c = 0; c < cols; c++)                              \
                a[c] = TAKES(a[c], row[c]) ? row[c] : a[c];                 \
        }                                                                   \
        if (out)                                                            \
            for (int64_t c = 0; c < cols; c++) ((T *)out)[c] = a[c];        \
        else                                                                \
            for (int64_t c = 0; c < cols; c++) acc[c] = (pk__acc){.v.FLD = a[c]}; \
    }                                                                       \
    INLINE T NAME##_row(const T *row, int64_t cols)                         \
    {                                                                       \
        T a = row[0];                                                       \
        for (int64_t c = 1; c < cols; c++) a = TAKES(a, row[c]) ? row[c] : a; \
        return a;                                                           \
    }                                                                       \
    PK__ROWS_KERNEL(NAME, T, T, NAME##_row)

#define PK__ORDER_PAIR(D, T, VT, MT, L, C, FLD, LO, HI, ISF)                \
    PK__ORDER(min_##D, T, VT, MT, L, C, FLD, <, PK__MIN_TAKES_##C, HI, ISF) \
    PK__ORDER(max_##D, T, VT, MT, L, C, FLD, >, PK__MAX_TAKES_##C, LO, ISF)

PK__ORDER_PAIR(f32, float, vf32, vi32, 16, F, f, -INFINITY, INFINITY, 1)
PK__ORDER_PAIR(f64, double, vf64, vi64, 8, F, f, -INFINITY, INFINITY, 1)
PK__ORDER_PAIR(i32, int32_t, vi32, vi32, 16, I, i, INT32_MIN, INT32_MAX, 0)
PK__ORDER_PAIR(i64, int64_t, vi64, vi64, 8, I, i, INT64_MIN, INT64_MAX, 0)
PK__ORDER_PAIR(u32, uint32_t, vu32, vi32, 16, U, u, 0, UINT32_MAX, 0)
PK__ORDER_PAIR(u64, uint64_t, vu64, vi64, 8, U, u, 0, UINT64_MAX, 0)

/* ---- argmin / argmax: per-lane best value and its index ----------------- */
/* A lane takes a new element when it is strictly better or the first NaN,
 * so each lane keeps its first best; lanes then merge by value, ties and
 * NaNs going to the lower index. */
#define PK__VTAKES_F(CMP, b, v) ((v CMP b) | ((v != v) & (b == b)))
#define PK__VTAKES_I(CMP, b, v) (v CMP b)
#define PK__VTAKES_U PK__VTAKES_I

#define PK__ARG(NAME, T, VT, MT, IT, L, C, FLD, CMP, TAKES)                 \
    static void NAME##_block(const void *xv, int64_t n, int64_t base,      \
                             pk__acc *acc)                                  \
    {                                                                       \
        const T *x = xv;                                                    \
        MT iota;                                                            \
        for (int k = 0; k < L; k++) iota[k] = (IT)k;                        \
        VT b0 = (VT){0} + x[0], b1 = b0;                                    \
        MT id0 = {0}, id1 = {0}, at = iota;                                 \
        int64_t i = 0;                                                      \
        for (; i + 2 * L <= n; i += 2 * L, at += 2 * L) {                   \
            PK__PREFETCH_SPAN(x + i, 2 * L * sizeof(T));                    \
            VT v0 = PK__LOAD(VT, x + i), v1 = PK__LOAD(VT, x + i + L);      \
            MT m0 = PK__VTAKES_##C(CMP, b0, v0);                            \
            MT m1 = PK__VTAKES_##C(CMP, b1, v1);                            \
            b0 = PK__SEL(VT, MT, m0, v0, b0);                               \
            b1 = PK__SEL(VT, MT, m1, v1, b1);                               \
            id0 = PK__SEL(MT, MT, m0, at, id0);                             \
            id1 = PK__SEL(MT, MT, m1, at + L, id1);                         \
        }                                                                   \
        T r = x[0];                                                         \
        int64_t ri = 0;                                                     \
        for (int k = 0; k < L; k++) {                                       \
            if (TAKES(r, b0[k]) || (PK__SAME_##C(r, b0[k]) && id0[k] < ri)) \
                r = b0[k], ri = id0[k];                                     \
            if (TAKES(r, b1[k]) || (PK__SAME_##C(r, b1[k]) && id1[k] < ri)) \
                r = b1[k], ri = id1[k];                                     \
        }                                                                   \
        for (; i < n; i++)                                                  \
            if (TAKES(r, x[i])) r = x[i], ri = i;                           \
        *acc = (pk__acc){.v.FLD = r, .idx = base + ri};                     \
    }                                                                       \
    static void NAME##_cols(const void *xv, int64_t rows, int64_t cols,     \
                            int64_t ld, int64_t row0, pk__acc *acc,         \
                            void *out)                                      \
    {                                                                       \
        const T *x = xv;                                                    \
        PK__PREFETCH_NEXT_CHUNK(x, rows, cols, ld, sizeof(T));             \
        T a[PK__COL_CHUNK];                                                 \
        int64_t id[PK__COL_CHUNK];                                          \
        for (int64_t c = 0; c < cols; c++) a[c] = x[c], id[c] = 0;          \
        for (int64_t r = 1; r < rows; r++) {                                \
            const T *row = x + r * ld;                                      \
            if (r + 4 < rows && rows > PK__SHALLOW_ROWS) PK__PREFETCH_ROW(row + 4 * ld, cols * sizeof(T)); \
            for (int64_t c = 0; c < cols; c++) {                            \
                int t = TAKES(a[c], row[c]);                                \
                a[c] = t ? row[c] : a[c];                                   \
                id[c] = t ? r : id[c];                                      \
            }                                                               \
        }                                                                   \
        if (out)                                                            \
            for (int64_t c = 0; c < cols; c++) ((int64_t *)out)[c] = row0 + id[c]; \
        else                                                                \
            for (int64_t c = 0; c < cols; c++)                              \
                acc[c] = (pk__acc){.v.FLD = a[c], .idx = row0 + id[c]};     \
    }                                                                       \
    INLINE int64_t NAME##_row(const T *row, int64_t cols)                   \
    {                                                                       \
        T a = row[0];                                                       \
        int64_t id = 0;                                                     \
        for (int64_t c = 1; c < cols; c++)                                  \
            if (TAKES(a, row[c])) a = row[c], id = c;                       \
        return id;                                                          \
    }                                                                       \
    PK__ROWS_KERNEL(NAME, T, int64_t, NAME##_row)

#define PK__ARG_PAIR(D, T, VT, MT, IT, L, C, FLD)                           \
    PK__ARG(argmin_##D, T, VT, MT, IT, L, C, FLD, <, PK__MIN_TAKES_##C)     \
    PK__ARG(argmax_##D, T, VT, MT, IT, L, C, FLD, >, PK__MAX_TAKES_##C)

PK__ARG_PAIR(f32, float, vf32, vi32, int32_t, 16, F, f)
PK__ARG_PAIR(f64, double, vf64, vi64, int64_t, 8, F, f)
PK__ARG_PAIR(i32, int32_t, vi32, vi32, int32_t, 16, I, i)
PK__ARG_PAIR(i64, int64_t, vi64, vi64, int64_t, 8, I, i)
PK__ARG_PAIR(u32, uint32_t, vu32, vi32, int32_t, 16, U, u)
PK__ARG_PAIR(u64, uint64_t, vu64, vi64, int64_t, 8, U, u)

/* ---- axpy: one rounding for the product, one for the sum ---------------- */
#define PK__AXPY(D, T)                                                      \
    static void axpy_##D(int64_t n, const void *alpha, const void *xv,     \
                         void *yv)                                          \
    {                                                                       \
        const T a = *(const T *)alpha;                                      \
        if (xv == yv) {                                                     \
            T *y = yv;                                                      \
            for (int64_t i = 0; i < n; i++) y[i] = a * y[i] + y[i];         \
            return;                                                         \
        }                                                                   \
        const T *restrict x = xv;                                           \
        T *restrict y = yv;                                                 \
        for (int64_t i = 0; i < n; i++) y[i] = a * x[i] + y[i];             \
    }
PK__AXPY(f32, float)
PK__AXPY(f64, double)

PK__DEFINE_TABLE(PK_ISA_SYMBOL, PK_ISA_NAME, &PK_GEMM_SYMBOL)
