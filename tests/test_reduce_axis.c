/* pk_reduce_axis: every op x every dtype, both axes, on fixed shapes chosen
 * to hit every code path (1xN, Nx1, 10^5x2, 2x10^5, short and long rows,
 * several row blocks down the columns, ld > cols) and on random shapes,
 * against per-row / per-column references (util.h); NaN inside rows and
 * columns; empty axes (SUM gives 0, PROD 1, MIN and the others fail with
 * PK_ERR_ARG); nothing written past the outputs or into the gaps. */
#include "util.h"

static pk_ctx *ctx;

enum kind { K_UNIFORM, K_SMALL, K_NEARONE, K_NAN, K_COUNT };
static const char *const kind_names[] = {"uniform", "small", "near-one", "with-NaN"};

static void fill(pk_dtype t, void *x, int64_t n, enum kind k)
{
    pk_test_fill(t, x, n, (enum pk_test_kind)k);
}

static void check_shape(pk_dtype t, const void *x, int64_t rows, int64_t cols, int64_t ld,
                        enum kind k)
{
    size_t sz = pk_test_size(t);
    int64_t nmax = rows > cols ? rows : cols;
    unsigned char *out = pk_test_alloc((size_t)(nmax + 2) * 8);
    for (int o = 0; o < PK_TEST_NOPS; o++) {
        pk_op op = pk_test_ops[o];
        /* Float products only on data whose products stay in range. */
        if (op == PK_PROD && pk_test_is_float(t) && (k == K_UNIFORM || k == K_SMALL)) continue;
        size_t osz = pk_test_size(pk_reduce_result_dtype(op, t));
        for (int axis = 0; axis < 2; axis++) {
            int64_t nout = axis ? rows : cols, len = axis ? cols : rows;
            int64_t stride = axis ? 1 : ld;
            memset(out, 0xA5, (size_t)(nmax + 2) * 8);
            pk_status s = pk_reduce_axis(ctx, op, t, x, rows, cols, ld, axis, out);
            char what[96];
            snprintf(what, sizeof what, "axis %d of %lldx%lld ld %lld (%s)", axis,
                     (long long)rows, (long long)cols, (long long)ld, kind_names[k]);
            PK_CHECK(s == PK_OK, "%s %s %s: %s (%s)", pk_op_name(op), pk_dtype_name(t), what,
                     pk_status_str(s), pk_ctx_error(ctx));
            if (s != PK_OK) continue;
            for (size_t b = (size_t)nout * osz; b < (size_t)nout * osz + 16; b++)
                PK_CHECK(out[b] == 0xA5, "%s %s %s: wrote past its %lld outputs",
                         pk_op_name(op), pk_dtype_name(t), what, (long long)nout);
            int before = pk_test_failures;
            /* Every output of up to 4096, else a spread sample and the last. */
            int64_t step = nout <= 4096 ? 1 : nout / 4093;
            for (int64_t i = 0; i < nout && pk_test_failures - before < 3;
                 i = (i + step < nout || i == nout - 1) ? i + step : nout - 1) {
                const char *start = (const char *)x + (axis ? i * ld : i) * (int64_t)sz;
                char w2[128];
                snprintf(w2, sizeof w2, "%s, output %lld", what, (long long)i);
                pk_test_expect(op, t, start, len, stride, out + i * (int64_t)osz, w2);
            }
        }
    }
    free(out);
}

