/* Independent references for `pk bench`: every result pk returns is checked
 * against a value computed here in long double (compensated for sums and
 * dots) or, for integers, in exact wrapping 64-bit arithmetic. The checks
 * return 1 when the result is within tolerance, else 0 with a note. */
#ifndef PK_VERIFY_H
#define PK_VERIFY_H

#include "pk.h"

#include <stddef.h>

int pk_verify_reduce(pk_op op, pk_dtype t, const void *x, int64_t n,
                     const void *got, char *note, size_t len);
int pk_verify_dot(pk_dtype t, int64_t n, const void *x, const void *y,
                  const void *got, char *note, size_t len);
/* y0: y before the call, y1: after. */
int pk_verify_axpy(pk_dtype t, int64_t n, const void *alpha, const void *x,
                   const void *y0, const void *y1, char *note, size_t len);
/* x is rows x cols, row-major, ld = cols. */
int pk_verify_reduce_axis(pk_op op, pk_dtype t, const void *x, int64_t rows,
                          int64_t cols, int axis, const void *out, char *note,
                          size_t len);

#endif
