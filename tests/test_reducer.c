/* User-defined reductions on the CPU: operators and dtypes against
 * reference loops, the non-commutative case, ARG, both axes, C function
 * callbacks, the same bits for every thread count (zero ties of fmax/fmin
 * included), compile errors and bad arguments, the parser's limits and
 * numbers (tests/reducer_cases.h holds the cases shared with the GPU). */
#include "reducer_cases.h"

static void *host_mem(size_t bytes) { return pk_test_alloc(bytes); }
static void host_put(void *d, const void *s, size_t bytes) { if (bytes) memcpy(d, s, bytes); }
static void host_release(void *p) { free(p); }

static double sq(double x, int64_t i, void *u) { (void)i, (void)u; return x * x; }
static double add(double a, double b, void *u) { (void)u; return a + b; }
static double half(double r, void *u) { return r * *(double *)u; }
/* non-commutative: the later non-NaN wins */
static double last(double a, double b, void *u) { (void)u; return isnan(b) ? a : b; }

static void callbacks(pk_ctx *ctx)
{
    int64_t n = 300007;
    double *x = pk_test_alloc((size_t)n * 8), h = 0.5;
    long double ref = 0;
    for (int64_t i = 0; i < n; i++) x[i] = pk_test_uniform(-1, 1), ref += (long double)x[i] * x[i];
    pk_reducer_desc d = {.input = PK_F64, .acc = PK_F64, .map_fn = sq, .combine_fn = add,
                         .final_fn = half, .user = &h};
    pk_reducer *r = NULL;
    double out = 0;
    PK_CHECK(pk_reducer_create(ctx, &d, &r) == PK_OK, "callbacks: %s", pk_ctx_error(ctx));
    PK_CHECK(pk_reducer_reduce(ctx, r, x, n, &out) == PK_OK, "%s", pk_ctx_error(ctx));
    PK_CHECK(fabs(out - (double)(ref / 2)) <= 1e-12 * (double)ref, "callbacks %.17g vs %.17Lg",
             out, ref / 2);
    pk_reducer_destroy(r);
    /* mixed: expression map, C combine */
    pk_reducer_desc m = {.input = PK_F64, .acc = PK_F64, .map = "x < 0 ? NAN : x",
                         .combine_fn = last, .identity = NAN};
    PK_CHECK(pk_reducer_create(ctx, &m, &r) == PK_OK, "mixed: %s", pk_ctx_error(ctx));
    double want = NAN;
    for (int64_t i = 0; i < n; i++) if (x[i] >= 0) want = x[i];
    PK_CHECK(pk_reducer_reduce(ctx, r, x, n, &out) == PK_OK && out == want,
             "mixed last %.17g vs %.17g", out, want);
    pk_reducer_destroy(r);
    pk_reducer_desc both = {.input = PK_F64, .acc = PK_F64, .combine = "a+b", .combine_fn = add};
    PK_CHECK(pk_reducer_create(ctx, &both, &r) == PK_ERR_ARG, "expr and fn");
    free(x);
}

/* map_fn gets the index within the reduced axis too (the row on axis 0),
 * across the column chunks of the sweep (more than 512 columns, ld > cols),
 * the row segments of few columns (20000 x 3) and the groups of short rows
 * (600 x 40); a combine_fn takes the same paths. */
static double idx(double x, int64_t i, void *u) { (void)x, (void)u; return (double)i; }

static void fn_index_with(pk_ctx *ctx, const pk_reducer_desc *d);
static void fn_index(pk_ctx *ctx)
{
    const pk_reducer_desc d = {.input = PK_F32, .acc = PK_F64, .map_fn = idx, .combine = "a + b"};
    const pk_reducer_desc d2 = {.input = PK_F32, .acc = PK_F64, .map = "i", .combine_fn = add};
    fn_index_with(ctx, &d);
    fn_index_with(ctx, &d2);
}

static void fn_index_with(pk_ctx *ctx, const pk_reducer_desc *d)
{
    static const int64_t shapes[][3] = {{3, 4, 4},       {7, 1300, 1333}, {2, 70000, 70001},
                                        {20000, 3, 4}, {600, 40, 41}};
    pk_reducer *r = NULL;
    PK_CHECK(pk_reducer_create(ctx, d, &r) == PK_OK, "fn_index: %s", pk_ctx_error(ctx));
    for (size_t q = 0; r && q < sizeof shapes / sizeof shapes[0]; q++) {
        int64_t rows = shapes[q][0], cols = shapes[q][1], ld = shapes[q][2];
        float *x = calloc((size_t)(rows * ld), 4);
        double *o = pk_test_alloc((size_t)(rows > cols ? rows : cols) * 8);
        for (int axis = 0; axis < 2; axis++) {
            int64_t nout = axis ? rows : cols, along = axis ? cols : rows;
            PK_CHECK(pk_reducer_reduce_axis(ctx, r, x, rows, cols, ld, axis, o) == PK_OK, "%s",
                     pk_ctx_error(ctx));
            for (int64_t c = 0; c < nout; c++)
                if (o[c] != (double)(along * (along - 1) / 2)) {
                    PK_CHECK(0, "map_fn i axis %d %lldx%lld [%lld]: %g", axis, (long long)rows,
                             (long long)cols, (long long)c, o[c]);
                    break;
                }
        }
        free(x), free(o);
    }
    pk_reducer_destroy(r);
}

