/* Out of memory on the CUDA backend, each allocation in turn (built only
 * with PK_FAULT_INJECTION=ON; tests/CMakeLists.txt). One sequence numbers
 * the library's host allocations and the backend's device and page-locked
 * ones (src/cuda/cuda_internal.cuh's wrappers; a reducer's module load), so
 * the k-th run fails the k-th of either kind (tests/oom_util.h's runner).
 * The scenario: a CUDA context, then every kernel family with host and with
 * device pointers (reductions, reductions along an axis of each shape class,
 * dot, axpy, GEMM in each mode and layout class, bit packing, bgemm,
 * Hamming distances, top-k both ways, and two reducers compiled by NVRTC,
 * whole arrays and along each axis). The golden run checks the reductions
 * and bgemm against plain C references; every other run must give its bits.
 *
 * After each run (its context destroyed): the device's free memory
 * (cudaMemGetInfo) at least what it was after the warm-up, and at the end
 * the heap in use (mallinfo2) within PK_TEST_HEAP_SLACK bytes (default 64
 * KiB: the CUDA runtime's own bookkeeping moves a little) of it; the runs
 * after which the heap grew are listed. Without a GPU: skipped. */
#include "cuda_util.h"
#include "oom_util.h"

#define N_BIG ((int64_t)3000017) /* f32: two 8 MiB staging chunks and more */
#define N_MID ((int64_t)200003)
#define OUT_BYTES ((size_t)16 << 20)

typedef oom_run run;

/* Inputs on the host (h*) and, with the runtime, copies on the device. */
static float *hf, *df;
static double *hd, *dd;
static int32_t *hi, *di;
static uint64_t *hu, *du;
static unsigned char *hout, *dout;      /* a call's output */
static uint64_t *hbits[3], *dbits[3];   /* packed operands */
static int have_reducers = 1;
static int ndev_cases;                  /* 2 with the runtime, else 1 */

static const void *in(int dev, pk_dtype t)
{
    switch (t) {
    case PK_F32: return dev ? (const void *)df : hf;
    case PK_F64: return dev ? (const void *)dd : hd;
    case PK_I32: return dev ? (const void *)di : hi;
    default: return dev ? (const void *)du : hu;
    }
}
static const void *hin(pk_dtype t) { return in(0, t); }

/* A call's output: host memory h, or device memory d (fetched into h to be
 * compared); init: its contents before the call (NULL: 0xA5 bytes). */
typedef struct outbuf {
    void *h, *d;
    const void *init;
    size_t bytes;
} outbuf;

static outbuf out_of(int dev, size_t bytes, const void *init)
{
    PK_CHECK(bytes <= OUT_BYTES, "raise OUT_BYTES");
    outbuf o = {hout, dev ? dout : NULL, init, bytes};
    return o;
}
static void *dst(const outbuf *o) { return o->d ? o->d : o->h; }
static void prep(const outbuf *o)
{
    if (o->init) memcpy(o->h, o->init, o->bytes);
    else memset(o->h, 0xA5, o->bytes);
    if (o->d) cu_put(o->d, o->h, o->bytes);
}
static void fetch(run *r, const outbuf *o)
{
    PK_CHECK(pk_ctx_sync(r->ctx) == PK_OK, "pk_ctx_sync: %s", pk_ctx_error(r->ctx));
    if (o->d) cu_get(o->h, o->d, o->bytes);
}
#define CALL(r, what, o, expr) \
    OOM_CALL_THEN(r, what, (o)->h, (o)->bytes, prep(o), expr, fetch(r, o))

static void expect(run *r, pk_op op, pk_dtype t, const void *x, int64_t n, int64_t stride,
                   const void *got, const char *what)
{
    char why[160];
    if (r->k == 0)
        PK_CHECK(cu_check(op, t, x, n, stride, got, why, sizeof why), "%s: %s", what, why);
}

