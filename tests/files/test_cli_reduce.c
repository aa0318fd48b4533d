/* `pk reduce` on .npy files against plain-loop references: every op and
 * dtype, whole arrays and both axes, edge sizes, NaN, the printed values
 * and the JSON line, and user-defined reductions (--expr). Usage:
 * test_cli_reduce PK [cpu|cuda]. */
#include "cli_util.h"

static pk_npy_type result_type(pk_op op, pk_npy_type t)
{
    if (op >= PK_ARGMIN) return PK_NPY_I64;
    if (op <= PK_PROD && (t == PK_NPY_I32 || t == PK_NPY_I64)) return PK_NPY_I64;
    if (op <= PK_PROD && (t == PK_NPY_U32 || t == PK_NPY_U64)) return PK_NPY_U64;
    return t;
}

/* The reference of op over x[i*stride], i < n, written as the result type
 * into out (8 bytes). */
static void reference(pk_op op, pk_dtype t, const void *x, int64_t n, int64_t stride, void *out)
{
    if (op >= PK_ARGMIN) {
        *(int64_t *)out = pk_test_argext(t, x, n, stride, op == PK_ARGMAX);
        return;
    }
    if (op == PK_MIN || op == PK_MAX) {
        int64_t best = pk_test_argext(t, x, n, stride, op == PK_MAX);
        memcpy(out, (const char *)x + best * stride * (int64_t)pk_test_size(t), pk_test_size(t));
        return;
    }
    if (pk_test_is_float(t)) {
        pk_test_xsum s;
        pk_test_xsum_init(&s);
        long double p = 1;
        for (int64_t i = 0; i < n; i++) {
            pk_test_xsum_add(&s, pk_test_getf(t, x, i * stride));
            p *= pk_test_getf(t, x, i * stride);
        }
        pk_test_setf(t, out, 0, op == PK_SUM ? pk_test_xsum_value(&s) : (double)p);
        return;
    }
    uint64_t acc = op == PK_SUM ? 0 : 1;
    for (int64_t i = 0; i < n; i++)
        acc = op == PK_SUM ? acc + pk_test_getu(t, x, i * stride) : acc * pk_test_getu(t, x, i * stride);
    memcpy(out, &acc, 8);
}

/* got (the result type) against want (from reference) over n elements. */
static int same_result(pk_op op, pk_npy_type rt, const void *got, const void *want, int64_t n)
{
    if (rt != PK_NPY_F32 && rt != PK_NPY_F64)
        return memcmp(got, want, pk_npy_type_size(rt)) == 0;
    double g = pk_test_getf((pk_dtype)rt, got, 0), w = pk_test_getf((pk_dtype)rt, want, 0);
    if (isnan(w) || isnan(g) || isinf(w)) return (isnan(w) && isnan(g)) || g == w;
    /* sums: correctly rounded (one ulp for the reference's own double rounding);
     * products: n roundings in a tree the reference does not follow */
    const double ulp = rt == PK_NPY_F32 ? 0x1p-23 : 0x1p-52;
    const double tol = op == PK_PROD ? (double)(n + 1) * ulp : op == PK_SUM ? ulp : 0;
    return fabs(g - w) <= tol * fabs(w) + (rt == PK_NPY_F32 ? FLT_MIN : DBL_MIN);
}

static const pk_npy_type types[6] = {PK_NPY_F32, PK_NPY_F64, PK_NPY_I32,
                                     PK_NPY_I64, PK_NPY_U32, PK_NPY_U64};

static void *random_array(pk_npy_type t, int64_t n, enum pk_test_kind kind)
{
    void *x = pk_test_alloc((size_t)n * pk_npy_type_size(t) + 8);
    pk_test_fill((pk_dtype)t, x, n, kind);
    return x;
}

/* Whole-array reductions: -o r.npy (a 0-d array) and the JSON value. */
/* On CUDA each pk process pays a device context's start (about 0.5 s on
 * the GPU machine): the CLI's CUDA wiring gets a subset here (the middle
 * size and kind, half the axis dtypes); the kernels' own coverage is
 * tests/test_cuda_*. */
static int on_cuda(void) { return strcmp(cli_backend, "cuda") == 0; }