static char *repeat(const char *head, const char *unit, int n, const char *tail)
{
    size_t hl = strlen(head), ul = strlen(unit), tl = strlen(tail);
    char *s = pk_test_alloc(hl + ul * (size_t)n + tl + 1), *p = s;
    memcpy(p, head, hl), p += hl;
    for (int k = 0; k < n; k++) memcpy(p, unit, ul), p += ul;
    memcpy(p, tail, tl + 1);
    return s;
}

/* create(combine = e): the status, and the message holds want (if ok is 0). */
static void expect(pk_ctx *ctx, char *e, int ok, const char *want)
{
    pk_reducer_desc d = {.input = PK_F64, .acc = PK_F64, .combine = e};
    pk_reducer *r = (pk_reducer *)&d;
    pk_status s = pk_reducer_create(ctx, &d, &r);
    const char *m = pk_ctx_error(ctx);
    if (ok) PK_CHECK(s == PK_OK, "%.60s...: %s", e, m);
    else
        PK_CHECK(s == PK_ERR_COMPILE && !r && strstr(m, want) && strlen(m) < 1000,
                 "%.60s... (%zu chars): %s (want \"%s\")", e, strlen(e), m, want);
    pk_reducer_destroy(s ? NULL : r);
    free(e);
}

/* The parser's recursion is bounded (128 levels: the node limit) on every
 * path, far too deep failing with PK_ERR_COMPILE, not a stack overflow; a
 * long expression's message still holds the position and the token. */
static void parse_limits(pk_ctx *ctx)
{
    const int deep = 100000;
    expect(ctx, repeat("", "(", deep, "a"), 0, "nesting deeper than 128 at position 129 ('((((");
    char *p = repeat("", "(", deep, "a"), *q = repeat(p, ")", deep, " + b");
    free(p);
    expect(ctx, q, 0, "nesting deeper than 128 at position 129");
    expect(ctx, repeat("", "- ", deep, "a"), 0, "nesting deeper than 128 at position 257 ('-'");
    /* without blanks, C reads -- and ++ as decrement and increment: refused */
    expect(ctx, repeat("", "-", deep, "a"), 0, "'--' (C's decrement) is not an operator here at position 1");
    expect(ctx, repeat("", "+", 2, "a"), 0, "'++' (C's increment) is not an operator here at position 1");
    expect(ctx, repeat("", "!", deep, "a"), 0, "nesting deeper than 128 at position 129 ('!!!");
    expect(ctx, repeat("", "+ ", deep, "a"), 0, "nesting deeper than 128 at position 257");
    expect(ctx, repeat("", "abs(", deep, "a"), 0, "nesting deeper than 128 at position 513 ('abs(");
    expect(ctx, repeat("", "-(", deep, "a"), 0, "nesting deeper than 128 at position 129 ('-(-(");
    expect(ctx, repeat("", "fmax(a, ", deep, "b"), 0, "nesting deeper than 128");
    /* a ? (a ? ... : b) : b and a ? b : a ? b : ...: nodes before each level */
    expect(ctx, repeat("", "a ? ", deep, "b"), 0, "expression too long");
    expect(ctx, repeat("", "a ? b : ", deep, "b"), 0, "expression too long");
    /* at the limits */
    p = repeat("", "(", 128, "a");
    expect(ctx, repeat(p, ")", 128, ""), 1, NULL);
    free(p);
    p = repeat("", "(", 129, "a");
    expect(ctx, repeat(p, ")", 129, ""), 0, "nesting deeper than 128 at position 129 ('(a");
    free(p);
    expect(ctx, repeat("", "+ ", 128, "a"), 1, NULL);
    expect(ctx, repeat("", "- ", 127, "a"), 1, NULL); /* 128 nodes */
    expect(ctx, repeat("", "- ", 128, "a"), 0, "expression too long");
    p = repeat("", "abs(", 127, "a");
    expect(ctx, repeat(p, ")", 127, ""), 1, NULL);
    free(p);
    /* 2000-character expressions: the error at the start, middle and end */
    expect(ctx, repeat("q", " ", 2000, "+ a"), 0, "unknown name at position 1 ('q')");
    p = repeat("", " ", 1000, "a + q");
    expect(ctx, repeat(p, " ", 1000, ""), 0, "unknown name at position 1005 ('q')");
    free(p);
    expect(ctx, repeat("a +", " ", 2000, "q"), 0, "unknown name at position 2004 ('q')");
    expect(ctx, repeat("a +", " ", 2000, ""), 0, "unexpected end at position 2004 ('end of text')");
    expect(ctx, repeat("a", " + a", 500, ""), 0, "expression too long at position");
    expect(ctx, repeat("a", " + a", 500, " + q"), 0, "')");
}