static void reductions(run *r, int dev)
{
    static const struct {
        pk_op op;
        pk_dtype t;
        int64_t n;
    } red[] = {
        {PK_SUM, PK_F32, N_BIG}, {PK_SUM, PK_F64, N_MID}, {PK_ARGMAX, PK_F32, N_MID},
        {PK_MIN, PK_I32, N_BIG}, {PK_PROD, PK_F64, 1000}, {PK_SUM, PK_U64, N_MID},
    };
    char what[96];
    for (size_t c = 0; c < sizeof red / sizeof red[0]; c++) {
        size_t bytes = pk_dtype_size(pk_reduce_result_dtype(red[c].op, red[c].t));
        outbuf o = out_of(dev, bytes, NULL);
        snprintf(what, sizeof what, "pk_reduce %s %s n %lld (%s)", pk_op_name(red[c].op),
                 pk_dtype_name(red[c].t), (long long)red[c].n, dev ? "device" : "host");
        CALL(r, what, &o,
             pk_reduce(r->ctx, red[c].op, red[c].t, in(dev, red[c].t), red[c].n, dst(&o)));
        expect(r, red[c].op, red[c].t, hin(red[c].t), red[c].n, 1, o.h, what);
    }
    static const oom_axis ax[] = {
        {PK_SUM, PK_F32, 300, 500, 500, 0},    {PK_SUM, PK_F64, 500, 300, 301, 1},
        {PK_SUM, PK_F32, 100000, 4, 4, 0},     /* narrow */
        {PK_MAX, PK_F32, 4, 100000, 100000, 1}, /* long rows */
        {PK_ARGMIN, PK_F64, 1000, 64, 64, 0},  {PK_SUM, PK_I32, 2000, 100, 100, 1},
    };
    for (size_t c = 0; c < sizeof ax / sizeof ax[0]; c++) {
        const int64_t nout = ax[c].axis ? ax[c].rows : ax[c].cols;
        const size_t osize = pk_dtype_size(pk_reduce_result_dtype(ax[c].op, ax[c].t));
        outbuf o = out_of(dev, (size_t)nout * osize, NULL);
        snprintf(what, sizeof what, "pk_reduce_axis %s %s %lld x %lld axis %d (%s)",
                 pk_op_name(ax[c].op), pk_dtype_name(ax[c].t), (long long)ax[c].rows,
                 (long long)ax[c].cols, ax[c].axis, dev ? "device" : "host");
        CALL(r, what, &o,
             pk_reduce_axis(r->ctx, ax[c].op, ax[c].t, in(dev, ax[c].t), ax[c].rows,
                            ax[c].cols, ax[c].ld, ax[c].axis, dst(&o)));
        const size_t isize = pk_dtype_size(ax[c].t);
        for (int64_t j = 0; r->k == 0 && j < nout; j++) {
            const char *x = (const char *)hin(ax[c].t) +
                            (ax[c].axis ? j * ax[c].ld : j) * (int64_t)isize;
            expect(r, ax[c].op, ax[c].t, x, ax[c].axis ? ax[c].cols : ax[c].rows,
                   ax[c].axis ? 1 : ax[c].ld, (const char *)o.h + j * (int64_t)osize, what);
        }
    }
}

