/* The partial result of a reduction, shared by the CPU kernels, the core and
 * the distributed layer (which ships partials between ranks). */
#ifndef PK_ACC_TYPE_H
#define PK_ACC_TYPE_H

#include <stdint.h>

/* A partial result, whatever the op: sums of floats keep (hi, lo) in f64
 * (lo is 0 where no compensation is used), integer sums and products keep 64
 * wrapping bits, min/max keep the value, arg ops keep value and index. Float
 * sums and dots of the fast kernels set idx to 1 when a term was Inf or NaN
 * (seen where a block is redone), so that an Inf or NaN result is not
 * searched for an overflow from finite terms (src/cpu/sum_rescue.c); 0
 * otherwise, and always on the reference path. */
typedef struct pk__acc {
    union {
        double f;
        int64_t i;
        uint64_t u;
    } v;
    double lo;
    int64_t idx;
} pk__acc;

#endif
