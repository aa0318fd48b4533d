/* The semantics of every reduction (op, dtype), written once in the common
 * subset of C11 and CUDA C++: the CPU kernels take them through
 * src/cpu/kernels/acc.h (their tables through table.h), the device functors
 * of src/cuda/ops.cuh call them, and op_rules.c builds the core's op table
 * from them, with which the distributed layer combines ranks' partials.
 *
 *   facts     PK__FOR_DTYPES: C type, value class, pk__acc field, the type of
 *             sums and products
 *   floats    the default NaN; TwoSum; double-double steps; the f32 result of
 *             a double-double rounded once
 *   ordering  which element min/max keep (NaN first), the arg ops' ties,
 *             the identities
 *   integers  sums and products wrap modulo 2^64
 *   pk__acc   combine, finish, empty of each (op, dtype)
 *
 * The partial of each (op, value class), here and in ops.cuh's Acc types:
 * float sums a double-double (hi, lo) in f64 (pk__acc.idx: the Inf/NaN flag
 * of acc_type.h), float products the f64 product, integer sums and products
 * 64 wrapping bits, min and max the value (in pk__acc its class's double,
 * int64 or uint64; on the device the element type), argmin and argmax the
 * value and its index.
 *
 * SIMD forms stay with their kernels (vec.h's PK__TWO_SUM, acc.h's
 * PK__CANON_V, ops.cuh's two_sum_f32). On the device double arithmetic goes
 * through the _rn intrinsics (PK__DADD...), which nvcc never contracts into
 * FMAs, not even with a caller's product once inlined; C callers that feed
 * products in compile with -ffp-contract=off. */
#ifndef PK_CORE_OP_RULES_H
#define PK_CORE_OP_RULES_H

#include "acc_type.h"
#include "pk.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* A rule: a function for the host and, under nvcc, the device too. */
#ifdef __CUDACC__
#define PK__HD __host__ __device__
#define PK__RULE static PK__HD __forceinline__
#else
#define PK__HD
#define PK__RULE static inline
#endif

#ifdef __CUDA_ARCH__
#define PK__DADD(a, b) __dadd_rn((a), (b))
#define PK__DSUB(a, b) __dsub_rn((a), (b))
#define PK__DMUL(a, b) __dmul_rn((a), (b))
#else
#define PK__DADD(a, b) ((a) + (b))
#define PK__DSUB(a, b) ((a) - (b))
#define PK__DMUL(a, b) ((a) * (b))
#endif

/* ---- facts per dtype -----------------------------------------------------
 * Name, enum suffix, C type, value class (F: floats kept as double, I:
 * signed kept as int64, U: unsigned kept as uint64), pk__acc field, sum/prod
 * result type (src/core/types.c: pk_reduce_result_dtype). */
#define PK__FOR_DTYPES(X)                         \
    X(f32, F32, float, F, f, float)               \
    X(f64, F64, double, F, f, double)             \
    X(i32, I32, int32_t, I, i, int64_t)           \
    X(i64, I64, int64_t, I, i, int64_t)           \
    X(u32, U32, uint32_t, U, u, uint64_t)         \
    X(u64, U64, uint64_t, U, u, uint64_t)
#define PK__IS_FLOAT_F 1
#define PK__IS_FLOAT_I 0
#define PK__IS_FLOAT_U 0

/* ---- bits ---------------------------------------------------------------- */

#define PK__F32_ABS 0x7fffffffu
#define PK__F32_INF 0x7f800000u
#define PK__F32_QNAN 0x7fc00000u
#define PK__F64_ABS 0x7fffffffffffffffu
#define PK__F64_INF 0x7ff0000000000000u
#define PK__F64_QNAN 0x7ff8000000000000u

/* pk__f32_bits(v), pk__f32_of(bits) and the same for f64: bit casts. */
#define PK__BIT_CASTS(F, FT, UT)                                            \
    PK__RULE UT pk__##F##_bits(FT v)                                        \
    {                                                                       \
        UT b;                                                               \
        memcpy(&b, &v, sizeof b);                                           \
        return b;                                                           \
    }                                                                       \
    PK__RULE FT pk__##F##_of(UT b)                                          \
    {                                                                       \
        FT v;                                                               \
        memcpy(&v, &b, sizeof v);                                           \
        return v;                                                           \
    }
