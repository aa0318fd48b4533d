/* Checks of user-defined reductions (pk_reducer) shared by the CPU test
 * (test_reducer.c) and the CUDA test (test_cuda_reducer.c): several
 * operators and dtypes against plain reference loops, the non-commutative
 * case, ARG reducers, both axes, compile errors, bad arguments. The
 * references are written here, independently of pk. */
#ifndef PK_TEST_REDUCER_CASES_H
#define PK_TEST_REDUCER_CASES_H

#include "util.h"

#include <locale.h>

static const int64_t rc_sizes[] = {0, 1, 2, 3, 31, 255, 511, 512, 513, 4097,
                                   65535, 65536, 65537, 200003, 1 << 20};
#define RC_NSIZES (int)(sizeof rc_sizes / sizeof rc_sizes[0])

static pk_reducer *rc_make(pk_ctx *ctx, pk_dtype in, pk_dtype acc, pk_reducer_kind kind,
                           const char *map, const char *combine, double identity,
                           const char *final)
{
    pk_reducer_desc d = {.input = in, .acc = acc, .kind = kind, .map = map,
                         .combine = combine, .identity = identity, .final = final};
    pk_reducer *r = NULL;
    pk_status s = pk_reducer_create(ctx, &d, &r);
    PK_CHECK(s == PK_OK, "create map=%s combine=%s: %s: %s", map ? map : "-", combine,
             pk_status_str(s), pk_ctx_error(ctx));
    return r;
}

static void rc_fill(pk_dtype t, void *x, int64_t n, int nans)
{
    for (int64_t i = 0; i < n; i++) {
        double v = pk_test_uniform(-2, 2);
        switch (t) {
        case PK_F32: ((float *)x)[i] = (float)v; break;
        case PK_F64: ((double *)x)[i] = v; break;
        case PK_I32: ((int32_t *)x)[i] = (int32_t)pk_test_below(2001) - 1000; break;
        case PK_I64: ((int64_t *)x)[i] = pk_test_below(2001) - 1000; break;
        case PK_U32: ((uint32_t *)x)[i] = (uint32_t)pk_test_below(1000); break;
        default: ((uint64_t *)x)[i] = (uint64_t)pk_test_below(1000); break;
        }
    }
    if (nans && (t == PK_F32 || t == PK_F64))
        for (int64_t i = 0; i < n; i++)
            if (pk_test_below(4) == 0) {
                if (t == PK_F32) ((float *)x)[i] = NAN;
                else ((double *)x)[i] = NAN;
            }
}

static double rc_get(pk_dtype t, const void *x, int64_t i)
{
    switch (t) {
    case PK_F32: return ((const float *)x)[i];
    case PK_F64: return ((const double *)x)[i];
    case PK_I32: return ((const int32_t *)x)[i];
    case PK_I64: return (double)((const int64_t *)x)[i];
    case PK_U32: return ((const uint32_t *)x)[i];
    default: return (double)((const uint64_t *)x)[i];
    }
}

static double rc_out(pk_dtype acc, const void *out)
{
    return acc == PK_F32 ? *(const float *)out : *(const double *)out;
}

/* Sum of squares, sum, and L2 norm (final sqrt) against long double loops. */
static void rc_sums(pk_ctx *ctx, void *(*mem)(size_t), void (*put)(void *, const void *, size_t),
                    void (*release)(void *))
{
    static const pk_dtype ins[] = {PK_F32, PK_F64, PK_I32, PK_I64, PK_U32, PK_U64};
    for (int a = 0; a < 2; a++) {
        pk_dtype acc = a ? PK_F64 : PK_F32;
        double tol = acc == PK_F32 ? 1e-4 : 1e-12; /* f32: sequential lanes */
        for (int t = 0; t < 6; t++) {
            pk_reducer *sq = rc_make(ctx, ins[t], acc, PK_REDUCER_VALUE, "x*x", "a + b", 0, NULL);
            pk_reducer *l2 = rc_make(ctx, ins[t], acc, PK_REDUCER_VALUE, "x*x", "b + a", 0, "sqrt(r)");
            pk_reducer *s2 = rc_make(ctx, ins[t], acc, PK_REDUCER_VALUE, NULL, "(a + b)", 0, NULL);
            if (!sq || !l2 || !s2) return;
            for (int k = 0; k < RC_NSIZES; k++) {
                int64_t n = rc_sizes[k];
                size_t bytes = (size_t)n * pk_dtype_size(ins[t]);
                void *h = pk_test_alloc(bytes), *x = mem(bytes);
                rc_fill(ins[t], h, n, 0);
                put(x, h, bytes);
                long double rs = 0, rq = 0;
                for (int64_t i = 0; i < n; i++) {
                    long double v = rc_get(ins[t], h, i);
                    rs += v, rq += v * v;
                }
                double o[3] = {0, 0, 0};
                pk_status s0 = pk_reducer_reduce(ctx, sq, x, n, &o[0]);
                pk_status s1 = pk_reducer_reduce(ctx, l2, x, n, &o[1]);
                pk_status s2s = pk_reducer_reduce(ctx, s2, x, n, &o[2]);
                PK_CHECK(!s0 && !s1 && !s2s, "%s->%s n=%lld: %s", pk_dtype_name(ins[t]),
                         pk_dtype_name(acc), (long long)n, pk_ctx_error(ctx));
                double q = rc_out(acc, &o[0]), l = rc_out(acc, &o[1]), sm = rc_out(acc, &o[2]);
                double sabs = 0;
                for (int64_t i = 0; i < n; i++) sabs += fabs(rc_get(ins[t], h, i));
                PK_CHECK(fabs(q - (double)rq) <= tol * (double)rq + 1e-30,
                         "sumsq %s->%s n=%lld: %.17g vs %.17Lg", pk_dtype_name(ins[t]),
                         pk_dtype_name(acc), (long long)n, q, rq);
                PK_CHECK(fabs(l - (double)sqrtl(rq)) <= tol * (double)sqrtl(rq) + 1e-30,
                         "l2 %s->%s n=%lld: %.17g vs %.17Lg", pk_dtype_name(ins[t]),
                         pk_dtype_name(acc), (long long)n, l, sqrtl(rq));
                PK_CHECK(fabs(sm - (double)rs) <= tol * sabs + 1e-30,
                         "sum %s->%s n=%lld: %.17g vs %.17Lg", pk_dtype_name(ins[t]),
                         pk_dtype_name(acc), (long long)n, sm, rs);
                release(x);
                free(h);
            }
            pk_reducer_destroy(sq);
            pk_reducer_destroy(l2);
            pk_reducer_destroy(s2);
        }
    }
}

