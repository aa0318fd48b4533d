/* The user-defined reductions of `pk bench custom` (kernel "custom"; the
 * case's k field picks one), shared by the CPU runner
 * (tools/pk/bench_cpu_custom.c) and the GPU runner (bench/gpu_custom.cu),
 * with the reference each is checked against. Inputs are f32 in [-1, 1);
 * the non-commutative "lastvalid" also gets NaNs (every 8th element and the
 * last 100). */
#ifndef PK_BENCH_CUSTOM_H
#define PK_BENCH_CUSTOM_H

#include "pk.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct pk_bench_udr {
    const char *name;  /* shown in the size column                      */
    pk_reducer_kind kind;
    pk_dtype acc;
    const char *map, *combine, *final;
    double identity;
    int nans;          /* the input has NaNs                            */
    const char *peer;  /* the built-in it is compared with (same bytes) */
} pk_bench_udr;

#define PK_BENCH_NUDR 5
static const pk_bench_udr pk_bench_udrs[PK_BENCH_NUDR] = {
    {"sumsq", PK_REDUCER_VALUE, PK_F32, "x*x", "a + b", NULL, 0, 0, "pk_dot"},
    {"sumsq64", PK_REDUCER_VALUE, PK_F64, "x*x", "a + b", NULL, 0, 0, "pk_dot"},
    {"linf", PK_REDUCER_VALUE, PK_F32, "fabs(x)", "fmax(a, b)", NULL, 0, 0, "pk_max"},
    {"argmaxabs", PK_REDUCER_ARG, PK_F32, "fabs(x)", "fmax(a, b)", NULL, -1, 0, "pk_argmax"},
    {"lastvalid", PK_REDUCER_VALUE, PK_F32, NULL, "isnan(b) ? a : b", NULL, NAN, 1, "pk_sum"},
};

static inline pk_reducer_desc pk_bench_udr_desc(const pk_bench_udr *u)
{
    pk_reducer_desc d; /* C++ (gpu_custom.cu) includes this too: no designators */
    memset(&d, 0, sizeof d);
    d.input = PK_F32, d.acc = u->acc, d.kind = u->kind, d.map = u->map;
    d.combine = u->combine, d.identity = u->identity, d.final = u->final;
    return d;
}

/* Element i of the input (deterministic in seed). */
static inline float pk_bench_udr_elem(const pk_bench_udr *u, uint64_t seed, int64_t i,
                                      int64_t n)
{
    uint64_t z = seed + (uint64_t)i * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    if (u->nans && (i % 8 == 3 || i >= n - 100)) return NAN;
    return (float)((double)(z >> 11) * 0x1.0p-52 - 1.0);
}

/* Check pk's result (host memory: acc dtype, or int64 for ARG) against a
 * plain loop over x. 1 when it matches; else the reason in note. */
static inline int pk_bench_udr_verify(const pk_bench_udr *u, const float *x, int64_t n,
                                      const void *out, char *note, size_t len)
{
    long double sq = 0;
    double best = -1, last = NAN;
    int64_t bi = -1;
    for (int64_t i = 0; i < n; i++) {
        double v = x[i];
        sq += (long double)v * v;
        if (!isnan(v) && fabs(v) > best) best = fabs(v), bi = i;
        if (!isnan(v)) last = v;
    }
    double got = u->kind == PK_REDUCER_ARG ? 0
                 : u->acc == PK_F32        ? *(const float *)out
                                           : *(const double *)out;
    int ok;
    switch ((int)(u - pk_bench_udrs)) {
    case 0: case 1:
        ok = fabs(got - (double)sq) <= (u->acc == PK_F32 ? 1e-4 : 1e-12) * (double)sq;
        snprintf(note, len, "%s: %.9g, reference %.9Lg", u->name, got, sq);
        break;
    case 2:
        ok = got == best;
        snprintf(note, len, "%s: %.9g, reference %.9g", u->name, got, best);
        break;
    case 3:
        ok = *(const int64_t *)out == bi;
        snprintf(note, len, "%s: %lld, reference %lld", u->name,
                 (long long)*(const int64_t *)out, (long long)bi);
        break;
    default:
        ok = got == last || (isnan(got) && isnan(last));
        snprintf(note, len, "%s: %.9g, reference %.9g", u->name, got, last);
        break;
    }
    if (ok) note[0] = 0;
    return ok;
}

/* Check a sum of squares (u: a VALUE reducer of map x*x, combine a + b)
 * along an axis of the rows x cols matrix x (ld = cols): out[j] for each
 * column (axis 0) or row (axis 1) against a long double loop. */
static inline int pk_bench_udr_verify_axis(const pk_bench_udr *u, const float *x, int64_t rows,
                                           int64_t cols, int axis, const void *out, char *note,
                                           size_t len)
{
    const int64_t nout = axis ? rows : cols;
    long double *ref = (long double *)calloc((size_t)nout, sizeof *ref);
    if (!ref) {
        snprintf(note, len, "out of memory for the reference");
        return 0;
    }
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++) {
            const long double v = x[r * cols + c];
            ref[axis ? r : c] += v * v;
        }
    const double tol = u->acc == PK_F32 ? 1e-4 : 1e-12;
    int ok = 1;
    for (int64_t j = 0; j < nout && ok; j++) {
        const double got = u->acc == PK_F32 ? ((const float *)out)[j] : ((const double *)out)[j];
        if (!(fabs(got - (double)ref[j]) <= tol * (double)ref[j])) {
            snprintf(note, len, "%s axis %d [%lld]: %.9g, reference %.9Lg", u->name, axis,
                     (long long)j, got, ref[j]);
            ok = 0;
        }
    }
    free(ref);
    if (ok) note[0] = 0;
    return ok;
}

#endif
