/* pk bench on CUDA: the gemm rows (bench/gpu.h). One case: A (m x k), B
 * (k x n) and C (m x n) row-major random data in device memory; pk_gemm in
 * the case's mode timed with CUDA events (median after warm-up) on a stream
 * of its own, in blocks that alternate with the peer's (gpu_timing.cuh);
 * the peer cuBLAS (cublasGemmEx on the transposed problem, since row-major
 * C = A B is column-major C^T = B^T A^T) in the same run on the same data:
 * CUBLAS_COMPUTE_32F_PEDANTIC for gemm and gemm_fp32_accurate (whose target
 * is a multiple of FP32 speed), 32F_FAST_TF32 for gemm_tf32, 64F for f64.
 * The ceiling is measured in the same process: a loop of independent FFMA
 * (DFMA for f64) chains, or of mma.sync m16n8k8 TF32 for the tensor-core
 * modes. pk's result is checked on sampled entries against an f64 host
 * reference from the same data; the note gives the largest error of pk and
 * of cuBLAS relative to sum |a||b|. */
#include "gpu.h"
#include "gpu_timing.cuh"
#include "gpu_util.cuh"

#ifdef PK_BENCH_HAVE_CUBLAS
#include <cublas_v2.h>
#endif
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace {

template <class T>
__global__ void k_fill(T *x, int64_t n, uint64_t seed)
{
    for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
         i += int64_t(gridDim.x) * blockDim.x)
        x[i] = T(-1.0 + 2.0 * double(mix(seed ^ uint64_t(i) * 0xD1B54A32D192ED03ull) >> 11) * 0x1.0p-53);
}

/* ---- ceilings ------------------------------------------------------------ */

constexpr int kChains = 8, kIters = 4096;

template <class T>
__global__ void k_fma_peak(T *out, T seed)
{
    T v[kChains];
#pragma unroll
    for (int c = 0; c < kChains; c++) v[c] = seed + T(threadIdx.x + c);
    const T a = T(0.999999), b = T(1e-7);
    for (int i = 0; i < kIters; i++)
#pragma unroll
        for (int c = 0; c < kChains; c++) v[c] = v[c] * a + b;
    T s = 0;
#pragma unroll
    for (int c = 0; c < kChains; c++) s += v[c];
    if (s == T(12345)) *out = s; /* keeps the loop alive */
}

__global__ void k_mma_peak(float *out)
{
    float acc[kChains][4] = {};
    uint32_t a[4], b[2];
    for (int e = 0; e < 4; e++) a[e] = __float_as_uint(1.0f + threadIdx.x * 1e-3f + e);
    for (int e = 0; e < 2; e++) b[e] = __float_as_uint(1e-3f * (e + 1));
    for (int i = 0; i < kIters / 8; i++)
#pragma unroll
        for (int c = 0; c < kChains; c++)
            asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
                         "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                         : "+f"(acc[c][0]), "+f"(acc[c][1]), "+f"(acc[c][2]), "+f"(acc[c][3])
                         : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    float s = 0;
    for (int c = 0; c < kChains; c++) s += acc[c][0] + acc[c][1] + acc[c][2] + acc[c][3];
    if (s == 12345.f) *out = s;
}

/* Best of a few timed runs of fn (ms). */
template <class F>
float best_ms(cudaStream_t st, F &&fn, int reps)
{
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    float best = 1e30f;
    for (int r = 0; r < reps; r++) {
        CK(cudaEventRecord(a, st));
        fn();
        CK(cudaEventRecord(b, st));
        CK(cudaEventSynchronize(b));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, a, b));
        best = std::min(best, ms);
    }
    (void)cudaEventDestroy(a);
    (void)cudaEventDestroy(b);
    return best;
}

/* Operations per second of the FMA loop (T) or the TF32 mma loop; measured
 * once per process. */
double peak(int which, cudaStream_t st)
{
    static double cache[3];
    if (cache[which] > 0) return cache[which];
    int dev = 0, sms = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    DBuf out(16);
    const int blocks = sms * 8, threads = 256;
    double ops;
    float ms;
    if (which == 2) {
        ms = best_ms(st, [&] {
            k_mma_peak<<<blocks, threads, 0, st>>>(static_cast<float *>(out.p));
            CK(cudaGetLastError());
        }, 5);
        ops = double(blocks) * (threads / 32) * (kIters / 8) * kChains * 2.0 * 16 * 8 * 8;
    } else {
        ms = best_ms(st, [&] {
            if (which == 0) k_fma_peak<float><<<blocks, threads, 0, st>>>(static_cast<float *>(out.p), 1.f);
            else k_fma_peak<double><<<blocks, threads, 0, st>>>(static_cast<double *>(out.p), 1.0);
            CK(cudaGetLastError());
        }, 5);
        ops = double(blocks) * threads * kIters * kChains * 2.0;
    }
    return cache[which] = ops / (ms * 1e-3);
}

