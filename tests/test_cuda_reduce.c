/* pk_reduce on the CUDA backend: every op and dtype against a host reference
 * in higher precision, at sizes around the kernel's boundaries (vector,
 * block, slice, staging chunk), with inputs and outputs in host and device
 * memory; NaN and Inf; the same bits on every run, for host and device
 * inputs and for unaligned device pointers; agreement with the CPU backend
 * within one f32 ulp on f32 sums. */
#include "cuda_util.h"

static const int64_t sizes[] = {0,    1,     2,     3,     4,     5,      7,
                                31,   255,   256,   257,   1023,  1024,   1025,
                                4095, 4096,  4097,  16383, 16384, 16385,  65537,
                                262147, 1000003, 3000001};
#define NSIZES (int)(sizeof sizes / sizeof sizes[0])

/* Run pk_reduce with x in host or device memory and the result in host or
 * device memory; the result lands in res (host). */
static pk_status run(pk_ctx *ctx, pk_op op, pk_dtype t, const void *hx,
                     const void *dx, int64_t n, int in_dev, int out_dev,
                     void *res)
{
    size_t osz = cu_size(pk_reduce_result_dtype(op, t));
    const void *x = in_dev ? dx : hx;
    if (!out_dev) return pk_reduce(ctx, op, t, x, n, res);
    void *d = cu_dev(16);
    pk_status s = pk_reduce(ctx, op, t, x, n, d);
    if (s == PK_OK) s = pk_ctx_sync(ctx);
    cu_get(res, d, osz);
    cu_free(d);
    return s;
}

static void fill_for(pk_op op, pk_dtype t, void *x, int64_t n)
{
    if (op == PK_PROD) cu_fill(t, x, n, 0.9, 1.1);
    else cu_fill(t, x, n, -1.0, 1.0);
}

/* PK_TEST_QUICK (set under compute-sanitizer): small sizes only. */
static int64_t max_n(void) { return getenv("PK_TEST_QUICK") ? 70000 : INT64_MAX; }

static void check_all(pk_ctx *ctx)
{
    char why[256];
    for (int ti = 0; ti < PK_DTYPE_COUNT; ti++) {
        pk_dtype t = (pk_dtype)ti;
        for (int oi = 0; oi < PK_OP_COUNT; oi++) {
            pk_op op = (pk_op)oi;
            for (int si = 0; si < NSIZES; si++) {
                int64_t n = sizes[si];
                if (n > max_n()) continue;
                if (n == 0 && op != PK_SUM && op != PK_PROD) continue;
                size_t bytes = (size_t)n * cu_size(t);
                void *hx = cu_host(bytes);
                fill_for(op, t, hx, n);
                void *dx = NULL;
                if (CU_HAVE_RT) {
                    dx = cu_dev(bytes);
                    cu_put(dx, hx, bytes);
                }
                unsigned char first[16] = {0};
                int combos = CU_HAVE_RT ? 4 : 1;
                for (int c = 0; c < combos; c++) {
                    int in_dev = c & 1, out_dev = c >> 1;
                    if (n > 65537 && in_dev != out_dev) continue;
                    unsigned char res[16], again[16];
                    memset(res, 0xA5, sizeof res);
                    pk_status s = run(ctx, op, t, hx, dx, n, in_dev, out_dev, res);
                    PK_CHECK(s == PK_OK, "%s %s n=%lld in_dev=%d out_dev=%d: %s: %s",
                             pk_op_name(op), pk_dtype_name(t), (long long)n, in_dev,
                             out_dev, pk_status_str(s), pk_ctx_error(ctx));
                    if (s) continue;
                    PK_CHECK(cu_check(op, t, hx, n, 1, res, why, sizeof why),
                             "%s %s n=%lld in_dev=%d out_dev=%d: %s", pk_op_name(op),
                             pk_dtype_name(t), (long long)n, in_dev, out_dev, why);
                    size_t osz = cu_size(pk_reduce_result_dtype(op, t));
                    if (c == 0) memcpy(first, res, osz);
                    /* Same bits: again, and for every pointer kind. */
                    PK_CHECK(memcmp(first, res, osz) == 0,
                             "%s %s n=%lld: in_dev=%d out_dev=%d differs from host/host",
                             pk_op_name(op), pk_dtype_name(t), (long long)n, in_dev,
                             out_dev);
                    run(ctx, op, t, hx, dx, n, in_dev, out_dev, again);
                    PK_CHECK(memcmp(again, res, osz) == 0,
                             "%s %s n=%lld: second run differs", pk_op_name(op),
                             pk_dtype_name(t), (long long)n);
                }
                if (dx) cu_free(dx);
                free(hx);
            }
        }
    }
}

