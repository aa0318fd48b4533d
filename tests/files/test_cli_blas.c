/* `pk dot`, `pk axpy` and `pk gemm` on .npy files against plain-loop
 * references (exact sums, exact axpy rounding, a double GEMM with the
 * standard error bound), their mismatched-input errors and --check.
 * Usage: test_cli_blas PK [cpu|cuda]. */
#include "cli_util.h"

static void *random_floats(pk_npy_type t, int64_t n)
{
    void *x = pk_test_alloc((size_t)n * pk_npy_type_size(t) + 8);
    pk_test_fill((pk_dtype)t, x, n, PK_TEST_UNIFORM);
    return x;
}

static void test_dot(void)
{
    static const int64_t sizes[] = {0, 1, 1000, 100003};
    for (int ti = 0; ti < 2; ti++)
        for (int si = 0; si < 4; si++) {
            const pk_npy_type t = ti ? PK_NPY_F64 : PK_NPY_F32;
            const int64_t n = sizes[si];
            void *x = random_floats(t, n), *y = random_floats(t, n);
            cli_save("x.npy", t, 1, &n, x);
            cli_save("y.npy", t, 1, &n, y);
            pk_test_xsum s; /* the exact sum of exact products */
            pk_test_xsum_init(&s);
            for (int64_t i = 0; i < n; i++) {
                double p, e;
                pk_test_two_prod(pk_test_getf((pk_dtype)t, x, i), pk_test_getf((pk_dtype)t, y, i),
                                 &p, &e);
                pk_test_xsum_add(&s, p);
                pk_test_xsum_add(&s, e);
            }
            const double want = ti ? pk_test_xsum_value(&s) : (float)pk_test_xsum_value(&s);
            int rc = PK("dot", "x.npy", "y.npy", "-o", "d.npy", "--json");
            pk_npy_array a;
            const void *got = cli_load(&a, "d.npy", t, 0, NULL);
            const double g = got ? pk_test_getf((pk_dtype)t, got, 0) : NAN;
            const double ulp = ti ? 0x1p-52 : 0x1p-23;
            const double v = ti ? cli_json_num("value") : (float)cli_json_num("value");
            PK_CHECK(rc == 0 && fabs(g - want) <= ulp * fabs(want) && v == g,
                     "dot %s n=%lld: %.17g, want %.17g: %s", pk_npy_type_name(t), (long long)n, g,
                     want, cli_err);
            pk_npy_close(&a);
            free(x);
            free(y);
        }
    /* mismatches: dtype, length, dimensions */
    const int64_t n3 = 3, n4 = 4, sq[2] = {2, 2};
    cli_save("f.npy", PK_NPY_F32, 1, &n3, (float[]){1, 2, 3});
    cli_save("d.npy", PK_NPY_F64, 1, &n3, (double[]){1, 2, 3});
    cli_save("f4.npy", PK_NPY_F32, 1, &n4, (float[]){1, 2, 3, 4});
    cli_save("m.npy", PK_NPY_F32, 2, sq, (float[]){1, 2, 3, 4});
    cli_save("i.npy", PK_NPY_I32, 1, &n3, (int32_t[]){1, 2, 3});
    int before = cli_entries();
    int rc = PK("dot", "f.npy", "d.npy", "-o", "out.npy");
    CHECK_FAILS(before, "d.npy", rc, "dot dtype mismatch");
    PK_CHECK(strstr(cli_err, "dtype f64 differs from f.npy's f32"), "%s", cli_err);
    rc = PK("dot", "f.npy", "f4.npy", "-o", "out.npy");
    CHECK_FAILS(before, "f4.npy", rc, "dot length mismatch");
    rc = PK("dot", "m.npy", "f4.npy", "-o", "out.npy");
    CHECK_FAILS(before, "m.npy", rc, "dot of 2-D");
    rc = PK("dot", "i.npy", "i.npy", "-o", "out.npy");
    CHECK_FAILS(before, "i.npy", rc, "dot of i32");
}

