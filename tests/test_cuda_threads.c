/* Threads on one GPU: 8 threads, each with its own CUDA context on device 0,
 * make 10^4 calls each at once, mixing pk_reduce (sum, argmax), pk_dot,
 * pk_axpy, pk_reduce_axis, pk_gemm (FP32 and TF32), pk_bgemm and two
 * reducers built once and shared read-only by every context
 * (pk_reducer_reduce, pk_reducer_reduce_axis), on host and on device
 * pointers; every result must have the bits of the same call made serially,
 * before the threads start, on one context. Half the threads give their
 * context a stream of their own (pk_ctx_set_stream, non-blocking), the
 * others keep the context's. A few cases are long enough to stage host
 * inputs in several chunks.
 *
 * PK_TEST_THREADS=T and PK_TEST_CALLS=C change the 8 x 10^4;
 * PK_TEST_QUICK (compute-sanitizer) makes 100 calls a thread. Without a
 * GPU: skipped. The CPU's threads test is test_threads.c. */
#include "cuda_util.h"
#include "threads_util.h"

#define NCASES 64
#define BIG ((int64_t)2100007) /* f32 on the host: staged in two chunks */
#define ROWS 96
#define COLS 64
#define GM 64 /* gemm: GM x GN x GK */
#define GN 48
#define GK 96
#define BM 32 /* bgemm: BM x BN x BK bits */
#define BN 40
#define BK 300
#define BW ((BK + 63) / 64)
#define OUT_MAX (4 * GM * GN > 4 * 3000 ? 4 * GM * GN : 4 * 3000)

enum kind {
    K_SUM_F32, K_ARGMAX_F64, K_DOT_F64, K_AXPY_F32, K_AXIS_F32, K_GEMM_FP32, K_GEMM_TF32,
    K_BGEMM, K_RED, K_RED_AXIS, NKINDS
};

typedef struct tcase {
    enum kind kind;
    int dev;            /* device pointers (inputs and output) */
    int64_t off, n;     /* 1-D: x[off, off + n) */
    int64_t rows, cols; /* 2-D: a rows x cols block at off, ld COLS */
    int axis;
    size_t bytes;       /* of the result */
    unsigned char want[OUT_MAX];
} tcase;

/* Inputs: host (h*) and device (d*) copies. */
static float *hf, *df, *hmat, *dmat;
static double *hd, *dd;
static uint64_t *hbits, *dbits;
static pk_reducer *red_value, *red_arg; /* shared by every context */
static tcase cases[NCASES];

static const float *xf(const tcase *c) { return c->dev ? df : hf; }
static const double *xd(const tcase *c) { return c->dev ? dd : hd; }
static const float *mat(const tcase *c) { return (c->dev ? dmat : hmat) + c->off; }
static const uint64_t *bits(const tcase *c) { return c->dev ? dbits : hbits; }

/* What a thread calls with: its context, and its output buffers (hout on
 * the host; dout on the device for device cases), stream (NULL: the
 * context's own). */
typedef struct tctx {
    pk_ctx *ctx;
    unsigned char *hout;
    void *dout;
#ifdef PK_TEST_CUDA
    cudaStream_t stream;
#endif
} tctx;

static int own_stream(const tctx *t)
{
#ifdef PK_TEST_CUDA
    return t->stream != NULL;
#else
    (void)t;
    return 0;
#endif
}

/* Copy bytes (any direction): on the thread's stream, or synchronously
 * after the context's work (cudaMemcpy on the legacy stream, which the
 * context's own blocking stream orders with). */
static void copy(const tctx *t, void *dst, const void *src, size_t bytes)
{
#ifdef PK_TEST_CUDA
    if (own_stream(t)) {
        CU_OK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, t->stream));
        CU_OK(cudaStreamSynchronize(t->stream));
    } else {
        CU_OK(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault));
    }
#else
    (void)t, (void)dst, (void)src, (void)bytes;
#endif
}