/* NaN and Inf in float inputs, in host and device memory. */
static void check_special(pk_ctx *ctx)
{
    char why[256];
    const int64_t ns[] = {1, 5, 1000, 100003};
    for (int ti = 0; ti < 2; ti++) {
        pk_dtype t = ti ? PK_F64 : PK_F32;
        for (int ni = 0; ni < 4; ni++) {
            int64_t n = ns[ni];
            size_t bytes = (size_t)n * cu_size(t);
            for (int kind = 0; kind < 4; kind++) {
                void *hx = cu_host(bytes);
                cu_fill(t, hx, n, -1.0, 1.0);
                int64_t p1 = cu_below(n), p2 = cu_below(n);
                if (kind == 0) { /* two NaNs */
                    cu_setf(t, hx, p1, NAN);
                    cu_setf(t, hx, p2, NAN);
                } else if (kind == 1) { /* +Inf */
                    cu_setf(t, hx, p1, INFINITY);
                } else if (kind == 2) { /* +Inf and -Inf */
                    cu_setf(t, hx, p1, INFINITY);
                    cu_setf(t, hx, p2, p2 == p1 ? INFINITY : -INFINITY);
                } else { /* overflow of finite values */
                    cu_setf(t, hx, p1, ti ? DBL_MAX : FLT_MAX);
                    cu_setf(t, hx, p2, ti ? DBL_MAX : FLT_MAX);
                }
                void *dx = NULL;
                if (CU_HAVE_RT) {
                    dx = cu_dev(bytes);
                    cu_put(dx, hx, bytes);
                }
                for (int oi = 0; oi < PK_OP_COUNT; oi++) {
                    pk_op op = (pk_op)oi;
                    if (op == PK_PROD) continue;
                    for (int in_dev = 0; in_dev <= CU_HAVE_RT; in_dev++) {
                        unsigned char res[16];
                        pk_status s = run(ctx, op, t, hx, dx, n, in_dev, 0, res);
                        PK_CHECK(s == PK_OK, "special %d %s %s: %s", kind, pk_op_name(op),
                                 pk_dtype_name(t), pk_ctx_error(ctx));
                        bool ok = true;
                        if (kind == 3 && op == PK_SUM && ti == 1) {
                            /* f64: DBL_MAX + DBL_MAX overflows to Inf. */
                            ok = isinf(cu_getf(t, res, 0)) || p1 == p2;
                            snprintf(why, sizeof why, "%g", cu_getf(t, res, 0));
                        } else if (kind == 3 && op == PK_SUM) {
                            /* f32 accumulates in f64: no overflow there, the
                             * result rounds to Inf in f32 (as on the CPU). */
                            ok = isinf(cu_getf(t, res, 0)) ||
                                 (p1 == p2 && cu_getf(t, res, 0) > 3e38);
                            snprintf(why, sizeof why, "%g", cu_getf(t, res, 0));
                        } else {
                            ok = cu_check(op, t, hx, n, 1, res, why, sizeof why);
                        }
                        PK_CHECK(ok, "special %d %s %s n=%lld in_dev=%d: %s", kind,
                                 pk_op_name(op), pk_dtype_name(t), (long long)n, in_dev,
                                 why);
                    }
                }
                if (dx) cu_free(dx);
                free(hx);
            }
        }
    }
}

/* Hard sums: two cancelling giants among small values, and rare giants
 * among O(1) values: +-1e10 for f32 (a 2^57 span: f64 alone loses the small
 * ones, and it is within the 2^77 that f32 sums keep exactly, f32 TwoSum
 * with f64 error terms: docs/ARCHITECTURE.md "Accuracy"), +-1e20 for f64.
 * Whole-array and both axes, within one ulp of the exact sum (f32) or the
 * double-double bound (f64): the contract is NumPy's pairwise error or
 * better. */
