/* The CPU's double-double helpers beyond the shared rules of
 * src/core/op_rules.h (pk__dd_add, pk__dd_value, pk__dd_to_f32 and the
 * rest, included from here): the three-part running sums of the reference
 * kernels and of chains of partials, and the scan for Inf and NaN. Shared by
 * the kernels (acc.h), the drivers (reduce.c), the exact sums (exact.c) and
 * the overflow rescue of f64 sums (sum_rescue.c). */
#ifndef PK_CPU_DD_H
#define PK_CPU_DD_H

#include "../../core/op_rules.h"
#include "kernels.h"
#include "vec.h"

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
    return pk__f64_bits(x - x);
}

#endif
