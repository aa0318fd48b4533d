/* Out of memory, each host allocation in turn (built only with
 * PK_FAULT_INJECTION=ON; tests/CMakeLists.txt). A scenario of calls that
 * reaches every host allocation site of the core and the CPU backend runs
 * once with no failure (reductions checked here against util.h's
 * references, the rest by the kernel tests), then again for k = 1, 2, ...
 * with only the library's k-th allocation failing, until a run makes fewer
 * than k allocations. Each call must give the failure-free run's bits (these
 * kernels are deterministic on one machine), or fail with PK_ERR_NOMEM and a
 * message and then, repeated on the same context (nothing fails any more),
 * give them. Under AddressSanitizer (.ci/run) the failure paths' leaks show.
 *
 * Each run is a fresh thread: its OpenMP team is new (libgomp keeps a pool
 * per thread), so the per-thread GEMM packing buffers are allocated again and
 * every run allocates in the same order. The runner is tests/oom_util.h
 * (shared with test_cuda_oom.c). */
#include "oom_util.h"

#include <pthread.h>

#define THREADS 4
/* More than 256 blocks of PK__BLOCK (16384): whole-array reductions and dots
 * of this length allocate their partials (src/cpu/reduce.c). */
#define BIG_N ((int64_t)257 * 16384 + 5)
#define MID_N ((int64_t)100003) /* threaded, partials on the stack */

typedef oom_run run;
#define CALL OOM_CALL
#define NOTHING OOM_NOTHING

/* Inputs, made once: f64 near 1, f32 uniform, random 64-bit words. */
static double *xd;
static float *xf;
static uint64_t *xu;

static const void *input(pk_dtype t)
{
    return t == PK_F64 ? (const void *)xd : t == PK_F32 ? (const void *)xf : (const void *)xu;
}

/* As CALL, for a call that must leave its output untouched when it fails
 * (pk_gemm with beta != 0 reads C: out of memory must not half-update it). */
#define CALL_KEEPS(r, what, out, bytes, prep, expr)                            \
    do {                                                                       \
        prep;                                                                  \
        void *before_ = pk_test_alloc(bytes);                                  \
        memcpy(before_, (out), (bytes));                                       \
        pk_status s_ = (expr);                                                 \
        if (s_ == PK_ERR_NOMEM) {                                              \
            oom_saw_nomem((r), (what), pk_ctx_error((r)->ctx));                \
            PK_CHECK(!memcmp(before_, (out), (bytes)),                         \
                     "%s (k = %lld): failed, and its output changed", (what),  \
                     (long long)(r)->k);                                       \
            s_ = (expr);                                                       \
        }                                                                      \
        free(before_);                                                         \
        oom_settle((r), (what), s_, (out), (bytes));                           \
    } while (0)

static void reductions(run *r)
{
    pk_ctx *ctx = r->ctx;
    char out[8], what[64];
    for (int i = 0; i < PK_TEST_NOPS; i++)
        for (int j = 0; j < PK_TEST_NDTYPES; j++) {
            pk_op op = pk_test_ops[i];
            pk_dtype t = pk_test_dtypes[j];
            snprintf(what, sizeof what, "pk_reduce %s %s", pk_op_name(op), pk_dtype_name(t));
            CALL(r, what, out, 8, memset(out, 0, 8), pk_reduce(ctx, op, t, input(t), MID_N, out));
            if (!r->k) pk_test_expect(op, t, input(t), MID_N, 1, out, "mid n");
            /* Each op and each dtype once at the length that allocates. */
            if (i != j) continue;
            CALL(r, what, out, 8, memset(out, 0, 8), pk_reduce(ctx, op, t, input(t), BIG_N, out));
            if (!r->k) pk_test_expect(op, t, input(t), BIG_N, 1, out, "big n");
        }
    static const oom_axis ax[] = {
        {PK_SUM, PK_F64, 5000, 300, 300, 0},    /* row blocks: partials + scratch */
        {PK_ARGMAX, PK_F32, 100, 2000, 2001, 0}, /* one row block: scratch only */
        {PK_SUM, PK_F32, 300000, 4, 4, 0},      /* lanes per column */
        {PK_MIN, PK_I64, 3000, 500, 500, 1},
        {PK_SUM, PK_F64, 2, 300000, 300001, 1},
    };
    static char axout[3000 * 8];
    for (size_t c = 0; c < sizeof ax / sizeof ax[0]; c++) {
        int64_t nout = ax[c].axis ? ax[c].rows : ax[c].cols;
        size_t osize = pk_dtype_size(pk_reduce_result_dtype(ax[c].op, ax[c].t));
        size_t isize = pk_dtype_size(ax[c].t);
        snprintf(what, sizeof what, "pk_reduce_axis %s %s axis %d", pk_op_name(ax[c].op),
                 pk_dtype_name(ax[c].t), ax[c].axis);
        CALL(r, what, axout, (size_t)nout * osize, NOTHING,
             pk_reduce_axis(ctx, ax[c].op, ax[c].t, input(ax[c].t), ax[c].rows, ax[c].cols,
                            ax[c].ld, ax[c].axis, axout));
        for (int64_t o = 0; !r->k && o < nout; o++) {
            const char *x = (const char *)input(ax[c].t) +
                            (ax[c].axis ? o * ax[c].ld : o) * (int64_t)isize;
            pk_test_expect(ax[c].op, ax[c].t, x, ax[c].axis ? ax[c].cols : ax[c].rows,
                           ax[c].axis ? 1 : ax[c].ld, axout + o * (int64_t)osize, what);
        }
    }
}