static void blas(run *r, int dev)
{
    const char *w = dev ? "device" : "host";
    char what[96];
    outbuf o = out_of(dev, 4, NULL);
    snprintf(what, sizeof what, "pk_dot f32 (%s)", w);
    CALL(r, what, &o, pk_dot(r->ctx, PK_F32, N_BIG, in(dev, PK_F32), in(dev, PK_F32), dst(&o)));
    o = out_of(dev, 8, NULL);
    snprintf(what, sizeof what, "pk_dot f64 (%s)", w);
    const double *xd = in(dev, PK_F64);
    CALL(r, what, &o, pk_dot(r->ctx, PK_F64, N_MID, xd, xd + 1, dst(&o)));

    const float af = 0.75f;
    const double ad = -1.25;
    o = out_of(dev, (size_t)(N_BIG - 5) * 4, hf + 5);
    snprintf(what, sizeof what, "pk_axpy f32 (%s)", w);
    CALL(r, what, &o, pk_axpy(r->ctx, PK_F32, N_BIG - 5, &af, in(dev, PK_F32), dst(&o)));
    o = out_of(dev, (size_t)N_MID * 8, hd + 3);
    snprintf(what, sizeof what, "pk_axpy f64 (%s)", w);
    CALL(r, what, &o, pk_axpy(r->ctx, PK_F64, N_MID, &ad, xd, dst(&o)));

    /* Each mode; aligned and odd leading dimensions (packing copies); a
     * long k on a small C (split k); beta != 0 (C restored by prep). */
    static const struct {
        pk_dtype t;
        pk_gemm_mode mode;
        pk_trans ta, tb;
        int64_t m, n, k, lda, ldb, ldc, boff;
        double beta;
    } g[] = {
        {PK_F32, PK_GEMM_FP32, PK_NO_TRANS, PK_NO_TRANS, 256, 256, 256, 256, 256, 256, 65536, 0},
        {PK_F32, PK_GEMM_FP32, PK_TRANS, PK_NO_TRANS, 150, 130, 70, 151, 133, 131, 20001, 0.5},
        {PK_F32, PK_GEMM_FP32, PK_NO_TRANS, PK_NO_TRANS, 64, 64, 8192, 8192, 64, 64, 524288, 0},
        {PK_F32, PK_GEMM_TF32, PK_NO_TRANS, PK_TRANS, 256, 192, 320, 320, 320, 192, 81920, 0},
        {PK_F32, PK_GEMM_TF32, PK_TRANS, PK_TRANS, 130, 70, 90, 131, 91, 70, 30001, 1},
        {PK_F32, PK_GEMM_FP32_ACCURATE, PK_NO_TRANS, PK_NO_TRANS, 200, 200, 200, 200, 200, 200,
         40000, 0},
        {PK_F32, PK_GEMM_FP32_ACCURATE, PK_TRANS, PK_NO_TRANS, 90, 110, 130, 91, 111, 110, 20003,
         0},
        {PK_F64, PK_GEMM_FP32, PK_NO_TRANS, PK_TRANS, 100, 90, 80, 80, 80, 90, 8000, 0.25},
    };
    for (size_t c = 0; c < sizeof g / sizeof g[0]; c++) {
        const size_t es = pk_dtype_size(g[c].t);
        const char *A = in(dev, g[c].t), *B = A + g[c].boff * (int64_t)es;
        const void *init = g[c].beta != 0 ? (const char *)hin(g[c].t) + 77 * es : NULL;
        o = out_of(dev, (size_t)(g[c].m * g[c].ldc) * es, init);
        const float a32 = 1.5f, b32 = (float)g[c].beta;
        const double a64 = 1.5, b64 = g[c].beta;
        const void *alpha = g[c].t == PK_F32 ? (const void *)&a32 : &a64;
        const void *beta = g[c].t == PK_F32 ? (const void *)&b32 : &b64;
        snprintf(what, sizeof what, "pk_gemm %s %s %c%c %lld x %lld x %lld (%s)",
                 pk_dtype_name(g[c].t), pk_gemm_mode_name(g[c].mode),
                 g[c].ta ? 'T' : 'N', g[c].tb ? 'T' : 'N', (long long)g[c].m,
                 (long long)g[c].n, (long long)g[c].k, w);
        CALL(r, what, &o,
             pk_gemm(r->ctx, g[c].t, g[c].mode, g[c].ta, g[c].tb, g[c].m, g[c].n, g[c].k, alpha,
                     A, g[c].lda, B, g[c].ldb, beta, dst(&o), g[c].ldc));
    }
}

