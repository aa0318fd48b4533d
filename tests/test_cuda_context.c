/* The CUDA backend's context rules: device selection errors, adopting the
 * caller's stream (and going back), asynchronous device results ordered on
 * the stream, no device or pinned memory growth across 10^5 calls, n beyond
 * 2^31 (2^31 + 17 f32 on the device, 8.6 GB, skipped when the device lacks
 * the memory or PK_TEST_QUICK is set). */
#include "cuda_util.h"

#ifdef PK_TEST_CUDA
#include <pthread.h>
#endif

static void check_create(void)
{
    pk_ctx *ctx = NULL;
    pk_status s = pk_ctx_create(&ctx, PK_BACKEND_CUDA, 1 << 20);
    PK_CHECK(s == PK_ERR_NO_DEVICE && ctx == NULL, "device 2^20: %s", pk_status_str(s));
    PK_CHECK(strstr(pk_last_create_error(), "device") != NULL, "message: %s",
             pk_last_create_error());
    s = pk_ctx_create(&ctx, PK_BACKEND_CUDA, 0);
    PK_CHECK(s == PK_OK && pk_ctx_backend(ctx) == PK_BACKEND_CUDA, "%s", pk_status_str(s));
    PK_CHECK(pk_ctx_set_threads(ctx, 3) == PK_OK, "set_threads is harmless");
    pk_ctx_destroy(ctx);
}

#ifdef PK_TEST_CUDA
/* Work on an adopted stream: results to device memory are ordered on it. */
static void check_stream(pk_ctx *ctx)
{
    const int64_t n = 1 << 22;
    float *h = cu_host((size_t)n * 4);
    for (int64_t i = 0; i < n; i++) h[i] = (float)(i % 1000) * 0.5f;
    float *dx = cu_dev((size_t)n * 4), *dy = cu_dev((size_t)n * 4);
    float *dout = cu_dev(64);
    cudaStream_t st;
    CU_OK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    PK_CHECK(pk_ctx_set_stream(ctx, st) == PK_OK, "%s", pk_ctx_error(ctx));
    CU_OK(cudaMemcpyAsync(dx, h, (size_t)n * 4, cudaMemcpyHostToDevice, st));
    /* y = 2x + 0 then sum(y) and dot(x, y) on the caller's stream. */
    CU_OK(cudaMemsetAsync(dy, 0, (size_t)n * 4, st));
    float two = 2.0f;
    PK_CHECK(pk_axpy(ctx, PK_F32, n, &two, dx, dy) == PK_OK, "%s", pk_ctx_error(ctx));
    PK_CHECK(pk_reduce(ctx, PK_SUM, PK_F32, dy, n, dout) == PK_OK, "%s", pk_ctx_error(ctx));
    PK_CHECK(pk_dot(ctx, PK_F32, n, dx, dy, dout + 1) == PK_OK, "%s", pk_ctx_error(ctx));
    PK_CHECK(pk_reduce(ctx, PK_ARGMAX, PK_F32, dy, n, dout + 2) == PK_OK, "%s",
             pk_ctx_error(ctx));
    float got[4];
    CU_OK(cudaMemcpyAsync(got, dout, 16, cudaMemcpyDeviceToHost, st));
    CU_OK(cudaStreamSynchronize(st));
    double sum = 0, dot = 0;
    for (int64_t i = 0; i < n; i++) sum += 2.0 * h[i], dot += 2.0 * (double)h[i] * h[i];
    PK_CHECK(got[0] == (float)sum, "sum on stream %.9g, expected %.9g", got[0], sum);
    PK_CHECK(got[1] == (float)dot, "dot on stream %.9g, expected %.9g", got[1], dot);
    int64_t am;
    memcpy(&am, got + 2, 8);
    PK_CHECK(am == 999, "argmax on stream %lld", (long long)am);
    /* Back to the context's own stream; pk_ctx_sync waits on it. */
    PK_CHECK(pk_ctx_set_stream(ctx, NULL) == PK_OK, "%s", pk_ctx_error(ctx));
    PK_CHECK(pk_reduce(ctx, PK_MAX, PK_F32, dy, n, dout + 3) == PK_OK, "%s", pk_ctx_error(ctx));
    PK_CHECK(pk_ctx_sync(ctx) == PK_OK, "%s", pk_ctx_error(ctx));
    CU_OK(cudaMemcpy(got, dout + 3, 4, cudaMemcpyDeviceToHost));
    PK_CHECK(got[0] == 999.0f, "max %.9g", got[0]);
    CU_OK(cudaStreamDestroy(st));
    cu_free(dx), cu_free(dy), cu_free(dout);
    free(h);
}

