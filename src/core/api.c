/* The public kernel entry points: every argument is checked here, once,
 * before a backend sees it. */
#include "check.h"

pk_status pk_reduce(pk_ctx *ctx, pk_op op, pk_dtype t, const void *x,
                    int64_t n, void *out)
{
    static const char fn[] = "pk_reduce";
    PK__CHECK_CTX(ctx, fn);
    pk_status s = check_op_dtype(ctx, fn, op, t);
    if (s) return s;
    CHECK(n >= 0, "%s: n = %lld < 0", fn, (long long)n);
    int64_t xb, ob;
    if ((s = check_buffer(ctx, fn, "x", x, n, pk__dtypes[t].size, &xb))) return s;
    if ((s = check_buffer(ctx, fn, "out", out, 1,
                          pk__dtypes[pk_reduce_result_dtype(op, t)].size, &ob)))
        return s;
    CHECK(n > 0 || op == PK_SUM || op == PK_PROD,
          "%s: %s of an empty array has no value", fn, pk_op_name(op));
    CHECK(!ranges_overlap(x, xb, out, ob), "%s: out overlaps x", fn);
    return ctx->ops->reduce(ctx, op, t, x, n, out);
}

pk_status pk_reduce_axis(pk_ctx *ctx, pk_op op, pk_dtype t, const void *x,
                         int64_t rows, int64_t cols, int64_t ld, int axis,
                         void *out)
{
    static const char fn[] = "pk_reduce_axis";
    PK__CHECK_CTX(ctx, fn);
    pk_status s = check_op_dtype(ctx, fn, op, t);
    if (s) return s;
    CHECK(rows >= 0 && cols >= 0, "%s: rows = %lld, cols = %lld: negative", fn,
          (long long)rows, (long long)cols);
    CHECK(ld >= cols && ld >= 1, "%s: ld = %lld must be >= max(1, cols = %lld)",
          fn, (long long)ld, (long long)cols);
    CHECK(axis == 0 || axis == 1, "%s: axis = %d must be 0 or 1", fn, axis);
    int64_t count = 0; /* elements spanned by the matrix */
    if (rows > 0 && cols > 0) {
        CHECK(rows - 1 <= (INT64_MAX - cols) / ld,
              "%s: %lld x %lld with ld %lld overflows", fn, (long long)rows,
              (long long)cols, (long long)ld);
        count = (rows - 1) * ld + cols;
    }
    int64_t nout = axis == 0 ? cols : rows;
    int64_t reduced = axis == 0 ? rows : cols;
    int64_t xb, ob;
    if ((s = check_buffer(ctx, fn, "x", x, count, pk__dtypes[t].size, &xb))) return s;
    if ((s = check_buffer(ctx, fn, "out", out, nout,
                          pk__dtypes[pk_reduce_result_dtype(op, t)].size, &ob)))
        return s;
    CHECK(reduced > 0 || nout == 0 || op == PK_SUM || op == PK_PROD,
          "%s: %s along an empty axis has no value", fn, pk_op_name(op));
    CHECK(!ranges_overlap(x, xb, out, ob), "%s: out overlaps x", fn);
    if (nout == 0) return PK_OK;
    return ctx->ops->reduce_axis(ctx, op, t, x, rows, cols, ld, axis, out);
}

static pk_status check_blas_dtype(pk_ctx *ctx, const char *fn, pk_dtype t)
{
    CHECK(t == PK_F32 || t == PK_F64, "%s: dtype %s: only f32 and f64", fn,
          pk_dtype_name(t));
    return PK_OK;
}

pk_status pk_dot(pk_ctx *ctx, pk_dtype t, int64_t n, const void *x,
                 const void *y, void *out)
{
    static const char fn[] = "pk_dot";
    PK__CHECK_CTX(ctx, fn);
    pk_status s = check_blas_dtype(ctx, fn, t);
    if (s) return s;
    CHECK(n >= 0, "%s: n = %lld < 0", fn, (long long)n);
    int64_t xb, yb, ob;
    size_t size = pk__dtypes[t].size;
    if ((s = check_buffer(ctx, fn, "x", x, n, size, &xb))) return s;
    if ((s = check_buffer(ctx, fn, "y", y, n, size, &yb))) return s;
    if ((s = check_buffer(ctx, fn, "out", out, 1, size, &ob))) return s;
    CHECK(!ranges_overlap(x, xb, out, ob) && !ranges_overlap(y, yb, out, ob),
          "%s: out overlaps x or y", fn);
    return ctx->ops->dot(ctx, t, n, x, y, out);
}

pk_status pk_axpy(pk_ctx *ctx, pk_dtype t, int64_t n, const void *alpha,
                  const void *x, void *y)
{
    static const char fn[] = "pk_axpy";
    PK__CHECK_CTX(ctx, fn);
    pk_status s = check_blas_dtype(ctx, fn, t);
    if (s) return s;
    CHECK(n >= 0, "%s: n = %lld < 0", fn, (long long)n);
    CHECK(alpha, "%s: alpha is NULL", fn);
    int64_t xb, yb;
    size_t size = pk__dtypes[t].size;
    if ((s = check_buffer(ctx, fn, "x", x, n, size, &xb))) return s;
    if ((s = check_buffer(ctx, fn, "y", y, n, size, &yb))) return s;
    CHECK(x == y || !ranges_overlap(x, xb, y, yb),
          "%s: x and y overlap without being the same array", fn);
    if (n == 0) return PK_OK;
    return ctx->ops->axpy(ctx, t, n, alpha, x, y);
}