/* The numbers the language reads (pk.h), and their values. */
static void numbers(pk_ctx *ctx)
{
    static const struct { const char *s; double v; } ok[] = {
        {"0", 0}, {"10", 10}, {"2.5", 2.5}, {".5", 0.5}, {"5.", 5}, {"1e3", 1000},
        {"1.5E-1", 0.15}, {"0.25", 0.25}, {"0e5", 0}, {"010.5", 10.5}, {"1.5f", 1.5},
        {"2e1F", 20}, {"0x1F", 31}, {"0X10", 16}, {"0x1p-2", 0.25}, {"0x1.8p1f", 3},
    };
    for (size_t j = 0; j < sizeof ok / sizeof ok[0]; j++) {
        pk_reducer_desc d = {.input = PK_F64, .acc = PK_F64, .map = ok[j].s, .combine = "a + b"};
        pk_reducer *r = NULL;
        double x = 7, out = -1;
        PK_CHECK(pk_reducer_create(ctx, &d, &r) == PK_OK &&
                     pk_reducer_reduce(ctx, r, &x, 1, &out) == PK_OK && out == ok[j].v,
                 "number %s: %g (%s)", ok[j].s, out, pk_ctx_error(ctx));
        pk_reducer_destroy(r);
    }
}

/* The same bits for 1..8 threads, for the lane path (a+b), the tree path
 * and ARG. */
static void determinism(pk_ctx *ctx)
{
    int64_t n = 3000017;
    float *x = pk_test_alloc((size_t)n * 4);
    for (int64_t i = 0; i < n; i++) x[i] = (float)pk_test_uniform(-1, 1);
    const char *comb[3] = {"a + b", "a + b*1", "fmax(a, b)"};
    pk_reducer_kind kind[3] = {PK_REDUCER_VALUE, PK_REDUCER_VALUE, PK_REDUCER_ARG};
    for (int a = 0; a < 2; a++)
        for (int c = 0; c < 3; c++) {
            pk_dtype acc = a ? PK_F64 : PK_F32;
            pk_reducer *r = rc_make(ctx, PK_F32, acc, kind[c], "x*x - 0.25", comb[c],
                                    kind[c] ? -INFINITY : 0, NULL);
            if (!r) continue;
            double first = 0;
            for (int t = 1; t <= 8; t++) {
                double out = 0;
                pk_ctx_set_threads(ctx, t);
                PK_CHECK(pk_reducer_reduce(ctx, r, x, n, &out) == PK_OK, "%s", pk_ctx_error(ctx));
                if (t == 1) first = out;
                PK_CHECK(!memcmp(&out, &first, 8), "threads %d %s acc %s: bits differ", t,
                         comb[c], pk_dtype_name(acc));
            }
            pk_ctx_set_threads(ctx, 0);
            pk_reducer_destroy(r);
        }
    free(x);
}

/* Zero ties (fmax/fmin as maximumNumber/minimumNumber, pk.h) over many
 * tasks and threads and both axes' thread splits: rows of negatives with
 * zeros of both signs and NaNs scattered; fmax is +0 and fmin (data
 * negated) -0 bit for bit, ARG the first zero of either sign, whatever the
 * thread count (1..4), the lanes (fmax(a, b)) or the ordered tree
 * (fmax(fmax(a, b), NAN)). Axis 1 over 6 rows (a row per thread), axis 0
 * over 1100 columns (two column chunks). */