static void shapes(void)
{
    /* rows, cols, ld */
    const int64_t fixed[][3] = {
        {1, 1, 1},         {1, 7, 7},          {7, 1, 1},          {7, 1, 3},
        {1, 100003, 100003}, {100003, 1, 1},   {100000, 2, 2},     {2, 100000, 100000},
        {2, 100000, 100005}, {100000, 2, 5},   {3, 5, 7},          {64, 64, 64},
        {65, 65, 70},      {4097, 4, 4},       {4097, 3, 3},       {4097, 4, 6},
        {17, 1025, 1030},  {1030, 17, 17},     {3, 16385, 16385},  {5, 70001, 70001},
        {40, 5000, 5001},  {1000, 1000, 1000}, {1100, 64, 64},     {1100, 65, 65},
        {300000, 2, 3},    {600, 1500, 1503},  {2000, 300, 300},   {9000, 33, 40},
        /* two column chunks (axis 0); a narrow matrix folded into one row
         * block (f64: two) plus leftover rows, and one folded over two row
         * blocks plus leftover rows */
        {601, 8200, 8203}, {600001, 3, 3}, {1500001, 3, 3},
        /* two row blocks of 2048 and 131 rows (the second swept with a
         * ragged last group of rows), a column tail past the last whole
         * vector (axis 0) */
        {2179, 1030, 1031},
        /* f32 sums, axis 0, "l2" profile: 8-row groups then one of 4 rows
         * (1500 = 187 * 8 + 4), rows apart (ld > cols), a column tail */
        {1500, 1000, 1021},
        /* f32 column sums by the block kernel's lanes (widths dividing 16) */
        {70001, 8, 8},     {20001, 16, 16},
    };
    size_t maxcount = 0;
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) {
        size_t c = (size_t)((fixed[i][0] - 1) * fixed[i][2] + fixed[i][1]);
        if (c > maxcount) maxcount = c;
    }
    void *x = pk_test_alloc(maxcount * 8);
    for (int d = 0; d < PK_TEST_NDTYPES; d++) {
        pk_dtype t = pk_test_dtypes[d];
        for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) {
            int64_t rows = fixed[i][0], cols = fixed[i][1], ld = fixed[i][2];
            int64_t count = (rows - 1) * ld + cols;
            for (int k = 0; k < K_COUNT; k++) {
                if (k == K_NAN && !pk_test_is_float(t)) continue;
                /* Big shapes with one kind of data (two for floats): their
                 * paths are few and the references are slow. */
                if (count > 20000 && k != K_NEARONE && k != (pk_test_is_float(t) ? K_NAN : K_UNIFORM))
                    continue;
                if (count > 200000 && k != K_NEARONE) continue;
                fill(t, x, count, (enum kind)k);
                check_shape(t, x, rows, cols, ld, (enum kind)k);
            }
        }
        /* Random small shapes with random gaps. */
        for (int r = 0; r < 40; r++) {
            int64_t rows = 1 + pk_test_below(r < 20 ? 40 : 400);
            int64_t cols = 1 + pk_test_below(r < 20 ? 40 : 400);
            int64_t ld = cols + (pk_test_next() & 1 ? pk_test_below(9) : 0);
            int64_t count = (rows - 1) * ld + cols;
            enum kind k = (enum kind)pk_test_below(pk_test_is_float(t) ? K_COUNT : K_NAN);
            fill(t, x, count, k);
            check_shape(t, x, rows, cols, ld, k);
        }
    }
    free(x);
}

/* Empty axes: SUM gives 0 and PROD 1 for every output; MIN, MAX, ARGMIN and
 * ARGMAX along an empty axis fail; no outputs at all is fine for every op. */