static void blas(run *r)
{
    pk_ctx *ctx = r->ctx;
    double d;
    float f;
    CALL(r, "pk_dot f64", &d, 8, NOTHING, pk_dot(ctx, PK_F64, BIG_N, xd, xd, &d));
    CALL(r, "pk_dot f32", &f, 4, NOTHING, pk_dot(ctx, PK_F32, MID_N, xf, xf + 1, &f));
    static double y[MID_N];
    const double alpha = 0.75;
    CALL(r, "pk_axpy f64", y, sizeof y, memcpy(y, xd + 7, sizeof y),
         pk_axpy(ctx, PK_F64, MID_N, &alpha, xd, y));
    /* beta != 0: C is read, and a failure leaves it as it was. */
    static float C[150 * 150];
    const float af = 1.5f, bf = 0.5f;
    CALL_KEEPS(r, "pk_gemm f32", C, sizeof C, memcpy(C, xf + 3, sizeof C),
         pk_gemm(ctx, PK_F32, PK_GEMM_FP32, PK_NO_TRANS, PK_TRANS, 150, 150, 150, &af, xf,
                 160, xf + 50000, 170, &bf, C, 150));
    static double Cd[70 * 90];
    const double ad = -1, bd = 0;
    CALL(r, "pk_gemm f64", Cd, sizeof Cd, NOTHING,
         pk_gemm(ctx, PK_F64, PK_GEMM_FP32, PK_TRANS, PK_NO_TRANS, 70, 90, 300, &ad, xd, 70,
                 xd + 30000, 90, &bd, Cd, 90));
}

static void bits(run *r)
{
    pk_ctx *ctx = r->ctx;
    enum { M = 300, N = 400, K = 1000, W = (K + 63) / 64 };
    static uint64_t A[M * W], B[N * W];
    static int32_t C[M * N];
    static uint16_t D[M * N];
    CALL(r, "pk_bits_pack A", A, sizeof A, NOTHING,
         pk_bits_pack(ctx, PK_BITS_F32_SIGN, M, K, xf, K, A, W));
    CALL(r, "pk_bits_pack B", B, sizeof B, NOTHING,
         pk_bits_pack(ctx, PK_BITS_F32_SIGN, N, K, xf + M * K, K, B, W));
    CALL(r, "pk_bgemm", C, sizeof C, NOTHING, pk_bgemm(ctx, M, N, K, A, W, B, W, C, N));
    for (int64_t i = 0; !r->k && i < M; i++) /* popcount reference */
        for (int64_t j = 0; j < N; j++) {
            int64_t h = 0;
            for (int w = 0; w < W; w++) h += __builtin_popcountll(A[i * W + w] ^ B[j * W + w]);
            PK_CHECK(C[i * N + j] == K - 2 * h, "bgemm (%lld, %lld): %d, want %lld",
                     (long long)i, (long long)j, C[i * N + j], (long long)(K - 2 * h));
        }
    CALL(r, "pk_hamming u16", D, sizeof D, NOTHING,
         pk_hamming(ctx, PK_HAMMING_U16, M, N, K, A, W, B, W, D, N));
    /* Many queries (threads over queries), then few over a large database
     * (threads over database ranges, lists merged). */
    enum { T = 10, QD = 6, ND = 12000, KD = 256, WD = KD / 64 };
    static uint64_t X[ND * WD];
    static char tk[M * T * (4 + 8)];
    CALL(r, "pk_hamming_topk by queries", tk, sizeof tk, NOTHING,
         pk_hamming_topk(ctx, M, N, K, A, W, B, W, T, (int32_t *)(void *)tk,
                         (int64_t *)(void *)(tk + M * T * 4)));
    CALL(r, "pk_bits_pack X", X, sizeof X, NOTHING,
         pk_bits_pack(ctx, PK_BITS_F32_SIGN, ND, KD, xf, KD, X, WD));
    CALL(r, "pk_hamming_topk by database", tk, QD * T * 12, NOTHING,
         pk_hamming_topk(ctx, QD, ND, KD, X + 100 * WD, WD, X, WD, T, (int32_t *)(void *)tk,
                         (int64_t *)(void *)(tk + QD * T * 4)));
}

