// pk bench on CUDA: user-defined reductions (bench/custom.h) on device
// memory, results to device memory, timed with CUDA events against the
// built-in kernel that reads the same bytes (pk_dot(x, x), pk_reduce max,
// argmax, sum). Verified on the host against a plain loop.
#include "custom.h"
#include "gpu.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

double median_ms(pk_ctx *ctx, cudaStream_t st, bool (*fn)(void *), void *arg, bool *ok)
{
    for (int i = 0; i < 3; i++) *ok = fn(arg) && *ok;
    std::vector<float> ms;
    cudaEvent_t a, b;
    if (cudaEventCreate(&a) || cudaEventCreate(&b)) return *ok = false, 0;
    for (int r = 0; r < 30 && *ok; r++) {
        cudaEventRecord(a, st);
        for (int q = 0; q < 5; q++) *ok = fn(arg) && *ok;
        cudaEventRecord(b, st);
        if (cudaEventSynchronize(b)) *ok = false;
        float t = 0;
        cudaEventElapsedTime(&t, a, b);
        ms.push_back(t / 5);
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    pk_ctx_sync(ctx);
    if (ms.empty()) return 0;
    std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
    return ms[ms.size() / 2];
}

struct Call {
    pk_ctx *ctx;
    pk_reducer *red;
    const pk_bench_udr *u;
    const float *x;
    int64_t n;
    void *out; /* device */
};

bool run_udr(void *a)
{
    Call *k = static_cast<Call *>(a);
    return pk_reducer_reduce(k->ctx, k->red, k->x, k->n, k->out) == PK_OK;
}

bool run_builtin(void *a)
{
    Call *k = static_cast<Call *>(a);
    const char *p = k->u->peer;
    if (!strcmp(p, "pk_dot")) return pk_dot(k->ctx, PK_F32, k->n, k->x, k->x, k->out) == PK_OK;
    pk_op op = !strcmp(p, "pk_max") ? PK_MAX : !strcmp(p, "pk_argmax") ? PK_ARGMAX : PK_SUM;
    return pk_reduce(k->ctx, op, PK_F32, k->x, k->n, k->out) == PK_OK;
}

} // namespace

extern "C" pk_status pk_bench_gpu_custom(pk_ctx *ctx, const pk_bench_case *c,
                                         pk_bench_result *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    const pk_bench_udr *u = &pk_bench_udrs[c->k % PK_BENCH_NUDR];
    const int64_t n = c->n;
    std::vector<float> h((size_t)n);
    for (int64_t i = 0; i < n; i++) h[(size_t)i] = pk_bench_udr_elem(u, 12345, i, n);
    void *x = nullptr, *out = nullptr;
    pk_status s = PK_OK;
    pk_reducer *red = nullptr;
    pk_reducer_desc d = pk_bench_udr_desc(u);
    if (cudaMalloc(&x, (size_t)n * 4) || cudaMalloc(&out, 64) ||
        cudaMemcpy(x, h.data(), (size_t)n * 4, cudaMemcpyHostToDevice)) {
        snprintf(err, errlen, "CUDA allocation or copy failed");
        s = PK_ERR_DEVICE;
    } else if ((s = pk_reducer_create(ctx, &d, &red))) {
        snprintf(err, errlen, "%s", pk_ctx_error(ctx));
    } else {
        double got[2] = {0, 0};
        Call k = {ctx, red, u, static_cast<const float *>(x), n, out};
        if ((s = pk_reducer_reduce(ctx, red, x, n, got))) {
            snprintf(err, errlen, "%s", pk_ctx_error(ctx));
        } else {
            r->verified = pk_bench_udr_verify(u, h.data(), n, got, r->note, sizeof r->note);
            if (r->verified) {
                pk_reducer_info info;
                pk_reducer_get_info(red, &info);
                snprintf(r->note, sizeof r->note, "%s vs %s (built %.1f ms, origin %d)",
                         u->name, u->peer, info.build_ms, (int)info.origin);
            }
            /* events and work on one stream of ours */
            cudaStream_t st = nullptr;
            bool ok = cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking) == cudaSuccess &&
                      pk_ctx_set_stream(ctx, st) == PK_OK,
                 okp = ok;
            if (ok) r->time_ms = median_ms(ctx, st, run_udr, &k, &ok);
            if (okp) r->peer_time_ms = median_ms(ctx, st, run_builtin, &k, &okp);
            pk_ctx_set_stream(ctx, nullptr);
            if (st) cudaStreamDestroy(st);
            snprintf(r->peer, sizeof r->peer, "%s", u->peer);
            r->bytes = (double)n * 4 + 8;
            if (!ok || !okp) {
                snprintf(err, errlen, "a timed call failed: %s", pk_ctx_error(ctx));
                s = PK_ERR_DEVICE;
            }
        }
    }
    pk_reducer_destroy(red);
    cudaFree(x);
    cudaFree(out);
    return s;
}