enum { M = 300, N = 400, K = 1000, W = (K + 63) / 64, T = 10, QD = 6, ND = 10000, KD = 256,
       WD = KD / 64 };

static void bits(run *r, int dev)
{
    const char *w = dev ? "device" : "host";
    char what[96];
    uint64_t **op = dev ? dbits : hbits;
    const int64_t rows[3] = {M, N, ND}, k[3] = {K, K, KD}, ld[3] = {W, W, WD},
                  off[3] = {0, M * K, 7};
    for (int b = 0; b < 3; b++) {
        /* The packed operand stays in hbits/dbits for the calls below. */
        outbuf o = {hbits[b], dev ? dbits[b] : NULL, NULL, (size_t)(rows[b] * ld[b]) * 8};
        snprintf(what, sizeof what, "pk_bits_pack %lld x %lld (%s)", (long long)rows[b],
                 (long long)k[b], w);
        CALL(r, what, &o,
             pk_bits_pack(r->ctx, PK_BITS_F32_SIGN, rows[b], k[b],
                          (const float *)in(dev, PK_F32) + off[b], k[b], dst(&o), ld[b]));
    }
    outbuf o = out_of(dev, (size_t)M * N * 4, NULL);
    snprintf(what, sizeof what, "pk_bgemm (%s)", w);
    CALL(r, what, &o, pk_bgemm(r->ctx, M, N, K, op[0], W, op[1], W, dst(&o), N));
    const int32_t *C = o.h;
    for (int64_t i = 0; r->k == 0 && i < M; i++) /* popcount reference */
        for (int64_t j = 0; j < N; j++) {
            int64_t h = 0;
            for (int q = 0; q < W; q++)
                h += __builtin_popcountll(hbits[0][i * W + q] ^ hbits[1][j * W + q]);
            PK_CHECK(C[i * N + j] == K - 2 * h, "%s (%lld, %lld): %d, want %lld", what,
                     (long long)i, (long long)j, C[i * N + j], (long long)(K - 2 * h));
        }
    o = out_of(dev, (size_t)M * N * 2, NULL);
    snprintf(what, sizeof what, "pk_hamming u16 (%s)", w);
    CALL(r, what, &o, pk_hamming(r->ctx, PK_HAMMING_U16, M, N, K, op[0], W, op[1], W,
                                 dst(&o), N));
    o = out_of(dev, (size_t)M * N * 4, NULL);
    snprintf(what, sizeof what, "pk_hamming i32 (%s)", w);
    CALL(r, what, &o, pk_hamming(r->ctx, PK_HAMMING_I32, M, N, K, op[0], W, op[1], W,
                                 dst(&o), N));
    /* Many queries, then few over a large database: distances, then indices. */
    o = out_of(dev, (size_t)M * T * 12, NULL);
    snprintf(what, sizeof what, "pk_hamming_topk by queries (%s)", w);
    CALL(r, what, &o, pk_hamming_topk(r->ctx, M, N, K, op[0], W, op[1], W, T, dst(&o),
                                      (int64_t *)((char *)dst(&o) + M * T * 4)));
    o = out_of(dev, (size_t)QD * T * 12, NULL);
    snprintf(what, sizeof what, "pk_hamming_topk by database (%s)", w);
    CALL(r, what, &o, pk_hamming_topk(r->ctx, QD, ND, KD, op[2] + 100 * WD, WD, op[2], WD,
                                      T, dst(&o), (int64_t *)((char *)dst(&o) + QD * T * 4)));
    o = out_of(dev, (size_t)M * K * 4, NULL);
    snprintf(what, sizeof what, "pk_bits_unpack (%s)", w);
    CALL(r, what, &o, pk_bits_unpack(r->ctx, PK_BITS_F32_SIGN, M, K, op[0], W, dst(&o), K));
}