/* Max |x| (VALUE), its first index (ARG), and the non-commutative "last
 * non-NaN" (value and, through i, its index): exact references. */
static void rc_order(pk_ctx *ctx, void *(*mem)(size_t), void (*put)(void *, const void *, size_t),
                     void (*release)(void *))
{
    for (int a = 0; a < 2; a++) {
        pk_dtype t = a ? PK_F64 : PK_F32;
        pk_reducer *linf = rc_make(ctx, t, t, PK_REDUCER_VALUE, "fabs(x)", "fmax(a, b)", 0, NULL);
        pk_reducer *amax = rc_make(ctx, t, t, PK_REDUCER_ARG, "abs(x)", "fmax(a,b)", NAN, NULL);
        pk_reducer *amin = rc_make(ctx, t, t, PK_REDUCER_ARG, "x", "b < a ? b : a", INFINITY, NULL);
        pk_reducer *last = rc_make(ctx, t, t, PK_REDUCER_VALUE, "x", "isnan(b) ? a : b", NAN, NULL);
        pk_reducer *lasti = rc_make(ctx, t, PK_F64, PK_REDUCER_VALUE, "isnan(x) ? NAN : i",
                                    "isnan(b) ? a : b", NAN, NULL);
        /* first non-NaN: NaN is its identity on both sides (a bare "a" has
         * no left identity, so it is not a valid combine) */
        pk_reducer *first = rc_make(ctx, t, t, PK_REDUCER_VALUE, NULL, "isnan(a) ? b : a", NAN,
                                    NULL);
        if (!linf || !amax || !amin || !last || !lasti || !first) return;
        for (int k = 0; k < RC_NSIZES; k++) {
            int64_t n = rc_sizes[k];
            size_t bytes = (size_t)n * pk_dtype_size(t);
            void *h = pk_test_alloc(bytes), *x = mem(bytes);
            for (int nans = 0; nans < 2; nans++) {
                rc_fill(t, h, n, 0);
                if (nans) { /* a NaN run at the end: last non-NaN is inside */
                    for (int64_t i = n - n / 3; i < n; i++) {
                        if (t == PK_F32) ((float *)h)[i] = NAN;
                        else ((double *)h)[i] = NAN;
                    }
                    for (int64_t i = 0; i < n / 4; i++) {
                        int64_t j = pk_test_below(n);
                        if (t == PK_F32) ((float *)h)[j] = NAN;
                        else ((double *)h)[j] = NAN;
                    }
                }
                if (n > 10 && !nans) { /* ties: the first must win */
                    double m = 3;
                    int64_t p = pk_test_below(n / 2);
                    if (t == PK_F32) ((float *)h)[p] = (float)m, ((float *)h)[n - 1 - p] = (float)-m;
                    else ((double *)h)[p] = m, ((double *)h)[n - 1 - p] = -m;
                }
                put(x, h, bytes);
                double lm = 0, lv = NAN, li = NAN, mn = INFINITY;
                int64_t am = -1, an = -1;
                double best = -INFINITY;
                for (int64_t i = 0; i < n; i++) {
                    double v = rc_get(t, h, i);
                    if (!isnan(v)) {
                        if (fabs(v) > lm) lm = fabs(v);
                        lv = v, li = (double)i;
                    }
                    if (!isnan(v) && (am < 0 || fabs(v) > best)) best = fabs(v), am = i;
                    if (v < mn || an < 0) {
                        if (an < 0 || v < mn) mn = v, an = i;
                    }
                }
                double o[6] = {0};
                int64_t io[2] = {0, 0};
                pk_status s = pk_reducer_reduce(ctx, linf, x, n, &o[0]);
                PK_CHECK(!s, "linf: %s", pk_ctx_error(ctx));
                PK_CHECK(rc_out(t, &o[0]) == lm, "linf %s n=%lld nans=%d: %g vs %g",
                         pk_dtype_name(t), (long long)n, nans, rc_out(t, &o[0]), lm);
                s = pk_reducer_reduce(ctx, last, x, n, &o[1]);
                double gv = rc_out(t, &o[1]);
                PK_CHECK(!s && ((isnan(gv) && isnan(lv)) || gv == lv),
                         "last %s n=%lld: %g vs %g (%s)", pk_dtype_name(t), (long long)n,
                         gv, lv, pk_ctx_error(ctx));
                s = pk_reducer_reduce(ctx, lasti, x, n, &o[2]);
                PK_CHECK(!s && ((isnan(o[2]) && isnan(li)) || o[2] == li),
                         "last index %s n=%lld: %g vs %g", pk_dtype_name(t), (long long)n,
                         o[2], li);
                s = pk_reducer_reduce(ctx, first, x, n, &o[3]);
                double fv = rc_out(t, &o[3]), f0 = NAN;
                for (int64_t i = 0; i < n && isnan(f0); i++) f0 = rc_get(t, h, i);
                PK_CHECK(!s && ((isnan(fv) && isnan(f0)) || fv == f0), "first %s n=%lld",
                         pk_dtype_name(t), (long long)n);
                if (n == 0) {
                    PK_CHECK(pk_reducer_reduce(ctx, amax, x, 0, &io[0]) == PK_ERR_ARG,
                             "ARG of nothing");
                    continue;
                }
                s = pk_reducer_reduce(ctx, amax, x, n, &io[0]);
                PK_CHECK(!s && io[0] == am, "argmax|x| %s n=%lld nans=%d: %lld vs %lld (%s)",
                         pk_dtype_name(t), (long long)n, nans, (long long)io[0],
                         (long long)am, pk_ctx_error(ctx));
                if (!nans) {
                    s = pk_reducer_reduce(ctx, amin, x, n, &io[1]);
                    PK_CHECK(!s && io[1] == an, "argmin %s n=%lld: %lld vs %lld",
                             pk_dtype_name(t), (long long)n, (long long)io[1], (long long)an);
                }
            }
            release(x);
            free(h);
        }
        pk_reducer_destroy(linf);
        pk_reducer_destroy(amax);
        pk_reducer_destroy(amin);
        pk_reducer_destroy(last);
        pk_reducer_destroy(lasti);
        pk_reducer_destroy(first);
    }
}

