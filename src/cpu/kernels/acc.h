/* Scalar semantics of every reduction: how partials combine, how a partial
 * becomes the result, the partial of nothing. Shared by the fast kernels and
 * the reference kernels so that both define one function per (op, dtype)
 * with the same names; src/cpu/kernels/table.h builds a table from them. */
#ifndef PK_CPU_ACC_H
#define PK_CPU_ACC_H

#include "dd.h"
#include "kernels.h"
#include "vec.h"

#include <math.h>

/* Ordering predicates with NumPy's NaN rules: NaN beats everything and the
 * first NaN stays; on ties the earlier element stays. */
#define PK__MIN_TAKES_F(acc, x) ((acc) == (acc) && !((x) >= (acc)))
#define PK__MAX_TAKES_F(acc, x) ((acc) == (acc) && !((x) <= (acc)))
#define PK__MIN_TAKES_I(acc, x) ((x) < (acc))
#define PK__MAX_TAKES_I(acc, x) ((x) > (acc))
#define PK__MIN_TAKES_U PK__MIN_TAKES_I
#define PK__MAX_TAKES_U PK__MAX_TAKES_I
/* Equal for arg ops' tie-breaking: equal values, or both NaN. Arg partials
 * combine to the lower index on ties, whatever order they come in. */
#define PK__SAME_F(a, b) ((a) == (b) || ((a) != (a) && (b) != (b)))
#define PK__SAME_I(a, b) ((a) == (b))
#define PK__SAME_U PK__SAME_I

/* The dtypes: name, enum suffix, C type, value class (F: floats kept as double, I: signed
 * kept as int64, U: unsigned kept as uint64), pk__acc field, sum/prod
 * result type. */
#define PK__FOR_DTYPES(X)                         \
    X(f32, F32, float, F, f, float)               \
    X(f64, F64, double, F, f, double)             \
    X(i32, I32, int32_t, I, i, int64_t)           \
    X(i64, I64, int64_t, I, i, int64_t)           \
    X(u32, U32, uint32_t, U, u, uint64_t)         \
    X(u64, U64, uint64_t, U, u, uint64_t)

/* ---- the default NaN ---------------------------------------------------
 * Float sums, products and dots return one NaN, positive, quiet, payload 0
 * (0x7fc00000, 0x7ff8000000000000: the CUDA backend's too), whatever NaNs
 * met: x86 keeps the first operand's NaN and the compilers may swap the
 * operands of + and *, so the paths differed (issue 55). On the bits, so
 * that loops of it vectorise (a float compare does not under
 * -ftrapping-math). PK__CANON_V: the same on a vector V of float or double
 * lanes. */
#define PK__CANON_FN(FT, UT, ABS, INF, QNAN)                                \
    static inline FT pk__canon_##FT(FT v)                                   \
    {                                                                       \
        UT b;                                                               \
        memcpy(&b, &v, sizeof b);                                           \
        b = (b & (ABS)) > (INF) ? (QNAN) : b;                               \
        memcpy(&v, &b, sizeof b);                                           \
        return v;                                                           \
    }
PK__CANON_FN(float, uint32_t, 0x7fffffffu, 0x7f800000u, 0x7fc00000u)
PK__CANON_FN(double, uint64_t, 0x7fffffffffffffffu, 0x7ff0000000000000u, 0x7ff8000000000000u)
#define PK__CANON(RT, v)                                                    \
    (sizeof(RT) == 4 ? (RT)pk__canon_float((float)(v)) : (RT)pk__canon_double((double)(v)))
#define PK__CANON_BITS_V(V, UT, r, ABS, INF, QNAN)                           \
    do {                                                                    \
        typedef UT u_ __attribute__((vector_size(sizeof(V))));              \
        u_ b_;                                                              \
        memcpy(&b_, &(r), sizeof b_);                                       \
        const u_ m_ = (u_)((b_ & (ABS)) > (INF));                           \
        b_ = (b_ & ~m_) | (m_ & (QNAN));                                    \
        memcpy(&(r), &b_, sizeof b_);                                       \
    } while (0)
#define PK__CANON_V(V, r)                                                   \
    do {                                                                    \
        if (sizeof((r)[0]) == 4)                                            \
            PK__CANON_BITS_V(V, uint32_t, r, 0x7fffffffu, 0x7f800000u, 0x7fc00000u); \
        else                                                                \
            PK__CANON_BITS_V(V, uint64_t, r, 0x7fffffffffffffffu, 0x7ff0000000000000u, \
                             0x7ff8000000000000u);                          \
    } while (0)

/* ---- sums of two elements (see pk__cpu_kernels.sum_pair) ---------------
 * Floats add in their own precision (one rounding: the closest result);
 * + 0 makes -0 + -0 the +0 that every other sum path gives (they start from
 * +0); integers in 64 bits, wrapping as the other integer sums do. */
#define PK__PAIR_ADD_F(RT, a, b) PK__CANON(RT, (RT)((a) + (b)) + (RT)0)
#define PK__PAIR_ADD_I(RT, a, b) ((RT)((uint64_t)(a) + (uint64_t)(b)))
#define PK__PAIR_ADD_U PK__PAIR_ADD_I

