/* `pk gemm --check` itself (tools/pk/gemm_check.c): a right product passes
 * well inside the bound, a product off by a little in one element, a NaN
 * where the reference has none, or a wrong transposition fails. */
#include "gemm_check.h"
#include "util.h"

#define M 37
#define N 29
#define K 53

static float A[M * K], B[K * N], C0[M * N], C[M * N];

/* C = alpha*A*B + beta*C0 in double, rounded to float (error < 1 ulp). */
static void product(double alpha, double beta)
{
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int l = 0; l < K; l++) s += (double)A[i * K + l] * B[l * N + j];
            C[i * N + j] = (float)(alpha * s + beta * C0[i * N + j]);
        }
}

static double error(int ta, int tb, double alpha, double beta)
{
    gemm_check_args g = {PK_F32, PK_GEMM_FP32, ta, tb, M, N, K, alpha, A, ta ? M : K,
                         B, tb ? K : N, beta, beta != 0 ? C0 : NULL, C};
    double e = NAN;
    PK_CHECK(gemm_max_rel_error(&g, &e) == 0, "the reference allocates");
    return e;
}

int main(void)
{
    pk_test_init("test_gemm_check");
    for (int i = 0; i < M * K; i++) A[i] = (float)pk_test_uniform(-1, 1);
    for (int i = 0; i < K * N; i++) B[i] = (float)pk_test_uniform(-1, 1);
    for (int i = 0; i < M * N; i++) C0[i] = (float)pk_test_uniform(-1, 1);
    const double bound = gemm_error_bound(PK_F32, PK_GEMM_FP32, K);
    PK_CHECK(bound == 2 * (K + 2) * 0x1p-24, "bound %g", bound);
    PK_CHECK(gemm_error_bound(PK_F64, PK_GEMM_FP32, 0) == 4 * 0x1p-53, "f64 bound");
    PK_CHECK(gemm_error_bound(PK_F32, PK_GEMM_TF32, 0) > 4 * 0x1p-10, "tf32 bound");
    product(1.5, -0.5);
    double e = error(0, 0, 1.5, -0.5);
    PK_CHECK(e <= 0x1p-23 && e <= bound, "right product: %g", e);
    const float saved = C[5 * N + 7];
    C[5 * N + 7] = saved + 0.01f; /* |alpha| sum |a||b| is about 20: 5e-4 relative */
    e = error(0, 0, 1.5, -0.5);
    PK_CHECK(e > bound, "one element off by 0.01: %g", e);
    C[5 * N + 7] = NAN;
    PK_CHECK(isinf(error(0, 0, 1.5, -0.5)), "a NaN the reference lacks");
    C[5 * N + 7] = saved;
    PK_CHECK(error(1, 0, 1.5, -0.5) > bound, "A read as transposed");
    product(2, 0);
    PK_CHECK(error(0, 0, 2, 0) <= bound, "beta 0");
    PK_CHECK(error(0, 0, 2, 1) > bound, "a beta*C0 term the result lacks");
    /* NaN in the input: the reference has it too */
    A[0] = NAN;
    product(1, 0);
    PK_CHECK(error(0, 0, 1, 0) <= bound, "NaN rows match");
    /* --check on a product whose reference cannot be allocated says so */
    gemm_check_args huge = {PK_F32, PK_GEMM_FP32, 0, 0, 1, 1 << 15, 1 << 15, 1, A, 1 << 15,
                            B, 1 << 15, 0, NULL, C};
    char text[300];
    gemm_check_nomem_text(text, sizeof text, &huge);
    PK_CHECK(gemm_check_bytes(&huge) == 8.0 * ((1 << 15) + 1073741824.0), "reference bytes %g",
             gemm_check_bytes(&huge));
    PK_CHECK(strncmp(text, "--check: out of memory", 22) == 0 && strstr(text, " 8.6 GB;"), "%s",
             text);
    return pk_test_finish("test_gemm_check");
}