PK__BIT_CASTS(f32, float, uint32_t)
PK__BIT_CASTS(f64, double, uint64_t)
#undef PK__BIT_CASTS

/* ---- the default NaN ------------------------------------------------------
 * Float sums, products and dots return one NaN, positive, quiet, payload 0,
 * whatever NaNs met: x86 keeps the first operand's NaN and the compilers may
 * swap the operands of + and *, so the paths differed (issue 55). On the
 * bits, so that CPU loops of it vectorise (a float compare does not under
 * -ftrapping-math). */
PK__RULE float pk__canon_float(float v)
{
    uint32_t b = pk__f32_bits(v);
    b = (b & PK__F32_ABS) > PK__F32_INF ? PK__F32_QNAN : b;
    return pk__f32_of(b);
}
PK__RULE double pk__canon_double(double v)
{
    uint64_t b = pk__f64_bits(v);
    b = (b & PK__F64_ABS) > PK__F64_INF ? PK__F64_QNAN : b;
    return pk__f64_of(b);
}
/* The same for a result of type RT (float or double). */
#define PK__CANON(RT, v)                                                    \
    (sizeof(RT) == 4 ? (RT)pk__canon_float((float)(v)) : (RT)pk__canon_double((double)(v)))

/* ---- double-double --------------------------------------------------------
 * s + e == a + b exactly (Knuth's TwoSum; inputs in any order). */
PK__RULE void pk__two_sum(double a, double b, double *s, double *e)
{
    const double t = PK__DADD(a, b), z = PK__DSUB(t, a);
    *e = PK__DADD(PK__DSUB(a, PK__DSUB(t, z)), PK__DSUB(b, z));
    *s = t;
}

/* A double-double in one value: hi + lo. While hi is finite it is the plain
 * running sum and lo its rounding errors; once hi is not finite, lo is
 * meaningless and the value is hi (as a plain sum would give). */
typedef struct pk__dd {
    double hi, lo;
} pk__dd;

/* a + x, one term: TwoSum into hi, its error added to lo (the device's
 * running sums). */
PK__RULE pk__dd pk__dd_add_term(pk__dd a, double x)
{
    double s, e;
    pk__two_sum(a.hi, x, &s, &e);
    a.hi = s;
    a.lo = PK__DADD(a.lo, e);
    return a;
}
/* a + b, the low parts added plainly with the high parts' error (the
 * device's combine: the partials of a tree of threads). */
PK__RULE pk__dd pk__dd_combine(pk__dd a, pk__dd b)
{
    double s, e;
    pk__two_sum(a.hi, b.hi, &s, &e);
    a.hi = s;
    a.lo = PK__DADD(PK__DADD(a.lo, b.lo), e);
    return a;
}

/* *a += (hi, lo) in double-double, both low parts kept (the accurate
 * double-double sum: the result is renormalised, |lo| <= ulp(hi) / 2): the
 * CPU's combine of partials. Adding the low parts in plain double instead
 * lost an ulp when giants cancelled between partials: f64 column sums of
 * +-1e20 among O(1) values, about one test_accuracy run in 40 on every path
 * before this. Inputs need not be normalised (TwoSum throughout, not
 * FastTwoSum). Non-finite values fall back to a plain add so that Inf and NaN
 * come out as in a plain sum. */
PK__RULE void pk__dd_add(pk__acc *a, double hi, double lo)
{
    if (isfinite(a->v.f) && isfinite(hi)) {
        double s, e, t, f, u, g, h, l;
        pk__two_sum(a->v.f, hi, &s, &e);
        pk__two_sum(a->lo, lo, &t, &f);
        pk__two_sum(s, PK__DADD(e, t), &u, &g);
        pk__two_sum(u, PK__DADD(g, f), &h, &l);
        /* An overflow: the first infinite high part is the sum (its error
         * terms are NaN). */
        a->v.f = isfinite(s) ? isfinite(u) ? h : u : s;
        a->lo = isfinite(a->v.f) ? l : 0;
    } else {
        a->v.f = PK__DADD(a->v.f, hi);
        a->lo = 0;
    }
}