static void zero_ties_threads(pk_ctx *ctx)
{
    const int64_t rows = 6, cols = 70001;
    const int64_t cnt = rows * cols;
    double *h = pk_test_alloc((size_t)cnt * 8);
    static const char *const comb[2][2] = {{"fmax(a, b)", "fmax(fmax(a, b), NAN)"},
                                           {"fmin(a, b)", "fmin(fmin(a, b), NAN)"}};
    for (int mn = 0; mn < 2; mn++) {
        for (int64_t e = 0; e < cnt; e++) {
            int64_t r = pk_test_below(200);
            double v = r == 0 ? 0.0 : r == 1 ? -0.0 : r == 2 ? NAN : -pk_test_uniform(0.5, 2);
            h[e] = mn ? -v : v;
        }
        for (int c = 0; c < 2; c++) {
            pk_reducer *rv = rc_make(ctx, PK_F64, PK_F64, PK_REDUCER_VALUE, NULL, comb[mn][c], NAN, NULL);
            pk_reducer *ra = rc_make(ctx, PK_F64, PK_F64, PK_REDUCER_ARG, NULL, comb[mn][c], NAN, NULL);
            if (!rv || !ra) return;
            /* axis 1: row j; axis 0 over the first 1100 columns of a
             * 63 x 1100 view (ld 1100): column j */
            for (int axis = 0; axis < 3; axis++) {
                const int64_t nr = axis == 0 ? 63 : rows, nc = axis == 0 ? 1100 : cols;
                const int64_t nout = axis == 0 ? nc : axis == 1 ? nr : 1;
                double *want = pk_test_alloc((size_t)nout * 8), *got = pk_test_alloc((size_t)nout * 8);
                int64_t *wi = pk_test_alloc((size_t)nout * 8), *gi = pk_test_alloc((size_t)nout * 8);
                for (int64_t j = 0; j < nout; j++) {
                    const int64_t along = axis == 0 ? nr : axis == 1 ? nc : cnt;
                    double best = NAN;
                    wi[j] = 0;
                    for (int64_t e = 0; e < along; e++) {
                        double v = axis == 0 ? h[e * nc + j] : axis == 1 ? h[j * nc + e] : h[e];
                        if (isnan(v)) continue;
                        if (isnan(best) || (mn ? v < best : v > best)) best = v, wi[j] = e;
                        else if (v == best && signbit(v) != signbit(best) && (mn == !!signbit(v)))
                            best = v;
                    }
                    want[j] = best;
                }
                for (int t = 1; t <= 4; t++) {
                    pk_ctx_set_threads(ctx, t);
                    pk_status s0, s1;
                    if (axis == 2) {
                        s0 = pk_reducer_reduce(ctx, rv, h, cnt, got);
                        s1 = pk_reducer_reduce(ctx, ra, h, cnt, gi);
                    } else {
                        s0 = pk_reducer_reduce_axis(ctx, rv, h, nr, nc, nc, axis, got);
                        s1 = pk_reducer_reduce_axis(ctx, ra, h, nr, nc, nc, axis, gi);
                    }
                    for (int64_t j = 0; j < nout; j++)
                        if (s0 || s1 || memcmp(&got[j], &want[j], 8) || gi[j] != wi[j]) {
                            PK_CHECK(0, "zero ties %s %s threads %d [%lld]: %g (sign %d, want %g "
                                     "sign %d), index %lld (want %lld) (%s)", comb[mn][c],
                                     axis == 2 ? "reduce" : axis ? "axis 1" : "axis 0", t,
                                     (long long)j, got[j], !!signbit(got[j]), want[j],
                                     !!signbit(want[j]), (long long)gi[j], (long long)wi[j],
                                     s0 || s1 ? pk_ctx_error(ctx) : "ok");
                            break;
                        }
                }
                pk_ctx_set_threads(ctx, 0);
                free(want), free(got), free(wi), free(gi);
            }
            pk_reducer_destroy(rv);
            pk_reducer_destroy(ra);
        }
    }
    free(h);
}

int main(void)
{
    pk_test_init("test_reducer");
    pk_ctx *ctx = pk_test_cpu_ctx();
    rc_sums(ctx, host_mem, host_put, host_release);
    rc_order(ctx, host_mem, host_put, host_release);
    rc_axes(ctx, host_mem, host_put, host_put, host_release);
    rc_index_base(ctx, host_mem, host_put, host_release);
    rc_errors(ctx);
    rc_locale(ctx);
    callbacks(ctx);
    fn_index(ctx);
    parse_limits(ctx);
    numbers(ctx);
    determinism(ctx);
    zero_ties_threads(ctx);
    pk_reducer *r = NULL;
    pk_reducer_desc d = {.input = PK_F32, .acc = PK_F32, .combine = "a+b"};
    PK_CHECK(pk_reducer_create(ctx, &d, &r) == PK_OK, "create");
    pk_reducer_info info;
    pk_reducer_get_info(r, &info);
    PK_CHECK(info.origin == PK_REDUCER_INTERPRETED, "origin %d", (int)info.origin);
    pk_reducer_destroy(r);
    pk_ctx_destroy(ctx);
    return pk_test_finish("test_reducer");
}