static void rc_axis_index(pk_ctx *ctx, void *(*mem)(size_t),
                          void (*put)(void *, const void *, size_t),
                          void (*get)(void *, const void *, size_t), void (*release)(void *));
static void rc_arg_nan(pk_ctx *ctx, void *(*mem)(size_t), void (*put)(void *, const void *, size_t),
                       void (*get)(void *, const void *, size_t), void (*release)(void *));
static void rc_zero_ties(pk_ctx *ctx, void *(*mem)(size_t), void (*put)(void *, const void *, size_t),
                         void (*get)(void *, const void *, size_t), void (*release)(void *));

/* Both axes: max |x| (VALUE) and its index (ARG), sum with a general
 * combine, against loops; then rc_axis_index, rc_arg_nan and rc_zero_ties. */
static void rc_axes(pk_ctx *ctx, void *(*mem)(size_t), void (*put)(void *, const void *, size_t),
                    void (*get)(void *, const void *, size_t), void (*release)(void *))
{
    /* 100003 x 2 and 2000 x 700: axis 0 and short rows in segments whose
     * partials fold in one or two levels on the GPU (udr.cu, run_lines);
     * 600 x 1..33: groups of short rows on the CPU; 20000 x 9: few columns
     * by column segments (interpreted) or by rows (fused) */
    static const int64_t shapes[][3] = {{1, 1, 1},       {3, 5, 7},          {17, 600, 600},
                                        {1000, 3, 3},    {2, 70000, 70001},  {513, 1030, 1030},
                                        {0, 4, 4},       {4, 0, 1},          {100003, 2, 3},
                                        {2000, 700, 701}, {3, 50001, 50001}, {600, 33, 35},
                                        {600, 1, 1},     {600, 31, 31},      {20000, 9, 9}};
    pk_reducer *mx = rc_make(ctx, PK_F32, PK_F64, PK_REDUCER_VALUE, "fabs(x)", "max(a, b)", 0, NULL);
    pk_reducer *am = rc_make(ctx, PK_F32, PK_F32, PK_REDUCER_ARG, "fabs(x)", "fmax(a, b)", -1, NULL);
    pk_reducer *sm = rc_make(ctx, PK_F32, PK_F64, PK_REDUCER_VALUE, "x", "a + b * 1", 0, "r + 1");
    /* the CPU's fused forms (map x*x or fabs(x), a built-in commutative combine) */
    pk_reducer *sq = rc_make(ctx, PK_F32, PK_F64, PK_REDUCER_VALUE, "x*x", "a + b", 0, NULL);
    pk_reducer *fm = rc_make(ctx, PK_F32, PK_F32, PK_REDUCER_VALUE, "fabs(x)", "fmax(a, b)", 0, NULL);
    if (!mx || !am || !sm || !sq || !fm) return;
    for (size_t q = 0; q < sizeof shapes / sizeof shapes[0]; q++) {
        int64_t rows = shapes[q][0], cols = shapes[q][1], ld = shapes[q][2];
        size_t cnt = rows ? (size_t)((rows - 1) * ld + cols) : 0;
        float *h = pk_test_alloc(cnt * 4 + 4);
        rc_fill(PK_F32, h, (int64_t)cnt, 0);
        void *x = mem(cnt * 4);
        put(x, h, cnt * 4);
        for (int axis = 0; axis < 2; axis++) {
            int64_t nout = axis ? rows : cols, along = axis ? cols : rows;
            double *o = pk_test_alloc((size_t)nout * 8 + 8), *o2 = pk_test_alloc((size_t)nout * 8 + 8);
            double *o3 = pk_test_alloc((size_t)nout * 8 + 8);
            float *o4 = pk_test_alloc((size_t)nout * 4 + 4);
            int64_t *oi = pk_test_alloc((size_t)nout * 8 + 8);
            void *d = mem((size_t)nout * 8 + 8);
            pk_status s = pk_reducer_reduce_axis(ctx, mx, x, rows, cols, ld, axis, d);
            get(o, d, (size_t)nout * 8);
            PK_CHECK(!s, "axis max: %s", pk_ctx_error(ctx));
            s = pk_reducer_reduce_axis(ctx, sm, x, rows, cols, ld, axis, d);
            get(o2, d, (size_t)nout * 8);
            PK_CHECK(!s, "axis sum: %s", pk_ctx_error(ctx));
            s = pk_reducer_reduce_axis(ctx, sq, x, rows, cols, ld, axis, d);
            get(o3, d, (size_t)nout * 8);
            PK_CHECK(!s, "axis sum of squares: %s", pk_ctx_error(ctx));
            s = pk_reducer_reduce_axis(ctx, fm, x, rows, cols, ld, axis, d);
            get(o4, d, (size_t)nout * 4);
            PK_CHECK(!s, "axis fmax: %s", pk_ctx_error(ctx));
            s = pk_reducer_reduce_axis(ctx, am, x, rows, cols, ld, axis, d);
            get(oi, d, (size_t)nout * 8);
            PK_CHECK(along == 0 ? s == PK_ERR_ARG : !s, "axis argmax: %s", pk_ctx_error(ctx));
            for (int64_t j = 0; j < nout; j++) {
                double m = 0, sum = 0, sabs = 0, best = -1, ssq = 0;
                int64_t bi = -1;
                for (int64_t e = 0; e < along; e++) {
                    double v = axis ? h[j * ld + e] : h[e * ld + j];
                    if (fabs(v) > m) m = fabs(v);
                    if (fabs(v) > best) best = fabs(v), bi = e;
                    sum += v, sabs += fabs(v), ssq += v * v;
                }
                PK_CHECK(fabs(o3[j] - ssq) <= 1e-12 * ssq, "axis %d sumsq %lldx%lld [%lld]: %g vs %g",
                         axis, (long long)rows, (long long)cols, (long long)j, o3[j], ssq);
                PK_CHECK(o4[j] == m, "axis %d fmax %lldx%lld [%lld]: %g vs %g", axis,
                         (long long)rows, (long long)cols, (long long)j, o4[j], m);
                PK_CHECK(o[j] == m, "axis %d max %lldx%lld [%lld]: %g vs %g", axis,
                         (long long)rows, (long long)cols, (long long)j, o[j], m);
                PK_CHECK(fabs(o2[j] - (sum + 1)) <= 1e-12 * (sabs + 1),
                         "axis %d sum [%lld]: %g vs %g", axis, (long long)j, o2[j], sum + 1);
                if (along) PK_CHECK(oi[j] == bi, "axis %d argmax %lldx%lld [%lld]: %lld vs %lld",
                                    axis, (long long)rows, (long long)cols, (long long)j,
                                    (long long)oi[j], (long long)bi);
            }
            release(d);
            free(o), free(o2), free(o3), free(o4), free(oi);
        }
        release(x);
        free(h);
    }
    pk_reducer_destroy(mx);
    pk_reducer_destroy(am);
    pk_reducer_destroy(sm);
    pk_reducer_destroy(sq);
    pk_reducer_destroy(fm);
    rc_axis_index(ctx, mem, put, get, release);
    rc_arg_nan(ctx, mem, put, get, release);
    rc_zero_ties(ctx, mem, put, get, release);
}