/* The value of a double-double as a double: hi + lo, or hi when that is not
 * finite. */
PK__RULE double pk__dd_value(double hi, double lo)
{
    return isfinite(hi) ? PK__DADD(hi, lo) : hi;
}

/* A double-double h + l rounded to float once. Rounding to double first
 * and then to float rounds twice: with h on a float midpoint and l breaking
 * the tie, 1 + 2^-24 + 2^-60 came out as 1. Instead h moves to its odd
 * neighbour on l's side when l != 0 and h is even ("round to odd": a double
 * so rounded, 29 bits wider than a float, rounds to float as h + l itself
 * would). pk__dd_round_odd gives that double; it needs |l| <= ulp(h) / 2 (a
 * TwoSum's pair) and finite h, l, and is branch-free with integer lanes of
 * one width, so the CPU's short-row kernels still vectorise across rows. */
PK__RULE double pk__dd_round_odd(double h, double l)
{
    /* +1 on h's bits moves away from zero, -1 toward it (an even h has no
     * carry out of its exponent, and -1 on a power of two gives its
     * predecessor); l != 0 implies h != 0. */
    uint64_t hb = pk__f64_bits(h);
    const uint64_t lb = pk__f64_bits(l);
    const uint64_t step = (uint64_t)((lb << 1) != 0) & ~hb & 1;
    const uint64_t same = ~(hb ^ lb) >> 63; /* 1: l has h's sign */
    hb += (step & same) - (step & (same ^ 1));
    return pk__f64_of(hb);
}

/* The same for any finite pair (renormalised first), Inf and NaN as h + l. */
PK__RULE float pk__dd_to_f32(double h, double l)
{
    double s, e;
    pk__two_sum(h, l, &s, &e);
    return (float)(isfinite(h) && isfinite(l) ? pk__dd_round_odd(s, e) : PK__DADD(h, l));
}

/* A double-double (h, l) as a sum's result: to float rounded once (above),
 * to double as h + l. */
#define PK__DD_RESULT(RT, h, l)                                             \
    (sizeof(RT) == 4 ? (RT)pk__dd_to_f32((h), (l)) : (RT)((h) + (l)))

/* ---- float sums and products: their results ------------------------------
 * A sum's double-double partial: rounded once to its dtype, Inf and NaN as
 * its high part, NaN the default one. A product's f64 partial likewise. */
PK__RULE float pk__sum_result_f32(double hi, double lo)
{
    return pk__canon_float(isfinite(hi) ? pk__dd_to_f32(hi, lo) : (float)hi);
}
PK__RULE double pk__sum_result_f64(double hi, double lo)
{
    return pk__canon_double(pk__dd_value(hi, lo));
}
PK__RULE double pk__prod_step(double a, double b) { return PK__DMUL(a, b); }
PK__RULE float pk__prod_result_f32(double a) { return pk__canon_float((float)a); }
PK__RULE double pk__prod_result_f64(double a) { return pk__canon_double(a); }

/* ---- integers: 64 bits, wrapping (unsigned arithmetic) ------------------- */

PK__RULE uint64_t pk__wrap_add(uint64_t a, uint64_t b) { return a + b; }
PK__RULE uint64_t pk__wrap_mul(uint64_t a, uint64_t b) { return a * b; }

/* ---- identities -----------------------------------------------------------
 * Sums start from 0, products from 1 (every dtype). min and max of nothing
 * are errors in the API, but folds start from the far end of the range:
 * min from pk__highest_<dtype>(), max from pk__lowest_<dtype>(). */
#define PK__SUM_IDENTITY 0
#define PK__PROD_IDENTITY 1
#define PK__LIMITS(D, T, LO, HI)                                            \
    PK__RULE T pk__lowest_##D(void) { return LO; }                          \
    PK__RULE T pk__highest_##D(void) { return HI; }