static void test_axpy(void)
{
    static const int64_t shapes[][3] = {{0}, {1, 1000}, {2, 3, 5}, {1, 0}};
    static const double alphas[] = {2.5, -1, 0, 1.0 / 3};
    char alpha_s[32];
    for (int ti = 0; ti < 2; ti++)
        for (int si = 0; si < 4; si++) {
            const pk_npy_type t = ti ? PK_NPY_F64 : PK_NPY_F32;
            const int ndim = (int)shapes[si][0];
            int64_t n = 1;
            for (int d = 0; d < ndim; d++) n *= shapes[si][1 + d];
            void *x = random_floats(t, n), *y = random_floats(t, n);
            cli_save("x.npy", t, ndim, &shapes[si][1], x);
            cli_save("y.npy", t, ndim, &shapes[si][1], y);
            const double alpha = alphas[si];
            snprintf(alpha_s, sizeof alpha_s, "%.17g", alpha);
            int rc = PK("axpy", "--alpha", alpha_s, "x.npy", "y.npy", "-o", "out.npy");
            pk_npy_array a;
            const void *got = cli_load(&a, "out.npy", t, ndim, &shapes[si][1]);
            int bad = rc != 0 || !got;
            for (int64_t i = 0; !bad && i < n; i++) {
                if (ti) { /* one rounding of the product, one of the sum */
                    double p = alpha * ((const double *)x)[i];
                    bad = ((const double *)got)[i] != p + ((const double *)y)[i];
                } else {
                    float p = (float)alpha * ((const float *)x)[i];
                    bad = ((const float *)got)[i] != p + ((const float *)y)[i];
                }
            }
            PK_CHECK(!bad, "axpy %s shape #%d: status %d %s", pk_npy_type_name(t), si, rc, cli_err);
            pk_npy_close(&a);
            free(x);
            free(y);
        }
    /* x and y the same file; -o naming y (however spelled) updates it in
     * place, as BLAS does; -o naming x is a usage error, x untouched */
    const int64_t n = 4;
    cli_save("y.npy", PK_NPY_F64, 1, &n, (double[]){1, 2, 3, 4});
    int rc = PK("axpy", "y.npy", "y.npy", "--alpha", "3", "-o", "y2.npy");
    pk_npy_array a;
    const double *got = cli_load(&a, "y2.npy", PK_NPY_F64, 1, &n);
    PK_CHECK(rc == 0 && got && got[0] == 4 && got[3] == 16, "axpy x = y: %s", cli_err);
    pk_npy_close(&a);
    unlink(cli_path("y2.npy"));
    rc = PK("axpy", "y.npy", "y.npy", "--alpha", "3", "-o", "./y.npy");
    got = cli_load(&a, "y.npy", PK_NPY_F64, 1, &n);
    PK_CHECK(rc == 2 && got && got[0] == 1 && got[3] == 4 &&
                 STARTS(cli_err, "pk axpy: -o/--output ./y.npy names the input y.npy: "),
             "axpy -o naming x: status %d, %s", rc, cli_err);
    pk_npy_close(&a);
    cli_save("x.npy", PK_NPY_F64, 1, &n, (double[]){1, 1, 1, 1});
    rc = PK("axpy", "x.npy", "y.npy", "--alpha", "3", "-o", "./y.npy");
    got = cli_load(&a, "y.npy", PK_NPY_F64, 1, &n);
    PK_CHECK(rc == 0 && got && got[0] == 4 && got[3] == 7, "axpy in place: status %d, %s", rc,
             cli_err);
    pk_npy_close(&a);
    unlink(cli_path("x.npy"));
    int before = cli_entries();
    cli_save("z.npy", PK_NPY_F64, 1, (int64_t[]){5}, (double[]){1, 2, 3, 4, 5});
    before++;
    rc = PK("axpy", "y.npy", "z.npy", "-o", "out.npy");
    CHECK_FAILS(before, "z.npy", rc, "axpy shape mismatch");
}

/* A GEMM case: m x n from (op(A): m x k, op(B): k x n) with the options. */
static void gemm_case(pk_npy_type t, int64_t m, int64_t n, int64_t k, int ta, int tb,
                      const char *alpha_s, const char *beta_s, int with_c, const char *mode)
{
    const int64_t ashape[2] = {ta ? k : m, ta ? m : k}, bshape[2] = {tb ? n : k, tb ? k : n};
    const int64_t cshape[2] = {m, n};
    void *A = random_floats(t, m * k), *B = random_floats(t, k * n), *C0 = random_floats(t, m * n);
    cli_save("a.npy", t, 2, ashape, A);
    cli_save("b.npy", t, 2, bshape, B);
    cli_save("c0.npy", t, 2, cshape, C0);
    const char *args[24] = {"gemm", "a.npy", "b.npy", "-o", "c.npy", "--check", "--json",
                            "--alpha", alpha_s, "--mode", mode};
    int na = 11;
    if (ta) args[na++] = "--trans-a";
    if (tb) args[na++] = "--trans-b";
    if (with_c) args[na++] = "--c", args[na++] = "c0.npy";
    if (beta_s) args[na++] = "--beta", args[na++] = beta_s;
    args[na] = NULL;
    int rc = cli_run_args(args, 1);
    const double alpha = strtod(alpha_s, NULL), beta = beta_s ? strtod(beta_s, NULL) : with_c;
    pk_npy_array a;
    const void *C = cli_load(&a, "c.npy", t, 2, cshape);
    /* the bound on |C - exact|: 2(k+2)u (|alpha| |A||B| + |beta||C0|) (+4 x 2^-10 for tf32) */
    const double u = t == PK_NPY_F32 ? 0x1p-24 : 0x1p-53;
    const double v = strcmp(mode, "tf32") == 0 ? 0x1p-10 : 0;
    int bad = rc != 0 || !C;
    for (int64_t i = 0; !bad && i < m; i++)
        for (int64_t j = 0; !bad && j < n; j++) {
            long double s = 0;
            double mag = 0;
            for (int64_t l = 0; l < k; l++) {
                double ail = pk_test_getf((pk_dtype)t, A, ta ? l * m + i : i * k + l);
                double blj = pk_test_getf((pk_dtype)t, B, tb ? j * k + l : l * n + j);
                s += (long double)ail * blj;
                mag += fabs(ail * blj);
            }
            double c0 = with_c ? pk_test_getf((pk_dtype)t, C0, i * n + j) : 0;
            long double want = alpha * s + (with_c ? beta * c0 : 0);
            double bound = 2 * ((double)(k + 2) * u + 2 * v) * (fabs(alpha) * mag + fabs(beta * c0));
            double got = pk_test_getf((pk_dtype)t, C, i * n + j);
            bad = !(fabsl(got - want) <= bound + 1e-300);
        }
    PK_CHECK(!bad, "gemm %s %s (%lld, %lld, %lld) ta %d tb %d alpha %s beta %s: status %d %s",
             pk_npy_type_name(t), mode, (long long)m, (long long)n, (long long)k, ta, tb, alpha_s,
             beta_s ? beta_s : "-", rc, cli_err);
    PK_CHECK(rc != 0 || (strstr(cli_out, "\"ok\": true") && cli_json_num("gflops") >= 0),
             "gemm --check: %s", cli_out);
    pk_npy_close(&a);
    free(A);
    free(B);
    free(C0);
}

