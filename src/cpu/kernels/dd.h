/* Double-double arithmetic on pk__acc (v.f high, lo low part): the
 * accurate add, the value, and the once-rounded result of a sum. Shared by
 * the kernels (acc.h) and the overflow rescue of f64 sums (sum_rescue.c). */
#ifndef PK_CPU_DD_H
#define PK_CPU_DD_H

#include "kernels.h"
#include "vec.h"

#include <math.h>
#include <string.h>

/* *a += (hi, lo) in double-double, both low parts kept (the accurate
 * double-double sum: the result is renormalised, |lo| <= ulp(hi) / 2).
 * Adding the low parts in plain double instead lost an ulp when giants
 * cancelled between partials: f64 column sums of +-1e20 among O(1) values,
 * about one test_accuracy run in 40 on every path before this. Inputs need
 * not be normalised (TwoSum throughout, not FastTwoSum). Non-finite values
 * fall back to a plain add so that Inf and NaN come out as in a plain sum. */
static inline void pk__dd_add(pk__acc *a, double hi, double lo)
{
    if (isfinite(a->v.f) && isfinite(hi)) {
        double s, e, t, f, u, g, h, l;
        PK__TWO_SUM(a->v.f, hi, s, e);
        PK__TWO_SUM(a->lo, lo, t, f);
        PK__TWO_SUM(s, e + t, u, g);
        PK__TWO_SUM(u, g + f, h, l);
        /* An overflow: the first infinite high part is the sum (its error
         * terms are NaN). */
        a->v.f = isfinite(s) ? isfinite(u) ? h : u : s;
        a->lo = isfinite(a->v.f) ? l : 0;
    } else {
        a->v.f = a->v.f + hi;
        a->lo = 0;
    }
}

/* A running sum of one term at a time in three parts, h + l + t (the
 * reference kernels' loops): TwoSum into h, its error by TwoSum into l, that
 * error into t. pk__dd_add alone rounds the low part at every term while a
 * giant is the high part: +-1e20 among O(1) values then erred past NumPy's
 * pairwise sum (issue 55). Non-finite terms or an overflow leave the plain
 * sum in h, as pk__dd_add does. */
typedef struct pk__td {
    double h, l, t;
} pk__td;
static inline void pk__td_add(pk__td *a, double v)
{
    double s, e, l, f;
    PK__TWO_SUM(a->h, v, s, e);
    if (!isfinite(s) || !isfinite(a->h) || !isfinite(v)) {
        a->h += v;
        a->l = a->t = 0;
        return;
    }
    PK__TWO_SUM(a->l, e, l, f);
    a->h = s, a->l = l, a->t += f;
}
/* As a partial: the renormalised (h + l, its error + t). */
static inline pk__acc pk__td_acc(const pk__td *a)
{
    if (!isfinite(a->h)) return (pk__acc){.v.f = a->h};
    double hi, lo;
    PK__TWO_SUM(a->h, a->l, hi, lo);
    return (pk__acc){.v.f = hi, .lo = lo + a->t};
}

/* The bits of x - x: 0 (+0) exactly when x is finite, a NaN's otherwise.
 * OR-ed over many values, a scan for Inf and NaN that vectorises (a flag
 * from double compares did not, and cost the short-row kernels 12%). */
static inline uint64_t pk__nonfinite_bits(double x)
{
    const double d = x - x;
    uint64_t b;
    memcpy(&b, &d, 8);
    return b;
}

static inline double pk__dd_value(const pk__acc *a)
{
    return isfinite(a->v.f) ? a->v.f + a->lo : a->v.f;
}

/* A double-double h + l rounded to float once. Rounding to double first
 * and then to float rounds twice: with h on a float midpoint and l breaking
 * the tie, 1 + 2^-24 + 2^-60 came out as 1. Instead h moves to its odd
 * neighbour on l's side when l != 0 and h is even ("round to odd": a double
 * so rounded, 29 bits wider than a float, rounds to float as h + l itself
 * would). pk__dd_round_odd gives that double; it needs |l| <= ulp(h) / 2 (a
 * TwoSum's pair) and finite h, l, and is branch-free with integer lanes of
 * one width, so the short-row kernels still vectorise across rows. */
static inline double pk__dd_round_odd(double h, double l)
{
    /* +1 on h's bits moves away from zero, -1 toward it (an even h has no
     * carry out of its exponent, and -1 on a power of two gives its
     * predecessor); l != 0 implies h != 0. */
    uint64_t hb, lb;
    memcpy(&hb, &h, 8);
    memcpy(&lb, &l, 8);
    const uint64_t step = (uint64_t)((lb << 1) != 0) & ~hb & 1;
    const uint64_t same = ~(hb ^ lb) >> 63; /* 1: l has h's sign */
    hb += (step & same) - (step & (same ^ 1));
    double odd;
    memcpy(&odd, &hb, 8);
    return odd;
}

/* The same for any finite pair (renormalised first), Inf and NaN as h + l. */
static inline float pk__dd_to_f32(double h, double l)
{
    double s, e;
    PK__TWO_SUM(h, l, s, e);
    return (float)(isfinite(h) && isfinite(l) ? pk__dd_round_odd(s, e) : h + l);
}

/* A double-double (h, l) as a sum's result: to float rounded once (above),
 * to double as h + l. */
#define PK__DD_RESULT(RT, h, l) \
    (sizeof(RT) == 4 ? (RT)pk__dd_to_f32((h), (l)) : (RT)((h) + (l)))

#endif
