/* f64 sums and dots whose partials overflowed although every term is
 * finite: giants that cancel (0.75 DBL_MAX twice, then its negation twice)
 * make the double-double tree Inf or NaN where the sum itself is 0. Such a
 * result is redone here, serially (it is rare, and the bits then depend on
 * the data alone): terms of magnitude 2^-800 and up are scaled by 2^-200
 * (exactly) and summed in one double-double, smaller ones unscaled in
 * another; neither can overflow. A term that is itself Inf or NaN (or a
 * product that overflows) leaves the result as it was: a plain sum gives
 * that too. Data holding NaN are common, so that case must stay cheap: the
 * fast kernels flag blocks that held Inf or NaN (pk__acc.idx), and the
 * callers skip those results; otherwise a scan that stops at the first bad
 * chunk finds them before the slow double-double loop could start. */
#include "cpu.h"

#include "kernels/dd.h"

#include <math.h>

#define BIG 0x1p-800
#define DOWN 0x1p-200
#define UP 0x1p200
#define SCAN_CHUNK 4096

/* Whether x[j * stride] (and y[j]), j < n, are all finite; stops at the
 * first chunk that is not. */
static int all_finite(const double *x, const double *y, int64_t n, int64_t stride)
{
    for (int64_t j0 = 0; j0 < n; j0 += SCAN_CHUNK) {
        const int64_t j1 = n - j0 < SCAN_CHUNK ? n : j0 + SCAN_CHUNK;
        uint64_t bad = 0;
        for (int64_t j = j0; j < j1; j++) bad |= pk__nonfinite_bits(x[j * stride]);
        for (int64_t j = j0; y && j < j1; j++) bad |= pk__nonfinite_bits(y[j]);
        if (bad) return 0;
    }
    return 1;
}

/* The sum of x[j * stride] (times y[j] when y), j < n, finite terms, into
 * *out; 0 when a product is not finite (*out untouched). */
static int scaled_sum(const double *x, const double *y, int64_t n, int64_t stride, double *out)
{
    pk__acc big = {.v.f = 0.0}, small = {.v.f = 0.0};
    for (int64_t j = 0; j < n; j++) {
        double v = x[j * stride], e = 0.0;
        if (y) {
            const double p = v * y[j];
            e = fma(v, y[j], -p);
            v = p;
        }
        if (!isfinite(v) || !isfinite(e)) return 0;
        if (fabs(v) >= BIG)
            pk__dd_add(&big, v * DOWN, e * DOWN);
        else
            pk__dd_add(&small, v, e);
    }
    const double b = pk__dd_value(big.v.f, big.lo);
    if (fabs(b) < 0x1p800) {
        /* The giants cancelled: their sum scales back exactly, and the small
         * terms join it unscaled (scaled, they would lose bits to
         * subnormals). */
        pk__dd_add(&small, big.v.f * UP, big.lo * UP);
        *out = pk__dd_value(small.v.f, small.lo);
    } else {
        pk__dd_add(&big, small.v.f * DOWN, small.lo * DOWN);
        *out = pk__dd_value(big.v.f, big.lo) * UP;
    }
    return 1;
}

void pk__cpu_rescue_sums_f64(const double *x, const double *y, int64_t nout, int64_t step,
                             int64_t len, double *out)
{
    uint64_t bad = 0;
    for (int64_t i = 0; i < nout; i++) bad |= pk__nonfinite_bits(out[i]);
    for (int64_t i = 0; bad && i < nout; i++)
        if (!isfinite(out[i]) && all_finite(x + i * step, y, len, 1))
            (void)scaled_sum(x + i * step, y, len, 1, &out[i]);
}

void pk__cpu_rescue_strided_f64(const double *x, int64_t n, int64_t stride, int checked,
                                double *out)
{
    if (!isfinite(*out) && (checked || all_finite(x, NULL, n, stride)))
        (void)scaled_sum(x, NULL, n, stride, out);
}
