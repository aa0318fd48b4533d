/* The GPU side of `pk bench` and `pk info` (bench/gpu.h): one case timed for
 * pk and for its peer in the same process on the same device-resident random
 * data, with CUDA events around each call (median after warm-up, pk and the
 * peer in alternating blocks; inputs rotated over several copies when one
 * copy would sit in L2), pk's result verified against pk's CPU backend; the
 * measured ceilings (device-to-device copy, a read-only kernel, host<->device
 * pageable and pinned); and the device's attributes. The peers are CUB
 * (DeviceReduce, DeviceSegmentedReduce) and, when the toolkit has it, cuBLAS
 * (dot, axpy, gemv): only this file links them, never the library. */
#include "gpu.h"
#include "gpu_cub.cuh"
#include "gpu_timing.cuh"
#include "gpu_util.cuh"

#ifdef PK_BENCH_HAVE_CUBLAS
#include <cublas_v2.h>
#endif
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

namespace {

/* Random elements: floats uniform in [lo, hi), integers over all bits. */
template <class T>
__global__ void k_fill(T *x, int64_t n, uint64_t seed, double lo, double hi)
{
    for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
         i += int64_t(gridDim.x) * blockDim.x) {
        uint64_t r = mix(seed ^ (uint64_t)i * 0xD1B54A32D192ED03ull);
        if constexpr (std::is_floating_point<T>::value)
            x[i] = (T)(lo + (hi - lo) * (double)(r >> 11) * 0x1.0p-53);
        else
            x[i] = (T)r;
    }
}

template <class T>
void fill(void *x, int64_t n, uint64_t seed, double lo, double hi)
{
    k_fill<T><<<1024, 256>>>(static_cast<T *>(x), n, seed, lo, hi);
    CK(cudaGetLastError());
}

void fill_dtype(pk_dtype t, void *x, int64_t n, uint64_t seed, double lo, double hi)
{
    switch (t) {
    case PK_F32: fill<float>(x, n, seed, lo, hi); break;
    case PK_F64: fill<double>(x, n, seed, lo, hi); break;
    case PK_I32: fill<int32_t>(x, n, seed, lo, hi); break;
    case PK_I64: fill<int64_t>(x, n, seed, lo, hi); break;
    case PK_U32: fill<uint32_t>(x, n, seed, lo, hi); break;
    default: fill<uint64_t>(x, n, seed, lo, hi); break;
    }
}

/* The timing of gpu_timing.cuh for calls f(i), i = 0, 1, ... (the input
 * copy to use; calls of pk and of its peer share the count, so that no
 * call finds its input in L2). A timed block holds about 20 ms of calls. */
constexpr float kBlockMs = 20;
constexpr int kMaxReps = 400;

/* Median time in ms of f (which issues work on st) over `rounds` blocks;
 * pk's times (and their spread) in *rec when given. */
template <class F>
double time_ms(cudaStream_t st, F &&f, int warm = 3, int rounds = pk_bench::kRounds,
               pk_bench_result *rec = nullptr)
{
    int next = 0, reps = 0;
    auto call = [&] { f(next++); };
    CK(pk_bench::block_reps(st, call, warm, kBlockMs, kMaxReps, &reps));
    std::vector<float> ms;
    CK(pk_bench::time_rounds(st, call, reps, ms, rounds));
    if (rec) pk_bench::record(rec, ms);
    return pk_bench::median_of(ms);
}

/* The times of f (pk) and g (its peer), timed in alternating blocks, in r. */
template <class F, class G>
void time_pair(cudaStream_t st, F &&f, G &&g, pk_bench_result *r)
{
    int next = 0, rf = 0, rg = 0;
    auto call_f = [&] { f(next++); };
    auto call_g = [&] { g(next++); };
    CK(pk_bench::block_reps(st, call_f, 3, kBlockMs, kMaxReps, &rf));
    CK(pk_bench::block_reps(st, call_g, 3, kBlockMs, kMaxReps, &rg));
    std::vector<float> mf, mg;
    CK(pk_bench::time_alternating(st, call_f, rf, mf, call_g, rg, mg));
    pk_bench::record(r, mf);
    pk_bench::record(r, mg, true);
}

__global__ void k_offsets(int64_t *off, int64_t rows, int64_t ld)
{
    for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i <= rows;
         i += int64_t(gridDim.x) * blockDim.x)
        off[i] = i * ld;
}