PK__LIMITS(f32, float, -pk__f32_of(PK__F32_INF), pk__f32_of(PK__F32_INF))
PK__LIMITS(f64, double, -pk__f64_of(PK__F64_INF), pk__f64_of(PK__F64_INF))
PK__LIMITS(i32, int32_t, INT32_MIN, INT32_MAX)
PK__LIMITS(i64, int64_t, INT64_MIN, INT64_MAX)
PK__LIMITS(u32, uint32_t, 0, UINT32_MAX)
PK__LIMITS(u64, uint64_t, 0, UINT64_MAX)
#undef PK__LIMITS

/* ---- ordering -------------------------------------------------------------
 * Whether x, coming after acc, replaces it, with NumPy's NaN rules: NaN
 * beats everything and the first NaN stays; on ties the earlier element
 * stays. Macros: they serve float and double, the pk__acc fields and the
 * device's template types alike. */
#define PK__MIN_TAKES_F(acc, x) ((acc) == (acc) && !((x) >= (acc)))
#define PK__MAX_TAKES_F(acc, x) ((acc) == (acc) && !((x) <= (acc)))
#define PK__MIN_TAKES_I(acc, x) ((x) < (acc))
#define PK__MAX_TAKES_I(acc, x) ((x) > (acc))
#define PK__MIN_TAKES_U PK__MIN_TAKES_I
#define PK__MAX_TAKES_U PK__MAX_TAKES_I
/* Equal for arg ops' tie-breaking: equal values, or both NaN. */
#define PK__SAME_F(a, b) ((a) == (b) || ((a) != (a) && (b) != (b)))
#define PK__SAME_I(a, b) ((a) == (b))
#define PK__SAME_U PK__SAME_I
/* The arg ops: b (index bi) replaces a (index ai) when its value is taken
 * (takes: the predicate above on a's and b's values) or the same (same) at
 * a lower index, so that partials combine to the first occurrence whatever
 * order they come in. */
#define PK__ARG_TAKES(takes, same, ai, bi) ((takes) || ((same) && (bi) < (ai)))

/* ---- combine / finish / empty over pk__acc for each (op, dtype) ----------
 * pk__<op>_<dtype>_combine(a, b): *a followed by *b; _finish(a, out): the
 * result dtype's value at out; _empty(a): the partial of nothing (sums and
 * products only). */

#define PK__ACC_SET(a, FLD, x) ((a)->v.FLD = (x), (a)->lo = 0.0, (a)->idx = 0)

