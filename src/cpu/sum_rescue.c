/* f64 sums and dots whose partials overflowed although every term is
 * finite: giants that cancel (0.75 DBL_MAX twice, then its negation twice)
 * make the double-double tree Inf or NaN where the sum itself is 0. Such a
 * result is redone here, serially (it is rare, and the bits then depend on
 * the data alone): terms of magnitude 2^-800 and up are scaled by 2^-200
 * (exactly) and summed in one double-double, smaller ones unscaled in
 * another; neither can overflow, and the scaled result is rounded once and
 * scaled back. A term that is itself Inf or NaN (a product that overflows
 * included) leaves the result as it was: a plain sum gives that too. */
#include "cpu.h"

#include "kernels/dd.h"

#include <math.h>
#include <string.h>

#define BIG 0x1p-800
#define DOWN 0x1p-200
#define UP 0x1p200

/* The sum of x[j * stride] (times y[j] when y), j < n, into *out; 0 when a
 * term is not finite (*out untouched). */
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
    if (big.v.f == 0.0 && big.lo == 0.0) {
        *out = small.v.f + small.lo;
        return 1;
    }
    pk__dd_add(&big, small.v.f * DOWN, small.lo * DOWN);
    *out = (big.v.f + big.lo) * UP;
    return 1;
}

void pk__cpu_rescue_sums_f64(const double *x, const double *y, int64_t nout, int64_t step,
                             int64_t len, int64_t stride, double *out)
{
    /* A branch-free scan first (x - x is +0, bits 0, only for finite x). */
    uint64_t bad = 0;
    for (int64_t i = 0; i < nout; i++) {
        const double d = out[i] - out[i];
        uint64_t b;
        memcpy(&b, &d, 8);
        bad |= b;
    }
    for (int64_t i = 0; bad && i < nout; i++)
        if (!isfinite(out[i])) (void)scaled_sum(x + i * step, y, len, stride, &out[i]);
}