/* ---- verification -------------------------------------------------------- */

/* Whether pk's CUDA result a matches the CPU backend's b (count values of
 * dtype rt; op says how strictly). */
bool close(pk_op op, pk_dtype rt, const void *a, const void *b, int64_t count,
           char *note, size_t len)
{
    for (int64_t i = 0; i < count; i++) {
        if (rt == PK_F32 || rt == PK_F64) {
            double x = rt == PK_F32 ? ((const float *)a)[i] : ((const double *)a)[i];
            double y = rt == PK_F32 ? ((const float *)b)[i] : ((const double *)b)[i];
            if (std::isnan(x) && std::isnan(y)) continue;
            double ulp = rt == PK_F32
                             ? (double)nextafterf(fabsf((float)y), INFINITY) - fabs(y)
                             : nextafter(fabs(y), INFINITY) - fabs(y);
            double tol = op == PK_PROD ? fabs(y) * (rt == PK_F32 ? 1e-5 : 1e-12)
                         : op == PK_SUM ? (rt == PK_F32 ? ulp : 4 * ulp) : 0.0;
            if (fabs(x - y) > tol && x != y) {
                snprintf(note, len, "out[%lld]: cuda %.17g, cpu %.17g", (long long)i, x, y);
                return false;
            }
        } else {
            size_t sz = pk_dtype_size(rt);
            if (memcmp((const char *)a + i * sz, (const char *)b + i * sz, sz)) {
                snprintf(note, len, "out[%lld] differs from the CPU backend", (long long)i);
                return false;
            }
        }
    }
    return true;
}

struct Ctx {
    pk_ctx *cuda;
    cudaStream_t st;
    pk_ctx *cpu = nullptr;
    Ctx(pk_ctx *c, cudaStream_t s) : cuda(c), st(s) {}
    ~Ctx()
    {
        (void)pk_ctx_set_stream(cuda, nullptr);
        if (cpu) pk_ctx_destroy(cpu);
    }
};