/* A stream of another device is refused at once (needs two GPUs). */
static void check_foreign_stream(pk_ctx *ctx)
{
    int ndev = 0;
    CU_OK(cudaGetDeviceCount(&ndev));
    if (ndev < 2 || CUDART_VERSION < 12080) {
        printf("foreign-device stream: skipped (one GPU, or CUDA < 12.8)\n");
        return;
    }
    cudaStream_t other;
    CU_OK(cudaSetDevice(1));
    CU_OK(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
    CU_OK(cudaSetDevice(0));
    pk_status s = pk_ctx_set_stream(ctx, other);
    PK_CHECK(s == PK_ERR_ARG && strstr(pk_ctx_error(ctx), "device"),
             "stream of device 1 on a device-0 context: %s (%s)", pk_status_str(s),
             pk_ctx_error(ctx));
    float one = 1.0f, r = 0.0f;
    PK_CHECK(pk_reduce(ctx, PK_SUM, PK_F32, &one, 1, &r) == PK_OK && r == 1.0f,
             "the context still works on its own stream: %s", pk_ctx_error(ctx));
    CU_OK(cudaStreamDestroy(other));
    printf("foreign-device stream: refused, checked\n");
}

/* 10^5 calls of every kind: free device memory does not move. */
static void check_leaks(pk_ctx *ctx, int quick)
{
    const int64_t n = 4099;
    float *h = cu_host((size_t)n * 4);
    for (int64_t i = 0; i < n; i++) h[i] = (float)pk_test_uniform(-1, 1);
    float *d = cu_dev((size_t)n * 4), *dout = cu_dev(64), *dy = cu_dev((size_t)n * 4);
    cu_put(d, h, (size_t)n * 4);
    cu_put(dy, h, (size_t)n * 4);
    /* Warm up: scratch and staging reach their sizes. */
    float r, y[64];
    double rd;
    pk_reduce(ctx, PK_SUM, PK_F32, h, n, &r);
    pk_reduce_axis(ctx, PK_SUM, PK_F32, h, 4099, 1, 1, 1, dy);
    pk_ctx_sync(ctx);
    size_t free0, total, free1;
    CU_OK(cudaMemGetInfo(&free0, &total));
    const int calls = quick ? 2000 : 100000;
    int failed = 0;
    for (int i = 0; i < calls; i++) {
        pk_status s;
        switch (i % 8) {
        case 0: s = pk_reduce(ctx, PK_SUM, PK_F32, d, n, dout); break;
        case 1: s = pk_reduce(ctx, PK_ARGMAX, PK_F32, d, n, dout); break;
        case 2: s = pk_reduce(ctx, PK_SUM, PK_F32, d, n, &r); break;
        case 3: s = pk_reduce(ctx, PK_MIN, PK_F32, h, n, &r); break;
        case 4: s = pk_dot(ctx, PK_F32, n, d, d, dout); break;
        case 5: s = pk_reduce_axis(ctx, PK_SUM, PK_F32, d, 64, 64, 64, i & 1, y); break;
        case 6: s = pk_reduce(ctx, PK_SUM, PK_F64, d, n / 2, &rd); break;
        default: {
            float a = 1e-9f;
            s = pk_axpy(ctx, PK_F32, n, &a, d, dy);
        }
        }
        if (s != PK_OK && failed++ < 3) PK_CHECK(0, "call %d: %s", i, pk_ctx_error(ctx));
    }
    PK_CHECK(pk_ctx_sync(ctx) == PK_OK, "%s", pk_ctx_error(ctx));
    CU_OK(cudaMemGetInfo(&free1, &total));
    printf("free device memory before %zu, after %d calls %zu\n", free0, calls, free1);
    PK_CHECK(free1 >= free0, "device memory shrank by %zu bytes over %d calls",
             free0 - free1, calls);
    cu_free(d), cu_free(dout), cu_free(dy);
    free(h);
    /* Contexts created and destroyed: nothing kept either. */
    CU_OK(cudaMemGetInfo(&free0, &total));
    for (int i = 0; i < (quick ? 20 : 200); i++) {
        pk_ctx *c = cu_ctx();
        float v[16] = {1, 2, 3};
        pk_reduce(c, PK_SUM, PK_F32, v, 16, &r);
        pk_ctx_destroy(c);
    }
    CU_OK(cudaMemGetInfo(&free1, &total));
    PK_CHECK(free1 >= free0, "contexts leaked %zu bytes", free0 - free1);
}

/* Page-locked host memory (cudaMallocHost): inputs are copied by DMA
 * directly, axpy's y written back by DMA; results as for pageable memory. */
static void check_pinned(pk_ctx *ctx)
{
    const int64_t n = 5000003; /* several staging chunks */
    float *x, *y, *out;
    CU_OK(cudaMallocHost((void **)&x, (size_t)n * 4));
    CU_OK(cudaMallocHost((void **)&y, (size_t)n * 4));
    CU_OK(cudaMallocHost((void **)&out, 64));
    float *py = cu_host((size_t)n * 4), *want = cu_host((size_t)n * 4);
    for (int64_t i = 0; i < n; i++) {
        x[i] = (float)pk_test_uniform(-1, 1);
        y[i] = py[i] = (float)pk_test_uniform(-1, 1);
    }
    float a = 0.75f, s1 = 0, s2 = 0;
    PK_CHECK(pk_reduce(ctx, PK_SUM, PK_F32, x, n, out) == PK_OK, "%s", pk_ctx_error(ctx));
    memcpy(py, x, (size_t)n * 4); /* the same data in pageable memory */
    PK_CHECK(pk_reduce(ctx, PK_SUM, PK_F32, py, n, &s2) == PK_OK, "%s", pk_ctx_error(ctx));
    s1 = out[0];
    PK_CHECK(memcmp(&s1, &s2, 4) == 0, "pinned sum %.9g, pageable %.9g", s1, s2);
    int64_t i1 = -1, i2 = -2;
    PK_CHECK(pk_reduce(ctx, PK_ARGMAX, PK_F32, x, n, &i1) == PK_OK, "%s", pk_ctx_error(ctx));
    PK_CHECK(pk_reduce(ctx, PK_ARGMAX, PK_F32, py, n, &i2) == PK_OK, "%s", pk_ctx_error(ctx));
    PK_CHECK(i1 == i2, "pinned argmax %lld, pageable %lld", (long long)i1, (long long)i2);
    for (int64_t i = 0; i < n; i++) {
        volatile float p = a * x[i];
        want[i] = p + y[i];
    }
    PK_CHECK(pk_axpy(ctx, PK_F32, n, &a, x, y) == PK_OK, "%s", pk_ctx_error(ctx));
    PK_CHECK(memcmp(y, want, (size_t)n * 4) == 0, "pinned axpy: y differs");
    CU_OK(cudaFreeHost(x));
    CU_OK(cudaFreeHost(y));
    CU_OK(cudaFreeHost(out));
    free(py), free(want);
}

/* Pointer kinds the classification must tell apart (the driver's query
 * first, the runtime's where that fails): managed memory is read in place
 * (results asynchronous, as for device memory), host memory registered
 * with cudaHostRegister is copied by DMA like cudaMallocHost memory. Each
 * must give the bits of the same data in pageable memory. */
static void check_where(pk_ctx *ctx)
{
    const int64_t n = 100003;
    float *m, *mout, *reg = cu_host((size_t)n * 4), *py = cu_host((size_t)n * 4);
    CU_OK(cudaMallocManaged((void **)&m, (size_t)n * 4, cudaMemAttachGlobal));
    CU_OK(cudaMallocManaged((void **)&mout, 64, cudaMemAttachGlobal));
    for (int64_t i = 0; i < n; i++) m[i] = reg[i] = py[i] = (float)pk_test_uniform(-1, 1);
    CU_OK(cudaHostRegister(reg, (size_t)n * 4, cudaHostRegisterDefault));
    float want = 0, got = 0;
    PK_CHECK(pk_reduce(ctx, PK_SUM, PK_F32, py, n, &want) == PK_OK, "%s", pk_ctx_error(ctx));
    PK_CHECK(pk_reduce(ctx, PK_SUM, PK_F32, m, n, mout) == PK_OK, "%s", pk_ctx_error(ctx));
    PK_CHECK(pk_ctx_sync(ctx) == PK_OK, "%s", pk_ctx_error(ctx));
    PK_CHECK(memcmp(mout, &want, 4) == 0, "managed sum %.9g, pageable %.9g", mout[0], want);
    PK_CHECK(pk_reduce(ctx, PK_SUM, PK_F32, reg, n, &got) == PK_OK, "%s", pk_ctx_error(ctx));
    PK_CHECK(memcmp(&got, &want, 4) == 0, "registered sum %.9g, pageable %.9g", got, want);
    float a = -1.5f;
    PK_CHECK(pk_axpy(ctx, PK_F32, n, &a, py, m) == PK_OK, "%s", pk_ctx_error(ctx));
    PK_CHECK(pk_axpy(ctx, PK_F32, n, &a, py, reg) == PK_OK, "%s", pk_ctx_error(ctx));
    PK_CHECK(pk_ctx_sync(ctx) == PK_OK, "%s", pk_ctx_error(ctx));
    int bad = 0;
    for (int64_t i = 0; i < n; i++) {
        volatile float p = a * py[i];
        float w = p + py[i];
        bad += memcmp(&m[i], &w, 4) != 0 || memcmp(&reg[i], &w, 4) != 0;
    }
    PK_CHECK(bad == 0, "axpy into managed / registered memory: %d elements differ", bad);
    CU_OK(cudaHostUnregister(reg));
    CU_OK(cudaFree(m));
    CU_OK(cudaFree(mout));
    free(reg), free(py);
}

/* A context used from a thread that made no CUDA call before (the driver's
 * launch needs the device's context current there; pk's device guard and
 * the runtime fallback must see to it). */
struct thread_job {
    pk_ctx *ctx;
    const float *d;
    float *dout;
    int64_t n;
    pk_status s1, s2;
};
static void *thread_call(void *p)
{
    struct thread_job *j = p;
    j->s1 = pk_reduce(j->ctx, PK_SUM, PK_F32, j->d, j->n, j->dout);
    float a = 2.0f;
    j->s2 = pk_axpy(j->ctx, PK_F32, j->n, &a, j->d, j->dout + 1);
    if (j->s2 == PK_OK) j->s2 = pk_ctx_sync(j->ctx);
    return NULL;
}
static void check_thread(pk_ctx *ctx)
{
    const int64_t n = 4097;
    float *h = cu_host((size_t)n * 4), want = 0, got[2];
    for (int64_t i = 0; i < n; i++) h[i] = (float)pk_test_uniform(-1, 1);
    PK_CHECK(pk_reduce(ctx, PK_SUM, PK_F32, h, n, &want) == PK_OK, "%s", pk_ctx_error(ctx));
    float *d = cu_dev((size_t)n * 4), *dout = cu_dev((size_t)(n + 1) * 4);
    cu_put(d, h, (size_t)n * 4);
    CU_OK(cudaMemset(dout, 0, (size_t)(n + 1) * 4));
    struct thread_job j = {ctx, d, dout, n, PK_OK, PK_OK};
    pthread_t t;
    PK_CHECK(pthread_create(&t, NULL, thread_call, &j) == 0, "pthread_create");
    pthread_join(t, NULL);
    PK_CHECK(j.s1 == PK_OK && j.s2 == PK_OK, "calls from a new thread: %s", pk_ctx_error(ctx));
    cu_get(got, dout, 8);
    PK_CHECK(memcmp(&got[0], &want, 4) == 0, "sum from a new thread %.9g, expected %.9g",
             got[0], want);
    PK_CHECK(got[1] == 2.0f * h[0], "axpy from a new thread: y[0] %.9g, expected %.9g", got[1],
             2.0f * h[0]);
    cu_free(d);
    cu_free(dout);
    free(h);
}

/* The launch path (src/cuda/launch.cuh): with a context current on the
 * thread every small call goes through the driver's cuLaunchKernel, none
 * through the runtime; PK_CUDA_LAUNCH=runtime turns that around. Counted
 * by a test hook of the library. */
void pk__cuda_launch_counts(unsigned long long counts[2]);
static void check_launch_path(pk_ctx *ctx)
{
    const int64_t n = 1000;
    float *d = cu_dev((size_t)n * 4), *o = cu_dev(64), a = 0.5f;
    CU_OK(cudaMemset(d, 0, (size_t)n * 4));
    unsigned long long c0[2], c1[2];
    pk__cuda_launch_counts(c0);
    for (int i = 0; i < 10; i++) {
        PK_CHECK(pk_reduce(ctx, PK_SUM, PK_F32, d, n, o) == PK_OK, "%s", pk_ctx_error(ctx));
        PK_CHECK(pk_axpy(ctx, PK_F32, n, &a, d, d) == PK_OK, "%s", pk_ctx_error(ctx));
    }
    PK_CHECK(pk_ctx_sync(ctx) == PK_OK, "%s", pk_ctx_error(ctx));
    pk__cuda_launch_counts(c1);
    const char *env = getenv("PK_CUDA_LAUNCH");
    unsigned long long drv = c1[0] - c0[0], rt = c1[1] - c0[1];
    if (env && !strcmp(env, "runtime"))
        PK_CHECK(drv == 0 && rt == 20, "PK_CUDA_LAUNCH=runtime: %llu driver, %llu runtime "
                 "launches (expected 0, 20)", drv, rt);
    else
        PK_CHECK(drv == 20 && rt == 0, "%llu driver, %llu runtime launches (expected 20, 0)",
                 drv, rt);
    cu_free(d);
    cu_free(o);
}

/* n = 2^31 + 17 f32 in device memory: a constant fill (cudaMemset) plus a
 * few marked elements beyond 2^31. */
static void check_big(pk_ctx *ctx)
{
    const int64_t n = ((int64_t)1 << 31) + 17;
    size_t need = (size_t)n * 4, fr, total;
    CU_OK(cudaMemGetInfo(&fr, &total));
    if (fr < need + ((size_t)1 << 30)) {
        printf("big: skipped: %zu bytes free, %zu needed\n", fr, need);
        return;
    }
    float *d = cu_dev(need);
    CU_OK(cudaMemset(d, 0x3c, need)); /* 0x3c3c3c3c = 0.011489... */
    float v;
    memcpy(&v, &(uint32_t){0x3c3c3c3cu}, 4);
    const int64_t imax = n - 7, imin = ((int64_t)1 << 31) + 3;
    float big = 5.0f, small = -3.0f;
    cu_put(d + imax, &big, 4);
    cu_put(d + imin, &small, 4);
    double want = (double)v * (double)(n - 2) + 5.0 - 3.0;
    float got = 0;
    PK_CHECK(pk_reduce(ctx, PK_SUM, PK_F32, d, n, &got) == PK_OK, "%s", pk_ctx_error(ctx));
    float wf = (float)want;
    PK_CHECK(fabsf(got - wf) <= nextafterf(wf, INFINITY) - wf, "big sum %.9g, expected %.9g",
             got, want);
    int64_t idx = -1;
    PK_CHECK(pk_reduce(ctx, PK_ARGMAX, PK_F32, d, n, &idx) == PK_OK, "%s", pk_ctx_error(ctx));
    PK_CHECK(idx == imax, "big argmax %lld, expected %lld", (long long)idx, (long long)imax);
    PK_CHECK(pk_reduce(ctx, PK_ARGMIN, PK_F32, d, n, &idx) == PK_OK, "%s", pk_ctx_error(ctx));
    PK_CHECK(idx == imin, "big argmin %lld, expected %lld", (long long)idx, (long long)imin);
    double wd = (double)v * v * (double)(n - 2) + 25.0 + 9.0;
    PK_CHECK(pk_dot(ctx, PK_F32, n, d, d, &got) == PK_OK, "%s", pk_ctx_error(ctx));
    wf = (float)wd;
    PK_CHECK(fabsf(got - wf) <= nextafterf(wf, INFINITY) - wf, "big dot %.9g, expected %.9g",
             got, wd);
    float a = 2.0f;
    PK_CHECK(pk_axpy(ctx, PK_F32, n, &a, d, d) == PK_OK, "%s", pk_ctx_error(ctx));
    float tail[2];
    PK_CHECK(pk_ctx_sync(ctx) == PK_OK, "%s", pk_ctx_error(ctx));
    cu_get(tail, d + n - 2, 8);
    PK_CHECK(tail[0] == 3 * v && tail[1] == 3 * v, "big axpy tail %.9g %.9g", tail[0], tail[1]);
    /* The same array as 2 rows of 2^30 + 8 (and one more element). */
    float rs[2];
    int64_t half = (n - 1) / 2;
    PK_CHECK(pk_reduce_axis(ctx, PK_MAX, PK_F32, d, 2, half, half, 1, rs) == PK_OK, "%s",
             pk_ctx_error(ctx));
    PK_CHECK(rs[1] == 15.0f, "big row max %.9g", rs[1]);
    cu_free(d);
}
#endif

int main(void)
{
    pk_test_init("test_cuda_context");
    pk_ctx *ctx = cu_ctx();
    cu_note_no_rt();
    check_create();
#ifdef PK_TEST_CUDA
    int quick = getenv("PK_TEST_QUICK") != NULL;
    check_stream(ctx);
    check_foreign_stream(ctx);
    check_pinned(ctx);
    check_where(ctx);
    check_thread(ctx);
    check_launch_path(ctx);
    check_leaks(ctx, quick);
    if (!quick) check_big(ctx);
#endif
    pk_ctx_destroy(ctx);
    return pk_test_finish("test_cuda_context");
}