static void test_whole(void)
{
    static const int64_t sizes[] = {1, 1000, 100003};
    char what[96];
    for (int ti = 0; ti < 6; ti++)
        for (int si = 0; si < 3; si++)
            for (int kind = 0; kind < 3; kind++) {
                const pk_npy_type t = types[ti];
                if (kind == 2 && (t != PK_NPY_F32 && t != PK_NPY_F64)) continue;
                if (on_cuda() && (si == 1 || kind == 1)) continue;
                const int64_t n = sizes[si];
                void *x = random_array(t, n, kind == 2 ? PK_TEST_WITH_NAN : PK_TEST_UNIFORM);
                void *near = random_array(t, n, PK_TEST_NEARONE);
                for (int op = 0; op < PK_OP_COUNT; op++) {
                    const void *data = op == PK_PROD && kind < 2 ? near : x;
                    cli_save("x.npy", t, 1, &n, data);
                    int rc = PK("reduce", "x.npy", "--op", pk_op_name((pk_op)op), "-o", "r.npy",
                                "--json");
                    snprintf(what, sizeof what, "%s %s n=%lld kind %d",
                             pk_op_name((pk_op)op), pk_npy_type_name(t), (long long)n, kind);
                    PK_CHECK(rc == 0, "%s: status %d: %s", what, rc, cli_err);
                    const pk_npy_type rt = result_type((pk_op)op, t);
                    unsigned char want[8];
                    reference((pk_op)op, (pk_dtype)t, data, n, 1, want);
                    pk_npy_array a;
                    const void *got = cli_load(&a, "r.npy", rt, 0, NULL);
                    PK_CHECK(got && same_result((pk_op)op, rt, got, want, n), "%s: wrong result", what);
                    /* the JSON value is the file's, exactly (null for NaN) */
                    if (got && (rt == PK_NPY_F32 || rt == PK_NPY_F64)) {
                        double g = pk_test_getf((pk_dtype)rt, got, 0), v = cli_json_num("value");
                        if (rt == PK_NPY_F32) v = (float)v; /* the shortest f32 text */
                        PK_CHECK(!isfinite(g) ? strstr(cli_out, "\"value\": null") != NULL : v == g,
                                 "%s: JSON value %.17g, file %.17g", what, v, g);
                    } else if (got) {
                        const char *v = strstr(cli_out, "\"value\": ");
                        uint64_t g = pk_test_getu((pk_dtype)rt, got, 0);
                        PK_CHECK(v && (rt == PK_NPY_U64 ? strtoull(v + 9, NULL, 10) == g
                                                        : (uint64_t)strtoll(v + 9, NULL, 10) == g),
                                 "%s: JSON value: %s", what, cli_out);
                    }
                    pk_npy_close(&a);
                }
                free(x);
                free(near);
            }
}

/* Along each axis, against the reference per row or column. */
static void test_axes(void)
{
    static const int64_t shapes[][2] = {{1, 1}, {5, 3}, {1000, 7}, {7, 1000}, {3, 0}, {0, 4}};
    static const pk_npy_type axis_types[] = {PK_NPY_F32, PK_NPY_F64, PK_NPY_I32, PK_NPY_U64};
    for (int ti = 0; ti < 4; ti++)
        for (int s = 0; s < 6; s++) {
            const pk_npy_type t = axis_types[ti];
            if (on_cuda() && (ti == 1 || ti == 2)) continue;
            const int64_t rows = shapes[s][0], cols = shapes[s][1];
            void *x = random_array(t, rows * cols, PK_TEST_NEARONE);
            cli_save("m.npy", t, 2, shapes[s], x);
            for (int op = 0; op < PK_OP_COUNT; op++)
                for (int axis = 0; axis < 2; axis++) {
                    const int64_t nout = axis == 0 ? cols : rows, len = axis == 0 ? rows : cols;
                    const int empty_fails = len == 0 && op >= PK_MIN && nout > 0;
                    int before = cli_entries();
                    int rc = PK("reduce", "m.npy", "--op", pk_op_name((pk_op)op), "--axis",
                                axis ? "1" : "0", "-o", "r.npy");
                    if (empty_fails) { /* min of nothing: refused, no output */
                        PK_CHECK(rc == 1 && cli_entries() == before && cli_lines(cli_err) == 1,
                                 "empty axis %s: status %d", pk_op_name((pk_op)op), rc);
                        continue;
                    }
                    PK_CHECK(rc == 0, "%s axis %d (%lld, %lld): %s", pk_op_name((pk_op)op), axis,
                             (long long)rows, (long long)cols, cli_err);
                    const pk_npy_type rt = result_type((pk_op)op, t);
                    pk_npy_array a;
                    const unsigned char *got = cli_load(&a, "r.npy", rt, 1, &nout);
                    const size_t es = pk_npy_type_size(t);
                    for (int64_t j = 0; got && j < nout; j++) {
                        unsigned char want[8];
                        const char *start = (const char *)x + (axis == 0 ? j : j * cols) * (int64_t)es;
                        reference((pk_op)op, (pk_dtype)t, start, len, axis == 0 ? cols : 1, want);
                        PK_CHECK(same_result((pk_op)op, rt, got + j * (int64_t)pk_npy_type_size(rt),
                                             want, len), "%s %s axis %d (%lld, %lld) [%lld]",
                                 pk_op_name((pk_op)op), pk_npy_type_name(t), axis, (long long)rows,
                                 (long long)cols, (long long)j);
                    }
                    pk_npy_close(&a);
                    unlink(cli_path("r.npy"));
                }
            free(x);
        }
}

