/* The fast CPU kernels. This one source is compiled once per ISA (see
 * CMakeLists.txt: PK_ISA_SYMBOL names the table, the flags pick the ISA) and
 * always with -ffp-contract=off: the lane structure is fixed here (32 lanes
 * for sums, products and dots, 2 vectors for min/max/arg), so every ISA
 * computes the same tree and returns the same bits. */
#include "acc.h"
#include "axis_sweep.h"
#include "comp_sum.h"
#include "gemm.h"
#include "table.h"

#ifndef PK_ISA_SYMBOL
#error "PK_ISA_SYMBOL must name the table this build defines"
#endif

/* ---- Sums and products without compensation: 4 x 8 lanes ------------- */
#define PK__WIDEN_F32(v, VA) pk__widen_f32(v)
#define PK__WIDEN_vf64(v, VA) (v)
#define PK__WIDEN_vi64(v, VA) ((VA)__builtin_convertvector(v, vi64))
#define PK__WIDEN_vu64(v, VA) ((VA)__builtin_convertvector(v, vu64))
/* VIN: 8 inputs; VW: 8 widened (same signedness); VA: 8 accumulators. */
#define PK__WIDE(NAME, T, VIN, VW, VA, A, FLD, RT, OP, IDENT)               \
    INLINE VA NAME##_cvt(VIN v) { return PK__WIDEN_##VW(v, VA); }           \
    static void NAME##_block(const void *xv, int64_t n, int64_t base,       \
                             pk__acc *acc)                                  \
    {                                                                       \
        (void)base;                                                         \
        const T *x = xv;                                                    \
        VA a0 = (VA){0} + (A)(IDENT), a1 = a0, a2 = a0, a3 = a0;            \
        int64_t i = 0;                                                      \
        for (; i + 32 <= n; i += 32) {                                      \
        PK__PREFETCH_SPAN(x + i, 32 * sizeof(T));                           \
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
    INLINE void NAME##_sweep(const T *restrict x, int64_t rows, int64_t cols, \
                             int64_t ld, A *restrict a)                     \
    {                                                                       \
        PK__COL_SWEEP(T, x, ld, 0, rows, cols, A v = a[c_],                 \
                      ({ v = v OP (A)X_; }), a[c_] = v);                    \
    }                                                                       \
    static void NAME##_cols(const void *xv, int64_t rows, int64_t cols,     \
                            int64_t ld, int64_t row0, pk__acc *acc,         \
                            void *out, void *work)                          \
    {                                                                       \
        (void)row0;                                                         \
        const T *x = xv;                                                    \
        PK__PREFETCH_NEXT_CHUNK(x, rows, cols, ld, sizeof(T));              \
        A *a = PK__SLOT(work, 0, A, cols);                                  \
        for (int64_t c = 0; c < cols; c++) a[c] = (A)(IDENT);               \
        NAME##_sweep(x, rows, cols, ld, a);                                 \
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
    PK__ROWS_KERNEL(NAME, T, RT, NAME##_row, PK__ROWS_NO_FIX)

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

/* f64 row sums that came out Inf or NaN: redone without overflow when the
 * terms are finite (src/cpu/sum_rescue.c). A scan first, which must cost
 * next to nothing (pk__nonfinite_bits). */
#define PK__SUM_FIX(r0, nr, len, ld_)                                       \
    do {                                                                    \
        if (sizeof(*x) != 8) break;                                         \
        uint64_t bad_ = 0;                                                  \
        for (int64_t i_ = 0; i_ < (nr); i_++)                               \
            bad_ |= pk__nonfinite_bits((double)out[(r0) + i_]);             \
        if (bad_)                                                           \
            pk__cpu_rescue_sums_f64((const double *)(const void *)x + (r0) * (ld_), NULL, \
                                    (nr), (ld_), (len), (double *)(void *)out + (r0)); \
    } while (0)

/* NAME: sum_f32 / sum_f64; VT: a vector of T; L: lanes in VT; D: f32 / f64. */
#define PK__COMP_SUM(NAME, T, VT, L, RT, D)                                 \
    /* The sum of x[i], i = c mod cols, redone when the compensated one is  \
     * not finite. Inf or NaN among the terms: a plain sum (what NumPy      \
     * gives, and fast: data full of NaN redo every block). Else the f32    \
     * TwoSum overflowed (FLT_MAX - FLT_MAX + 1): term by term in           \
     * double-double, which f32 data cannot overflow (a plain double sum    \
     * dropped the 1). f64 overflows are redone later (sum_rescue.c). */    \
    static void NAME##_redo(const T *x, int64_t n, int64_t c, int64_t cols, \
                            pk__acc *acc)                                   \
    {                                                                       \
        double p = 0.0;                                                     \
        uint64_t bad = 0;                                                   \
        for (int64_t i = c; i < n; i += cols) {                             \
            bad |= pk__nonfinite_bits(x[i]);                                \
            p += x[i];                                                      \
        }                                                                   \
        *acc = (pk__acc){.v.f = p, .idx = bad != 0}; /* idx: see acc_type.h */ \
        if (bad || sizeof(T) == 8) return;                                  \
        *acc = (pk__acc){.v.f = 0.0};                                       \
        for (int64_t i = c; i < n; i += cols) pk__dd_add(acc, x[i], 0.0);   \
    }                                                                       \
    /* The block kernel, its lanes folded per column: acc[c] (c < cols)     \
     * gets the elements i = c mod cols. cols divides L, so lanes k and     \
     * k + L (and every padded tail lane) belong to column k % cols; cols   \
     * = 1 is the whole-array block. */                                     \
    INLINE void NAME##_lanes_of(const T *x, int64_t n, int64_t cols, pk__acc *acc) \
    {                                                                       \
        VT s0 = {0}, s1 = {0};                                              \
        vf64 c0[2] = {{0}}, c1[2] = {{0}}; /* lane k: ((double *)c0)[k] */  \
        vf64 xh[4] = {{0}}, xl[4] = {{0}}; /* f32: exact sub-blocks */      \
        const int64_t exact = pk__exact_sub_##D(x, n, xh, xl);              \
        int64_t i = exact;                                                  \
        for (; i + 2 * L <= n; i += 2 * L) {                                \
            PK__PREFETCH_SPAN(x + i, 2 * L * sizeof(T));                    \
            PK__COMP_STEP_WIDE(D, PK__LOAD(VT, x + i), s0, c0);             \
            PK__COMP_STEP_WIDE(D, PK__LOAD(VT, x + i + L), s1, c1);         \
        }                                                                   \
        if (i < n) {                                                        \
            T pad[2 * L];                                                   \
            for (int k = 0; k < 2 * L; k++) pad[k] = i + k < n ? x[i + k] : 0; \
            PK__COMP_STEP_WIDE(D, PK__LOAD(VT, pad), s0, c0);               \
            PK__COMP_STEP_WIDE(D, PK__LOAD(VT, pad + L), s1, c1);           \
        }                                                                   \
        /* Lane j of the state: position j mod 2L (f32: 32 lanes, the      \
         * exact sub-blocks' layout; f64: 16). */                           \
        if (sizeof(T) == 4) {                                               \
            vf32 a0, a1; /* s0, s1 (the f64 build: unused) */               \
            memcpy(&a0, &s0, 64), memcpy(&a1, &s1, 64);                     \
            pk__merge_f32_state(a0, c0, &xh[0], &xl[0]);                    \
            pk__merge_f32_state(a1, c1, &xh[2], &xl[2]);                    \
            pk__fold_lanes(xh, xl, 4, cols, acc);                           \
        } else {                                                            \
            memcpy(&xh[0], &s0, 64), memcpy(&xh[1], &s1, 64);               \
            xl[0] = c0[0], xl[1] = c1[0];                                   \
            pk__fold_lanes(xh, xl, 2, cols, acc);                           \
            if (cols == 1 && pk__lanes_unsure(c0[0], c1[0], acc))           \
                (void)pk__cpu_exact_sum(PK_F64, x, NULL, n, acc); \
        }                                                                   \
        /* TwoSum turns Inf into NaN, and f32 lanes may overflow: redo. */   \
        for (int64_t c = 0; c < cols; c++)                                  \
            if (!isfinite(acc[c].v.f) || !isfinite(acc[c].lo))              \
                NAME##_redo(x, n, c, cols, &acc[c]);                        \
    }                                                                       \
    static void NAME##_block(const void *xv, int64_t n, int64_t base,       \
                             pk__acc *acc)                                  \
    {                                                                       \
        (void)base;                                                         \
        NAME##_lanes_of(xv, n, 1, acc);                                     \
    }                                                                       \
    __attribute__((unused)) /* f64: not in the table (see kernels.h) */     \
    static void NAME##_lanes(const void *xv, int64_t n, int64_t cols, pk__acc *acc) \
    {                                                                       \
        NAME##_lanes_of(xv, n, cols, acc);                                  \
    }                                                                       \
    /* Axis 0. f64 data compensate the error sum too (e2), as _row does:    \
     * with cancelling giants e alone drifted an ulp past NumPy             \
     * (test_accuracy seed 5937440102693). f32 errors go straight into f64  \
     * (e2; we stays 0), as in _block. */                                   \
    INLINE void NAME##_sweep(const T *restrict x, int64_t rows, int64_t cols, \
                             int64_t ld, T *restrict ws, T *restrict we,    \
                             double *restrict we2)                          \
    {                                                                       \
        if (sizeof(T) == 8)                                                 \
            PK__COL_SWEEP(T, x, ld, 0, rows, cols,                          \
                          T s = ws[c_]; T e = we[c_]; T e2 = (T)we2[c_],    \
                          ({ T t, d; PK__TWO_SUM(s, X_, t, d); s = t;       \
                             PK__COMP_STEP(d, e, e2); }),                   \
                          ws[c_] = s; we[c_] = e; we2[c_] = e2);            \
        else if (rows > PK__SHALLOW_SWEEP)                                  \
            pk__sum_f32_sweep((const float *)x, rows, cols, ld, (float *)ws, we2); \
        else /* f32: errors straight into f64 (see pk__err_add_f32) */      \
            PK__COL_SWEEP(T, x, ld, 0, rows, cols, T s = ws[c_]; double e = we2[c_], \
                          ({ T t, d; PK__TWO_SUM(s, X_, t, d); s = t; e += d; }), \
                          ws[c_] = s; we2[c_] = e);                         \
    }                                                                       \
    /* Whether a term is not finite: x - x is 0 only for finite x (written  \
     * branch-free, the loops vectorise). */                                \
    INLINE int NAME##_any_bad(const T *restrict ws, const T *restrict we,   \
                              const double *restrict we2, int64_t cols)     \
    {                                                                       \
        int bad = 0;                                                        \
        for (int64_t c = 0; c < cols; c++)                                  \
            bad |= !((ws[c] - ws[c] == 0) & (we[c] - we[c] == 0));          \
        for (int64_t c = 0; c < cols; c++) bad |= !(we2[c] - we2[c] == 0);  \
        return bad;                                                         \
    }                                                                       \
    /* Results: with out, final values: (s + e) + e2 is the sum to within   \
     * an ulp of a double, what the dd fold gives (s + e overflowing leaves \
     * h infinite and l NaN: Inf is right); else partials: the dd (s + e2,  \
     * e + the error of that sum), not normalised: pk__dd_add takes that.   \
     * Returns whether a term is not finite (Inf or NaN data: the caller    \
     * redoes those columns). */                                            \
    INLINE int NAME##_results(const T *restrict ws, const T *restrict we,   \
                              const double *restrict we2, int64_t cols,     \
                              RT *restrict out, pk__acc *restrict acc)      \
    {                                                                       \
        for (int64_t c = 0; out && c < cols; c++) {                         \
            T h, l;                                                         \
            PK__TWO_SUM(ws[c], we[c], h, l);                                \
            T lz = PK__ZERO_UNLESS_FINITE(h, l);                            \
            out[c] = PK__DD_RESULT(RT, (double)h, (double)lz + we2[c]);     \
        }                                                                   \
        for (int64_t c = 0; !out && c < cols; c++) {                        \
            double a = ws[c], b = we2[c], t, d;                             \
            PK__TWO_SUM(a, b, t, d);                                        \
            acc[c] = (pk__acc){.v.f = t, .lo = (double)we[c] + d};          \
        }                                                                   \
        return NAME##_any_bad(ws, we, we2, cols);                           \
    }                                                                       \
    static void NAME##_cols(const void *xv, int64_t rows, int64_t cols,     \
                            int64_t ld, int64_t row0, pk__acc *acc,         \
                            void *out, void *work)                          \
    {                                                                       \
        (void)row0;                                                         \
        const T *x = xv;                                                    \
        PK__PREFETCH_NEXT_CHUNK(x, rows, cols, ld, sizeof(T));              \
        T *ws = PK__SLOT(work, 0, T, cols), *we = PK__SLOT(work, 1, T, cols); \
        double *we2 = PK__SLOT(work, 2, double, cols);                      \
        for (int64_t c = 0; c < cols; c++) ws[c] = we[c] = 0, we2[c] = 0;   \
        NAME##_sweep(x, rows, cols, ld, ws, we, we2);                       \
        /* Non-finite terms (Inf/NaN data, or f32 TwoSum overflowing):      \
         * redo those columns term by term. */                              \
        int bad = NAME##_results(ws, we, we2, cols, out, acc);              \
        for (int64_t c = 0; bad && c < cols; c++) {                         \
            if (isfinite(ws[c]) && isfinite(we[c]) && isfinite(we2[c])) continue; \
            pk__acc a;                                                      \
            NAME##_redo(x + c, rows * ld, 0, ld, &a);                       \
            if (!out) {                                                     \
                acc[c] = a;                                                 \
                continue;                                                   \
            }                                                               \
            pk__sum_##D##_finish(&a, (RT *)out + c);                        \
            /* f64 giants that overflowed (the task holds every row). */   \
            if (sizeof(T) == 8 && !a.idx)                                   \
                pk__cpu_rescue_strided_f64((const double *)(const void *)x + c, rows, ld, 1, \
                                           (double *)out + c);              \
        }                                                                   \
    }                                                                       \
    INLINE RT NAME##_row(const T *row, int64_t cols)                        \
    {                                                                       \
        /* Branch-free so that the short-row loop vectorises across rows:   \
         * the plain sum p stands in when compensation met Inf or NaN. f64  \
         * data also compensate the error sum (e2) and renormalise at the   \
         * end: with cancelling giants e alone drifted 1.5 ulp from the     \
         * exact sum (test_accuracy seed 9184435387077). f32 data give the  \
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
        /* h infinite with s and e finite: the sum overflowed (Inf is       \
         * right, l is NaN). */                                             \
        /* f32: e2 = 0 and (h, l) normalised: rounded to odd, so that the   \
         * one conversion below rounds h + l once. All in double until then \
         * (selects of mixed widths stopped the vectoriser). */             \
        double r = !isfinite(h)       ? h                                   \
                   : sizeof(RT) == 4 ? pk__dd_round_odd(h, l)               \
                                     : h + (l + e2);                        \
        return (RT)(isfinite(s) && isfinite(e) && isfinite(e2) ? r : p);    \
    }                                                                       \
    PK__ROWS_KERNEL(NAME, T, RT, NAME##_row, PK__SUM_FIX)

PK__COMP_SUM(sum_f32, float, vf32, 16, float, f32)
PK__COMP_SUM(sum_f64, double, vf64, 8, double, f64)

/* ---- Dots: compensated (see dot_f32_step, dot_f64_step) ---------------- */

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

/* Compensated dots, 2 x L lanes, partials folded into f64 double-double;
 * lane k of the state is element k of s[] and c[]. f64: Dot2 (Ogita, Rump,
 * Oishi), TwoProduct + TwoSum per lane. f32: the product of two floats is
 * exact in f64, so the data are widened and the products summed with
 * TwoSum in f64 (as pk__sum_step_f32, and for the same reason: Dot2 in f32
 * kept errors as large as 2^-24 |s|). */
INLINE void dot_f32_step(const float *x, const float *y, vf64 *s, vf64 *c)
{
    vf64 xh[2], yh[2];
    pk__widen_halves(x, xh);
    pk__widen_halves(y, yh);
    for (int k = 0; k < 2; k++) PK__COMP_STEP(xh[k] * yh[k], s[k], c[k]);
}
INLINE void dot_f64_step(const double *xp, const double *yp, vf64 *s, vf64 *c)
{
    vf64 x = PK__LOAD(vf64, xp), y = PK__LOAD(vf64, yp);
    vf64 t, e, p = x * y;
    vf64 ep = two_prod_err_f64(x, y, p);
    PK__TWO_SUM(s[0], p, t, e);
    s[0] = t;
    c[0] += e + ep;
}
#define PK__DOT(D, T, VT, L)                                                \
    static void dot_##D##_block(const void *xv, const void *yv, int64_t n,  \
                                pk__acc *acc)                               \
    {                                                                       \
        const T *x = xv, *y = yv;                                           \
        vf64 s0[2] = {{0}}, c0[2] = {{0}}, s1[2] = {{0}}, c1[2] = {{0}};    \
        int64_t i = 0;                                                      \
        for (; i + 2 * L <= n; i += 2 * L) {                                \
            PK__PREFETCH_SPAN(x + i, 128);                                  \
            PK__PREFETCH_SPAN(y + i, 128);                                  \
            dot_##D##_step(x + i, y + i, s0, c0);                           \
            dot_##D##_step(x + i + L, y + i + L, s1, c1);                   \
        }                                                                   \
        if (i < n) {                                                        \
            T px[2 * L], py[2 * L];                                         \
            for (int k = 0; k < 2 * L; k++) {                               \
                px[k] = i + k < n ? x[i + k] : 0;                           \
                py[k] = i + k < n ? y[i + k] : 0;                           \
            }                                                               \
            dot_##D##_step(px, py, s0, c0);                                 \
            dot_##D##_step(px + L, py + L, s1, c1);                         \
        }                                                                   \
        vf64 h_[4] = {s0[0], s0[1], s1[0], s1[1]};                          \
        vf64 l_[4] = {c0[0], c0[1], c1[0], c1[1]};                          \
        if (L == 8) h_[1] = s1[0], l_[1] = c1[0]; /* f64: s0[1] unused */   \
        pk__fold_lanes(h_, l_, L == 8 ? 2 : 4, 1, acc);                     \
        /* Overflow, Inf or NaN: the error terms are meaningless; redo as  \
         * a plain sum. f32 products (exact in f64) cannot overflow it, so  \
         * the data held Inf or NaN; f64 overflows from finite terms are    \
         * redone in sum_rescue.c. */                                       \
        if (!isfinite(acc->v.f) || !isfinite(acc->lo)) {                    \
            double sum = 0.0;                                               \
            uint64_t bad = 0;                                               \
            for (int64_t k = 0; k < n; k++) {                               \
                bad |= pk__nonfinite_bits(x[k]) | pk__nonfinite_bits(y[k]); \
                sum += (double)x[k] * y[k];                                 \
            }                                                               \
            *acc = (pk__acc){.v.f = sum, .idx = bad != 0};                  \
        } else if (L == 8 ? pk__lanes_unsure(c0[0], c1[0], acc)             \
                          : pk__lanes_unsure(pk__vabs_f64(c0[0]) + pk__vabs_f64(c0[1]), \
                                             pk__vabs_f64(c1[0]) + pk__vabs_f64(c1[1]), \
                                             acc)) {                        \
            /* f32 too: products spanning 2^80 ([a, a].[b, -b], n = 1002) \
             * left 6e-27 for 0 in the plain-double error sums. */        \
            (void)pk__cpu_exact_sum(L == 8 ? PK_F64 : PK_F32, xv, yv, n, acc); \
        }                                                                   \
    }