static void reducers(run *r)
{
    pk_ctx *ctx = r->ctx;
    const pk_reducer_desc desc = {.input = PK_F64, .acc = PK_F64, .map = "x * x",
                                  .combine = "a + b", .final = "sqrt(r)"};
    pk_reducer *red = NULL;
    CALL(r, "pk_reducer_create", &red, 0, NOTHING, pk_reducer_create(ctx, &desc, &red));
    if (!red) return;
    double v;
    CALL(r, "pk_reducer_reduce", &v, 8, NOTHING, pk_reducer_reduce(ctx, red, xd, 200003, &v));
    static const int64_t shape[][4] = {
        /* rows, cols, ld, axis: few columns; columns as lines; short rows as
         * lines; a row per thread; few long rows */
        {20000, 8, 8, 0}, {500, 300, 300, 0}, {2000, 100, 100, 1}, {64, 5000, 5000, 1},
        {3, 100000, 100000, 1},
    };
    static double out[2000];
    char what[64];
    for (size_t c = 0; c < sizeof shape / sizeof shape[0]; c++) {
        const int64_t *s = shape[c];
        snprintf(what, sizeof what, "pk_reducer_reduce_axis %lld x %lld axis %lld",
                 (long long)s[0], (long long)s[1], (long long)s[3]);
        CALL(r, what, out, (size_t)(s[3] ? s[0] : s[1]) * 8, NOTHING,
             pk_reducer_reduce_axis(ctx, red, xd, s[0], s[1], s[2], (int)s[3], out));
    }
    pk_reducer_destroy(red);
}

static void scenario(run *r)
{
    if (oom_ctx_create(r, PK_BACKEND_CPU) != PK_OK) return;
    PK_CHECK(pk_ctx_set_threads(r->ctx, THREADS) == PK_OK, "pk_ctx_set_threads");
    reductions(r);
    blas(r);
    bits(r);
    reducers(r);
    pk_ctx_destroy(r->ctx);
}

static void *run_main(void *arg)
{
    oom_run_scenario(arg, scenario);
    return NULL;
}

static void run_in_thread(run *r)
{
    pthread_t t;
    if (pthread_create(&t, NULL, run_main, r) || pthread_join(t, NULL)) {
        printf("FAIL: pthread_create or pthread_join\n");
        exit(1);
    }
}

int main(void)
{
    pk_test_init("test_oom");
    xd = pk_test_alloc(BIG_N * sizeof *xd);
    xf = pk_test_alloc(BIG_N * sizeof *xf);
    xu = pk_test_alloc(BIG_N * sizeof *xu);
    pk_test_fill(PK_F64, xd, BIG_N, PK_TEST_NEARONE);
    pk_test_fill(PK_F32, xf, BIG_N, PK_TEST_UNIFORM);
    pk_test_fill(PK_U64, xu, BIG_N, PK_TEST_UNIFORM);

    oom_each_allocation("test_oom", run_in_thread, NULL);
    oom_free_golden();
    free(xd), free(xf), free(xu);
    return pk_test_finish("test_oom");
}
