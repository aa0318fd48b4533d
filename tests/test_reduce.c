/* pk_reduce: every op x every dtype x many sizes (0, 1, 2, odd, lane widths
 * +-1, PK__BLOCK +-1, the threading threshold +-1, multi-block) on random
 * data, against references written here: exact summation for float sums,
 * long double for float products, wrapping 64-bit arithmetic for integers,
 * plain loops with NumPy's NaN rules for min/max/argmin/argmax. Also NaN and
 * Inf propagation, ties (first index wins), -0.0/+0.0, empty inputs and
 * integer wraparound with NumPy's result dtypes. */
#include "util.h"

static pk_ctx *ctx;

static const int64_t sizes[] = {
    0, 1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 63, 64, 65, 96, 127,
    128, 129, 255, 256, 257, 1000, 1023, 1024, 1025, 4095, 4096, 4097, 16383,
    16384, 16385, 32767, 32768, 32769, 3 * 16384 + 5, 65535, 65536, 65537,
    100003, 262144, (1 << 20) + 3};
#define NSIZES (int)(sizeof sizes / sizeof *sizes)

enum kind { K_UNIFORM, K_SMALL, K_PROD, K_COUNT };
static const char *const kind_names[] = {"uniform", "small", "prod"};

static void fill(pk_dtype t, void *x, int64_t n, enum kind k)
{
    pk_test_fill(t, x, n, (enum pk_test_kind)k);
}

/* Checks pk_reduce(op, t) on x[0..n) against the reference. */
static void check(pk_op op, pk_dtype t, const void *x, int64_t n, const char *what)
{
    unsigned char out[16];
    memset(out, 0xA5, sizeof out);
    pk_status s = pk_reduce(ctx, op, t, x, n, out);
    const char *on = pk_op_name(op), *tn = pk_dtype_name(t);
    if (n == 0 && op != PK_SUM && op != PK_PROD) {
        PK_CHECK(s == PK_ERR_ARG, "%s %s n=0: status %s", on, tn, pk_status_str(s));
        PK_CHECK(out[0] == 0xA5, "%s %s n=0 wrote its output", on, tn);
        return;
    }
    PK_CHECK(s == PK_OK, "%s %s n=%lld %s: %s (%s)", on, tn, (long long)n, what,
             pk_status_str(s), pk_ctx_error(ctx));
    if (s != PK_OK) return;
    pk_dtype rt = pk_reduce_result_dtype(op, t);
    size_t rs = pk_test_size(rt);
    for (size_t i = rs; i < sizeof out; i++)
        PK_CHECK(out[i] == 0xA5, "%s %s n=%lld: wrote past its %zu-byte result",
                 on, tn, (long long)n, rs);

    pk_test_expect(op, t, x, n, 1, out, what);
}

static void check_all_ops(pk_dtype t, const void *x, int64_t n, const char *what,
                          bool with_prod)
{
    for (int o = 0; o < PK_TEST_NOPS; o++)
        if (with_prod || pk_test_ops[o] != PK_PROD) check(pk_test_ops[o], t, x, n, what);
}

static void random_sizes(void)
{
    size_t maxb = (size_t)sizes[NSIZES - 1] * 8;
    void *x = pk_test_alloc(maxb);
    for (int d = 0; d < PK_TEST_NDTYPES; d++) {
        pk_dtype t = pk_test_dtypes[d];
        for (int si = 0; si < NSIZES; si++) {
            int64_t n = sizes[si];
            for (int k = 0; k < K_COUNT; k++) {
                fill(t, x, n, (enum kind)k);
                /* Float products of uniform or small data under- or
                 * overflow; the "prod" kind is made for them. */
                bool with_prod = !pk_test_is_float(t) || k == K_PROD;
                check_all_ops(t, x, n, kind_names[k], with_prod);
            }
        }
    }
    free(x);
}