/* The case proper; throws Fail. */
void run_case(pk_ctx *ctx, const pk_bench_case *c, pk_bench_result *r)
{
    memset(r, 0, sizeof *r);
    const bool is_dot = c->id == PK_BENCH_DOT, is_axpy = c->id == PK_BENCH_AXPY;
    const bool is_axis = c->id == PK_BENCH_REDUCE_AXIS;
    if (!is_dot && !is_axpy && !is_axis && c->id > PK_BENCH_ARGMAX) {
        snprintf(g_err, sizeof g_err, "unknown kernel '%s'", c->kernel);
        throw Fail{PK_ERR_UNSUPPORTED};
    }
    /* pk_reduce's kernels are numbered as their op; the axis cases time sums */
    const pk_op op = c->id <= PK_BENCH_ARGMAX ? pk_op(c->id) : PK_SUM;
    const pk_dtype t = c->dtype;
    if ((is_dot || is_axpy) && t != PK_F32 && t != PK_F64) {
        snprintf(g_err, sizeof g_err, "%s: f32 and f64 only", c->kernel);
        throw Fail{PK_ERR_UNSUPPORTED};
    }
    const size_t sz = pk_dtype_size(t);
    const pk_dtype rt = is_dot || is_axpy ? t : pk_reduce_result_dtype(op, t);
    const size_t osz = pk_dtype_size(rt);
    const int64_t rows = is_axis ? c->rows : 1, cols = is_axis ? c->cols : c->n;
    const int64_t n = is_axis ? rows * cols : c->n;
    const int64_t nout = is_axis ? (c->axis == 0 ? cols : rows) : is_axpy ? n : 1;
    const int nin = is_dot || is_axpy ? 2 : 1;
    const size_t in_bytes = size_t(n) * sz * nin;

    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    struct StreamGuard {
        cudaStream_t s;
        ~StreamGuard() { (void)cudaStreamDestroy(s); }
    } sg{st};
    Ctx cx(ctx, st);
    PK(pk_ctx_set_stream(ctx, st));

    /* Input copies to rotate over: together at least 4x the L2 (or 1). */
    int dev = 0, l2 = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    size_t fr = 0, tot = 0;
    CK(cudaMemGetInfo(&fr, &tot));
    int k = in_bytes ? int(std::min<size_t>(16, (4 * size_t(l2) + in_bytes - 1) / in_bytes)) : 1;
    while (k > 1 && size_t(k) * in_bytes > fr / 2) k--;
    std::vector<DBuf> xs, ys;
    const double lo = op == PK_PROD ? 0.999 : -1.0, hi = op == PK_PROD ? 1.001 : 1.0;
    for (int i = 0; i < k; i++) {
        xs.emplace_back(size_t(n) * sz);
        fill_dtype(t, xs.back().p, n, 1234567 + 77 * i, lo, hi);
        if (nin == 2) {
            ys.emplace_back(size_t(n) * sz);
            fill_dtype(t, ys.back().p, n, 7654321 + 77 * i, lo, hi);
        }
    }
    DBuf dout(std::max<size_t>(size_t(nout) * osz, 64) + 64);
    std::vector<char> hres(std::max<size_t>(size_t(nout) * osz, 64) + 64);
    const double af = 1.0 / 1024; /* axpy's alpha: y stays near its start */
    const float alpha32 = float(af);
    const void *alpha = t == PK_F32 ? (const void *)&alpha32 : (const void *)&af;
    CK(cudaDeviceSynchronize()); /* the fills */

    /* One pk call on copy i; out in device memory or (blocking) host. */
    auto pk_call = [&](int i, void *out) {
        const void *x = xs[i % k].p;
        if (is_dot) PK(pk_dot(ctx, t, n, x, ys[i % k].p, out));
        else if (is_axpy) PK(pk_axpy(ctx, t, n, alpha, x, ys[i % k].p));
        else if (is_axis) PK(pk_reduce_axis(ctx, op, t, x, rows, cols, cols, c->axis, out));
        else PK(pk_reduce(ctx, op, t, x, n, out));
    };

    /* Verify on copy 0 against the CPU backend on the same data. */
    {
        std::vector<char> hx(size_t(n) * sz), hy(nin == 2 ? size_t(n) * sz : 0);
        CK(cudaMemcpy(hx.data(), xs[0].p, hx.size(), cudaMemcpyDeviceToHost));
        if (nin == 2) CK(cudaMemcpy(hy.data(), ys[0].p, hy.size(), cudaMemcpyDeviceToHost));
        PK(pk_ctx_create(&cx.cpu, PK_BACKEND_CPU, 0));
        std::vector<char> want(hres.size());
        if (is_axpy) {
            PK(pk_axpy(cx.cpu, t, n, alpha, hx.data(), hy.data()));
            pk_call(0, nullptr);
            CK(cudaStreamSynchronize(st));
            std::vector<char> got(hy.size());
            CK(cudaMemcpy(got.data(), ys[0].p, got.size(), cudaMemcpyDeviceToHost));
            r->verified = memcmp(got.data(), hy.data(), got.size()) == 0;
            if (!r->verified) snprintf(r->note, sizeof r->note, "axpy bits differ from the CPU backend");
        } else {
            if (is_dot) PK(pk_dot(cx.cpu, t, n, hx.data(), hy.data(), want.data()));
            else if (is_axis)
                PK(pk_reduce_axis(cx.cpu, op, t, hx.data(), rows, cols, cols, c->axis, want.data()));
            else PK(pk_reduce(cx.cpu, op, t, hx.data(), n, want.data()));
            pk_call(0, dout.p);
            CK(cudaStreamSynchronize(st));
            CK(cudaMemcpy(hres.data(), dout.p, size_t(nout) * osz, cudaMemcpyDeviceToHost));
            r->verified = close(op, rt, hres.data(), want.data(), nout, r->note, sizeof r->note);
        }
    }

    /* Scalar results go where the case says; reduce_axis writes its vector
     * of results to device memory, as its peers do. */
    const char *env = getenv("PK_BENCH_OUT");
    const bool dev_out = c->out_on_device || is_axis || (env && !strcmp(env, "device"));
    auto pk_timed = [&](int i) { pk_call(i, dev_out ? dout.p : hres.data()); };

    /* The peer, on the same copies (none where the toolkit has none). */
    std::function<void(int)> peer;
    const char *peer_note = nullptr; /* why there is none */
    DBuf tmp, off;
    size_t tb = 0;
    if (!is_dot && !is_axpy && !is_axis) {
        CK(pk_bench_cub_reduce(t, op, nullptr, tb, xs[0].p, dout.p, n, st));
        tmp = DBuf(tb);
        snprintf(r->peer, sizeof r->peer, "cub");
        peer = [&](int i) {
            size_t b = tb;
            CK(pk_bench_cub_reduce(t, op, tmp.p, b, xs[i % k].p, dout.p, n, st));
            if (!c->out_on_device) {
                CK(cudaMemcpyAsync(hres.data(), dout.p, 16, cudaMemcpyDeviceToHost, st));
                CK(cudaStreamSynchronize(st));
            }
        };
    } else if (is_axis && c->axis == 1 && (t == PK_F32 || t == PK_F64)) {
        off = DBuf(size_t(rows + 1) * 8);
        k_offsets<<<256, 256, 0, st>>>(off.as<int64_t>(), rows, cols);
        CK(cudaGetLastError());
        auto seg = t == PK_F32 ? pk_bench_cub_segsum_f32 : pk_bench_cub_segsum_f64;
        CK(seg(nullptr, tb, xs[0].p, dout.p, rows, off.as<int64_t>(), st));
        tmp = DBuf(tb);
        snprintf(r->peer, sizeof r->peer, "cub-segmented");
        peer = [&, seg](int i) {
            size_t b = tb;
            CK(seg(tmp.p, b, xs[i % k].p, dout.p, rows, off.as<int64_t>(), st));
        };
    }
#ifdef PK_BENCH_HAVE_CUBLAS
    struct HGuard {
        cublasHandle_t h = nullptr;
        ~HGuard()
        {
            if (h) (void)cublasDestroy(h);
        }
    } hg;
    DBuf ones, consts(64);
    cublasStatus_t bad = CUBLAS_STATUS_SUCCESS;
    if (!peer && (is_dot || is_axpy || (is_axis && (t == PK_F32 || t == PK_F64)))) {
        if (cublasCreate(&hg.h) != CUBLAS_STATUS_SUCCESS) {
            hg.h = nullptr;
            peer_note = "cublasCreate failed";
        } else {
            cublasHandle_t h = hg.h;
            if (cublasSetStream(h, st) != CUBLAS_STATUS_SUCCESS ||
                cublasSetPointerMode(h, c->out_on_device || is_axis ? CUBLAS_POINTER_MODE_DEVICE
                                                                    : CUBLAS_POINTER_MODE_HOST) !=
                    CUBLAS_STATUS_SUCCESS) {
                snprintf(g_err, sizeof g_err, "cuBLAS peer: setting its stream or pointer mode failed");
                throw Fail{PK_ERR_DEVICE};
            }
            const bool f = t == PK_F32;
            if (is_axis) {
                int64_t m = c->axis == 0 ? rows : cols;
                ones = DBuf(size_t(m) * sz);
                fill_dtype(t, ones.p, m, 1, 1.0, 1.0);
                float c32[2] = {1.0f, 0.0f};
                double c64[2] = {1.0, 0.0};
                CK(cudaMemcpy(consts.p, f ? (void *)c32 : (void *)c64, 2 * sz, cudaMemcpyHostToDevice));
            }
            snprintf(r->peer, sizeof r->peer, is_axis ? "cublas-gemv" : "cublas");
            peer = [&, h, f](int i) {
                auto note = [&](cublasStatus_t s) { if (s != CUBLAS_STATUS_SUCCESS) bad = s; };
                const void *x = xs[i % k].p;
                if (is_dot) {
                    void *o = c->out_on_device ? dout.p : hres.data();
                    note(f ? cublasSdot_64(h, n, (const float *)x, 1, ys[i % k].as<float>(), 1, (float *)o)
                           : cublasDdot_64(h, n, (const double *)x, 1, ys[i % k].as<double>(), 1, (double *)o));
                } else if (is_axpy) {
                    note(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
                    note(f ? cublasSaxpy_64(h, n, &alpha32, (const float *)x, 1, ys[i % k].as<float>(), 1)
                           : cublasDaxpy_64(h, n, &af, (const double *)x, 1, ys[i % k].as<double>(), 1));
                } else {
                    /* Row-major rows x cols is column-major cols x rows. */
                    cublasOperation_t tr = c->axis == 0 ? CUBLAS_OP_N : CUBLAS_OP_T;
                    if (f) {
                        const float *cs = consts.as<float>();
                        note(cublasSgemv_64(h, tr, cols, rows, cs, (const float *)x, cols,
                                            ones.as<float>(), 1, cs + 1, dout.as<float>(), 1));
                    } else {
                        const double *cs = consts.as<double>();
                        note(cublasDgemv_64(h, tr, cols, rows, cs, (const double *)x, cols,
                                            ones.as<double>(), 1, cs + 1, dout.as<double>(), 1));
                    }
                }
            };
        }
    }
#endif

    /* pk and the peer, timed in alternating blocks. */
    if (peer) time_pair(st, pk_timed, peer, r);
    else time_ms(st, pk_timed, 3, pk_bench::kRounds, r);
#ifdef PK_BENCH_HAVE_CUBLAS
    if (bad != CUBLAS_STATUS_SUCCESS) {
        snprintf(g_err, sizeof g_err, "cuBLAS peer failed: status %d", (int)bad);
        throw Fail{PK_ERR_DEVICE};
    }
#endif
    if (is_axis && r->verified) {
        /* The yardstick of reduce_axis: pk's whole-array sum of the same
         * elements (result in device memory). */
        double whole = time_ms(st, [&](int i) { PK(pk_reduce(ctx, PK_SUM, t, xs[i % k].p, n, dout.p)); });
        /* the axis row's bytes (pk bench's bench_case_moved): input, outputs */
        const double moved = double(in_bytes) + double(nout) * osz;
        double gbw = double(n) * sz / (whole * 1e6), gba = moved / (r->time_ms * 1e6);
        snprintf(r->note, sizeof r->note,
                 "device out; whole-array sum %.1f us = %.0f GB/s, axis/whole %.2f", whole * 1e3,
                 gbw, gba / gbw);
    } else if (dev_out && !c->out_on_device && r->verified) {
        snprintf(r->note, sizeof r->note, "result in device memory (PK_BENCH_OUT)");
    }
    if (peer_note)
        snprintf(r->note + strlen(r->note), sizeof r->note - strlen(r->note), "%s%s",
                 r->note[0] ? "; " : "", peer_note);
}

/* ---- ceilings -------------------------------------------------------------- */

__global__ void k_read(const uint4 *x, int64_t nv, unsigned *sink)
{
    unsigned acc = 0;
    const int64_t stride = int64_t(gridDim.x) * blockDim.x;
    int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
    for (; i + 3 * stride < nv; i += 4 * stride) {
        uint4 a = __ldcs(x + i), b = __ldcs(x + i + stride), c = __ldcs(x + i + 2 * stride),
              d = __ldcs(x + i + 3 * stride);
        acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w ^ d.x ^
               d.y ^ d.z ^ d.w;
    }
    for (; i < nv; i += stride) {
        uint4 a = __ldcs(x + i);
        acc ^= a.x ^ a.y ^ a.z ^ a.w;
    }
    if (acc == 0x12345678u) sink[0] = acc; /* keeps the loads alive */
}

void ceilings(int device, double *d2d, double *rd)
{
    CK(cudaSetDevice(device));
    size_t fr, tot;
    CK(cudaMemGetInfo(&fr, &tot));
    size_t bytes = std::min<size_t>(size_t(1) << 30, fr / 4) & ~size_t(255);
    DBuf a(bytes), b(bytes), sink(64);
    CK(cudaMemset(a.p, 1, bytes));
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    double t = time_ms(st, [&](int) {
        CK(cudaMemcpyAsync(b.p, a.p, bytes, cudaMemcpyDeviceToDevice, st));
    });
    *d2d = 2.0 * double(bytes) / (t * 1e6);
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    t = time_ms(st, [&](int) {
        k_read<<<sms * 8, 256, 0, st>>>(a.as<uint4>(), int64_t(bytes / 16), sink.as<unsigned>());
        CK(cudaGetLastError());
    });
    *rd = double(bytes) / (t * 1e6);
    (void)cudaStreamDestroy(st);
}

/* Host<->device GB/s for pageable (pinned = 0) or pinned host memory. */
double host_copy(size_t bytes, bool to_device, bool pinned)
{
    DBuf d(bytes);
    void *h = nullptr;
    std::vector<char> pageable;
    if (pinned) CK(cudaMallocHost(&h, bytes));
    else {
        pageable.assign(bytes, 1);
        h = pageable.data();
    }
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    double t = time_ms(st, [&](int) {
        CK(cudaMemcpyAsync(to_device ? d.p : h, to_device ? h : d.p, bytes,
                           to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, st));
    }, 1, 5);
    (void)cudaStreamDestroy(st);
    if (pinned) (void)cudaFreeHost(h);
    return double(bytes) / (t * 1e6);
}

} // namespace