/* The index i of map counts within the reduced axis: the row on axis 0, the
 * column on axis 1 (for every column chunk and task of the CPU, every
 * column thread of the GPU). Small integers: exact sums in any order. */
static void rc_axis_index(pk_ctx *ctx, void *(*mem)(size_t),
                          void (*put)(void *, const void *, size_t),
                          void (*get)(void *, const void *, size_t), void (*release)(void *))
{
    static const int64_t shapes[][3] = {{3, 4, 4},     {1, 1, 1},        {5, 600, 700},
                                        {1000, 3, 5},  {17, 513, 600},   {2, 1030, 1031},
                                        {3, 70000, 70003}, {70, 1100, 1100},
                                        {40000, 3, 4}, {300, 900, 901}};
    enum { NR = 4 };
    pk_reducer *r[NR] = {
        rc_make(ctx, PK_F64, PK_F64, PK_REDUCER_VALUE, "i", "a + b", 0, NULL),
        rc_make(ctx, PK_F64, PK_F64, PK_REDUCER_VALUE, "x * i", "a + b * 1", 0, NULL),
        rc_make(ctx, PK_F64, PK_F32, PK_REDUCER_VALUE, "i", "fmax(a, b)", NAN, NULL),
        rc_make(ctx, PK_F64, PK_F64, PK_REDUCER_ARG, "x * i", "fmax(a, b)", NAN, NULL)};
    static const char *const name[NR] = {"i (a + b)", "x * i (a + b * 1)", "i (fmax, f32)",
                                         "ARG x * i"};
    for (int j = 0; j < NR; j++)
        if (!r[j]) return;
    for (size_t q = 0; q < sizeof shapes / sizeof shapes[0]; q++) {
        int64_t rows = shapes[q][0], cols = shapes[q][1], ld = shapes[q][2];
        size_t cnt = (size_t)((rows - 1) * ld + cols);
        double *h = pk_test_alloc(cnt * 8);
        for (size_t e = 0; e < cnt; e++) h[e] = (double)(pk_test_below(7) - 3);
        void *x = mem(cnt * 8);
        put(x, h, cnt * 8);
        for (int axis = 0; axis < 2; axis++) {
            int64_t nout = axis ? rows : cols, along = axis ? cols : rows;
            double *o = pk_test_alloc((size_t)nout * 8);
            void *d = mem((size_t)nout * 8);
            for (int j = 0; j < NR; j++) {
                pk_status s = pk_reducer_reduce_axis(ctx, r[j], x, rows, cols, ld, axis, d);
                get(o, d, (size_t)nout * 8);
                PK_CHECK(!s, "axis %d %s: %s", axis, name[j], pk_ctx_error(ctx));
                for (int64_t c = 0; c < nout; c++) {
                    double sx = 0, best = NAN;
                    int64_t bi = -1;
                    for (int64_t e = 0; e < along; e++) {
                        double v = (axis ? h[c * ld + e] : h[e * ld + c]) * (double)e;
                        sx += v;
                        if (bi < 0 || v > best) best = v, bi = e;
                    }
                    double got = j == 2 ? (double)*(float *)((char *)o + 4 * c) : o[c];
                    double ref = j == 0 ? (double)(along * (along - 1) / 2)
                               : j == 1 ? sx : j == 2 ? (double)(along - 1) : (double)bi;
                    if (j == 3) got = (double)((int64_t *)o)[c];
                    if (got != ref) {
                        PK_CHECK(0, "axis %d %s %lldx%lld ld %lld [%lld]: %.17g vs %.17g", axis,
                                 name[j], (long long)rows, (long long)cols, (long long)ld,
                                 (long long)c, got, ref);
                        break;
                    }
                }
            }
            release(d);
            free(o);
        }
        release(x);
        free(h);
    }
    for (int j = 0; j < NR; j++) pk_reducer_destroy(r[j]);
}