/* A timed block holds about 30 ms of calls (gpu_timing.cuh). */
template <class F>
int block_reps(cudaStream_t st, F &&fn)
{
    int reps = 0;
    CK(pk_bench::block_reps(st, fn, 2, 30.f, 1000, &reps));
    return reps;
}

/* Largest |C - ref| / sum|a||b| over sampled entries (f64 reference). */
double sampled_error(pk_dtype t, int64_t m, int64_t n, int64_t k, const std::vector<char> &A,
                     const std::vector<char> &B, const void *dC)
{
    const size_t sz = t == PK_F32 ? 4 : 8;
    auto get = [&](const char *p, int64_t i) {
        return t == PK_F32 ? double(reinterpret_cast<const float *>(p)[i])
                           : reinterpret_cast<const double *>(p)[i];
    };
    double worst = 0;
    uint64_t r = 0x1234567;
    for (int s = 0; s < 64; s++) {
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        const int64_t i = int64_t((r >> 33) % uint64_t(m)), j = int64_t((r >> 13) % uint64_t(n));
        double ref = 0, mag = 0;
        for (int64_t l = 0; l < k; l++) {
            const double p = get(A.data(), i * k + l) * get(B.data(), l * n + j);
            ref += p;
            mag += std::fabs(p);
        }
        char got[8];
        CK(cudaMemcpy(got, static_cast<const char *>(dC) + (i * n + j) * sz, sz,
                      cudaMemcpyDeviceToHost));
        const double e = std::fabs(get(got, 0) - ref) / (mag > 0 ? mag : 1);
        worst = std::isnan(e) ? 1e30 : std::max(worst, e);
    }
    return worst;
}