extern "C" int pk_bench_gpu_available(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return n > 0;
}

extern "C" int pk_bench_gpu_device_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return n;
}

extern "C" pk_status pk_bench_gpu_select(int device)
{
    return cudaSetDevice(device) == cudaSuccess ? PK_OK : PK_ERR_NO_DEVICE;
}

extern "C" pk_status pk_bench_gpu_versions(int *runtime, int *driver)
{
    *runtime = *driver = 0;
    if (cudaRuntimeGetVersion(runtime) != cudaSuccess) *runtime = 0;
    if (cudaDriverGetVersion(driver) != cudaSuccess) *driver = 0;
    return PK_OK;
}

extern "C" pk_status pk_bench_gpu_run(pk_ctx *ctx, const pk_bench_case *c,
                                      pk_bench_result *r, char *err, size_t errlen)
{
    switch (c->id) {
    case PK_BENCH_GEMM:
    case PK_BENCH_GEMM_TF32:
    case PK_BENCH_GEMM_FP32_ACCURATE: return pk_bench_gpu_gemm(ctx, c, r, err, errlen);
    case PK_BENCH_BGEMM:
    case PK_BENCH_HAMMING_TOPK: return pk_bench_gpu_bits(ctx, c, r, err, errlen);
    case PK_BENCH_CUSTOM: return pk_bench_gpu_custom(ctx, c, r, err, errlen);
    default: break; /* the memory-bound kernels: run_case */
    }
    try {
        run_case(ctx, c, r);
        return PK_OK;
    } catch (const Fail &f) {
        snprintf(err, errlen, "%s", g_err);
        return f.s;
    } catch (...) {
        snprintf(err, errlen, "out of host memory");
        return PK_ERR_NOMEM;
    }
}