/* One call of case c on t; its result in t->hout. */
static pk_status call(const tctx *t, const tcase *c)
{
    pk_ctx *ctx = t->ctx;
    void *out = c->dev ? t->dout : t->hout;
    /* axpy's y and gemm's C (beta = 0.5) start as a copy of the inputs. */
    if (c->kind == K_AXPY_F32 || c->kind == K_GEMM_FP32) {
        const void *init = c->kind == K_AXPY_F32 ? (const void *)(hf + c->off + 1) : hf + 7;
        if (c->dev) copy(t, out, init, c->bytes);
        else memcpy(out, init, c->bytes);
    }
    const float one = 1.0f, half = 0.5f, zero = 0.0f, a = -0.75f;
    pk_status s;
    switch (c->kind) {
    case K_SUM_F32: s = pk_reduce(ctx, PK_SUM, PK_F32, xf(c) + c->off, c->n, out); break;
    case K_ARGMAX_F64: s = pk_reduce(ctx, PK_ARGMAX, PK_F64, xd(c) + c->off, c->n, out); break;
    case K_DOT_F64: s = pk_dot(ctx, PK_F64, c->n, xd(c) + c->off, xd(c) + c->off + 3, out); break;
    case K_AXPY_F32: s = pk_axpy(ctx, PK_F32, c->n, &a, xf(c) + c->off, out); break;
    case K_AXIS_F32:
        s = pk_reduce_axis(ctx, PK_SUM, PK_F32, mat(c), c->rows, c->cols, COLS, c->axis, out);
        break;
    case K_GEMM_FP32:
    case K_GEMM_TF32:
        s = pk_gemm(ctx, PK_F32, c->kind == K_GEMM_FP32 ? PK_GEMM_FP32 : PK_GEMM_TF32,
                    (pk_trans)c->axis, (pk_trans)(c->off & 1), GM, GN, GK, &one,
                    xf(c) + c->off, GK + 1, xf(c) + c->off + GM * GK + 500, GN + 48,
                    c->kind == K_GEMM_FP32 ? &half : &zero, out, GN);
        break;
    case K_BGEMM:
        s = pk_bgemm(ctx, BM, BN, BK, bits(c) + c->off * BW, BW, bits(c), BW, out, BN);
        break;
    case K_RED: s = pk_reducer_reduce(ctx, red_value, xf(c) + c->off, c->n, out); break;
    default:
        s = pk_reducer_reduce_axis(ctx, red_arg, mat(c), c->rows, c->cols, COLS, c->axis, out);
    }
    if (s == PK_OK && c->dev) {
        if (!own_stream(t) && (s = pk_ctx_sync(ctx)) != PK_OK) return s;
        copy(t, t->hout, out, c->bytes);
    }
    return s;
}

static void make_cases(void)
{
    for (int k = 0; k < NCASES; k++) {
        tcase *c = &cases[k];
        c->kind = (enum kind)(k % NKINDS);
        c->dev = CU_HAVE_RT && (k / NKINDS) % 2 == 1;
        /* The later cases of the 1-D kinds long, on host and device pointers. */
        const int big = k >= 4 * NKINDS && (c->kind == K_SUM_F32 || c->kind == K_ARGMAX_F64 ||
                                            c->kind == K_DOT_F64 || c->kind == K_RED);
        c->n = big ? BIG - 1000 + pk_test_below(500) : 1 + pk_test_below(3000);
        c->off = pk_test_below(BIG - c->n - 8);
        c->rows = 1 + pk_test_below(ROWS), c->cols = 1 + pk_test_below(COLS);
        c->axis = (int)pk_test_below(2);
        if (c->kind == K_AXIS_F32 || c->kind == K_RED_AXIS)
            c->off = pk_test_below(ROWS - c->rows + 1) * COLS + pk_test_below(COLS - c->cols + 1);
        if (c->kind == K_GEMM_FP32 || c->kind == K_GEMM_TF32)
            c->off = pk_test_below(100000);
        if (c->kind == K_BGEMM) c->off = pk_test_below(BN - BM + 1);
        const int64_t nout = c->axis == 0 ? c->cols : c->rows;
        switch (c->kind) {
        case K_SUM_F32: case K_RED: c->bytes = 4; break;
        case K_AXPY_F32: c->n = c->n > 3000 ? 3000 : c->n; c->bytes = 4 * (size_t)c->n; break;
        case K_AXIS_F32: c->bytes = 4 * (size_t)nout; break;
        case K_RED_AXIS: c->bytes = 8 * (size_t)nout; break;
        case K_GEMM_FP32: case K_GEMM_TF32: c->bytes = 4 * GM * GN; break;
        case K_BGEMM: c->bytes = 4 * BM * BN; break;
        default: c->bytes = 8;
        }
    }
}

typedef tw_worker worker;

static long ncalls = 10000;

static void *work(void *arg)
{
    worker *w = arg;
    tctx t = {0};
    if (pk_ctx_create(&t.ctx, PK_BACKEND_CUDA, 0) != PK_OK) {
        snprintf(w->first, sizeof w->first, "pk_ctx_create: %s", pk_last_create_error());
        w->errors++;
        return NULL;
    }
    t.hout = cu_host(OUT_MAX);
    t.dout = cu_dev(OUT_MAX);
#ifdef PK_TEST_CUDA
    if (w->id % 2) {
        CU_OK(cudaStreamCreateWithFlags(&t.stream, cudaStreamNonBlocking));
        if (pk_ctx_set_stream(t.ctx, t.stream) != PK_OK) {
            snprintf(w->first, sizeof w->first, "set_stream: %s", pk_ctx_error(t.ctx));
            w->errors++;
        }
    }
#endif
    /* Each thread walks the cases in its own order. */
    for (long j = 0; j < ncalls && !w->errors; j++) {
        const tcase *c = &cases[(w->id * 37 + j * (2 * w->id + 1)) % NCASES];
        memset(t.hout, 0xA5, OUT_MAX);
        pk_status s = call(&t, c);
        char which[80];
        snprintf(which, sizeof which, "call %ld: case %d (kind %d, %s pointers)", j,
                 (int)(c - cases), (int)c->kind, c->dev ? "device" : "host");
        tw_record(w, s, pk_ctx_error(t.ctx), memcmp(t.hout, c->want, c->bytes) == 0, which);
    }
    pk_ctx_destroy(t.ctx);
#ifdef PK_TEST_CUDA
    if (t.stream) CU_OK(cudaStreamDestroy(t.stream));
#endif
    cu_free(t.dout);
    free(t.hout);
    return NULL;
}