/* ---- combine / finish / empty for each (op, dtype) -------------------- */

#define PK__SUMPROD_F(D, E, T, C, FLD, RT)                                     \
    static void sum_##D##_combine(pk__acc *a, const pk__acc *b)             \
    {                                                                       \
        pk__dd_add(a, b->v.f, b->lo);                                       \
        a->idx |= b->idx; /* a term was Inf or NaN (acc_type.h) */          \
    }                                                                       \
    static void sum_##D##_finish(const pk__acc *a, void *out)               \
    {                                                                       \
        const RT r = isfinite(a->v.f) ? PK__DD_RESULT(RT, a->v.f, a->lo)    \
                                      : (RT)a->v.f;                         \
        *(RT *)out = PK__CANON(RT, r);                                      \
    }                                                                       \
    static void sum_##D##_empty(pk__acc *a)                                 \
    { *a = (pk__acc){.v.f = 0.0}; }                                         \
    static void prod_##D##_combine(pk__acc *a, const pk__acc *b)            \
    { a->v.f *= b->v.f; }                                                   \
    static void prod_##D##_finish(const pk__acc *a, void *out)              \
    { *(RT *)out = PK__CANON(RT, a->v.f); }                                 \
    static void prod_##D##_empty(pk__acc *a) { *a = (pk__acc){.v.f = 1.0}; }

/* Integer sums and products wrap modulo 2^64 (unsigned arithmetic). */
#define PK__SUMPROD_INT(D, E, T, C, FLD, RT)                                   \
    static void sum_##D##_combine(pk__acc *a, const pk__acc *b)             \
    { a->v.u += b->v.u; }                                                   \
    static void sum_##D##_finish(const pk__acc *a, void *out)               \
    { memcpy(out, &a->v.u, 8); }                                            \
    static void sum_##D##_empty(pk__acc *a) { *a = (pk__acc){.v.u = 0}; }  \
    static void prod_##D##_combine(pk__acc *a, const pk__acc *b)            \
    { a->v.u *= b->v.u; }                                                   \
    static void prod_##D##_finish(const pk__acc *a, void *out)              \
    { memcpy(out, &a->v.u, 8); }                                            \
    static void prod_##D##_empty(pk__acc *a) { *a = (pk__acc){.v.u = 1}; }

#define PK__SUMPROD_F_f32 PK__SUMPROD_F
#define PK__SUMPROD_F_f64 PK__SUMPROD_F
#define PK__SUMPROD_F_i32 PK__SUMPROD_INT
#define PK__SUMPROD_F_i64 PK__SUMPROD_INT
#define PK__SUMPROD_F_u32 PK__SUMPROD_INT
#define PK__SUMPROD_F_u64 PK__SUMPROD_INT

#define PK__ORDER_OPS(D, E, T, C, FLD, RT)                                     \
    static void min_##D##_combine(pk__acc *a, const pk__acc *b)             \
    { if (PK__MIN_TAKES_##C(a->v.FLD, b->v.FLD)) a->v = b->v; }             \
    static void max_##D##_combine(pk__acc *a, const pk__acc *b)             \
    { if (PK__MAX_TAKES_##C(a->v.FLD, b->v.FLD)) a->v = b->v; }             \
    static void min_##D##_finish(const pk__acc *a, void *out)               \
    { *(T *)out = (T)a->v.FLD; }                                            \
    static void argmin_##D##_combine(pk__acc *a, const pk__acc *b)          \
    {                                                                       \
        if (PK__MIN_TAKES_##C(a->v.FLD, b->v.FLD) ||                        \
            (PK__SAME_##C(a->v.FLD, b->v.FLD) && b->idx < a->idx)) *a = *b; \
    }                                                                       \
    static void argmax_##D##_combine(pk__acc *a, const pk__acc *b)          \
    {                                                                       \
        if (PK__MAX_TAKES_##C(a->v.FLD, b->v.FLD) ||                        \
            (PK__SAME_##C(a->v.FLD, b->v.FLD) && b->idx < a->idx)) *a = *b; \
    }                                                                       \
    static void argmin_##D##_finish(const pk__acc *a, void *out)            \
    { *(int64_t *)out = a->idx; }

#define PK__ACC_DEFINE(D, E, T, C, FLD, RT)     \
    PK__SUMPROD_F_##D(D, E, T, C, FLD, RT)      \
    PK__ORDER_OPS(D, E, T, C, FLD, RT)
PK__FOR_DTYPES(PK__ACC_DEFINE)
#undef PK__ACC_DEFINE

/* max and argmax finish like min and argmin; order ops have no empty. */
#define max_f32_finish min_f32_finish
#define max_f64_finish min_f64_finish
#define max_i32_finish min_i32_finish
#define max_i64_finish min_i64_finish
#define max_u32_finish min_u32_finish
#define max_u64_finish min_u64_finish
#define argmax_f32_finish argmin_f32_finish
#define argmax_f64_finish argmin_f64_finish
#define argmax_i32_finish argmin_i32_finish
#define argmax_i64_finish argmin_i64_finish
#define argmax_u32_finish argmin_u32_finish
#define argmax_u64_finish argmin_u64_finish

#endif
