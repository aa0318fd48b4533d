/* The bench's references and tolerances (verify.h).
 *
 * Tolerances: an f32 sum/dot (pk compensates) may differ from the
 * exact value by one f32 ulp plus 1e-11 of sum |x_i|; an f64 one (pk
 * compensates) by four f64 ulps plus 1e-18 of sum |x_i|. Products: one ulp
 * plus 1e-8 relative. min, max, argmin, argmax and integer sums and products
 * must be exact. axpy: each element within one ulp of |alpha*x| plus one ulp
 * of the result (two roundings, or one with FMA). */
#include "verify.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* A running reference: floats in long double (Neumaier-compensated for
 * sums), integers in wrapping uint64, order ops keep value and index. */
typedef struct ref {
    long double s, c, abs; /* value, compensation, sum of |terms| */
    uint64_t u;
    int64_t idx;
    int started;
} ref;

static int is_float(pk_dtype t) { return t == PK_F32 || t == PK_F64; }

static long double load_ld(pk_dtype t, const void *p)
{
    switch (t) {
    case PK_F32: return *(const float *)p;
    case PK_F64: return *(const double *)p;
    case PK_I32: return *(const int32_t *)p;
    case PK_I64: return (long double)*(const int64_t *)p;
    case PK_U32: return *(const uint32_t *)p;
    default: return (long double)*(const uint64_t *)p;
    }
}

/* The element as a 64-bit two's complement value (sign-extended). */
static uint64_t load_u(pk_dtype t, const void *p)
{
    switch (t) {
    case PK_I32: return (uint64_t)(int64_t)*(const int32_t *)p;
    case PK_I64: return (uint64_t)*(const int64_t *)p;
    case PK_U32: return *(const uint32_t *)p;
    default: return *(const uint64_t *)p;
    }
}

static void ref_init(ref *r, pk_op op)
{
    memset(r, 0, sizeof *r);
    r->s = op == PK_PROD ? 1 : 0;
    r->u = op == PK_PROD ? 1 : 0;
}

static void ref_add_ld(ref *r, long double v)
{
    long double t = r->s + v; /* Neumaier */
    if (fabsl(r->s) >= fabsl(v)) r->c += (r->s - t) + v;
    else r->c += (v - t) + r->s;
    r->s = t;
    r->abs += fabsl(v);
}

static void ref_add(ref *r, pk_op op, pk_dtype t, const void *p, int64_t i)
{
    if (op == PK_SUM || op == PK_PROD) {
        if (!is_float(t)) {
            r->u = op == PK_SUM ? r->u + load_u(t, p) : r->u * load_u(t, p);
        } else if (op == PK_SUM) {
            ref_add_ld(r, load_ld(t, p));
        } else {
            r->s *= load_ld(t, p);
        }
        return;
    }
    long double v = load_ld(t, p);
    int better = op == PK_MIN || op == PK_ARGMIN ? v < r->s : v > r->s;
    if (!r->started || better) r->s = v, r->idx = i, r->started = 1;
}

static long double ulp(pk_dtype t, long double v)
{
    v = fabsl(v);
    if (t == PK_F32) return nextafterf((float)v, INFINITY) - (float)v;
    return nextafter((double)v, INFINITY) - (double)v;
}

/* Compare got (of pk_reduce_result_dtype(op, t)) with the reference; at is
 * the output index named in the note (-1: none). */
