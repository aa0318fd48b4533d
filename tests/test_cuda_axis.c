/* pk_reduce_axis on the CUDA backend: every op and dtype, both axes, on
 * shapes that take each kernel path (short rows, long rows split over
 * blocks, narrow and wide column reductions, row blocks combined by the last
 * block), with ld > cols, host and device inputs and outputs, against a
 * host reference per row or column; the same bits on every run. */
#include "cuda_util.h"

typedef struct shape {
    int64_t rows, cols, ld;
} shape;

static const shape shapes[] = {
    {1, 1, 1},       {3, 1, 1},        {1, 5, 5},       {2, 2, 2},
    {7, 3, 5},       {100, 2, 2},      {1000, 2, 3},    {33, 100, 100},
    {5, 2047, 2047}, {3, 2048, 2050},  {3, 2049, 2049}, {2, 5000, 5000},
    {4, 20000, 20003}, {1000, 300, 300}, {20000, 2, 2}, {2, 100000, 100000},
    {257, 1031, 1040}, {300, 1024, 1024}, {3000, 4100, 4100}, {70001, 3, 3},
    {0, 5, 5},       {5, 0, 1},
};
#define NSHAPES (int)(sizeof shapes / sizeof shapes[0])

static void check_shape(pk_ctx *ctx, const shape *sh)
{
    char why[256];
    const int64_t rows = sh->rows, cols = sh->cols, ld = sh->ld;
    const int64_t count = rows > 0 && cols > 0 ? (rows - 1) * ld + cols : 0;
    for (int ti = 0; ti < PK_DTYPE_COUNT; ti++) {
        pk_dtype t = (pk_dtype)ti;
        size_t sz = cu_size(t), bytes = (size_t)count * sz;
        for (int oi = 0; oi < PK_OP_COUNT; oi++) {
            pk_op op = (pk_op)oi;
            void *hx = cu_host(bytes);
            if (op == PK_PROD) cu_fill(t, hx, count, 0.9, 1.1);
            else cu_fill(t, hx, count, -1.0, 1.0);
            void *dx = NULL;
            if (CU_HAVE_RT) {
                dx = cu_dev(bytes);
                cu_put(dx, hx, bytes);
            }
            size_t osz = cu_size(pk_reduce_result_dtype(op, t));
            for (int axis = 0; axis < 2; axis++) {
                int64_t nout = axis == 0 ? cols : rows, red = axis == 0 ? rows : cols;
                if (red == 0 && nout > 0 && op != PK_SUM && op != PK_PROD) continue;
                size_t obytes = (size_t)nout * osz;
                void *first = cu_host(obytes), *res = cu_host(obytes);
                void *dout = CU_HAVE_RT ? cu_dev(obytes) : NULL;
                for (int c = 0; c < (CU_HAVE_RT ? 4 : 1); c++) {
                    int in_dev = c & 1, out_dev = c >> 1;
                    memset(res, 0x5A, obytes);
                    for (int rep = 0; rep < 2; rep++) {
                        pk_status s = pk_reduce_axis(ctx, op, t, in_dev ? dx : hx, rows, cols,
                                                     ld, axis, out_dev ? dout : res);
                        if (s == PK_OK && out_dev) {
                            s = pk_ctx_sync(ctx);
                            cu_get(res, dout, obytes);
                        }
                        PK_CHECK(s == PK_OK, "%s %s %lldx%lld ld %lld axis %d combo %d: %s",
                                 pk_op_name(op), pk_dtype_name(t), (long long)rows,
                                 (long long)cols, (long long)ld, axis, c, pk_ctx_error(ctx));
                        if (s) break;
                        if (c == 0 && rep == 0) memcpy(first, res, obytes);
                        PK_CHECK(memcmp(first, res, obytes) == 0,
                                 "%s %s %lldx%lld axis %d combo %d rep %d: other bits",
                                 pk_op_name(op), pk_dtype_name(t), (long long)rows,
                                 (long long)cols, axis, c, rep);
                    }
                }
                int bad = 0;
                for (int64_t i = 0; i < nout && bad < 3; i++) {
                    const char *base = (const char *)hx + (axis == 0 ? i : i * ld) * (int64_t)sz;
                    bool ok = cu_check(op, t, base, red, axis == 0 ? ld : 1,
                                       (const char *)first + i * (int64_t)osz, why, sizeof why);
                    PK_CHECK(ok, "%s %s %lldx%lld ld %lld axis %d out[%lld]: %s", pk_op_name(op),
                             pk_dtype_name(t), (long long)rows, (long long)cols, (long long)ld,
                             axis, (long long)i, why);
                    bad += !ok;
                }
                if (dout) cu_free(dout);
                free(first), free(res);
            }
            if (dx) cu_free(dx);
            free(hx);
        }
    }
}