void run(pk_ctx *ctx, const pk_bench_case *c, pk_bench_result *r)
{
    memset(r, 0, sizeof *r);
    const bool tf32 = c->id == PK_BENCH_GEMM_TF32, acc = c->id == PK_BENCH_GEMM_FP32_ACCURATE;
    const pk_gemm_mode mode = tf32 ? PK_GEMM_TF32 : acc ? PK_GEMM_FP32_ACCURATE : PK_GEMM_FP32;
    const pk_dtype t = c->dtype;
    const int64_t m = c->rows, n = c->cols, k = c->k;
    const size_t sz = t == PK_F32 ? 4 : 8;
    DBuf A(size_t(m * k) * sz), B(size_t(k * n) * sz), C(size_t(m * n) * sz);
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    struct Guard {
        pk_ctx *ctx;
        cudaStream_t st;
        ~Guard()
        {
            (void)pk_ctx_set_stream(ctx, nullptr);
            (void)cudaStreamDestroy(st);
        }
    } guard{ctx, st};
    if (pk_ctx_set_stream(ctx, st)) {
        snprintf(g_err, sizeof g_err, "pk_ctx_set_stream failed");
        throw Fail{PK_ERR_DEVICE};
    }
    void *bufs[2] = {A.p, B.p};
    const int64_t cnt[2] = {m * k, k * n};
    for (int i = 0; i < 2; i++) {
        if (t == PK_F32) k_fill<float><<<1024, 256, 0, st>>>(static_cast<float *>(bufs[i]), cnt[i], 17 + i);
        else k_fill<double><<<1024, 256, 0, st>>>(static_cast<double *>(bufs[i]), cnt[i], 17 + i);
        CK(cudaGetLastError());
    }
    CK(cudaStreamSynchronize(st));
    const double one = 1, zero = 0;
    const float onef = 1, zerof = 0;
    const void *alpha = t == PK_F32 ? (const void *)&onef : (const void *)&one;
    const void *beta = t == PK_F32 ? (const void *)&zerof : (const void *)&zero;
    pk_status ps = PK_OK;
    auto pk_call = [&] {
        pk_status s = pk_gemm(ctx, t, mode, PK_NO_TRANS, PK_NO_TRANS, m, n, k, alpha, A.p, k, B.p,
                              n, beta, C.p, n);
        if (s && !ps) ps = s;
    };
    const auto pk_failed = [&] {
        snprintf(g_err, sizeof g_err, "pk_gemm: %s", pk_ctx_error(ctx));
        return Fail{ps};
    };
    const int pk_reps = block_reps(st, pk_call); /* C now holds pk's result */
    if (ps) throw pk_failed();
    const int which = t == PK_F64 ? 1 : mode == PK_GEMM_FP32 ? 0 : 2;
    r->ceiling_ops = peak(which, st);
    snprintf(r->ceiling, sizeof r->ceiling, "%s", which == 0 ? "fp32-fma" : which == 1 ? "fp64-fma" : "tf32-mma");

    /* Verification on the host from the same data. */
    std::vector<char> hA(size_t(m * k) * sz), hB(size_t(k * n) * sz);
    CK(cudaMemcpy(hA.data(), A.p, hA.size(), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hB.data(), B.p, hB.size(), cudaMemcpyDeviceToHost));
    const double err = sampled_error(t, m, n, k, hA, hB, C.p);
    const double tol = t == PK_F64 ? 1e-14 * std::sqrt(double(k))
                       : tf32      ? 1e-3
                                   : 1e-6 * std::sqrt(double(k));
    r->verified = err <= tol;
    int len = snprintf(r->note, sizeof r->note, "max err/sum|ab| pk %.2g", err);
    std::vector<float> pk_ms;
    const auto time_pk_alone = [&] {
        CK(pk_bench::time_rounds(st, pk_call, pk_reps, pk_ms));
        if (ps) throw pk_failed();
        pk_bench::record(r, pk_ms);
    };

#ifdef PK_BENCH_HAVE_CUBLAS
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
        snprintf(r->note + len, sizeof r->note - len, "; cublasCreate failed");
        time_pk_alone();
        return;
    }
    struct HGuard {
        cublasHandle_t h;
        ~HGuard() { (void)cublasDestroy(h); }
    } hg{h};
    if (cublasSetStream(h, st) != CUBLAS_STATUS_SUCCESS) {
        snprintf(r->note + len, sizeof r->note - len, "; cublasSetStream failed");
        time_pk_alone();
        return;
    }
    const cudaDataType dt = t == PK_F32 ? CUDA_R_32F : CUDA_R_64F;
    const cublasComputeType_t ct = t == PK_F64 ? CUBLAS_COMPUTE_64F_PEDANTIC
                                   : tf32      ? CUBLAS_COMPUTE_32F_FAST_TF32
                                               : CUBLAS_COMPUTE_32F_PEDANTIC;
    cublasStatus_t cs = CUBLAS_STATUS_SUCCESS;
    auto peer = [&] {
        cublasStatus_t s = cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, int(n), int(m), int(k), alpha,
                                        B.p, dt, int(n), A.p, dt, int(k), beta, C.p, dt, int(n),
                                        ct, CUBLAS_GEMM_DEFAULT);
        if (s != CUBLAS_STATUS_SUCCESS) cs = s;
    };
    const int peer_reps = block_reps(st, peer); /* C now holds cuBLAS's result */
    if (cs != CUBLAS_STATUS_SUCCESS) {
        snprintf(r->note + len, sizeof r->note - len, "; cublasGemmEx failed (%d)", int(cs));
        time_pk_alone();
        return;
    }
    const double perr = sampled_error(t, m, n, k, hA, hB, C.p);
    std::vector<float> peer_ms;
    CK(pk_bench::time_alternating(st, pk_call, pk_reps, pk_ms, peer, peer_reps, peer_ms));
    if (ps) throw pk_failed();
    pk_bench::record(r, pk_ms);
    if (cs == CUBLAS_STATUS_SUCCESS) {
        pk_bench::record(r, peer_ms, true);
        snprintf(r->peer, sizeof r->peer, "cublas");
        snprintf(r->note + len, sizeof r->note - len, ", cublas %.2g", perr);
    } else {
        snprintf(r->note + len, sizeof r->note - len, "; cublasGemmEx failed (%d)", int(cs));
    }
#else
    time_pk_alone();
#endif
}

} // namespace

extern "C" pk_status pk_bench_gpu_gemm(pk_ctx *ctx, const pk_bench_case *c, pk_bench_result *r,
                                       char *err, size_t errlen)
{
    if (c->id != PK_BENCH_GEMM && c->id != PK_BENCH_GEMM_TF32 &&
        c->id != PK_BENCH_GEMM_FP32_ACCURATE) {
        snprintf(err, errlen, "%s: not a gemm kernel", c->kernel);
        return PK_ERR_UNSUPPORTED;
    }
    try {
        run(ctx, c, r);
        return PK_OK;
    } catch (const Fail &f) {
        snprintf(err, errlen, "%s: %s", c->kernel, g_err);
        return f.s;
    }
}