static const pk_reducer_desc desc_value = {.input = PK_F64, .acc = PK_F64, .map = "x * x",
                                           .combine = "a + b", .final = "sqrt(r)"};
static const pk_reducer_desc desc_arg = {.input = PK_F32, .acc = PK_F64,
                                         .kind = PK_REDUCER_ARG, .map = "fabs(x - 0.5)",
                                         .combine = "fmax(a, b)", .identity = NAN};

static void reducers(run *r)
{
    pk_reducer *red[2] = {NULL, NULL};
    const pk_reducer_desc *desc[2] = {&desc_value, &desc_arg};
    char what[96];
    for (int j = 0; j < 2; j++) {
        snprintf(what, sizeof what, "pk_reducer_create %s", j ? "arg" : "value");
        OOM_CALL(r, what, &red[j], 0, OOM_NOTHING, pk_reducer_create(r->ctx, desc[j], &red[j]));
        if (!red[j]) goto done;
    }
    static const int64_t shape[][4] = {
        /* rows, cols, ld, axis: few columns; columns as lines; short rows
         * as lines; a row per slice group; few long rows */
        {20000, 8, 8, 0}, {500, 300, 300, 0}, {2000, 100, 100, 1}, {64, 5000, 5000, 1},
        {3, 100000, 100000, 1},
    };
    for (int dev = 0; dev < ndev_cases; dev++)
        for (int j = 0; j < 2; j++) {
            const pk_dtype t = desc[j]->input;
            outbuf o = out_of(dev, 8, NULL);
            snprintf(what, sizeof what, "pk_reducer_reduce %s (%s)", j ? "arg" : "value",
                     dev ? "device" : "host");
            CALL(r, what, &o, pk_reducer_reduce(r->ctx, red[j], in(dev, t), N_MID, dst(&o)));
            for (size_t c = 0; c < sizeof shape / sizeof shape[0]; c++) {
                const int64_t *s = shape[c];
                o = out_of(dev, (size_t)(s[3] ? s[0] : s[1]) * 8, NULL);
                snprintf(what, sizeof what, "pk_reducer_reduce_axis %s %lld x %lld axis %lld (%s)",
                         j ? "arg" : "value", (long long)s[0], (long long)s[1], (long long)s[3],
                         dev ? "device" : "host");
                CALL(r, what, &o,
                     pk_reducer_reduce_axis(r->ctx, red[j], in(dev, t), s[0], s[1], s[2],
                                            (int)s[3], dst(&o)));
            }
        }
done:
    pk_reducer_destroy(red[0]);
    pk_reducer_destroy(red[1]);
}

static void scenario(run *r)
{
    if (oom_ctx_create(r, PK_BACKEND_CUDA) != PK_OK) return;
    for (int dev = 0; dev < ndev_cases; dev++) {
        reductions(r, dev);
        blas(r, dev);
        bits(r, dev);
    }
    if (have_reducers) reducers(r);
    pk_ctx_destroy(r->ctx);
}

static void one_run(run *r) { oom_run_scenario(r, scenario); }

/* ---- what a run leaves behind ------------------------------------------------- */

/* A run armed to fail an allocation it never reaches: counted, nothing
 * fails, results compared to the golden run's. */
#define NEVER ((int64_t)1 << 60)

static size_t heap0, heap_top, dev0;
static int grew_printed;

static void after(run *r)
{
    if (r->k == 0) {
        /* One more run to settle lazily made state (module loading, the
         * runtime's caches); the levels after it are the baseline. */
        run warm = {.k = NEVER};
        one_run(&warm);
        heap0 = heap_top = pk_test_heap_in_use();
        dev0 = cu_free_memory();
        return;
    }
    const size_t dev = cu_free_memory(), heap = pk_test_heap_in_use();
    PK_CHECK(dev >= dev0, "run k = %lld (an allocation failed: %s): device memory leaked: %zu "
             "bytes less free", (long long)r->k, r->nomem ? "PK_ERR_NOMEM" : "absorbed",
             dev0 - dev);
    if (heap > heap_top) {
        if (grew_printed++ < 10)
            printf("note: heap in use grew by %zu bytes after run k = %lld (%s)\n",
                   heap - heap_top, (long long)r->k, r->nomem ? "PK_ERR_NOMEM" : "absorbed");
        heap_top = heap;
    }
}