static void empty_axes(void)
{
    unsigned char out[64 * 8];
    char x[64 * 8] = {0};
    for (int d = 0; d < PK_TEST_NDTYPES; d++) {
        pk_dtype t = pk_test_dtypes[d];
        for (int o = 0; o < PK_TEST_NOPS; o++) {
            pk_op op = pk_test_ops[o];
            size_t osz = pk_test_size(pk_reduce_result_dtype(op, t));
            /* (rows, cols, axis): the reduced axis is empty, 5 outputs. */
            const int64_t cases[][3] = {{0, 5, 0}, {5, 0, 1}};
            for (int c = 0; c < 2; c++) {
                int64_t rows = cases[c][0], cols = cases[c][1];
                int axis = (int)cases[c][2];
                memset(out, 0xA5, sizeof out);
                pk_status s = pk_reduce_axis(ctx, op, t, x, rows, cols, cols ? cols : 1,
                                             axis, out);
                if (op == PK_SUM || op == PK_PROD) {
                    PK_CHECK(s == PK_OK, "%s %s along an empty axis: %s", pk_op_name(op),
                             pk_dtype_name(t), pk_ctx_error(ctx));
                    for (int i = 0; i < 5; i++) {
                        double v = pk_test_is_float(t) ? pk_test_getf(t, out, i)
                                                       : (double)pk_test_getu(PK_U64, out, i);
                        PK_CHECK(v == (op == PK_SUM ? 0.0 : 1.0),
                                 "%s %s along an empty axis: output %d = %g", pk_op_name(op),
                                 pk_dtype_name(t), i, v);
                    }
                    PK_CHECK(out[5 * osz] == 0xA5, "wrote past 5 outputs");
                } else {
                    PK_CHECK(s == PK_ERR_ARG, "%s %s along an empty axis: %s", pk_op_name(op),
                             pk_dtype_name(t), pk_status_str(s));
                    PK_CHECK(out[0] == 0xA5, "a failed call wrote its output");
                    PK_CHECK(pk_ctx_error(ctx)[0] != '\0', "no message");
                }
                /* The other axis of the same empty matrix has no outputs. */
                memset(out, 0xA5, sizeof out);
                s = pk_reduce_axis(ctx, op, t, x, rows, cols, cols ? cols : 1, 1 - axis, out);
                PK_CHECK(s == PK_OK, "%s %s with no outputs: %s", pk_op_name(op),
                         pk_dtype_name(t), pk_status_str(s));
                PK_CHECK(out[0] == 0xA5, "no outputs, yet one was written");
            }
            /* 0 x 0 on both axes: nothing to write, fine for every op. */
            for (int axis = 0; axis < 2; axis++)
                PK_CHECK(pk_reduce_axis(ctx, op, t, NULL, 0, 0, 1, axis, NULL) == PK_OK,
                         "%s %s 0x0 axis %d", pk_op_name(op), pk_dtype_name(t), axis);
        }
    }
}

/* Sums of two elements with outputs big enough to bypass the caches
 * (non-temporal stores, whole lines after an unaligned head): 2 x n on axis
 * 0 and n x 2 on axis 1, into an output that starts 4 bytes past a line. */
static void streamed_pairs(void)
{
    const int64_t n = 4200001;
    float *x = pk_test_alloc((size_t)(2 * n) * sizeof *x);
    float *buf = pk_test_alloc((size_t)(n + 32) * sizeof *buf), *out = buf + 1;
    pk_test_fill(PK_F32, x, 2 * n, PK_TEST_UNIFORM);
    for (int axis = 0; axis < 2; axis++) {
        int64_t rows = axis ? n : 2, cols = axis ? 2 : n;
        memset(buf, 0xA5, (size_t)(n + 32) * sizeof *buf);
        pk_status s = pk_reduce_axis(ctx, PK_SUM, PK_F32, x, rows, cols, cols, axis, out);
        PK_CHECK(s == PK_OK, "streamed pairs, axis %d: %s", axis, pk_ctx_error(ctx));
        int64_t bad = 0;
        for (int64_t i = 0; i < n; i++) {
            float want = axis ? x[2 * i] + x[2 * i + 1] : x[i] + x[n + i];
            if (memcmp(&out[i], &want, sizeof want) && bad++ < 3)
                PK_CHECK(0, "streamed pairs, axis %d: output %lld = %.9g, want %.9g", axis,
                         (long long)i, out[i], want);
        }
        PK_CHECK(bad == 0, "streamed pairs, axis %d: %lld wrong outputs", axis, (long long)bad);
        PK_CHECK(((unsigned char *)buf)[0] == 0xA5 && ((unsigned char *)(out + n))[0] == 0xA5,
                 "streamed pairs, axis %d: wrote outside its outputs", axis);
    }
    free(buf);
    free(x);
}

int main(void)
{
    pk_test_init("test_reduce_axis");
    ctx = pk_test_cpu_ctx();
    printf("context: %s\n", pk_ctx_describe(ctx));
    empty_axes();
    pk_test_overflowing_sums(ctx);
    shapes();
    streamed_pairs();
    pk_ctx_destroy(ctx);
    return pk_test_finish("test_reduce_axis");
}
