/* Leaks: 10^5 calls of every kernel, small sizes, on the CPU backend, then
 * (where a GPU is) on the CUDA backend with host pointers and again with
 * device pointers: the heap in use (mallinfo2) and, on the GPU, the
 * device's free memory (cudaMemGetInfo) back to their level after a
 * warm-up of the same calls. Then 200 contexts and 200 pairs of reducers
 * created and destroyed, the same way. Every call must succeed; the
 * results themselves are the kernel tests' business.
 *
 * PK_TEST_CALLS=C changes the 10^5 (the sanitizer build makes fewer:
 * tests/CMakeLists.txt); PK_TEST_QUICK: 2000. PK_TEST_HEAP_SLACK: the heap
 * growth allowed, bytes (default 64 KiB: libgomp and the CUDA runtime keep
 * some state; a leak of one chunk a call is millions of bytes here).
 * Without a GPU the CUDA part says so and the CPU part still runs. */
#include "cuda_util.h"

#define NX 4096
#define OUT_BYTES 65536

enum kind {
    K_SUM_F32, K_ARGMAX_F64, K_MIN_I32, K_AXIS0_F32, K_AXIS1_F64, K_DOT_F32, K_DOT_F64,
    K_AXPY_F32, K_GEMM_FP32, K_GEMM_ACCURATE, K_GEMM_TF32, K_GEMM_F64, K_PACK, K_UNPACK,
    K_BGEMM, K_HAMMING, K_TOPK, K_RED, K_RED_AXIS, NKINDS
};
static const char *const kind_name[NKINDS] = {
    "reduce sum f32", "reduce argmax f64", "reduce min i32", "reduce_axis 0 f32",
    "reduce_axis 1 f64", "dot f32", "dot f64", "axpy f32", "gemm fp32", "gemm fp32_accurate",
    "gemm tf32", "gemm f64", "bits_pack", "bits_unpack", "bgemm", "hamming u16",
    "hamming_topk", "reducer_reduce", "reducer_reduce_axis"};

/* Inputs on the host and (with the runtime) the device; outputs likewise. */
static float *hf, *df;
static double *hd, *dd;
static int32_t *hi, *di;
static uint64_t *hb, *db;
static unsigned char *hout, *dout;

static const pk_reducer_desc desc_value = {.input = PK_F32, .acc = PK_F64, .map = "x * x",
                                           .combine = "a + b", .final = "sqrt(r)"};
static const pk_reducer_desc desc_arg = {.input = PK_F64, .acc = PK_F64,
                                         .kind = PK_REDUCER_ARG, .map = "fabs(x)",
                                         .combine = "fmax(a, b)", .identity = NAN};