#define PK__ACC_SUMPROD_F(D, FLD, RT)                                       \
    static inline void pk__sum_##D##_combine(pk__acc *a, const pk__acc *b)  \
    {                                                                       \
        pk__dd_add(a, b->v.f, b->lo);                                       \
        a->idx |= b->idx; /* a term was Inf or NaN (acc_type.h) */          \
    }                                                                       \
    static inline void pk__sum_##D##_finish(const pk__acc *a, void *out)    \
    { *(RT *)out = pk__sum_result_##D(a->v.f, a->lo); }                     \
    static inline void pk__sum_##D##_empty(pk__acc *a)                      \
    { PK__ACC_SET(a, f, PK__SUM_IDENTITY); }                                \
    static inline void pk__prod_##D##_combine(pk__acc *a, const pk__acc *b) \
    { a->v.f = pk__prod_step(a->v.f, b->v.f); }                             \
    static inline void pk__prod_##D##_finish(const pk__acc *a, void *out)   \
    { *(RT *)out = pk__prod_result_##D(a->v.f); }                           \
    static inline void pk__prod_##D##_empty(pk__acc *a)                     \
    { PK__ACC_SET(a, f, PK__PROD_IDENTITY); }

#define PK__ACC_SUMPROD_I(D, FLD, RT)                                       \
    static inline void pk__sum_##D##_combine(pk__acc *a, const pk__acc *b)  \
    { a->v.u = pk__wrap_add(a->v.u, b->v.u); }                              \
    static inline void pk__sum_##D##_finish(const pk__acc *a, void *out)    \
    { memcpy(out, &a->v.u, 8); }                                            \
    static inline void pk__sum_##D##_empty(pk__acc *a)                      \
    { PK__ACC_SET(a, u, PK__SUM_IDENTITY); }                                \
    static inline void pk__prod_##D##_combine(pk__acc *a, const pk__acc *b) \
    { a->v.u = pk__wrap_mul(a->v.u, b->v.u); }                              \
    static inline void pk__prod_##D##_finish(const pk__acc *a, void *out)   \
    { memcpy(out, &a->v.u, 8); }                                            \
    static inline void pk__prod_##D##_empty(pk__acc *a)                     \
    { PK__ACC_SET(a, u, PK__PROD_IDENTITY); }

#define PK__ACC_SUMPROD_U PK__ACC_SUMPROD_I

/* min and max keep the value, argmin and argmax value and index. */
#define PK__ACC_ORDER(op, TAKES, D, T, C, FLD)                              \
    static inline void pk__##op##_##D##_combine(pk__acc *a, const pk__acc *b) \
    { if (TAKES##C(a->v.FLD, b->v.FLD)) a->v = b->v; }                      \
    static inline void pk__##op##_##D##_finish(const pk__acc *a, void *out) \
    { *(T *)out = (T)a->v.FLD; }                                            \
    static inline void pk__arg##op##_##D##_combine(pk__acc *a, const pk__acc *b) \
    {                                                                       \
        if (PK__ARG_TAKES(TAKES##C(a->v.FLD, b->v.FLD),                     \
                          PK__SAME_##C(a->v.FLD, b->v.FLD), a->idx, b->idx)) \
            *a = *b;                                                        \
    }                                                                       \
    static inline void pk__arg##op##_##D##_finish(const pk__acc *a, void *out) \
    { *(int64_t *)out = a->idx; }

#define PK__ACC_RULES(D, E, T, C, FLD, RT)                                  \
    PK__ACC_SUMPROD_##C(D, FLD, RT)                                         \
    PK__ACC_ORDER(min, PK__MIN_TAKES_, D, T, C, FLD)                        \
    PK__ACC_ORDER(max, PK__MAX_TAKES_, D, T, C, FLD)
PK__FOR_DTYPES(PK__ACC_RULES)
#undef PK__ACC_RULES

/* {combine, finish, empty} of (op, dtype D), for tables (op_rules.c, the
 * CPU kernel tables of src/cpu/kernels/table.h): order ops have no empty. */
#define PK__RULE_FNS(op, D) PK__RULE_FNS_##op(op, D)
#define PK__RULE_FNS_sum(op, D) PK__RULE_FNS_FOLD(op, D)
#define PK__RULE_FNS_prod(op, D) PK__RULE_FNS_FOLD(op, D)
#define PK__RULE_FNS_min(op, D) PK__RULE_FNS_ORDER(op, D)
#define PK__RULE_FNS_max(op, D) PK__RULE_FNS_ORDER(op, D)
#define PK__RULE_FNS_argmin(op, D) PK__RULE_FNS_ORDER(op, D)
#define PK__RULE_FNS_argmax(op, D) PK__RULE_FNS_ORDER(op, D)
#define PK__RULE_FNS_FOLD(op, D)                                            \
    pk__##op##_##D##_combine, pk__##op##_##D##_finish, pk__##op##_##D##_empty
#define PK__RULE_FNS_ORDER(op, D) pk__##op##_##D##_combine, pk__##op##_##D##_finish, 0

#ifdef __cplusplus
extern "C" {
#endif

/* The core's op table: the rules above for every (op, dtype). The
 * distributed layer combines ranks' partials with it, whatever their
 * backend. */
typedef struct pk__op_rule {
    void (*combine)(pk__acc *a, const pk__acc *b);
    void (*finish)(const pk__acc *a, void *out);
    void (*empty)(pk__acc *a); /* NULL for min, max, argmin, argmax */
} pk__op_rule;
extern const pk__op_rule pk__op_rules[PK_OP_COUNT][PK_DTYPE_COUNT];

#ifdef __cplusplus
}
#endif

#endif