/* ARG over fmax/fmin with NaN in the data and NaN as the identity (pk.h):
 * the first index of the largest (smallest) non-NaN value, 0 when all are
 * NaN, and the same from pk_reducer_reduce, axis 0 and axis 1 (each CPU
 * path: lanes, tree, column sweep). -INFINITY would not be an identity:
 * fmax(-INFINITY, NaN) is -INFINITY, not NaN. */
static void rc_arg_nan(pk_ctx *ctx, void *(*mem)(size_t), void (*put)(void *, const void *, size_t),
                       void (*get)(void *, const void *, size_t), void (*release)(void *))
{
    static const char *const comb[4] = {"fmax(a, b)", "fmin(a, b)",
                                        "isnan(b) ? a : isnan(a) ? b : b > a ? b : a",
                                        "isnan(b) ? a : isnan(a) ? b : b < a ? b : a"};
    static const int64_t sizes[] = {1, 2, 3, 33, 600, 4097, 70001};
    for (int c = 0; c < 4; c++) {
        const int mx = !(c & 1);
        pk_reducer *r = rc_make(ctx, PK_F64, PK_F64, PK_REDUCER_ARG, NULL, comb[c], NAN, NULL);
        pk_reducer *v = rc_make(ctx, PK_F64, PK_F64, PK_REDUCER_VALUE, NULL, comb[c], NAN, NULL);
        if (!r || !v) return;
        /* kinds: mixed; all NaN; NaN and the worst value (-inf for max);
         * NaN first and the worst value last */
        for (size_t q = 0; q < sizeof sizes / sizeof sizes[0]; q++)
            for (int kind = 0; kind < 4; kind++) {
                int64_t n = sizes[q];
                double *h = pk_test_alloc((size_t)n * 8);
                const double worst = mx ? -INFINITY : INFINITY;
                for (int64_t e = 0; e < n; e++) {
                    int nan = kind == 1 || pk_test_below(4) == 0;
                    h[e] = nan ? NAN : kind == 2 ? worst : (double)(pk_test_below(9) - 4);
                }
                if (kind == 3) h[0] = NAN, h[n - 1] = worst;
                int64_t want = 0;
                double best = NAN;
                for (int64_t e = 0; e < n; e++)
                    if (!isnan(h[e]) && (isnan(best) || (mx ? h[e] > best : h[e] < best)))
                        best = h[e], want = e;
                void *x = mem((size_t)n * 8), *d = mem(16);
                put(x, h, (size_t)n * 8);
                int64_t got[3] = {-9, -9, -9};
                pk_status s0 = pk_reducer_reduce(ctx, r, x, n, d);
                get(&got[0], d, 8);
                pk_status s1 = pk_reducer_reduce_axis(ctx, r, x, n, 1, 1, 0, d);
                get(&got[1], d, 8);
                pk_status s2 = pk_reducer_reduce_axis(ctx, r, x, 1, n, n, 1, d);
                get(&got[2], d, 8);
                PK_CHECK(!s0 && !s1 && !s2 && got[0] == want && got[1] == want && got[2] == want,
                         "ARG %s identity NaN n=%lld case %d: reduce %lld axis0 %lld axis1 "
                         "%lld, want %lld (%s)", comb[c], (long long)n, kind, (long long)got[0],
                         (long long)got[1], (long long)got[2], (long long)want,
                         pk_ctx_error(ctx));
                double val[3] = {0, 0, 0};
                s0 = pk_reducer_reduce(ctx, v, x, n, d);
                get(&val[0], d, 8);
                s1 = pk_reducer_reduce_axis(ctx, v, x, n, 1, 1, 0, d);
                get(&val[1], d, 8);
                s2 = pk_reducer_reduce_axis(ctx, v, x, 1, n, n, 1, d);
                get(&val[2], d, 8);
                for (int p = 0; p < 3; p++)
                    PK_CHECK(!s0 && !s1 && !s2 && (val[p] == best || (isnan(val[p]) && isnan(best))),
                             "VALUE %s identity NaN n=%lld case %d path %d: %g vs %g", comb[c],
                             (long long)n, kind, p, val[p], best);
                release(x), release(d);
                free(h);
            }
        pk_reducer_destroy(r);
        pk_reducer_destroy(v);
    }
}

/* fmax/fmin order -0 below +0 and give the default NaN for two NaNs
 * (IEEE 754-2019 maximumNumber/minimumNumber, pk.h), so they are
 * commutative bit for bit: a maximum that is a tie of +0 and -0 is +0 (a
 * minimum -0) on every path, whatever the positions of the zeros, and the
 * ARG index is the first element equal (==) to it, of either sign. Combines:
 * fmax(a, b) with map x (the CPU's fused lanes), fmax(b, a) with map -(-x)
 * (interpreted lanes), fmax(fmax(a, b), NAN), the same function but not the
 * recognized built-in (the CPU's ordered tree); each through
 * pk_reducer_reduce, axis 0 (n x 1: the CPU's column fold) and axis 1
 * (1 x n); f32 and f64; fmin on the data negated. Data kinds: 0: values
 * below 0, -0 first and +0 last; 1: +0 first, -0 last; 2: zeros of both
 * signs, negatives and NaNs scattered; 3: -0 and NaNs only (the maximum is
 * -0: the NaN identity must not turn it into +0); 4: NaNs only, with
 * payloads and signs: the default NaN comes back (n >= 2: a lone element
 * may come back as it is, pk.h) and index 0. */