/* Independent checks of some serial results (the kernels themselves are
 * tested in test_cuda_reduce.c, test_cuda_gemm.c, test_cuda_bits.c...). */
static void check_serial(const tcase *c)
{
    char why[160];
    if (c->kind == K_SUM_F32)
        PK_CHECK(cu_check(PK_SUM, PK_F32, hf + c->off, c->n, 1, c->want, why, sizeof why),
                 "case %d: %s", (int)(c - cases), why);
    else if (c->kind == K_ARGMAX_F64)
        PK_CHECK(cu_check(PK_ARGMAX, PK_F64, hd + c->off, c->n, 1, c->want, why, sizeof why),
                 "case %d: %s", (int)(c - cases), why);
    else if (c->kind == K_BGEMM) {
        const int32_t *C = (const int32_t *)(const void *)c->want;
        for (int64_t i = 0; i < BM; i++)
            for (int64_t j = 0; j < BN; j++) {
                int64_t h = 0;
                for (int q = 0; q < BW; q++) {
                    uint64_t x = hbits[(c->off + i) * BW + q] ^ hbits[j * BW + q];
                    if (q == BW - 1 && (BK % 64) != 0) x &= (1ull << (BK % 64)) - 1; /* padding */
                    h += __builtin_popcountll(x);
                }
                PK_CHECK(C[i * BN + j] == BK - 2 * h, "case %d: bgemm (%lld, %lld): %d, want %lld",
                         (int)(c - cases), (long long)i, (long long)j, C[i * BN + j],
                         (long long)(BK - 2 * h));
            }
    }
}

static void *to_dev(const void *h, size_t bytes)
{
    if (!CU_HAVE_RT) return NULL;
    void *d = cu_dev(bytes);
    cu_put(d, h, bytes);
    return d;
}

int main(void)
{
    pk_test_init("test_cuda_threads");
    const int nthreads = (int)tw_env_long("PK_TEST_THREADS", 8, 1, 1024);
    ncalls = tw_env_long("PK_TEST_CALLS", getenv("PK_TEST_QUICK") ? 100 : 10000, 1, 100000000);
    pk_ctx *ctx = cu_ctx(); /* or skip: no GPU */
    cu_note_no_rt();

    hf = cu_host(BIG * sizeof *hf), hd = cu_host(BIG * sizeof *hd);
    hmat = cu_host(ROWS * COLS * sizeof *hmat), hbits = cu_host(BN * BW * 8);
    pk_test_fill(PK_F32, hf, BIG, PK_TEST_UNIFORM);
    pk_test_fill(PK_F64, hd, BIG, PK_TEST_UNIFORM);
    pk_test_fill(PK_F32, hmat, ROWS * COLS, PK_TEST_SMALL); /* ties for the ARG reducer */
    pk_test_fill(PK_U64, hbits, BN * BW, PK_TEST_UNIFORM);   /* padding bits too */
    df = to_dev(hf, BIG * 4), dd = to_dev(hd, BIG * 8);
    dmat = to_dev(hmat, ROWS * COLS * 4), dbits = to_dev(hbits, BN * BW * 8);

    tw_make_reducers(ctx, &red_value, &red_arg);
    make_cases();
    tctx serial = {.ctx = ctx, .hout = cu_host(OUT_MAX), .dout = cu_dev(OUT_MAX)};
    for (int k = 0; k < NCASES; k++) {
        memset(serial.hout, 0xA5, OUT_MAX);
        pk_status s = call(&serial, &cases[k]);
        PK_CHECK(s == PK_OK, "serial case %d: %s", k, pk_ctx_error(ctx));
        memcpy(cases[k].want, serial.hout, cases[k].bytes);
        check_serial(&cases[k]);
    }
    free(serial.hout), cu_free(serial.dout);
    pk_ctx_destroy(ctx); /* the reducers outlive the context that built them */

    worker *w = calloc((size_t)nthreads, sizeof *w);
    if (!w) return printf("FAIL: no memory\n"), 1;
    for (int t = 0; t < nthreads; t++) w[t].id = t;
    const long calls = tw_run(nthreads, w, work, ncalls);
    printf("%d threads (a CUDA context each, one GPU) x %ld calls: %ld calls, %d cases\n",
           nthreads, ncalls, calls, NCASES);
    pk_reducer_destroy(red_value), pk_reducer_destroy(red_arg);
    free(w), free(hf), free(hd), free(hmat), free(hbits);
    cu_free(df), cu_free(dd), cu_free(dmat), cu_free(dbits);
    return pk_test_finish("test_cuda_threads");
}