static void check_heap(void)
{
    size_t least = (size_t)-1;
    for (int i = 0; i < 2; i++) {
        run again = {.k = NEVER};
        one_run(&again);
        size_t h = pk_test_heap_in_use();
        least = h < least ? h : least;
    }
    const char *v = getenv("PK_TEST_HEAP_SLACK");
    const size_t slack = v ? (size_t)strtoull(v, NULL, 10) : (size_t)64 << 10;
    printf("heap in use: %zu bytes after the warm-up, %zu after every run (%+lld); device free "
           "memory %zu, now %zu\n",
           heap0, least, (long long)least - (long long)heap0, dev0, cu_free_memory());
    PK_CHECK(least <= heap0 + slack, "the heap in use grew by %zu bytes over the runs "
             "(PK_TEST_HEAP_SLACK %zu)", least - heap0, slack);
}

int main(void)
{
    pk_test_init("test_cuda_oom");
    pk_ctx_destroy(cu_ctx()); /* or skip: no GPU */
    cu_note_no_rt();
    ndev_cases = CU_HAVE_RT ? 2 : 1;
    hf = pk_test_alloc(N_BIG * 4), hd = pk_test_alloc(N_BIG * 8);
    hi = pk_test_alloc(N_BIG * 4), hu = pk_test_alloc(N_BIG * 8);
    pk_test_fill(PK_F32, hf, N_BIG, PK_TEST_UNIFORM);
    pk_test_fill(PK_F64, hd, N_BIG, PK_TEST_NEARONE);
    pk_test_fill(PK_I32, hi, N_BIG, PK_TEST_UNIFORM);
    pk_test_fill(PK_U64, hu, N_BIG, PK_TEST_UNIFORM);
    hout = pk_test_alloc(OUT_BYTES);
    const size_t bits_bytes[3] = {(size_t)M * W * 8, (size_t)N * W * 8, (size_t)ND * WD * 8};
    for (int b = 0; b < 3; b++) hbits[b] = pk_test_alloc(bits_bytes[b]);
    if (CU_HAVE_RT) {
        df = cu_dev(N_BIG * 4), dd = cu_dev(N_BIG * 8), di = cu_dev(N_BIG * 4);
        du = cu_dev(N_BIG * 8), dout = cu_dev(OUT_BYTES);
        cu_put(df, hf, N_BIG * 4), cu_put(dd, hd, N_BIG * 8), cu_put(di, hi, N_BIG * 4);
        cu_put(du, hu, N_BIG * 8);
        for (int b = 0; b < 3; b++) dbits[b] = cu_dev(bits_bytes[b]);
    }
    /* Reducers need NVRTC on this machine; without it, their calls are left out. */
    pk_ctx *ctx = cu_ctx();
    pk_reducer *red = NULL;
    if (pk_reducer_create(ctx, &desc_value, &red) != PK_OK) {
        printf("note: reducers left out: %s\n", pk_ctx_error(ctx));
        have_reducers = 0;
    }
    pk_reducer_destroy(red);
    pk_ctx_destroy(ctx);

    oom_each_allocation("test_cuda_oom", one_run, after);
    check_heap();
    oom_free_golden();
    free(hf), free(hd), free(hi), free(hu), free(hout);
    for (int b = 0; b < 3; b++) free(hbits[b]), cu_free(dbits[b]);
    cu_free(df), cu_free(dd), cu_free(di), cu_free(du), cu_free(dout);
    return pk_test_finish("test_cuda_oom");
}