static void check_accuracy(pk_ctx *ctx)
{
    char why[256];
    const int64_t cols = 97;
    for (int ti = 0; ti < 2; ti++) {
        pk_dtype t = ti ? PK_F64 : PK_F32;
        size_t sz = cu_size(t);
        for (int kind = 0; kind < 2; kind++) {
            int64_t rows = 1031, n = rows * cols;
            void *x = cu_host((size_t)n * sz);
            double big = kind == 0 ? (ti ? 1e300 : 1e30) : (ti ? 1e20 : 1e10);
            for (int64_t i = 0; i < n; i++) {
                double v = pk_test_uniform(-1.0, 1.0);
                if (kind == 0 && (i == 3 || i == n - 5)) v = i == 3 ? big : -big;
                if (kind == 1 && cu_below(64) == 0) v = (pk_test_next() & 1) ? big : -big;
                cu_setf(t, x, i, v);
            }
            unsigned char r[8];
            PK_CHECK(pk_reduce(ctx, PK_SUM, t, x, n, r) == PK_OK, "%s", pk_ctx_error(ctx));
            PK_CHECK(cu_check(PK_SUM, t, x, n, 1, r, why, sizeof why), "accuracy %s kind %d: %s",
                     pk_dtype_name(t), kind, why);
            for (int axis = 0; axis < 2; axis++) {
                int64_t nout = axis ? rows : cols, red = axis ? cols : rows;
                char *out = cu_host((size_t)nout * sz);
                PK_CHECK(pk_reduce_axis(ctx, PK_SUM, t, x, rows, cols, cols, axis, out) == PK_OK,
                         "%s", pk_ctx_error(ctx));
                for (int64_t i = 0; i < nout; i++) {
                    const char *b = (const char *)x + (axis ? i * cols : i) * (int64_t)sz;
                    bool ok = cu_check(PK_SUM, t, b, red, axis ? 1 : cols, out + i * (int64_t)sz,
                                       why, sizeof why);
                    PK_CHECK(ok, "accuracy %s kind %d axis %d out[%lld]: %s", pk_dtype_name(t),
                             kind, axis, (long long)i, why);
                    if (!ok) break;
                }
                free(out);
            }
            free(x);
        }
    }
}

/* f32 sums: CPU and CUDA within one ulp of f32. */
static void check_cpu_agreement(pk_ctx *ctx)
{
    pk_ctx *cpu = NULL;
    if (pk_ctx_create(&cpu, PK_BACKEND_CPU, 0) != PK_OK) {
        PK_CHECK(0, "CPU context: %s", pk_last_create_error());
        return;
    }
    for (int si = 0; si < NSIZES; si++) {
        int64_t n = sizes[si];
        float *x = cu_host((size_t)n * 4);
        for (int64_t i = 0; i < n; i++)
            x[i] = (float)pk_test_uniform(-1.0, 1.0) * (float)(1 + (i % 7));
        float a = 0, b = 0;
        PK_CHECK(pk_reduce(ctx, PK_SUM, PK_F32, x, n, &a) == PK_OK, "%s", pk_ctx_error(ctx));
        PK_CHECK(pk_reduce(cpu, PK_SUM, PK_F32, x, n, &b) == PK_OK, "%s", pk_ctx_error(cpu));
        float ulp = nextafterf(fabsf(b), INFINITY) - fabsf(b);
        PK_CHECK(fabsf(a - b) <= ulp, "n=%lld: cuda %.9g cpu %.9g", (long long)n, a, b);
        free(x);
    }
    pk_ctx_destroy(cpu);
}

/* f32 sums are rounded once, as on the CPU: 1 + 2^-24 + 2^-60 (a float
 * midpoint after rounding to double) is 1 + 2^-23, through pk_reduce,
 * pk_dot with ones and both axes, at lengths that take different kernels. */
static void check_rounded_once(pk_ctx *ctx)
{
    static const int64_t lens[] = {3, 1000, 100003};
    for (int li = 0; li < 3; li++) {
        const int64_t n = lens[li];
        float *x = cu_host((size_t)n * 4), *ones = cu_host((size_t)n * 4), r[4] = {0};
        for (int64_t i = 0; i < n; i++) x[i] = 0, ones[i] = 1;
        x[0] = 1.0f, x[1] = 0x1p-24f, x[2] = 0x1p-60f;
        pk_status s[4] = {pk_reduce(ctx, PK_SUM, PK_F32, x, n, &r[0]),
                          pk_dot(ctx, PK_F32, n, x, ones, &r[1]),
                          pk_reduce_axis(ctx, PK_SUM, PK_F32, x, 1, n, n, 1, &r[2]),
                          pk_reduce_axis(ctx, PK_SUM, PK_F32, x, n, 1, 1, 0, &r[3])};
        for (int k = 0; k < 4; k++)
            PK_CHECK(s[k] == PK_OK && r[k] == 0x1.000002p0f, "n=%lld via %d: %a (%s)",
                     (long long)n, k, (double)r[k], pk_ctx_error(ctx));
        free(x), free(ones);
    }
}