/* NaN and Inf placed at chosen and random positions. */
static void specials(void)
{
    const int64_t ns[] = {1, 2, 17, 33, 100, 16385, 70001};
    float *xf = pk_test_alloc(70001 * sizeof(float));
    double *xd = pk_test_alloc(70001 * sizeof(double));
    for (int d = 0; d < 2; d++) {
        pk_dtype t = d ? PK_F64 : PK_F32;
        void *x = d ? (void *)xd : (void *)xf;
        for (size_t si = 0; si < sizeof ns / sizeof *ns; si++) {
            int64_t n = ns[si];
            int64_t at[] = {0, n - 1, pk_test_below(n), n / 2, 16383, 16384, 31, 32};
            for (size_t a = 0; a < sizeof at / sizeof *at; a++) {
                if (at[a] >= n) continue;
                char what[64];
                /* One NaN. */
                fill(t, x, n, K_PROD);
                pk_test_setf(t, x, at[a], NAN);
                snprintf(what, sizeof what, "NaN at %lld", (long long)at[a]);
                check_all_ops(t, x, n, what, true);
                /* A second NaN later: the first one's index. */
                if (at[a] + 5 < n) {
                    pk_test_setf(t, x, at[a] + 5, -NAN);
                    snprintf(what, sizeof what, "NaNs at %lld and +5", (long long)at[a]);
                    check_all_ops(t, x, n, what, true);
                }
                /* +Inf alone: sum +Inf, max +Inf, argmax its index. */
                fill(t, x, n, K_PROD);
                pk_test_setf(t, x, at[a], INFINITY);
                snprintf(what, sizeof what, "+Inf at %lld", (long long)at[a]);
                check_all_ops(t, x, n, what, true);
                /* -Inf later: sum of +Inf and -Inf is NaN; min -Inf. */
                int64_t j = pk_test_below(n);
                if (j != at[a]) {
                    pk_test_setf(t, x, j, -INFINITY);
                    snprintf(what, sizeof what, "+Inf at %lld, -Inf at %lld",
                             (long long)at[a], (long long)j);
                    check_all_ops(t, x, n, what, true);
                    /* Inf times 0 is NaN. */
                    int64_t z = pk_test_below(n);
                    if (z != at[a] && z != j) {
                        pk_test_setf(t, x, j, 0.0);
                        pk_test_setf(t, x, z, 0.0);
                        snprintf(what, sizeof what, "+Inf at %lld, 0 at %lld",
                                 (long long)at[a], (long long)z);
                        check_all_ops(t, x, n, what, true);
                    }
                }
            }
            /* All NaN, all +Inf, all -Inf, all -0.0, +0.0 and -0.0 mixed. */
            const double fills[] = {NAN, INFINITY, -INFINITY, -0.0};
            for (int f = 0; f < 4; f++) {
                for (int64_t i = 0; i < n; i++) pk_test_setf(t, x, i, fills[f]);
                check_all_ops(t, x, n, "constant special", true);
            }
            for (int64_t i = 0; i < n; i++)
                pk_test_setf(t, x, i, pk_test_next() & 1 ? 0.0 : -0.0);
            check_all_ops(t, x, n, "mixed +-0", true);
            /* Sum of -0.0s is a zero; min/max of +-0 compare equal to 0. */
            unsigned char out[8];
            PK_CHECK(pk_reduce(ctx, PK_MIN, t, x, n, out) == PK_OK &&
                         pk_test_getf(t, out, 0) == 0.0,
                     "min of +-0 is not 0");
            /* Largest finite values: the sum overflows to Inf as NumPy's does. */
            for (int64_t i = 0; i < n; i++)
                pk_test_setf(t, x, i, t == PK_F32 ? FLT_MAX : DBL_MAX);
            if (n >= 2) check(PK_SUM, t, x, n, "all max-finite (overflow)");
        }
    }
    free(xf);
    free(xd);
}