static void test_gemm(void)
{
    static const int64_t shapes[][3] = {{1, 1, 1}, {17, 13, 29}, {64, 48, 32}, {0, 5, 3},
                                        {5, 0, 3}, {4, 6, 0}, {100, 3, 500}};
    for (int ti = 0; ti < 2; ti++) {
        const pk_npy_type t = ti ? PK_NPY_F64 : PK_NPY_F32;
        for (int s = 0; s < 7; s++)
            gemm_case(t, shapes[s][0], shapes[s][1], shapes[s][2], 0, 0, "1", NULL, 0, "fp32");
        for (int tr = 0; tr < 4; tr++)
            gemm_case(t, 23, 19, 31, tr & 1, tr >> 1, "-0.5", "2", 1, "fp32");
        gemm_case(t, 8, 9, 0, 0, 0, "1", "0.25", 1, "fp32"); /* k = 0: C = beta*C0 */
        gemm_case(t, 8, 9, 10, 0, 0, "2", "0", 1, "fp32"); /* beta 0: C0 unread */
    }
    gemm_case(PK_NPY_F32, 33, 35, 37, 1, 0, "1", NULL, 0, "fp32_accurate");
    int before = cli_entries();
    int rc;
    if (strcmp(cli_backend, "cuda") == 0) {
        gemm_case(PK_NPY_F32, 128, 64, 256, 0, 0, "1", NULL, 0, "tf32");
    } else { /* the CPU has no TF32: a clear failure, no output */
        rc = PK("gemm", "a.npy", "b.npy", "--trans-a", "-o", "new.npy", "--mode", "tf32");
        CHECK_FAILS(before, "", rc, "tf32 on the CPU");
        PK_CHECK(strstr(cli_err, "tf32"), "%s", cli_err);
    }
    /* inner dimensions, C0's shape, dtype and dimensions */
    const int64_t s23[2] = {2, 3}, s22[2] = {2, 2};
    cli_save("a.npy", PK_NPY_F32, 2, s23, (float[]){1, 2, 3, 4, 5, 6});
    cli_save("b.npy", PK_NPY_F32, 2, s22, (float[]){1, 2, 3, 4});
    unlink(cli_path("c.npy"));
    before = cli_entries();
    rc = PK("gemm", "a.npy", "b.npy", "-o", "c.npy");
    CHECK_FAILS(before, "b.npy", rc, "gemm inner dimensions");
    rc = PK("gemm", "a.npy", "a.npy", "--trans-b", "--c", "b.npy", "-o", "c.npy");
    PK_CHECK(rc == 0, "a a^T: %s", cli_err);
    rc = PK("gemm", "a.npy", "a.npy", "--trans-a", "--c", "b.npy", "-o", "c.npy");
    CHECK_FAILS(before + 1, "b.npy", rc, "gemm C0 shape");
    rc = PK("gemm", "b.npy", "b.npy", "--c", "b.npy", "--beta", "1", "-o", "c2.npy", "--check");
    PK_CHECK(rc == 0 && strstr(cli_out, "check: max rel err ") && strstr(cli_out, "): ok"),
             "%s %s", cli_out, cli_err);
    unlink(cli_path("c2.npy"));
    /* C updated in place: a a^T + C, with -o naming --c's file */
    cli_save("c.npy", PK_NPY_F32, 2, s22, (float[]){1, 1, 1, 1});
    rc = PK("gemm", "a.npy", "a.npy", "--trans-b", "--c", "c.npy", "--beta", "1", "-o", "./c.npy");
    pk_npy_array m;
    const float *c = cli_load(&m, "c.npy", PK_NPY_F32, 2, s22);
    PK_CHECK(rc == 0 && c && c[0] == 15 && c[1] == 33 && c[2] == 33 && c[3] == 78,
             "gemm C in place: status %d, %s", rc, cli_err);
    pk_npy_close(&m);
}

static void test(void)
{
    test_dot();
    test_axpy();
    test_gemm();
}

int main(int argc, char **argv) { return cli_main(argc, argv, "test_cli_blas", test); }
