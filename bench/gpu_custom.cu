// pk bench on CUDA: user-defined reductions (bench/custom.h) on device
// memory, results to device memory, timed with CUDA events in blocks that
// alternate with the built-in kernel that reads the same bytes (pk_dot(x,
// x), pk_reduce max, argmax, sum; along an axis pk_reduce_axis sum).
// Verified on the host against a plain loop.
#include "custom.h"
#include "gpu.h"
#include "gpu_timing.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

/* The times of calls of f(arg) (pk's reducer) and g(arg) (the built-in
 * peer) in alternating blocks of about 20 ms (gpu_timing.cuh), in r. False
 * when a call or a CUDA call failed. */
bool time_pair(cudaStream_t st, bool (*f)(void *), bool (*g)(void *), void *arg,
               pk_bench_result *r)
{
    bool ok = true;
    auto call_f = [&] { ok = f(arg) && ok; };
    auto call_g = [&] { ok = g(arg) && ok; };
    int rf = 0, rg = 0;
    std::vector<float> mf, mg;
    if (pk_bench::block_reps(st, call_f, 3, 20.f, 400, &rf) != cudaSuccess ||
        pk_bench::block_reps(st, call_g, 3, 20.f, 400, &rg) != cudaSuccess || !ok ||
        pk_bench::time_alternating(st, call_f, rf, mf, call_g, rg, mg) != cudaSuccess)
        return false;
    pk_bench::record(r, mf);
    pk_bench::record(r, mg, true);
    return ok;
}

struct Call {
    pk_ctx *ctx;
    pk_reducer *red;
    const pk_bench_udr *u;
    const float *x;
    int64_t n;
    void *out;          /* device */
    int64_t rows, cols; /* rows > 0: along `axis` */
    int axis;
};

bool run_udr(void *a)
{
    Call *k = static_cast<Call *>(a);
    if (k->rows)
        return pk_reducer_reduce_axis(k->ctx, k->red, k->x, k->rows, k->cols, k->cols, k->axis,
                                      k->out) == PK_OK;
    return pk_reducer_reduce(k->ctx, k->red, k->x, k->n, k->out) == PK_OK;
}

bool run_builtin(void *a)
{
    Call *k = static_cast<Call *>(a);
    if (k->rows)
        return pk_reduce_axis(k->ctx, PK_SUM, PK_F32, k->x, k->rows, k->cols, k->cols, k->axis,
                              k->out) == PK_OK;
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
    /* along an axis (c->rows > 0): one output a line, 8 bytes at most */
    const int64_t nout = !c->rows ? 1 : c->axis ? c->rows : c->cols;
    const char *peer = c->rows ? "pk_sum_axis" : u->peer;
    if (cudaMalloc(&x, (size_t)n * 4) || cudaMalloc(&out, (size_t)nout * 8 + 64) ||
        cudaMemcpy(x, h.data(), (size_t)n * 4, cudaMemcpyHostToDevice)) {
        snprintf(err, errlen, "CUDA allocation or copy failed");
        s = PK_ERR_DEVICE;
    } else if ((s = pk_reducer_create(ctx, &d, &red))) {
        snprintf(err, errlen, "%s", pk_ctx_error(ctx));
    } else {
        std::vector<double> got((size_t)nout + 1);
        Call k = {ctx, red, u, static_cast<const float *>(x), n, out, c->rows, c->cols, c->axis};
        s = c->rows ? pk_reducer_reduce_axis(ctx, red, x, c->rows, c->cols, c->cols, c->axis,
                                             got.data())
                    : pk_reducer_reduce(ctx, red, x, n, got.data());
        if (s) {
            snprintf(err, errlen, "%s", pk_ctx_error(ctx));
        } else {
            r->verified = c->rows ? pk_bench_udr_verify_axis(u, h.data(), c->rows, c->cols,
                                                             c->axis, got.data(), r->note,
                                                             sizeof r->note)
                                  : pk_bench_udr_verify(u, h.data(), n, got.data(), r->note,
                                                        sizeof r->note);
            if (r->verified) {
                pk_reducer_info info;
                pk_reducer_get_info(red, &info);
                snprintf(r->note, sizeof r->note, "%s vs %s (built %.1f ms, origin %d)",
                         u->name, peer, info.build_ms, (int)info.origin);
            }
            /* events and work on one stream of ours */
            cudaStream_t st = nullptr;
            bool ok = cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking) == cudaSuccess &&
                      pk_ctx_set_stream(ctx, st) == PK_OK;
            ok = ok && time_pair(st, run_udr, run_builtin, &k, r);
            pk_ctx_set_stream(ctx, nullptr);
            if (st) cudaStreamDestroy(st);
            snprintf(r->peer, sizeof r->peer, "%s", peer);
            if (!ok) {
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