/* Edge cases and the printed forms. */
static void test_edges(void)
{
    const int64_t zero = 0, n3 = 3, n1500 = 1500, shape2[2] = {2, 3};
    float f3[3] = {1, -2, 0.5f};
    /* nothing: the sum is 0, the min an error */
    cli_save("e.npy", PK_NPY_F32, 1, &zero, f3);
    int rc = PK("reduce", "e.npy", "--op", "sum");
    PK_CHECK(rc == 0 && strstr(cli_out, "reduce sum: e.npy f32 (0,) = 0 | "), "%s", cli_out);
    int before = cli_entries();
    rc = PK("reduce", "e.npy", "--op", "min", "-o", "r.npy");
    CHECK_FAILS(before, "", rc, "min of nothing");
    /* a 0-d array */
    cli_save("s.npy", PK_NPY_F64, 0, NULL, (double[]){2.5});
    rc = PK("reduce", "s.npy", "--op", "max", "--json");
    PK_CHECK(rc == 0 && cli_json_num("value") == 2.5 && strstr(cli_out, "\"shape\": []"), "%s",
             cli_out);
    /* the summary line, and the values printed without -o */
    cli_save("x.npy", PK_NPY_F32, 1, &n3, f3);
    rc = PK("reduce", "x.npy", "--op", "argmin");
    PK_CHECK(rc == 0 && cli_lines(cli_out) == 1 &&
                 STARTS(cli_out, "reduce argmin: x.npy f32 (3,) = 1 | ") &&
                 strstr(cli_out, " GB/s"), "%s", cli_out);
    float m6[6] = {1, 2, 3, 4, 5, 6.25f};
    cli_save("m.npy", PK_NPY_F32, 2, shape2, m6);
    rc = PK("reduce", "m.npy", "--op", "sum", "--axis", "0");
    PK_CHECK(rc == 0 && strstr(cli_out, "-> 3 f32 values (below)") &&
                 strstr(cli_out, "\n5\n7\n9.25\n") && cli_lines(cli_out) == 4, "%s", cli_out);
    rc = PK("reduce", "m.npy", "--op", "sum", "--axis", "1", "--json");
    PK_CHECK(rc == 0 && strstr(cli_out, "\"values\": [6, 15.25], \"values_total\": 2") &&
                 cli_lines(cli_out) == 1, "%s", cli_out);
    /* a 2-D array without --axis: all of it; argmax flattened */
    rc = PK("reduce", "m.npy", "--op", "argmax", "--json");
    PK_CHECK(rc == 0 && cli_json_num("value") == 5, "%s", cli_out);
    /* --axis 0 of a 1-D array is the whole array; --axis 1 is an error */
    rc = PK("reduce", "x.npy", "--op", "sum", "--axis", "0", "--json");
    PK_CHECK(rc == 0 && cli_json_num("value") == -0.5, "%s", cli_out);
    before = cli_entries();
    rc = PK("reduce", "x.npy", "--op", "sum", "--axis", "1", "-o", "r.npy");
    CHECK_FAILS(before, "x.npy", rc, "axis 1 of 1-D");
    /* printing stops at 1000 values and says so */
    float *big = random_array(PK_NPY_F32, 2 * n1500, PK_TEST_UNIFORM);
    cli_save("wide.npy", PK_NPY_F32, 2, (int64_t[]){2, n1500}, big);
    rc = PK("reduce", "wide.npy", "--op", "max", "--axis", "0");
    PK_CHECK(rc == 0 && cli_lines(cli_out) == 1002 &&
                 strstr(cli_out, "... 1000 of 1500 values printed; -o FILE writes them all\n"),
             "cap: %d lines", cli_lines(cli_out));
    free(big);
    /* dtypes and dimensions reduce does not take */
    cli_save("u8.npy", PK_NPY_U8, 1, &n3, (uint8_t[]){1, 2, 3});
    before = cli_entries();
    rc = PK("reduce", "u8.npy", "--op", "sum", "-o", "r.npy");
    CHECK_FAILS(before, "u8.npy", rc, "u8 input");
    PK_CHECK(strstr(cli_err, "dtype u8"), "%s", cli_err);
    cli_save("cube.npy", PK_NPY_F32, 3, (int64_t[]){1, 1, 3}, f3);
    before = cli_entries();
    rc = PK("reduce", "cube.npy", "--op", "sum", "-o", "r.npy");
    CHECK_FAILS(before, "cube.npy", rc, "3-D input");
    PK_CHECK(strstr(cli_err, "a 3-D array (1, 1, 3): pk reduce takes 0-D to 2-D arrays"), "%s",
             cli_err);
}