/* NaN in one column and one row: min/max/argmin/argmax and sum see it. */
static void check_nan(pk_ctx *ctx)
{
    char why[256];
    const shape shs[] = {{500, 3, 3}, {40, 3000, 3000}, {3000, 40, 41}};
    for (int k = 0; k < 3; k++) {
        const int64_t rows = shs[k].rows, cols = shs[k].cols, ld = shs[k].ld;
        const int64_t count = (rows - 1) * ld + cols;
        float *x = cu_host((size_t)count * 4);
        cu_fill(PK_F32, x, count, -1.0, 1.0);
        x[cu_below(rows) * ld + cu_below(cols)] = NAN;
        x[cu_below(rows) * ld + cu_below(cols)] = NAN;
        for (int axis = 0; axis < 2; axis++)
            for (int oi = 0; oi < PK_OP_COUNT; oi++) {
                pk_op op = (pk_op)oi;
                if (op == PK_PROD) continue;
                int64_t nout = axis == 0 ? cols : rows, red = axis == 0 ? rows : cols;
                size_t osz = cu_size(pk_reduce_result_dtype(op, PK_F32));
                char *out = cu_host((size_t)nout * osz);
                PK_CHECK(pk_reduce_axis(ctx, op, PK_F32, x, rows, cols, ld, axis, out) == PK_OK,
                         "%s", pk_ctx_error(ctx));
                for (int64_t i = 0; i < nout; i++) {
                    const float *b = axis == 0 ? x + i : x + i * ld;
                    bool ok = cu_check(op, PK_F32, b, red, axis == 0 ? ld : 1,
                                       out + i * (int64_t)osz, why, sizeof why);
                    PK_CHECK(ok, "nan %s axis %d out[%lld]: %s", pk_op_name(op), axis,
                             (long long)i, why);
                    if (!ok) break;
                }
                free(out);
            }
        free(x);
    }
}

/* f32 sums on the narrow paths (n x 2 and n x 4 read flat; 2 x n, one
 * addition a column): +Inf in column 0; where there are more than two
 * columns NaN in column 1, +Inf with -Inf in column 2, and in column 3 two
 * FLT_MAX that (with more rows) two -FLT_MAX cancel (an f32 running sum
 * overflows, the exact sum does not); -0 + -0 in column 4 (+0, as every
 * sum of -0 values). Each against the reference; and no column's bits may
 * change when column 0's Inf is made finite (the flat kernel redoes only
 * the lanes whose f32 sum is not finite). */
static void check_narrow_specials(pk_ctx *ctx)
{
    char why[256];
    const shape shs[] = {{20000, 2, 2}, {6000, 4, 4}, {2, 5000, 5000}, {2, 7, 7}};
    for (int k = 0; k < 4; k++) {
        const int64_t rows = shs[k].rows, cols = shs[k].cols, n = rows * cols;
        float *x = cu_host((size_t)n * 4), *out = cu_host((size_t)cols * 4);
        float *out2 = cu_host((size_t)cols * 4);
        cu_fill(PK_F32, x, n, -1.0, 1.0);
        const int64_t r0 = cu_below(rows / 2), r1 = rows / 2 + cu_below(rows - rows / 2);
        x[r0 * cols] = INFINITY;
        if (cols > 2) {
            x[r1 * cols + 1] = NAN;
            x[r0 * cols + 2] = INFINITY;
            x[r1 * cols + 2] = -INFINITY;
            /* Rows 0, 256, 512, 768 of n x 4 are one thread's (today's plan):
             * its f32 sum overflows and is redone. */
            const int64_t q = rows > 768 ? 256 : 1;
            x[0 * q * cols + 3] = x[1 * q * cols + 3] = FLT_MAX;
            if (rows > 3) x[2 * q * cols + 3] = x[3 * q * cols + 3] = -FLT_MAX;
        }
        if (cols > 4) x[0 * cols + 4] = x[1 * cols + 4] = -0.0f;
        PK_CHECK(pk_reduce_axis(ctx, PK_SUM, PK_F32, x, rows, cols, cols, 0, out) == PK_OK, "%s",
                 pk_ctx_error(ctx));
        for (int64_t c = 0; c < cols; c++) {
            if (c == 3 && rows == 2) { /* FLT_MAX + FLT_MAX: past the reference's range */
                PK_CHECK(out[3] == INFINITY, "2 rows: FLT_MAX + FLT_MAX gave %g", (double)out[3]);
                continue;
            }
            bool ok = cu_check(PK_SUM, PK_F32, x + c, rows, cols, out + c, why, sizeof why);
            PK_CHECK(ok, "specials %lldx%lld column %lld: %s", (long long)rows, (long long)cols,
                     (long long)c, why);
        }
        if (cols > 4)
            PK_CHECK(out[4] == 0.0f && !signbit(out[4]), "2 rows: -0 + -0 gave %g (sign bit %d)",
                     (double)out[4], signbit(out[4]) != 0);
        x[r0 * cols] = 0.5f;
        PK_CHECK(pk_reduce_axis(ctx, PK_SUM, PK_F32, x, rows, cols, cols, 0, out2) == PK_OK, "%s",
                 pk_ctx_error(ctx));
        for (int64_t c = 1; c < cols; c++)
            PK_CHECK(memcmp(out + c, out2 + c, 4) == 0,
                     "specials %lldx%lld column %lld: %a next to an Inf, %a without",
                     (long long)rows, (long long)cols, (long long)c, (double)out[c],
                     (double)out2[c]);
        free(x), free(out), free(out2);
    }
}

int main(void)
{
    pk_test_init("test_cuda_axis");
    pk_ctx *ctx = cu_ctx();
    cu_note_no_rt();
    int quick = getenv("PK_TEST_QUICK") != NULL; /* under compute-sanitizer */
    for (int i = 0; i < NSHAPES; i++)
        if (!quick || shapes[i].rows * shapes[i].ld <= 300000) check_shape(ctx, &shapes[i]);
    check_nan(ctx);
    check_narrow_specials(ctx);
    pk_test_overflowing_sums(ctx);
    pk_ctx_destroy(ctx);
    return pk_test_finish("test_cuda_axis");
}