static void rc_zero_ties(pk_ctx *ctx, void *(*mem)(size_t), void (*put)(void *, const void *, size_t),
                         void (*get)(void *, const void *, size_t), void (*release)(void *))
{
    static const int64_t sizes[] = {1, 2, 3, 31, 33, 64, 600, 4097, 70001};
    static const char *const maps[3] = {"x", "-(-x)", "x"};
    static const char *const comb[2][3] = {
        {"fmax(a, b)", "fmax(b, a)", "fmax(fmax(a, b), NAN)"},
        {"fmin(a, b)", "fmin(b, a)", "fmin(fmin(a, b), NAN)"}};
    for (int a = 0; a < 2; a++) {
        const pk_dtype t = a ? PK_F64 : PK_F32;
        const size_t es = pk_dtype_size(t);
        pk_reducer *rv[2][3], *ra[2][3];
        for (int mn = 0; mn < 2; mn++)
            for (int c = 0; c < 3; c++) {
                rv[mn][c] = rc_make(ctx, t, t, PK_REDUCER_VALUE, maps[c], comb[mn][c], NAN, NULL);
                ra[mn][c] = rc_make(ctx, t, t, PK_REDUCER_ARG, maps[c], comb[mn][c], NAN, NULL);
                if (!rv[mn][c] || !ra[mn][c]) return;
            }
        for (size_t q = 0; q < sizeof sizes / sizeof sizes[0]; q++)
            for (int kind = 0; kind < 5; kind++)
                for (int mn = 0; mn < 2; mn++) {
                    const int64_t n = sizes[q];
                    double *h = pk_test_alloc((size_t)n * 8);
                    void *hx = pk_test_alloc((size_t)n * es);
                    for (int64_t e = 0; e < n; e++) {
                        const int64_t r = pk_test_below(8);
                        double v = -1 - (double)pk_test_below(5);
                        if (kind == 2) v = r == 0 ? 0.0 : r == 1 ? -0.0 : r == 2 ? NAN : v;
                        if (kind == 3) v = r < 3 ? NAN : -0.0;
                        if (kind == 4) v = r < 4 ? -NAN : NAN;
                        h[e] = v;
                    }
                    if (kind == 0) h[0] = -0.0, h[n - 1] = 0.0;
                    if (kind == 1) h[0] = 0.0, h[n - 1] = -0.0;
                    for (int64_t e = 0; e < n; e++) {
                        double v = mn ? -h[e] : h[e]; /* fmin: the data negated */
                        if (t == PK_F32) {
                            float f = (float)v;
                            if (kind == 4 && e % 3 == 2) { /* a payload */
                                uint32_t u;
                                memcpy(&u, &f, 4);
                                u |= 0x1234;
                                memcpy(&f, &u, 4);
                            }
                            ((float *)hx)[e] = f;
                        } else {
                            if (kind == 4 && e % 3 == 2) {
                                uint64_t u;
                                memcpy(&u, &v, 8);
                                u |= 0x123456789;
                                memcpy(&v, &u, 8);
                            }
                            ((double *)hx)[e] = v;
                        }
                    }
                    /* the reference: maximumNumber (minimumNumber) by hand */
                    double best = NAN;
                    int64_t want = 0, found = 0;
                    for (int64_t e = 0; e < n; e++) {
                        double v = t == PK_F32 ? (double)((float *)hx)[e] : ((double *)hx)[e];
                        if (isnan(v)) continue;
                        if (!found || (mn ? v < best : v > best)) best = v, want = e, found = 1;
                        else if (v == best && (mn ? signbit(v) && !signbit(best)
                                                  : !signbit(v) && signbit(best)))
                            best = v; /* the sign of the tie; the index stays */
                    }
                    uint64_t wbits = 0;
                    if (t == PK_F32) {
                        float f = found ? (float)best : NAN;
                        uint32_t u;
                        memcpy(&u, &f, 4);
                        wbits = u;
                    } else {
                        double d = found ? best : NAN;
                        memcpy(&wbits, &d, 8);
                    }
                    void *x = mem((size_t)n * es), *d = mem(16);
                    put(x, hx, (size_t)n * es);
                    for (int c = 0; c < 3; c++)
                        for (int path = 0; path < 3; path++) {
                            unsigned char out[8] = {0};
                            int64_t idx = -9;
                            pk_status s0, s1;
                            if (path == 0) {
                                s0 = pk_reducer_reduce(ctx, rv[mn][c], x, n, d);
                                get(out, d, es);
                                s1 = pk_reducer_reduce(ctx, ra[mn][c], x, n, d);
                            } else {
                                const int64_t rows = path == 1 ? n : 1, cols = path == 1 ? 1 : n;
                                s0 = pk_reducer_reduce_axis(ctx, rv[mn][c], x, rows, cols, cols,
                                                            path - 1, d);
                                get(out, d, es);
                                s1 = pk_reducer_reduce_axis(ctx, ra[mn][c], x, rows, cols, cols,
                                                            path - 1, d);
                            }
                            get(&idx, d, 8);
                            uint64_t gbits = 0;
                            if (t == PK_F32) {
                                uint32_t u;
                                memcpy(&u, out, 4);
                                gbits = u;
                            } else {
                                memcpy(&gbits, out, 8);
                            }
                            const int lone_nan = n == 1 && !found; /* bits unspecified */
                            PK_CHECK(!s0 && !s1 && (gbits == wbits || lone_nan) && idx == want,
                                     "zero ties %s %s map %s n=%lld kind %d path %d: value "
                                     "0x%llx (want 0x%llx), index %lld (want %lld) (%s)",
                                     pk_dtype_name(t), comb[mn][c], maps[c], (long long)n, kind,
                                     path, (unsigned long long)gbits, (unsigned long long)wbits,
                                     (long long)idx, (long long)want,
                                     s0 || s1 ? pk_ctx_error(ctx) : "ok");
                        }
                    release(x), release(d);
                    free(h), free(hx);
                }
        for (int mn = 0; mn < 2; mn++)
            for (int c = 0; c < 3; c++) {
                pk_reducer_destroy(rv[mn][c]);
                pk_reducer_destroy(ra[mn][c]);
            }
    }
}