static pk_status call(pk_ctx *ctx, pk_reducer *const red[2], enum kind k, int dev, long i)
{
    const float *xf = dev ? df : hf;
    const double *xd = dev ? dd : hd;
    const int32_t *xi = dev ? di : hi;
    const uint64_t *b = dev ? db : hb;
    void *out = dev ? (void *)dout : hout;
    const float a0 = 0.0f, one = 1.0f, zero = 0.0f;
    const double d1 = 1.0, d0 = 0.0;
    const int64_t off = i % 7; /* a few alignments */
    switch (k) {
    case K_SUM_F32: return pk_reduce(ctx, PK_SUM, PK_F32, xf + off, 257, out);
    case K_ARGMAX_F64: return pk_reduce(ctx, PK_ARGMAX, PK_F64, xd, 100 + off, out);
    case K_MIN_I32: return pk_reduce(ctx, PK_MIN, PK_I32, xi + off, 1000, out);
    case K_AXIS0_F32: return pk_reduce_axis(ctx, PK_SUM, PK_F32, xf, 16, 33, 33, 0, out);
    case K_AXIS1_F64: return pk_reduce_axis(ctx, PK_MAX, PK_F64, xd, 33, 16, 17, 1, out);
    case K_DOT_F32: return pk_dot(ctx, PK_F32, 300, xf, xf + off + 1, out);
    case K_DOT_F64: return pk_dot(ctx, PK_F64, 301, xd + off, xd, out);
    case K_AXPY_F32: return pk_axpy(ctx, PK_F32, 300, &a0, xf, out); /* y unchanged */
    case K_GEMM_FP32:
    case K_GEMM_ACCURATE:
    case K_GEMM_TF32:
        return pk_gemm(ctx, PK_F32,
                       k == K_GEMM_FP32 ? PK_GEMM_FP32
                       : k == K_GEMM_TF32 ? PK_GEMM_TF32 : PK_GEMM_FP32_ACCURATE,
                       (pk_trans)(i & 1), PK_NO_TRANS, 16, 24, 20, &one, xf, 24, xf + 600, 24,
                       &zero, out, 24);
    case K_GEMM_F64:
        return pk_gemm(ctx, PK_F64, PK_GEMM_FP32, PK_NO_TRANS, (pk_trans)(i & 1), 12, 10, 14,
                       &d1, xd, 14, xd + 300, 14, &d0, out, 10);
    case K_PACK: return pk_bits_pack(ctx, PK_BITS_F32_SIGN, 8, 100, xf, 100, out, 2);
    case K_UNPACK: return pk_bits_unpack(ctx, PK_BITS_F32_SIGN, 8, 100, b, 2, out, 100);
    case K_BGEMM: return pk_bgemm(ctx, 8, 9, 100, b, 2, b + 16, 2, out, 9);
    case K_HAMMING: return pk_hamming(ctx, PK_HAMMING_U16, 8, 9, 100, b, 2, b + 16, 2, out, 9);
    case K_TOPK:
        return pk_hamming_topk(ctx, 4, 32, 128, b, 2, b + 8, 2, 5, out,
                               (int64_t *)(void *)((char *)out + 4 * 5 * 4));
    case K_RED: return pk_reducer_reduce(ctx, red[0], xf + off, 500, out);
    default: return pk_reducer_reduce_axis(ctx, red[1], xd, 20, 30, 31, (int)(i & 1), out);
    }
}

static size_t slack;

/* Device memory for the device-pointer cases: a GPU and the runtime. */
static int have_gpu(void)
{
#ifdef PK_TEST_CUDA
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return n > 0;
#else
    return 0;
#endif
}

typedef struct level {
    size_t heap, dev;
} level;

static level measure(int cuda)
{
    level l = {.dev = cuda ? cu_free_memory() : 0};
    l.heap = pk_test_heap_in_use();
    return l;
}

static void compare(const char *what, level before, level after)
{
    printf("%s: heap in use %zu -> %zu bytes (%+lld)", what, before.heap, after.heap,
           (long long)after.heap - (long long)before.heap);
    if (before.dev) printf(", device free %zu -> %zu", before.dev, after.dev);
    printf("\n");
    PK_CHECK(after.heap <= before.heap + slack, "%s: the heap grew by %zu bytes "
             "(PK_TEST_HEAP_SLACK %zu)", what, after.heap - before.heap, slack);
    PK_CHECK(after.dev >= before.dev, "%s: device memory leaked: %zu bytes less free", what,
             before.dev - after.dev);
}

/* calls of each kind in turn on ctx; false after a failed call. */
static int run(pk_ctx *ctx, pk_reducer *const red[2], int cuda, int dev, long calls)
{
    for (int k = 0; k < NKINDS; k++) {
        if (k == K_GEMM_TF32 && !cuda) continue; /* a CUDA mode */
        for (long i = 0; i < calls; i++) {
            pk_status s = call(ctx, red, (enum kind)k, dev, i);
            if (s != PK_OK) {
                PK_CHECK(0, "%s (%s, %s pointers), call %ld: %s", kind_name[k],
                         cuda ? "CUDA" : "CPU", dev ? "device" : "host", i, pk_ctx_error(ctx));
                return 0;
            }
        }
    }
    PK_CHECK(pk_ctx_sync(ctx) == PK_OK, "pk_ctx_sync: %s", pk_ctx_error(ctx));
    return 1;
}

