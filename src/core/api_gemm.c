/* pk_gemm's argument checks: everything is validated here before a backend
 * sees it. */
#include "check.h"

pk_status pk_gemm(pk_ctx *ctx, pk_dtype t, pk_gemm_mode mode, pk_trans ta,
                  pk_trans tb, int64_t m, int64_t n, int64_t k,
                  const void *alpha, const void *A, int64_t lda, const void *B,
                  int64_t ldb, const void *beta, void *C, int64_t ldc)
{
    static const char fn[] = "pk_gemm";
    PK__CHECK_CTX(ctx, fn);
    CHECK(t == PK_F32 || t == PK_F64, "%s: dtype %s: only f32 and f64", fn,
          pk_dtype_name(t));
    CHECK((unsigned)mode < PK_GEMM_MODE_COUNT, "%s: unknown mode %d", fn,
          (int)mode);
    CHECK(t == PK_F32 || mode == PK_GEMM_FP32,
          "%s: mode %s needs dtype f32 (f64 runs in mode fp32 only)", fn,
          pk_gemm_mode_name(mode));
    CHECK(ta == PK_NO_TRANS || ta == PK_TRANS, "%s: ta = %d is not a pk_trans",
          fn, (int)ta);
    CHECK(tb == PK_NO_TRANS || tb == PK_TRANS, "%s: tb = %d is not a pk_trans",
          fn, (int)tb);
    CHECK(m >= 0 && n >= 0 && k >= 0, "%s: m = %lld, n = %lld, k = %lld: negative",
          fn, (long long)m, (long long)n, (long long)k);
    CHECK(alpha && beta, "%s: alpha or beta is NULL", fn);
    size_t size = pk__dtypes[t].size;
    /* alpha and beta are read once, here: they may lie inside C, which the
     * backends overwrite tile by tile. */
    union { float f32; double f64; } alpha_v, beta_v;
    if (t == PK_F32)
        alpha_v.f32 = *(const float *)alpha, beta_v.f32 = *(const float *)beta;
    else
        alpha_v.f64 = *(const double *)alpha, beta_v.f64 = *(const double *)beta;
    int64_t ab = 0, bb = 0, cb = 0;
    pk_status s;
    /* Stored shapes: A is m x k (k x m transposed), B is k x n (n x k). */
    if ((s = check_matrix(ctx, fn, "A", A, ta ? k : m, ta ? m : k, lda, size, &ab)))
        return s;
    if ((s = check_matrix(ctx, fn, "B", B, tb ? n : k, tb ? k : n, ldb, size, &bb)))
        return s;
    if ((s = check_matrix(ctx, fn, "C", C, m, n, ldc, size, &cb))) return s;
    CHECK(!ranges_overlap(A, ab, C, cb) && !ranges_overlap(B, bb, C, cb),
          "%s: C overlaps A or B", fn);
    /* Refused for every shape, empty ones included (the backend itself
     * refuses it too). */
    if (ctx->backend == PK_BACKEND_CPU && mode == PK_GEMM_TF32)
        return pk__fail(ctx, PK_ERR_UNSUPPORTED,
                        "%s: mode tf32 needs tensor cores; the CPU backend has "
                        "none (use fp32 or fp32_accurate)", fn);
    if (m == 0 || n == 0) return PK_OK;
    CHECK_SLOT(gemm, fn);
    pk__gemm_args a = {.t = t, .mode = mode, .ta = ta, .tb = tb, .m = m,
                       .n = n, .k = k, .alpha = &alpha_v, .beta = &beta_v, .A = A,
                       .B = B, .C = C, .lda = lda, .ldb = ldb, .ldc = ldc};
    return ctx->ops->gemm(ctx, &a);
}