/* Unaligned device pointers take k_slices's scalar loads, aligned whole
 * arrays of up to 32 slices the short kernel k_small, larger ones k_slices's
 * vector loads: all the same tree, so the same bits. Sizes span one slice,
 * a few, 32 and more (f32 and f64); data plain, with an Inf, and with f32
 * giants whose TwoSum overflows (the redo); results to host and device. */
static void unaligned_case(pk_ctx *ctx, pk_dtype t, int64_t n, int kind)
{
    size_t sz = cu_size(t), bytes = (size_t)n * sz;
    void *hx = cu_host(bytes), *hy = cu_host(bytes);
    cu_fill(t, hx, n, -1.0, 1.0);
    cu_fill(t, hy, n, -1.0, 1.0);
    if (kind == 1 && cu_is_float(t)) cu_setf(t, hx, cu_below(n), INFINITY);
    if (kind == 2 && cu_is_float(t))
        for (int64_t i = 0; i < n; i += 1 + cu_below(7)) cu_setf(t, hx, i, (i & 1 ? -1 : 1) * 3e38);
    char *d = cu_dev(2 * bytes + 32), *u = cu_dev(2 * bytes + 32), *res = cu_dev(16);
    cu_put(d, hx, bytes);
    cu_put(d + bytes + 16 - bytes % 16, hy, bytes);
    cu_put(u + sz, hx, bytes);
    cu_put(u + sz + bytes + 16 - bytes % 16, hy, bytes);
    for (int oi = 0; oi <= PK_OP_COUNT; oi++) { /* PK_OP_COUNT: the dot */
        bool dot = oi == PK_OP_COUNT;
        if (dot && !cu_is_float(t)) continue;
        pk_op op = dot ? PK_SUM : (pk_op)oi;
        unsigned char r[4][16] = {{0}};
        size_t osz = cu_size(pk_reduce_result_dtype(op, t));
        for (int v = 0; v < 4; v++) { /* aligned/unaligned x host/device result */
            const char *x = v & 1 ? u + sz : d;
            void *out = v & 2 ? (void *)res : (void *)r[v];
            pk_status st = dot ? pk_dot(ctx, t, n, x, x + bytes + 16 - bytes % 16, out)
                               : pk_reduce(ctx, op, t, x, n, out);
            PK_CHECK(st == PK_OK, "%s", pk_ctx_error(ctx));
            if (v & 2) cu_get(r[v], res, osz);
        }
        for (int v = 1; v < 4; v++)
            PK_CHECK(memcmp(r[0], r[v], osz) == 0,
                     "%s %s n=%lld data %d: path %d gives other bits than aligned", dot ? "dot" :
                     pk_op_name(op), pk_dtype_name(t), (long long)n, kind, v);
    }
    cu_free(d), cu_free(u), cu_free(res);
    free(hx), free(hy);
}

static void check_unaligned(pk_ctx *ctx)
{
    if (!CU_HAVE_RT) return;
    static const int64_t sizes[] = {1, 3, 1000, 4095, 4097, 8191, 65536, 65539,
                                    131071, 131075, 100003, 262147};
    for (int ti = 0; ti < PK_DTYPE_COUNT; ti++)
        for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++)
            for (int kind = 0; kind < 3; kind++)
                if (kind == 0 || (ti <= PK_F64 && k % 3 == 0))
                    unaligned_case(ctx, (pk_dtype)ti, sizes[k], kind);
}

int main(void)
{
    pk_test_init("test_cuda_reduce");
    pk_ctx *ctx = cu_ctx();
    printf("device: %s\n", pk_ctx_describe(ctx));
    cu_note_no_rt();
    check_all(ctx);
    check_special(ctx);
    check_accuracy(ctx);
    check_cpu_agreement(ctx);
    check_rounded_once(ctx);
    check_unaligned(ctx);
    pk_ctx_destroy(ctx);
    return pk_test_finish("test_cuda_reduce");
}