/* The shard entry of the distributed layer (src/core/reducer.h; linked from
 * the static library): x as the elements ibase.. of a larger array. */
pk_status pk__reducer_reduce_at(pk_ctx *ctx, const pk_reducer *red, const void *x,
                                int64_t n, int64_t ibase, void *out);

/* With an index base past 2^31 (and past f32's exact integers) the map's i
 * and the ARG index are base + position, i converted to the accumulator
 * type as a whole-array reduction converts it. */
static void rc_index_base(pk_ctx *ctx, void *(*mem)(size_t),
                          void (*put)(void *, const void *, size_t), void (*release)(void *))
{
    const int64_t n = 200003, base = (int64_t)3 << 30 | 12345;
    float *x = malloc((size_t)n * sizeof *x);
    for (int64_t k = 0; k < n; k++)
        x[k] = pk_test_below(97) ? (float)pk_test_uniform(-1000, 1000) : NAN;
    void *dx = mem((size_t)n * sizeof *x);
    put(dx, x, (size_t)n * sizeof *x);
    for (int f32 = 0; f32 <= 1; f32++) {
        /* fmax over i + x/8 (NaN elements -> -1): its maximum and where */
        double best = -INFINITY;
        int64_t at = -1;
        for (int64_t k = 0; k < n; k++) {
            double v = x[k] != x[k] ? -1
                       : f32 ? (double)((float)(base + k) + 0.125f * x[k])
                             : (double)(base + k) + 0.125 * x[k];
            if (v > best) best = v, at = base + k;
        }
        for (int arg = 0; arg <= 1; arg++) {
            pk_reducer *r = rc_make(ctx, PK_F32, f32 ? PK_F32 : PK_F64,
                                    arg ? PK_REDUCER_ARG : PK_REDUCER_VALUE,
                                    "isnan(x) ? -1 : i + 0x1p-3*x", "fmax(a,b)", NAN, NULL);
            if (!r) continue;
            union {
                float f;
                double d;
                int64_t i;
            } got = {.i = 0};
            pk_status s = pk__reducer_reduce_at(ctx, r, dx, n, base, &got);
            double g = arg ? (double)got.i : f32 ? got.f : got.d;
            PK_CHECK(s == PK_OK && g == (arg ? (double)at : best),
                     "index base %lld, %s, %s: %s, got %.17g want %.17g", (long long)base,
                     f32 ? "f32" : "f64", arg ? "ARG" : "VALUE", pk_ctx_error(ctx), g,
                     arg ? (double)at : best);
            pk_reducer_destroy(r);
        }
    }
    release(dx);
    free(x);
}

/* A program under a comma-decimal locale (setlocale, as many applications
 * call it): numbers are still read as C reads them, and the GPU's generated
 * source is the same. Tries $PK_TEST_LOCALE (ctest builds one with
 * localedef where it can) and common names; skipped when none exists. */
static void rc_locale(pk_ctx *ctx)
{
    const char *const names[] = {getenv("PK_TEST_LOCALE"), "de_DE.UTF-8", "de_DE.utf8",
                                 "fr_FR.UTF-8", "fr_FR.utf8"};
    const char *got = NULL;
    for (size_t j = 0; j < sizeof names / sizeof names[0] && !got; j++)
        if (names[j] && setlocale(LC_ALL, names[j]) &&
            !strcmp(localeconv()->decimal_point, ","))
            got = names[j];
    if (!got) {
        setlocale(LC_ALL, "C");
        printf("locale: skipped (no comma-decimal locale here)\n");
        return;
    }
    pk_reducer *r = rc_make(ctx, PK_F32, PK_F64, PK_REDUCER_VALUE, "x * 2.5 + 0x1.8p1",
                            "a + b", 0, "r * .5e1");
    float x[2] = {1.0f, 2.0f};
    double out = 0;
    PK_CHECK(r && pk_reducer_reduce(ctx, r, x, 2, &out) == PK_OK && out == 67.5,
             "under %s: %s, got %.17g (expected 67.5)", got, pk_ctx_error(ctx), out);
    pk_reducer_destroy(r);
    setlocale(LC_ALL, "C");
}

/* Bad expressions: PK_ERR_COMPILE naming the position; bad descriptions and
 * calls: PK_ERR_ARG. */
