/* The slow, order-free answers that the fast kernels fall back to (issue
 * 55): the exact sum of a block whose compensated sum cannot vouch for
 * itself, float products whose partial products left the range, and the one
 * NaN every float sum, product and dot returns. All rare or cheap: the
 * kernels call them only when a result says so. */
#include "cpu.h"

#include "kernels/dd.h"

#include <float.h>
#include <math.h>

/* Shewchuk's non-overlapping partials (as Python's math.fsum): at most
 * ~40 for doubles (2098 bits of exponent range / 53). */
#define PARTS 64

typedef struct {
    double p[PARTS];
    int n;
} expansion;

/* Adds x exactly; 0 when a partial overflowed (x near DBL_MAX). */
static int grow(expansion *e, double x)
{
    int i = 0;
    for (int j = 0; j < e->n; j++) {
        double hi, lo;
        PK__TWO_SUM(x, e->p[j], hi, lo);
        if (!isfinite(hi)) return 0;
        if (lo != 0.0) e->p[i++] = lo;
        x = hi;
    }
    if (i == PARTS) return 0; /* cannot happen for doubles */
    e->p[i++] = x;
    e->n = i;
    return 1;
}

/* The partials' sum rounded once to nearest (math.fsum's final step: the
 * partials grow in magnitude and do not overlap). */
static double rounded(const expansion *e)
{
    int n = e->n;
    if (n == 0) return 0.0;
    double hi = e->p[--n], lo = 0.0;
    while (n > 0) {
        const double x = hi, y = e->p[--n];
        hi = x + y;
        lo = y - (hi - x);
        if (lo != 0.0) break;
    }
    if (n > 0 && ((lo < 0 && e->p[n - 1] < 0) || (lo > 0 && e->p[n - 1] > 0))) {
        const double y = lo * 2, x = hi + y;
        if (y == x - hi) hi = x; /* a tie broken by the partials below */
    }
    return hi;
}

/* The value at x[i * stride] of dtype t (F32 or F64) as a double. */
static double at(pk_dtype t, const void *x, int64_t i)
{
    return t == PK_F32 ? (double)((const float *)x)[i] : ((const double *)x)[i];
}

int pk__cpu_exact_sum(pk_dtype t, const void *x, const void *y, int64_t n, pk__acc *acc)
{
    expansion e = {.n = 0};
    for (int64_t i = 0; i < n; i++) {
        const double v = at(t, x, i);
        if (!y || t == PK_F32) { /* f32 products are exact in f64 */
            if (!grow(&e, y ? v * at(t, y, i) : v)) return 0;
            continue;
        }
        const double w = at(t, y, i), p = v * w, pe = fma(v, w, -p);
        if (!isfinite(p) || !grow(&e, p) || !grow(&e, pe)) return 0;
    }
    /* hi: the sum rounded once; lo: the rest, rounded once. hi + lo rounds
     * back to hi (|lo| <= ulp(hi) / 2, ties to hi's even side). */
    const double hi = rounded(&e);
    if (!grow(&e, -hi)) return 0;
    acc->v.f = hi + 0.0; /* an exact 0 is +0, as every sum path gives */
    acc->lo = rounded(&e);
    return 1;
}

/* ---- Products out of range ---------------------------------------------- */

/* The product of the data's exact range: NaN if a factor is NaN or factors
 * hold both 0 and Inf; else +-Inf if one is Inf, +-0 if one is 0 (the sign
 * the product of the signs); else the factors' mantissas multiplied in
 * [0.5, 1) with the exponent kept apart (n roundings, as a plain product),
 * scaled once at the end: Inf only when that overflows, 0 only when it
 * underflows. */
static double ranged_product(pk_dtype t, const void *x, int64_t n, int64_t stride)
{
    int nan = 0, inf = 0, zero = 0, neg = 0;
    for (int64_t i = 0; i < n; i++) {
        const double v = at(t, x, i * stride);
        nan |= v != v;
        inf |= isinf(v);
        zero |= v == 0;
        neg ^= signbit(v) != 0;
    }
    if (nan || (inf && zero)) return NAN;
    if (inf || zero) return neg ? -(inf ? INFINITY : 0.0) : (inf ? INFINITY : 0.0);
    double m = 1.0;
    int64_t ex = 0;
    for (int64_t i = 0; i < n; i++) {
        int k;
        m *= frexp(fabs(at(t, x, i * stride)), &k);
        ex += k;
        m = frexp(m, &k); /* keeps m in [0.5, 1): no underflow on the way */
        ex += k;
    }
    /* ldexp rounds once, into the subnormals too. */
    const double r = ldexp(m, ex < -4000 ? -4000 : ex > 4000 ? 4000 : (int)ex);
    return neg ? -r : r;
}

/* Whether a float product's result must be redone: Inf, NaN, 0 or below the
 * smallest normal (a partial product may have left the range on one path
 * and not on another). */
static int prod_suspect(pk_dtype t, double r)
{
    return !(fabs(r) >= (t == PK_F32 ? (double)FLT_MIN : DBL_MIN)) || isinf(r);
}

static void put(pk_dtype t, void *out, int64_t i, double v)
{
    if (t == PK_F32)
        ((float *)out)[i] = pk__canon_float((float)v);
    else
        ((double *)out)[i] = pk__canon_double(v);
}

void pk__cpu_fix_results(pk_op op, pk_dtype t, const void *x, int64_t nout, int64_t step,
                         int64_t len, int64_t stride, void *out)
{
    if ((op != PK_SUM && op != PK_PROD) || (t != PK_F32 && t != PK_F64)) return;
    const size_t es = t == PK_F32 ? 4 : 8;
    /* A cheap pass first (vectorised): the results that may need work. */
    uint64_t any = 0;
    for (int64_t i = 0; i < nout; i++) {
        const double r = at(t, out, i);
        any |= op == PK_PROD ? (uint64_t)prod_suspect(t, r) : pk__nonfinite_bits(r);
    }
    for (int64_t i = 0; any && i < nout; i++) {
        const double r = at(t, out, i);
        if (op == PK_PROD && prod_suspect(t, r))
            put(t, out, i, ranged_product(t, (const char *)x + i * step * (int64_t)es, len, stride));
        else if (r != r)
            put(t, out, i, r);
    }
}

void pk__cpu_canon_nan(pk_dtype t, void *out, int64_t n)
{
    for (int64_t i = 0; (t == PK_F32 || t == PK_F64) && i < n; i++) {
        const double r = at(t, out, i);
        if (r != r) put(t, out, i, r);
    }
}