static int ref_check(const ref *r, pk_op op, pk_dtype t, const void *got,
                     char *note, size_t len, int64_t at)
{
    char where[48] = "", what[160];
    if (op == PK_ARGMIN || op == PK_ARGMAX) {
        int64_t g = *(const int64_t *)got;
        if (g == r->idx) return 1;
        snprintf(what, sizeof what, "index %lld, expected %lld", (long long)g,
                 (long long)r->idx);
    } else if (!is_float(t) && (op == PK_SUM || op == PK_PROD)) {
        uint64_t g = *(const uint64_t *)got;
        if (g == r->u) return 1;
        snprintf(what, sizeof what, "got %llu, expected %llu (mod 2^64)",
                 (unsigned long long)g, (unsigned long long)r->u);
    } else {
        long double g = load_ld(t, got), want = r->s + r->c, tol = 0;
        if (op == PK_SUM)
            tol = t == PK_F32 ? ulp(t, want) + 1e-11L * r->abs
                              : 4 * ulp(t, want) + 1e-18L * r->abs;
        else if (op == PK_PROD)
            tol = ulp(t, want) + 1e-8L * fabsl(want);
        if (fabsl(g - want) <= tol) return 1;
        snprintf(what, sizeof what, "got %.17Lg, expected %.17Lg (tolerance %.3Lg)",
                 g, want, tol);
    }
    if (at >= 0) snprintf(where, sizeof where, "out[%lld]: ", (long long)at);
    snprintf(note, len, "%s%s", where, what);
    return 0;
}

int pk_verify_reduce(pk_op op, pk_dtype t, const void *x, int64_t n,
                     const void *got, char *note, size_t len)
{
    size_t size = pk_dtype_size(t);
    ref r;
    ref_init(&r, op);
    for (int64_t i = 0; i < n; i++) ref_add(&r, op, t, (const char *)x + i * size, i);
    return ref_check(&r, op, t, got, note, len, -1);
}

int pk_verify_dot(pk_dtype t, int64_t n, const void *x, const void *y,
                  const void *got, char *note, size_t len)
{
    size_t size = pk_dtype_size(t);
    ref r;
    ref_init(&r, PK_SUM);
    for (int64_t i = 0; i < n; i++)
        ref_add_ld(&r, load_ld(t, (const char *)x + i * size) *
                           load_ld(t, (const char *)y + i * size));
    return ref_check(&r, PK_SUM, t, got, note, len, -1);
}

int pk_verify_axpy(pk_dtype t, int64_t n, const void *alpha, const void *x,
                   const void *y0, const void *y1, char *note, size_t len)
{
    size_t size = pk_dtype_size(t);
    long double a = load_ld(t, alpha);
    for (int64_t i = 0; i < n; i++) {
        long double ax = a * load_ld(t, (const char *)x + i * size);
        long double want = ax + load_ld(t, (const char *)y0 + i * size);
        long double g = load_ld(t, (const char *)y1 + i * size);
        long double tol = ulp(t, ax) + ulp(t, want);
        if (fabsl(g - want) > tol) {
            snprintf(note, len, "y[%lld]: got %.17Lg, expected %.17Lg", (long long)i,
                     g, want);
            return 0;
        }
    }
    return 1;
}

int pk_verify_reduce_axis(pk_op op, pk_dtype t, const void *x, int64_t rows,
                          int64_t cols, int axis, const void *out, char *note,
                          size_t len)
{
    size_t size = pk_dtype_size(t);
    size_t osize = pk_dtype_size(pk_reduce_result_dtype(op, t));
    const char *xb = x, *ob = out;
    if (axis == 1) {
        for (int64_t i = 0; i < rows; i++) {
            ref r;
            ref_init(&r, op);
            for (int64_t j = 0; j < cols; j++)
                ref_add(&r, op, t, xb + (i * cols + j) * (int64_t)size, j);
            if (!ref_check(&r, op, t, ob + i * (int64_t)osize, note, len, i))
                return 0;
        }
        return 1;
    }
    /* Axis 0: columns in strips, walking down the rows (cache friendly). */
    enum { STRIP = 256 };
    ref r[STRIP];
    for (int64_t j0 = 0; j0 < cols; j0 += STRIP) {
        int64_t w = cols - j0 < STRIP ? cols - j0 : STRIP;
        for (int64_t j = 0; j < w; j++) ref_init(&r[j], op);
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < w; j++)
                ref_add(&r[j], op, t, xb + (i * cols + j0 + j) * (int64_t)size, i);
        for (int64_t j = 0; j < w; j++)
            if (!ref_check(&r[j], op, t, ob + (j0 + j) * (int64_t)osize, note, len,
                           j0 + j))
                return 0;
    }
    return 1;
}