static void backend(pk_backend be, long calls)
{
    const int cuda = be == PK_BACKEND_CUDA;
    pk_ctx *ctx = NULL;
    pk_status s = pk_ctx_create(&ctx, be, 0);
    if (cuda && s == PK_ERR_NO_DEVICE) {
        printf("CUDA part skipped: %s\n", pk_last_create_error());
        return;
    }
    PK_CHECK(s == PK_OK, "pk_ctx_create %s: %s", pk_backend_name(be), pk_last_create_error());
    if (s != PK_OK) return;
    pk_reducer *red[2] = {NULL, NULL};
    if (pk_reducer_create(ctx, &desc_value, &red[0]) != PK_OK ||
        pk_reducer_create(ctx, &desc_arg, &red[1]) != PK_OK) {
        printf("FAIL: pk_reducer_create (%s): %s\n", pk_backend_name(be), pk_ctx_error(ctx));
        exit(1);
    }
    const char *name = cuda ? "CUDA" : "CPU";
    char what[96];
    for (int dev = 0; dev < (cuda && have_gpu() ? 2 : 1); dev++) {
        if (!run(ctx, red, cuda, dev, calls / 10 + 1)) break; /* warm-up */
        level before = measure(cuda);
        if (!run(ctx, red, cuda, dev, calls)) break;
        snprintf(what, sizeof what, "%s, %s pointers, %ld calls of each of %d kernels", name,
                 dev ? "device" : "host", calls, NKINDS - !cuda);
        compare(what, before, measure(cuda));
    }
    /* Contexts, and reducers (compiled once: then from the memory cache). */
    level before = {0};
    for (int i = 0; i < 220; i++) {
        if (i == 20) before = measure(cuda);
        pk_ctx *c = NULL;
        pk_reducer *r[2] = {NULL, NULL};
        PK_CHECK(pk_ctx_create(&c, be, 0) == PK_OK, "%s", pk_last_create_error());
        if (!c) break;
        PK_CHECK(pk_reducer_create(c, &desc_value, &r[0]) == PK_OK &&
                     pk_reducer_create(c, &desc_arg, &r[1]) == PK_OK,
                 "pk_reducer_create: %s", pk_ctx_error(c));
        pk_reducer_destroy(r[0]), pk_reducer_destroy(r[1]);
        pk_ctx_destroy(c);
    }
    snprintf(what, sizeof what, "%s, 200 contexts and 400 reducers", name);
    compare(what, before, measure(cuda));
    pk_reducer_destroy(red[0]), pk_reducer_destroy(red[1]);
    pk_ctx_destroy(ctx);
}

int main(void)
{
    pk_test_init("test_leaks");
    const char *v = getenv("PK_TEST_CALLS");
    long calls = v ? strtol(v, NULL, 10) : getenv("PK_TEST_QUICK") ? 2000 : 100000;
    if (calls < 1) calls = 100000;
    v = getenv("PK_TEST_HEAP_SLACK");
    slack = v ? (size_t)strtoull(v, NULL, 10) : (size_t)64 << 10;
#ifndef PK_TEST_HAVE_MALLINFO2
    printf("note: no mallinfo2 (glibc < 2.33): the heap is not measured\n");
#endif
    hf = cu_host(NX * 4), hd = cu_host(NX * 8), hi = cu_host(NX * 4), hb = cu_host(NX * 8);
    hout = cu_host(OUT_BYTES);
    pk_test_fill(PK_F32, hf, NX, PK_TEST_UNIFORM);
    pk_test_fill(PK_F64, hd, NX, PK_TEST_UNIFORM);
    pk_test_fill(PK_I32, hi, NX, PK_TEST_UNIFORM);
    pk_test_fill(PK_U64, hb, NX, PK_TEST_UNIFORM);
    memset(hout, 0, OUT_BYTES);
    backend(PK_BACKEND_CPU, calls);
    const int gpu = have_gpu();
    if (gpu) {
        df = cu_dev(NX * 4), dd = cu_dev(NX * 8), di = cu_dev(NX * 4), db = cu_dev(NX * 8);
        dout = cu_dev(OUT_BYTES);
        cu_put(df, hf, NX * 4), cu_put(dd, hd, NX * 8), cu_put(di, hi, NX * 4);
        cu_put(db, hb, NX * 8), cu_put(dout, hout, OUT_BYTES);
    }
    backend(PK_BACKEND_CUDA, calls);
    if (gpu) cu_free(df), cu_free(dd), cu_free(di), cu_free(db), cu_free(dout);
    free(hf), free(hd), free(hi), free(hb), free(hout);
    return pk_test_finish("test_leaks");
}