static void rc_errors(pk_ctx *ctx)
{
    static const struct { const char *map, *combine, *final, *pos; } bad[] = {
        {"x *", "a + b", NULL, "position 4"},   {"foo(x)", "a + b", NULL, "'foo"},
        {"x", "a + q", NULL, "'q'"},           {"x", "a ** b", NULL, "position 4"},
        {"(x", "a + b", NULL, "expected ')'"}, {"a", "a + b", NULL, "not allowed"},
        {"x", "a + b", "r + x", "not allowed"}, {"x", "fmax(a)", NULL, "expected ','"},
        {"x", "a ? b", NULL, "expected ':'"},   {"x", "", NULL, "position 1"},
        {"1.5e", "a+b", NULL, "bad number"},    {"x", "a + b)", NULL, "unexpected"},
        /* numbers C would read otherwise (octal) or not at all: refused */
        {"x + 010", "a+b", NULL, "position 5 ('010')"}, {"08", "a+b", NULL, "octal"},
        {"x * 1f", "a+b", NULL, "bad number"}, {"1u", "a+b", NULL, "bad number"},
        {"0x1.8", "a+b", NULL, "bad number"},  {"1.5.2", "a+b", NULL, "bad number"},
        {"0x1e+5", "a+b", NULL, "bad number"}, {"0x1E-x", "a+b", NULL, "bad number"},
        /* constants out of double's range (C11 6.4.4p2) */
        {"x * 1e400", "a+b", NULL, "out of the range"}, {"x * 1e-400", "a+b", NULL, "range"},
        {"0x1p99999", "a+b", NULL, "out of the range"},
        /* ++ and -- are C's increment and decrement, not - -x */
        {"--x", "a+b", NULL, "position 1 ('--x')"}, {"x", "a--b", NULL, "decrement"},
        {"x+++x", "a+b", NULL, "increment"},
        /* the message points at the token, past the blanks before it */
        {"x  $", "a+b", NULL, "position 4 ('$')"},
    };
    for (size_t j = 0; j < sizeof bad / sizeof bad[0]; j++) {
        pk_reducer_desc d = {.input = PK_F32, .acc = PK_F32, .map = bad[j].map,
                             .combine = bad[j].combine, .final = bad[j].final};
        pk_reducer *r = (pk_reducer *)1;
        pk_status s = pk_reducer_create(ctx, &d, &r);
        PK_CHECK(s == PK_ERR_COMPILE && r == NULL && strstr(pk_ctx_error(ctx), bad[j].pos),
                 "bad expression %zu: %s: %s", j, pk_status_str(s), pk_ctx_error(ctx));
    }
    /* Past the node limit in the middle of the text: the message names the
     * token there, not "end of text". */
    char longer[512] = "x";
    for (int j = 0; j < 80; j++) strcat(longer, " + x");
    strcat(longer, "   * 2");
    pk_reducer_desc dl = {.input = PK_F32, .acc = PK_F32, .map = longer, .combine = "a+b"};
    pk_reducer *rl = NULL;
    PK_CHECK(pk_reducer_create(ctx, &dl, &rl) == PK_ERR_COMPILE &&
                 strstr(pk_ctx_error(ctx), "too long") &&
                 !strstr(pk_ctx_error(ctx), "end of text"),
             "long expression: %s", pk_ctx_error(ctx));
    pk_reducer_destroy(rl);
    /* A blank between two minus signs: x - -x is 2x. */
    rl = rc_make(ctx, PK_F32, PK_F32, PK_REDUCER_VALUE, "x - -x", "a + b", 0, "-(-r)");
    float two[2] = {1.5f, 2.0f}, got2 = 0;
    PK_CHECK(rl && pk_reducer_reduce(ctx, rl, two, 2, &got2) == PK_OK && got2 == 7.0f,
             "x - -x: %g", got2);
    pk_reducer_destroy(rl);
    pk_reducer_desc ok = {.input = PK_F32, .acc = PK_F64, .combine = "a+b"};
    pk_reducer_desc d = ok;
    pk_reducer *r = NULL;
    PK_CHECK(pk_reducer_create(ctx, NULL, &r) == PK_ERR_ARG, "NULL desc");
    PK_CHECK(pk_reducer_create(ctx, &d, NULL) == PK_ERR_ARG, "NULL out");
    r = (pk_reducer *)&d; /* "On failure *red is NULL", a NULL ctx included */
    PK_CHECK(pk_reducer_create(NULL, &d, &r) == PK_ERR_ARG && r == NULL, "NULL ctx");
    r = (pk_reducer *)&d;
    PK_CHECK(pk_reducer_create(ctx, NULL, &r) == PK_ERR_ARG && r == NULL, "NULL desc: *red");
    r = (pk_reducer *)&d;
    PK_CHECK(pk_reducer_create(NULL, NULL, &r) == PK_ERR_ARG && r == NULL, "NULL both");
    d.acc = PK_I32, r = (pk_reducer *)&d;
    PK_CHECK(pk_reducer_create(ctx, &d, &r) == PK_ERR_ARG && r == NULL, "bad desc: *red");
    d = ok, r = NULL;
    d.acc = PK_I32;
    PK_CHECK(pk_reducer_create(ctx, &d, &r) == PK_ERR_ARG, "acc i32");
    d = ok, d.input = PK_DTYPE_COUNT;
    PK_CHECK(pk_reducer_create(ctx, &d, &r) == PK_ERR_ARG, "input dtype");
    d = ok, d.kind = (pk_reducer_kind)7;
    PK_CHECK(pk_reducer_create(ctx, &d, &r) == PK_ERR_ARG, "kind");
    d = ok, d.kind = PK_REDUCER_ARG, d.final = "r";
    PK_CHECK(pk_reducer_create(ctx, &d, &r) == PK_ERR_ARG, "ARG with final");
    d = ok, d.combine = NULL;
    PK_CHECK(pk_reducer_create(ctx, &d, &r) == PK_ERR_ARG, "no combine");
    PK_CHECK(pk_reducer_create(ctx, &ok, &r) == PK_OK, "good: %s", pk_ctx_error(ctx));
    float x[4] = {1, 2, 3, 4};
    double out;
    PK_CHECK(pk_reducer_reduce(ctx, NULL, x, 4, &out) == PK_ERR_ARG, "NULL red");
    PK_CHECK(pk_reducer_reduce(ctx, r, x, -1, &out) == PK_ERR_ARG, "n < 0");
    PK_CHECK(pk_reducer_reduce(ctx, r, NULL, 4, &out) == PK_ERR_ARG, "NULL x");
    PK_CHECK(pk_reducer_reduce(ctx, r, x, 4, NULL) == PK_ERR_ARG, "NULL out");
    PK_CHECK(pk_reducer_reduce(ctx, r, x, 4, (char *)x + 4) == PK_ERR_ARG, "overlap");
    PK_CHECK(pk_reducer_reduce_axis(ctx, r, x, 2, 2, 2, 2, &out) == PK_ERR_ARG, "axis 2");
    PK_CHECK(pk_reducer_reduce_axis(ctx, r, x, 2, 2, 1, 0, &out) == PK_ERR_ARG, "ld < cols");
    PK_CHECK(pk_reducer_reduce(ctx, r, x, 4, &out) == PK_OK && out == 10, "good call");
    pk_reducer_info info;
    PK_CHECK(pk_reducer_get_info(r, &info) == PK_OK, "info");
    PK_CHECK(pk_reducer_get_info(NULL, &info) == PK_ERR_ARG, "info NULL");
    pk_reducer_destroy(r);
    pk_reducer_destroy(NULL);
}

#endif