/* Ties: the first of equal extremes, across lanes and blocks. */
static void ties(void)
{
    const int64_t n = 3 * 16384 + 77;
    void *x = pk_test_alloc((size_t)n * 8);
    for (int d = 0; d < PK_TEST_NDTYPES; d++) {
        pk_dtype t = pk_test_dtypes[d];
        for (int rep = 0; rep < 20; rep++) {
            int64_t m = rep < 10 ? 1 + pk_test_below(200) : n - pk_test_below(100);
            for (int64_t i = 0; i < m; i++) {
                if (pk_test_is_float(t)) pk_test_setf(t, x, i, 1.0);
                else pk_test_setu(t, x, i, 5);
            }
            /* A few copies of the extreme at random positions. */
            for (int c = 0; c < 4; c++) {
                int64_t a = pk_test_below(m), b = pk_test_below(m);
                if (pk_test_is_float(t)) {
                    pk_test_setf(t, x, a, -2.0);
                    pk_test_setf(t, x, b, 3.0);
                } else {
                    pk_test_setu(t, x, a, 1);
                    pk_test_setu(t, x, b, 9);
                }
            }
            check_all_ops(t, x, m, "ties", false);
        }
        /* All equal: index 0. */
        for (int64_t i = 0; i < n; i++) {
            if (pk_test_is_float(t)) pk_test_setf(t, x, i, 7.0);
            else pk_test_setu(t, x, i, 7);
        }
        check_all_ops(t, x, n, "all equal", false);
    }
    free(x);
}

/* Integer sums and products wrap modulo 2^64 and have NumPy's result dtypes
 * (the values below are what NumPy 1.26/2.x prints). */