extern "C" pk_status pk_bench_gpu_ceilings(int device, double *d2d_gbps, double *read_gbps)
{
    *d2d_gbps = *read_gbps = 0;
    try {
        ceilings(device, d2d_gbps, read_gbps);
        return PK_OK;
    } catch (const Fail &f) {
        return f.s;
    } catch (...) {
        return PK_ERR_NOMEM;
    }
}

extern "C" pk_status pk_bench_gpu_info(FILE *out, int json)
{
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        (void)cudaGetLastError();
        /* Say why in words: no driver is the common case off GPU machines. */
        const char *why = e == cudaSuccess || e == cudaErrorNoDevice ? "no CUDA device found"
                          : e == cudaErrorInsufficientDriver
                              ? "no NVIDIA driver, or one older than this build's CUDA runtime"
                              : cudaGetErrorString(e);
        if (json) fputs("[]", out);
        else fprintf(out, "CUDA: no device (%s)\n", why);
        return PK_OK;
    }
    int drv = 0, rtv = 0;
    (void)cudaDriverGetVersion(&drv);
    (void)cudaRuntimeGetVersion(&rtv);
    if (json) fputs("[", out);
    for (int d = 0; d < n; d++) {
        cudaDeviceProp p;
        if (cudaGetDeviceProperties(&p, d) != cudaSuccess) continue;
        auto attr = [&](cudaDeviceAttr a) {
            int v = 0;
            (void)cudaDeviceGetAttribute(&v, a, d);
            return v;
        };
        const int clk = attr(cudaDevAttrClockRate);         /* kHz */
        const int mclk = attr(cudaDevAttrMemoryClockRate);  /* kHz */
        const int bus = attr(cudaDevAttrGlobalMemoryBusWidth);
        const int cores_per_sm = p.major >= 8 && p.minor == 0 && p.major < 10 ? 64 : 128;
        const double bw = 2.0 * mclk * 1e3 * (bus / 8.0) / 1e9; /* DDR: 2 per clock */
        const double fp32 = 2.0 * p.multiProcessorCount * (p.major == 9 ? 128 : cores_per_sm) *
                            clk * 1e3 / 1e12;
        double d2d = 0, rd = 0, h2d = 0, d2h = 0, h2dp = 0, d2hp = 0;
        try {
            ceilings(d, &d2d, &rd);
            const size_t hb = size_t(256) << 20;
            h2d = host_copy(hb, true, false);
            d2h = host_copy(hb, false, false);
            h2dp = host_copy(hb, true, true);
            d2hp = host_copy(hb, false, true);
        } catch (...) {
        }
        if (json) {
            fprintf(out,
                    "%s{\"index\":%d,\"name\":\"%s\",\"compute_capability\":\"%d.%d\","
                    "\"sms\":%d,\"clock_mhz\":%d,\"memory_clock_mhz\":%d,\"memory_bytes\":%zu,"
                    "\"bus_width_bits\":%d,\"l2_bytes\":%d,\"smem_per_block\":%zu,"
                    "\"smem_per_block_optin\":%zu,\"smem_per_sm\":%zu,\"regs_per_block\":%d,"
                    "\"regs_per_sm\":%d,\"warp_size\":%d,\"max_threads_per_block\":%d,"
                    "\"max_threads_per_sm\":%d,\"max_grid\":[%d,%d,%d],\"driver\":%d,"
                    "\"runtime\":%d,\"ecc\":%d,\"theoretical_bandwidth_gbps\":%.1f,"
                    "\"fp32_peak_tflops\":%.1f,\"d2d_gbps\":%.1f,\"read_gbps\":%.1f,"
                    "\"h2d_pageable_gbps\":%.1f,\"d2h_pageable_gbps\":%.1f,"
                    "\"h2d_pinned_gbps\":%.1f,\"d2h_pinned_gbps\":%.1f}",
                    d ? "," : "", d, p.name, p.major, p.minor, p.multiProcessorCount,
                    clk / 1000, mclk / 1000, p.totalGlobalMem, bus, p.l2CacheSize,
                    p.sharedMemPerBlock, p.sharedMemPerBlockOptin, p.sharedMemPerMultiprocessor,
                    p.regsPerBlock, p.regsPerMultiprocessor, p.warpSize, p.maxThreadsPerBlock,
                    p.maxThreadsPerMultiProcessor, p.maxGridSize[0], p.maxGridSize[1],
                    p.maxGridSize[2], drv, rtv, p.ECCEnabled, bw, fp32, d2d, rd, h2d, d2h,
                    h2dp, d2hp);
        } else {
            fprintf(out,
                    "CUDA device %d: %s\n"
                    "  compute capability    %d.%d, %d SMs, %d threads/SM, warp %d\n"
                    "  clocks                SM %d MHz, memory %d MHz, bus %d bits\n"
                    "  memory                %.1f GiB, L2 %.1f MiB, ECC %s\n"
                    "  shared memory         %zu KiB/block (%zu opt-in), %zu KiB/SM\n"
                    "  registers             %d/block, %d/SM\n"
                    "  limits                %d threads/block, grid %d x %d x %d\n"
                    "  driver / runtime      %d.%d / %d.%d\n"
                    "  theoretical           %.0f GB/s memory, %.1f TFLOP/s fp32\n"
                    "  measured              D2D copy %.0f GB/s (read+write), read-only %.0f GB/s\n"
                    "  host<->device         pageable H2D %.1f, D2H %.1f GB/s; pinned H2D %.1f, "
                    "D2H %.1f GB/s\n",
                    d, p.name, p.major, p.minor, p.multiProcessorCount,
                    p.maxThreadsPerMultiProcessor, p.warpSize, clk / 1000, mclk / 1000, bus,
                    p.totalGlobalMem / 1073741824.0, p.l2CacheSize / 1048576.0,
                    p.ECCEnabled ? "on" : "off", p.sharedMemPerBlock / 1024,
                    p.sharedMemPerBlockOptin / 1024, p.sharedMemPerMultiprocessor / 1024,
                    p.regsPerBlock, p.regsPerMultiprocessor, p.maxThreadsPerBlock,
                    p.maxGridSize[0], p.maxGridSize[1], p.maxGridSize[2], drv / 1000,
                    drv % 1000 / 10, rtv / 1000, rtv % 1000 / 10, bw, fp32, d2d, rd, h2d, d2h,
                    h2dp, d2hp);
        }
    }
    if (json) fputs("]", out);
    return PK_OK;
}