/* User-defined reductions. */
static void test_expr(void)
{
    const int64_t n = 10007, shape[2] = {101, 37};
    for (int ti = 0; ti < 2; ti++) {
        const pk_npy_type t = ti ? PK_NPY_F64 : PK_NPY_F32;
        void *x = random_array(t, n, PK_TEST_UNIFORM);
        cli_save("x.npy", t, 1, &n, x);
        long double ss = 0;
        int64_t best = 0;
        for (int64_t i = 0; i < n; i++) {
            double v = pk_test_getf((pk_dtype)t, x, i);
            ss += (long double)v * v;
            if (fabs(v) > fabs(pk_test_getf((pk_dtype)t, x, best))) best = i;
        }
        const double tol = ti ? 1e-13 : 1e-5;
        int rc = PK("reduce", "x.npy", "--expr", "x*x", "--final", "sqrt(r)", "--json");
        const double norm = (double)sqrtl(ss);
        PK_CHECK(rc == 0 && fabs(cli_json_num("value") - norm) <= tol * norm &&
                     strstr(cli_out, "\"what\": \"value map x*x, combine a+b, identity 0, final "
                                     "sqrt(r)\""), "2-norm %s: %s %s", pk_npy_type_name(t),
                 cli_out, cli_err);
        rc = PK("reduce", "x.npy", "--map", "fabs(x)", "--combine", "fmax(a,b)", "--identity",
                "nan", "--arg", "-o", "r.npy");
        pk_npy_array a;
        const int64_t *idx = cli_load(&a, "r.npy", PK_NPY_I64, 0, NULL);
        PK_CHECK(rc == 0 && idx && *idx == best, "arg max |x| %s: %s", pk_npy_type_name(t), cli_err);
        pk_npy_close(&a);
        rc = PK("reduce", "x.npy", "--expr", "x", "--combine", "fmin(a,b)", "--identity", "nan",
                "--json");
        unsigned char want[8];
        reference(PK_MIN, (pk_dtype)t, x, n, 1, want);
        PK_CHECK(rc == 0 && (float)cli_json_num("value") == (float)pk_test_getf((pk_dtype)t, want, 0) &&
                     (ti == 0 || cli_json_num("value") == pk_test_getf((pk_dtype)t, want, 0)),
                 "fmin %s: %s", pk_npy_type_name(t), cli_out);
        /* along both axes: the sum of squares of each column and row */
        cli_save("m.npy", t, 2, shape, x);
        for (int axis = 0; axis < 2; axis++) {
            const int64_t nout = shape[1 - axis];
            rc = PK("reduce", "m.npy", "--expr", "x*x", "--acc", "f64", "--axis", axis ? "1" : "0",
                    "-o", "r.npy");
            const double *got = cli_load(&a, "r.npy", PK_NPY_F64, 1, &nout);
            for (int64_t j = 0; rc == 0 && got && j < nout; j++) {
                long double s = 0;
                for (int64_t l = 0; l < shape[axis]; l++) {
                    double v = pk_test_getf((pk_dtype)t, x, axis ? j * shape[1] + l : l * shape[1] + j);
                    s += (long double)v * v;
                }
                PK_CHECK(fabs(got[j] - (double)s) <= 1e-13 * (double)s, "axis %d [%lld]", axis,
                         (long long)j);
            }
            PK_CHECK(rc == 0, "axis %d: %s", axis, cli_err);
            pk_npy_close(&a);
        }
        free(x);
    }
    /* i, the index: 0 + 1 + ... + (n-1), exact in f64; integer input */
    int32_t *ints = pk_test_alloc((size_t)n * 4);
    for (int64_t i = 0; i < n; i++) ints[i] = (int32_t)(i % 7) - 3;
    cli_save("i.npy", PK_NPY_I32, 1, &n, ints);
    int rc = PK("reduce", "i.npy", "--expr", "i", "--json");
    PK_CHECK(rc == 0 && cli_json_num("value") == (double)n * (double)(n - 1) / 2, "%s", cli_out);
    long long isum = 0;
    for (int64_t i = 0; i < n; i++) isum += ints[i];
    rc = PK("reduce", "i.npy", "--expr", "x", "--json");
    PK_CHECK(rc == 0 && cli_json_num("value") == (double)isum, "int input: %s", cli_out);
    free(ints);
    /* an expression that does not compile: pk's message with the position */
    int before = cli_entries();
    rc = PK("reduce", "i.npy", "--expr", "x*", "-o", "r.npy");
    PK_CHECK(rc == 2 && cli_lines(cli_err) == 1 && strstr(cli_err, "position 3") &&
                 cli_entries() == before, "compile error: %d %s", rc, cli_err);
}

static void test(void)
{
    test_whole();
    test_axes();
    test_edges();
    test_expr();
}

int main(int argc, char **argv) { return cli_main(argc, argv, "test_cli_reduce", test); }