static void integers(void)
{
    int64_t out64;
    uint64_t outu;
    {
        int64_t x[] = {INT64_MAX, 1};
        PK_CHECK(pk_reduce(ctx, PK_SUM, PK_I64, x, 2, &out64) == PK_OK && out64 == INT64_MIN,
                 "i64 sum [INT64_MAX, 1] = %lld, want INT64_MIN", (long long)out64);
    }
    {
        uint64_t x[] = {UINT64_MAX, 2};
        PK_CHECK(pk_reduce(ctx, PK_SUM, PK_U64, x, 2, &outu) == PK_OK && outu == 1,
                 "u64 sum [UINT64_MAX, 2] = %" PRIu64 ", want 1", outu);
    }
    {
        int32_t x[4] = {INT32_MAX, INT32_MAX, INT32_MAX, INT32_MAX};
        PK_CHECK(pk_reduce(ctx, PK_SUM, PK_I32, x, 4, &out64) == PK_OK &&
                     out64 == 8589934588LL,
                 "i32 sum 4 x INT32_MAX = %lld, want 8589934588 (int64)", (long long)out64);
        int32_t y[3] = {INT32_MIN, INT32_MIN, -1};
        PK_CHECK(pk_reduce(ctx, PK_SUM, PK_I32, y, 3, &out64) == PK_OK &&
                     out64 == -4294967297LL,
                 "i32 sum = %lld, want -4294967297", (long long)out64);
    }
    {
        uint32_t x[3] = {UINT32_MAX, UINT32_MAX, 2};
        PK_CHECK(pk_reduce(ctx, PK_SUM, PK_U32, x, 3, &outu) == PK_OK &&
                     outu == 8589934592ull,
                 "u32 sum = %" PRIu64 ", want 8589934592 (uint64)", outu);
        uint64_t want = (uint64_t)UINT32_MAX * UINT32_MAX * 2u;
        PK_CHECK(pk_reduce(ctx, PK_PROD, PK_U32, x, 3, &outu) == PK_OK && outu == want,
                 "u32 prod = %" PRIu64 ", want %" PRIu64, outu, want);
    }
    {
        int64_t x[2] = {(int64_t)1 << 32, (int64_t)1 << 32};
        PK_CHECK(pk_reduce(ctx, PK_PROD, PK_I64, x, 2, &out64) == PK_OK && out64 == 0,
                 "i64 prod 2^32 * 2^32 = %lld, want 0", (long long)out64);
    }
    {
        int32_t x[64];
        for (int i = 0; i < 64; i++) x[i] = -2;
        PK_CHECK(pk_reduce(ctx, PK_PROD, PK_I32, x, 63, &out64) == PK_OK &&
                     out64 == INT64_MIN,
                 "i32 prod (-2)^63 = %lld, want INT64_MIN", (long long)out64);
        PK_CHECK(pk_reduce(ctx, PK_PROD, PK_I32, x, 64, &out64) == PK_OK && out64 == 0,
                 "i32 prod (-2)^64 = %lld, want 0", (long long)out64);
        PK_CHECK(pk_reduce(ctx, PK_PROD, PK_I32, x, 62, &out64) == PK_OK &&
                     out64 == ((int64_t)1 << 62),
                 "i32 prod (-2)^62 = %lld, want 2^62", (long long)out64);
    }
    {
        int64_t x[41];
        for (int i = 0; i < 41; i++) x[i] = 3;
        uint64_t want = 1;
        for (int i = 0; i < 41; i++) want *= 3;
        PK_CHECK(pk_reduce(ctx, PK_PROD, PK_I64, x, 41, &out64) == PK_OK &&
                     (uint64_t)out64 == want,
                 "i64 prod 3^41 wraps: got %lld", (long long)out64);
    }
    {
        /* Extremes of every integer dtype, as min/max/argmin/argmax see them. */
        int32_t a[5] = {0, INT32_MAX, -1, INT32_MIN, INT32_MAX};
        check_all_ops(PK_I32, a, 5, "i32 extremes", true);
        uint32_t b[5] = {1, UINT32_MAX, 0, 0x80000000u, UINT32_MAX};
        check_all_ops(PK_U32, b, 5, "u32 extremes", true);
        int64_t c[5] = {0, INT64_MAX, -1, INT64_MIN, INT64_MIN};
        check_all_ops(PK_I64, c, 5, "i64 extremes", true);
        uint64_t e[5] = {1, UINT64_MAX, 0, 0x8000000000000000ull, 0};
        check_all_ops(PK_U64, e, 5, "u64 extremes", true);
    }
}

/* n = 0: SUM gives 0, PROD 1 (x may be NULL); the others are errors. */
static void empty(void)
{
    for (int d = 0; d < PK_TEST_NDTYPES; d++) {
        pk_dtype t = pk_test_dtypes[d];
        unsigned char out[8];
        memset(out, 0xA5, 8);
        PK_CHECK(pk_reduce(ctx, PK_SUM, t, NULL, 0, out) == PK_OK, "sum %s n=0", pk_dtype_name(t));
        if (pk_test_is_float(t)) PK_CHECK(pk_test_getf(t, out, 0) == 0.0, "empty sum != 0");
        else PK_CHECK(pk_test_getu(PK_U64, out, 0) == 0, "empty sum != 0");
        PK_CHECK(pk_reduce(ctx, PK_PROD, t, NULL, 0, out) == PK_OK, "prod %s n=0", pk_dtype_name(t));
        if (pk_test_is_float(t)) PK_CHECK(pk_test_getf(t, out, 0) == 1.0, "empty prod != 1");
        else PK_CHECK(pk_test_getu(PK_U64, out, 0) == 1, "empty prod != 1");
        char x[8] = {0};
        check_all_ops(t, x, 0, "empty", true);
    }
}

int main(void)
{
    pk_test_init("test_reduce");
    ctx = pk_test_cpu_ctx();
    printf("context: %s\n", pk_ctx_describe(ctx));
    empty();
    integers();
    ties();
    specials();
    random_sizes();
    pk_ctx_destroy(ctx);
    return pk_test_finish("test_reduce");
}