PK__DOT(f32, float, vf32, 16)
PK__DOT(f64, double, vf64, 8)

/* ---- min / max: 2 vectors, NaN tracked in a mask ------------------------ */
/* VT: values; MT: compare result of VT; L: lanes; C: value class; CMP: < or
 * > (min or max); PAD: the identity. */
#define PK__ORDER(NAME, T, VT, MT, L, C, FLD, CMP, TAKES, PAD, ISF)         \
    static void NAME##_block(const void *xv, int64_t n, int64_t base,       \
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
    INLINE void NAME##_sweep(const T *restrict x, int64_t rows, int64_t cols, \
                             int64_t ld, T *restrict a)                     \
    {                                                                       \
        PK__COL_SWEEP(T, x, ld, 1, rows, cols, T v = a[c_],                 \
                      ({ v = TAKES(v, X_) ? X_ : v; }), a[c_] = v);         \
    }                                                                       \
    static void NAME##_cols(const void *xv, int64_t rows, int64_t cols,     \
                            int64_t ld, int64_t row0, pk__acc *acc,         \
                            void *out, void *work)                          \
    {                                                                       \
        (void)row0;                                                         \
        const T *x = xv;                                                    \
        PK__PREFETCH_NEXT_CHUNK(x, rows, cols, ld, sizeof(T));              \
        T *a = PK__SLOT(work, 0, T, cols);                                  \
        for (int64_t c = 0; c < cols; c++) a[c] = x[c];                     \
        NAME##_sweep(x, rows, cols, ld, a);                                 \
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
    PK__ROWS_KERNEL(NAME, T, T, NAME##_row, PK__ROWS_NO_FIX)

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
    static void NAME##_block(const void *xv, int64_t n, int64_t base,       \
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
    INLINE void NAME##_sweep(const T *restrict x, int64_t rows, int64_t cols, \
                             int64_t ld, T *restrict a, int64_t *restrict id) \
    {                                                                       \
        PK__COL_SWEEP(T, x, ld, 1, rows, cols, T v = a[c_]; int64_t i = id[c_], \
                      ({ int t = TAKES(v, X_); v = t ? X_ : v; i = t ? R_ : i; }), \
                      a[c_] = v; id[c_] = i);                               \
    }                                                                       \
    static void NAME##_cols(const void *xv, int64_t rows, int64_t cols,     \
                            int64_t ld, int64_t row0, pk__acc *acc,         \
                            void *out, void *work)                          \
    {                                                                       \
        const T *x = xv;                                                    \
        PK__PREFETCH_NEXT_CHUNK(x, rows, cols, ld, sizeof(T));              \
        T *a = PK__SLOT(work, 0, T, cols);                                  \
        int64_t *id = PK__SLOT(work, 1, int64_t, cols);                     \
        for (int64_t c = 0; c < cols; c++) a[c] = x[c], id[c] = 0;          \
        NAME##_sweep(x, rows, cols, ld, a, id);                             \
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
    PK__ROWS_KERNEL(NAME, T, int64_t, NAME##_row, PK__ROWS_NO_FIX)

#define PK__ARG_PAIR(D, T, VT, MT, IT, L, C, FLD)                           \
    PK__ARG(argmin_##D, T, VT, MT, IT, L, C, FLD, <, PK__MIN_TAKES_##C)     \
    PK__ARG(argmax_##D, T, VT, MT, IT, L, C, FLD, >, PK__MAX_TAKES_##C)

PK__ARG_PAIR(f32, float, vf32, vi32, int32_t, 16, F, f)
PK__ARG_PAIR(f64, double, vf64, vi64, int64_t, 8, F, f)
PK__ARG_PAIR(i32, int32_t, vi32, vi32, int32_t, 16, I, i)
PK__ARG_PAIR(i64, int64_t, vi64, vi64, int64_t, 8, I, i)
PK__ARG_PAIR(u32, uint32_t, vu32, vi32, int32_t, 16, U, u)
PK__ARG_PAIR(u64, uint64_t, vu64, vi64, int64_t, 8, U, u)

/* ---- sums of two elements: stride 1 (2 x n, axis 0) and 2 (n x 2, axis 1)
 * spelled out so that they vectorise; their input lines are prefetched as
 * in the block kernels (a single read stream is latency-bound). With
 * `stream` the output goes out in whole 64-byte lines with non-temporal
 * stores: no read for ownership of lines that are only written (2 x 10^7
 * axis 0: 0.84 -> 0.89 of the whole-array sum's bandwidth). */
#if defined(__AVX512F__)
#define PK__STREAM64(p, src) _mm512_stream_si512((void *)(p), PK__LOAD(__m512i, src))
#define PK__STREAM_FENCE() _mm_sfence()
#elif defined(__AVX2__)
#define PK__STREAM64(p, src)                                                \
    do {                                                                    \
        _mm256_stream_si256((__m256i *)(p), PK__LOAD(__m256i, src));        \
        _mm256_stream_si256((__m256i *)(p) + 1, PK__LOAD(__m256i, (const char *)(src) + 32)); \
    } while (0)
#define PK__STREAM_FENCE() _mm_sfence()
#else
#define PK__STREAM64(p, src) memcpy((p), (src), 64)
#define PK__STREAM_FENCE() ((void)0)
#endif
/* Float pairs of stride 1 go by whole vectors of PK__PAIR_VBYTES (RT the
 * input type), stored or streamed straight from registers: GCC 12 made the
 * line loop below 16 scalar additions and shuffles a line (~50
 * instructions), compute-bound once memory runs fast (2 x 10^7 f32 axis 0,
 * 2-core EPYC: 86-91 GB/s counting the output, where a plain vector loop
 * with streaming stores moved 116-132). Stride 2 (n x 2, axis 1) by two
 * permutes a vector on AVX-512 ran slower (2.30 against 2.00-2.07 ms at
 * 10^7 x 2), so it keeps the line loop. */
#if defined(__AVX512F__)
#define PK__PAIR_VBYTES 64
#define PK__STREAM_V(p, v) _mm512_stream_si512((void *)(p), (__m512i)(v))
#elif defined(__AVX2__)
#define PK__PAIR_VBYTES 32
#define PK__STREAM_V(p, v) _mm256_stream_si256((__m256i *)(p), (__m256i)(v))
#else
#define PK__PAIR_VBYTES 16
#define PK__STREAM_V(p, v) memcpy((p), &(v), sizeof(v))
#endif
#define PK__PAIR_LOOP(RT, C, a, b, S, n, out, stream)                       \
    do {                                                                    \
        enum { W_ = 64 / sizeof(RT) }; /* outputs per line */               \
        int64_t i = 0;                                                      \
        if (stream)                                                         \
            for (; i < (n) && ((uintptr_t)((out) + i) & 63); i++)           \
                (out)[i] = PK__PAIR_ADD_##C(RT, (a)[i * (S)], (b)[i * (S)]); \
        /* float pairs of stride 1: RT the input type, not an integer */    \
        if ((S) == 1 && sizeof(RT) == sizeof(*(a)) && (RT)0.5 != 0) {       \
            typedef RT vt_ __attribute__((vector_size(PK__PAIR_VBYTES)));   \
            for (; i + W_ <= (n); i += W_) {                                \
                PK__PREFETCH_SPAN((a) + i, 64);                             \
                PK__PREFETCH_SPAN((b) + i, 64);                             \
                for (int v_ = 0; v_ < W_; v_ += (int)(sizeof(vt_) / sizeof(RT))) { \
                    vt_ x_, y_;                                             \
                    memcpy(&x_, (a) + i + v_, sizeof x_);                   \
                    memcpy(&y_, (b) + i + v_, sizeof y_);                   \
                    vt_ r_ = (x_ + y_) + (vt_){0}; /* PK__PAIR_ADD_F */      \
                    PK__CANON_V(vt_, r_);                                   \
                    if (stream) PK__STREAM_V((out) + i + v_, r_);           \
                    else memcpy((out) + i + v_, &r_, sizeof r_);            \
                }                                                           \
            }                                                               \
        }                                                                   \
        for (; i + W_ <= (n); i += W_) {                                    \
            PK__PREFETCH_SPAN((a) + i * (S), W_ * (S) * sizeof(*(a)));      \
            if ((S) == 1) PK__PREFETCH_SPAN((b) + i, W_ * sizeof(*(b)));    \
            /* The line is built one element past a local array's start:    \
             * the compiler then cannot assume 64-byte alignment and uses   \
             * unaligned moves. ASan's fake stack frames (CI's              \
             * detect_stack_use_after_return) are only 32-byte aligned, and \
             * an aligned vmovdqa64 on an over-aligned local faulted. */    \
            RT buf_[W_ + 1], *line_ = buf_ + 1;                             \
            for (int k = 0; k < W_; k++)                                    \
                line_[k] = PK__PAIR_ADD_##C(RT, (a)[(i + k) * (S)], (b)[(i + k) * (S)]); \
            if (stream) PK__STREAM64((out) + i, line_);                     \
            else memcpy((out) + i, line_, W_ * sizeof(RT));                 \
        }                                                                   \
        for (; i < (n); i++) (out)[i] = PK__PAIR_ADD_##C(RT, (a)[i * (S)], (b)[i * (S)]); \
        if (stream) PK__STREAM_FENCE();                                     \
    } while (0)
#define PK__SUM_PAIR(D, E, T, C, FLD, RT)                                   \
    static void sum_pair_##D(const void *av, const void *bv, int64_t stride, \
                             int64_t n, int stream, void *outv)             \
    {                                                                       \
        const T *a = av, *b = bv;                                           \
        RT *restrict out = outv;                                            \
        if (stride == 1) PK__PAIR_LOOP(RT, C, a, b, 1, n, out, stream);     \
        else if (stride == 2) PK__PAIR_LOOP(RT, C, a, b, 2, n, out, stream); \
        else                                                                \
            for (int64_t i = 0; i < n; i++)                                 \
                out[i] = PK__PAIR_ADD_##C(RT, a[i * stride], b[i * stride]); \
    }
PK__FOR_DTYPES(PK__SUM_PAIR)

/* ---- axpy: one rounding for the product, one for the sum ---------------- */
/* 256 bytes a step: every load, then the arithmetic, then the stores, as
 * OpenBLAS's kernel does. A vector at a time (load, load, store) ran 1.1-1.7x
 * slower at 4096 f32 in L1 on the Xeon VM: a load that follows a store to
 * the same offset within a page waits for it (4K aliasing), and large
 * allocations (mmap) put x and y at the same page offset. */
#define PK__AXPY_STEP(V, a, x, y)                                           \
    do {                                                                    \
        V x0_, x1_, x2_, x3_, y0_, y1_, y2_, y3_; /* named: GCC kept an    \
                                                   * array on the stack */ \
        memcpy(&x0_, (x), 64), memcpy(&x1_, (x) + 64 / sizeof *(x), 64);    \
        memcpy(&x2_, (x) + 128 / sizeof *(x), 64);                          \
        memcpy(&x3_, (x) + 192 / sizeof *(x), 64);                          \
        memcpy(&y0_, (y), 64), memcpy(&y1_, (y) + 64 / sizeof *(y), 64);    \
        memcpy(&y2_, (y) + 128 / sizeof *(y), 64);                          \
        memcpy(&y3_, (y) + 192 / sizeof *(y), 64);                          \
        y0_ = (a) * x0_ + y0_, y1_ = (a) * x1_ + y1_;                       \
        y2_ = (a) * x2_ + y2_, y3_ = (a) * x3_ + y3_;                       \
        memcpy((y), &y0_, 64), memcpy((y) + 64 / sizeof *(y), &y1_, 64);    \
        memcpy((y) + 128 / sizeof *(y), &y2_, 64);                          \
        memcpy((y) + 192 / sizeof *(y), &y3_, 64);                          \
    } while (0)
/* With the l1 profile a range of PK__AXPY_HINTED bytes or more is hinted and
 * walked as two halves in turns of PK__AXPY_TURN bytes (vec.h says why);
 * shorter ones, likely in cache, are not hinted. Elementwise: the same bits
 * either way. */
#define PK__AXPY(D, T, V)                                                   \
    /* hint: a constant at each call, so each caller gets its own loop */  \
    static inline void axpy_steps_##D(int64_t n, T a, const T *restrict x,  \
                                      T *restrict y, int hint)              \
    {                                                                       \
        const int64_t step = 256 / (int64_t)sizeof(T);                      \
        int64_t i = 0;                                                      \
        for (; i + step <= n; i += step) {                                  \
            if (hint) {                                                     \
                PK__HINT_LINES(x + i, 256, PK__AXPY_AHEAD, 0, 3);           \
                PK__HINT_LINES(y + i, 256, PK__AXPY_AHEAD, 1, 3);           \
            }                                                               \
            PK__AXPY_STEP(V, a, x + i, y + i);                              \
        }                                                                   \
        for (; i < n; i++) y[i] = a * x[i] + y[i];                          \
    }                                                                       \
    /* halves split at a multiple of 64 bytes from x; the second may be    \
     * longer. Not inlined, so that short calls do not pay for its frame. */ \
    __attribute__((noinline)) static void axpy_turns_##D(                   \
        int64_t n, T a, const T *x, T *y)                                   \
    {                                                                       \
        const int64_t turn = PK__AXPY_TURN / (int64_t)sizeof(T);            \
        int64_t h = n / 2 / (64 / sizeof(T)) * (64 / sizeof(T));            \
        for (int64_t i = 0; i < n - h; i += turn) {                         \
            if (i < h) axpy_steps_##D(h - i < turn ? h - i : turn, a, x + i, y + i, 1); \
            int64_t l = n - h - i < turn ? n - h - i : turn;                \
            axpy_steps_##D(l, a, x + h + i, y + h + i, 1);                  \
        }                                                                   \
    }                                                                       \
    static void axpy_##D(int64_t n, const void *alpha, const void *xv,      \
                         void *yv)                                          \
    {                                                                       \
        const T a = *(const T *)alpha;                                      \
        if (xv == yv) {                                                     \
            T *y = yv;                                                      \
            for (int64_t i = 0; i < n; i++) y[i] = a * y[i] + y[i];         \
            return;                                                         \
        }                                                                   \
        if (PK__AXPY_TURN > 0 && n >= PK__AXPY_HINTED / (int64_t)sizeof(T)) { \
            axpy_turns_##D(n, a, xv, yv);                                   \
            return;                                                         \
        }                                                                   \
        axpy_steps_##D(n, a, xv, yv, 0);                                    \
    }
PK__AXPY(f32, float, vf32)
PK__AXPY(f64, double, vf64)

PK__DEFINE_TABLE(PK_ISA_SYMBOL, PK_ISA_NAME, &PK_GEMM_SYMBOL, sum_f32_lanes, &PK_UDR_SYMBOL)
