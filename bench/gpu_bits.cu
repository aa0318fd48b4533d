/* pk bench on CUDA: the bit-matrix rows (bench/gpu.h's contract).
 *
 * bgemm m x n x k: pk_bgemm on random device bits, ops = 2 m n k, against
 * cuBLAS int8 (cublasGemmEx CUDA_R_8I -> CUDA_R_32I, COMPUTE_32I) on the
 * same +-1 matrices as int8 ("cublas-int8"); ceiling "bmma-peak", a
 * throughput loop of independent mma.sync m16n8k256 AND.popc on all SMs.
 * hamming_topk m queries x n codes x k bits, topk: pk_hamming_topk against
 * pk_bgemm on the same shapes ("bgemm", in query blocks whose int32 output
 * fits 2 GiB, timed together). Both verified on sampled entries / queries
 * against a host reference. */
#include "gpu.h"
#include "gpu_timing.cuh"
#include "gpu_util.cuh"

#ifdef PK_BENCH_HAVE_CUBLAS
#include <cublas_v2.h>
#endif
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <utility>
#include <vector>

namespace {

__global__ void k_fill_bits(uint64_t *x, int64_t n, uint64_t seed)
{
    for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
         i += int64_t(gridDim.x) * blockDim.x)
        x[i] = mix(seed ^ uint64_t(i) * 0xD1B54A32D192ED03ull);
}

/* +-1 int8 matrix (rows x k, ld k) of the bits. */
__global__ void k_signs(const uint64_t *bits, int64_t rows, int64_t k, int64_t ldw, int8_t *x)
{
    for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < rows * k;
         e += int64_t(gridDim.x) * blockDim.x) {
        const int64_t r = e / k, c = e % k;
        x[e] = (bits[r * ldw + c / 64] >> (c % 64)) & 1 ? 1 : -1;
    }
}

/* The ceiling: independent m16n8k256 AND.popc MMAs, 8 accumulators a warp. */
constexpr int kPeakIters = 4096;
__global__ void k_bmma_peak(int *sink)
{
#if __CUDA_ARCH__ >= 800
    uint32_t a0 = threadIdx.x, a1 = ~threadIdx.x, a2 = threadIdx.x * 3u, a3 = 7u;
    uint32_t b0 = threadIdx.x ^ 0x5555u, b1 = threadIdx.x * 5u;
    int c[8][4] = {};
    for (int it = 0; it < kPeakIters; it++)
#pragma unroll
        for (int j = 0; j < 8; j++)
            asm volatile("mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc "
                         "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                         : "+r"(c[j][0]), "+r"(c[j][1]), "+r"(c[j][2]), "+r"(c[j][3])
                         : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    int s = 0;
    for (int j = 0; j < 8; j++) s += c[j][0] + c[j][1] + c[j][2] + c[j][3];
    if (s == 0x7fffffff) *sink = s;
#else
    (void)sink;
#endif
}

/* Timing (gpu_timing.cuh): blocks of about 30 ms of calls. */
template <class F>
int reps_for(cudaStream_t st, F &&f)
{
    int reps = 0;
    CK(pk_bench::block_reps(st, f, 2, 30.f, 1000, &reps));
    return reps;
}

/* Median ms of calls of f alone; pk's times in *rec when given. */
template <class F>
double time_ms(cudaStream_t st, F &&f, pk_bench_result *rec = nullptr)
{
    const int reps = reps_for(st, f);
    std::vector<float> ms;
    CK(pk_bench::time_rounds(st, f, reps, ms));
    if (rec) pk_bench::record(rec, ms);
    return pk_bench::median_of(ms);
}

/* The times of f (pk) and g (its peer), timed in alternating blocks, in r. */
template <class F, class G>
void time_pair(cudaStream_t st, F &&f, G &&g, pk_bench_result *r)
{
    const int rf = reps_for(st, f), rg = reps_for(st, g);
    std::vector<float> mf, mg;
    CK(pk_bench::time_alternating(st, f, rf, mf, g, rg, mg));
    pk_bench::record(r, mf);
    pk_bench::record(r, mg, true);
}

double bmma_peak(cudaStream_t st)
{
    int dev = 0, sms = 1;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    DBuf sink(4);
    const int blocks = sms * 4;
    double ms = time_ms(st, [&] {
        k_bmma_peak<<<blocks, 256, 0, st>>>(sink.as<int>());
        CK(cudaGetLastError());
    });
    const double ops = double(blocks) * 8 * kPeakIters * 8 * 65536.0;
    return ms > 0 ? ops / (ms * 1e-3) : 0;
}

int host_hamming(const uint64_t *a, const uint64_t *b, int64_t k)
{
    int h = 0;
    for (int64_t w = 0; w * 64 < k; w++) {
        uint64_t x = a[w] ^ b[w];
        if (k - w * 64 < 64) x &= (uint64_t(1) << (k - w * 64)) - 1;
        h += __builtin_popcountll(x);
    }
    return h;
}

std::vector<uint64_t> to_host(const DBuf &d, size_t words)
{
    std::vector<uint64_t> h(words);
    CK(cudaMemcpy(h.data(), d.p, words * 8, cudaMemcpyDeviceToHost));
    return h;
}

struct StreamCtx {
    pk_ctx *ctx;
    cudaStream_t st = nullptr;
    explicit StreamCtx(pk_ctx *c) : ctx(c)
    {
        CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
        PK(pk_ctx_set_stream(ctx, st));
    }
    ~StreamCtx()
    {
        (void)pk_ctx_set_stream(ctx, nullptr);
        (void)cudaStreamDestroy(st);
    }
};

void run_bgemm(pk_ctx *ctx, const pk_bench_case *c, pk_bench_result *r)
{
    const int64_t m = c->rows, n = c->cols, k = c->k, w = pk_bits_words(k);
    StreamCtx sc(ctx);
    DBuf A(size_t(m * w) * 8), B(size_t(n * w) * 8), C(size_t(m * n) * 4);
    k_fill_bits<<<1024, 256, 0, sc.st>>>(A.as<uint64_t>(), m * w, 0x1234);
    k_fill_bits<<<1024, 256, 0, sc.st>>>(B.as<uint64_t>(), n * w, 0x5678);
    CK(cudaGetLastError());
    auto pk_call = [&] {
        PK(pk_bgemm(ctx, m, n, k, A.as<uint64_t>(), w, B.as<uint64_t>(), w, C.as<int32_t>(), n));
    };
    pk_call(); /* C: pk's result, verified below */
    r->ceiling_ops = bmma_peak(sc.st);
    snprintf(r->ceiling, sizeof r->ceiling, "bmma-peak");
    CK(cudaStreamSynchronize(sc.st));
    /* verify sampled entries */
    std::vector<uint64_t> ha = to_host(A, size_t(m * w)), hb = to_host(B, size_t(n * w));
    std::vector<int32_t> hc(size_t(m * n));
    CK(cudaMemcpy(hc.data(), C.p, hc.size() * 4, cudaMemcpyDeviceToHost));
    r->verified = 1;
    for (int s = 0; s < 4096; s++) {
        const int64_t i = int64_t(mix(s * 2 + 1) % uint64_t(m)), j = int64_t(mix(s * 2 + 2) % uint64_t(n));
        const int want = int(k) - 2 * host_hamming(&ha[i * w], &hb[j * w], k);
        if (hc[i * n + j] != want) {
            r->verified = 0;
            snprintf(r->note, sizeof r->note, "C[%lld][%lld] = %d, expected %d", (long long)i,
                     (long long)j, hc[i * n + j], want);
            break;
        }
    }
#ifdef PK_BENCH_HAVE_CUBLAS
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
        snprintf(r->note + strlen(r->note), sizeof r->note - strlen(r->note), " cublasCreate failed");
        time_ms(sc.st, pk_call, r);
        return;
    }
    struct HG {
        cublasHandle_t h;
        ~HG() { (void)cublasDestroy(h); }
    } hg{h};
    if (cublasSetStream(h, sc.st) != CUBLAS_STATUS_SUCCESS) {
        snprintf(r->note + strlen(r->note), sizeof r->note - strlen(r->note),
                 " cublasSetStream failed");
        time_ms(sc.st, pk_call, r);
        return;
    }
    DBuf A8(size_t(m * k)), B8(size_t(n * k)), C32(size_t(m * n) * 4);
    k_signs<<<1024, 256, 0, sc.st>>>(A.as<uint64_t>(), m, k, w, A8.as<int8_t>());
    k_signs<<<1024, 256, 0, sc.st>>>(B.as<uint64_t>(), n, k, w, B8.as<int8_t>());
    CK(cudaGetLastError());
    const int32_t one = 1, zero = 0;
    cublasStatus_t bad = CUBLAS_STATUS_SUCCESS;
    /* Row-major C (m x n) = A B^T is column-major C^T = B^T(op T) * A. */
    auto peer_call = [&] {
        cublasStatus_t e = cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, int(n), int(m), int(k), &one,
                                        B8.p, CUDA_R_8I, int(k), A8.p, CUDA_R_8I, int(k), &zero,
                                        C32.p, CUDA_R_32I, int(n), CUBLAS_COMPUTE_32I,
                                        CUBLAS_GEMM_DEFAULT);
        if (e != CUBLAS_STATUS_SUCCESS) bad = e;
    };
    peer_call();
    CK(cudaStreamSynchronize(sc.st));
    if (bad != CUBLAS_STATUS_SUCCESS) {
        snprintf(r->note, sizeof r->note, "cublasGemmEx failed (%d)", int(bad));
        time_ms(sc.st, pk_call, r);
        return;
    }
    time_pair(sc.st, pk_call, peer_call, r);
    if (bad != CUBLAS_STATUS_SUCCESS) {
        r->peer_time_ms = 0, r->peer_samples = 0;
        snprintf(r->note, sizeof r->note, "cublasGemmEx failed (%d)", int(bad));
        return;
    }
    snprintf(r->peer, sizeof r->peer, "cublas-int8");
    std::vector<int32_t> pc(size_t(m * n));
    CK(cudaMemcpy(pc.data(), C32.p, pc.size() * 4, cudaMemcpyDeviceToHost));
    if (memcmp(pc.data(), hc.data(), pc.size() * 4) && r->verified)
        snprintf(r->note, sizeof r->note, "cuBLAS int8 result differs from pk's");
#else
    time_ms(sc.st, pk_call, r);
#endif
}

void run_topk(pk_ctx *ctx, const pk_bench_case *c, pk_bench_result *r)
{
    const int64_t m = c->rows, n = c->cols, k = c->k, topk = c->topk, w = pk_bits_words(k);
    StreamCtx sc(ctx);
    DBuf Q(size_t(m * w) * 8), X(size_t(n * w) * 8);
    DBuf dist(size_t(m * topk) * 4), idx(size_t(m * topk) * 8);
    k_fill_bits<<<1024, 256, 0, sc.st>>>(Q.as<uint64_t>(), m * w, 0x9abc);
    k_fill_bits<<<1024, 256, 0, sc.st>>>(X.as<uint64_t>(), n * w, 0xdef0);
    CK(cudaGetLastError());
    auto pk_call = [&] {
        PK(pk_hamming_topk(ctx, m, n, k, Q.as<uint64_t>(), w, X.as<uint64_t>(), w, topk,
                           dist.as<int32_t>(), idx.as<int64_t>()));
    };
    pk_call(); /* pk's result, verified below */
    r->ceiling_ops = bmma_peak(sc.st);
    snprintf(r->ceiling, sizeof r->ceiling, "bmma-peak");
    CK(cudaStreamSynchronize(sc.st));
    /* verify sampled queries against a full host selection */
    std::vector<uint64_t> hq = to_host(Q, size_t(m * w)), hx = to_host(X, size_t(n * w));
    std::vector<int32_t> hd(size_t(m * topk));
    std::vector<int64_t> hi(size_t(m * topk));
    CK(cudaMemcpy(hd.data(), dist.p, hd.size() * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hi.data(), idx.p, hi.size() * 8, cudaMemcpyDeviceToHost));
    r->verified = 1;
    std::vector<std::pair<int, int64_t>> ref(static_cast<size_t>(n));
    for (int s = 0; s < 6 && r->verified; s++) {
        const int64_t q = s == 0 ? 0 : s == 1 ? m - 1 : int64_t(mix(s) % uint64_t(m));
        for (int64_t j = 0; j < n; j++) ref[j] = {host_hamming(&hq[q * w], &hx[j * w], k), j};
        std::partial_sort(ref.begin(), ref.begin() + topk, ref.end());
        for (int64_t t = 0; t < topk; t++)
            if (hd[q * topk + t] != ref[t].first || hi[q * topk + t] != ref[t].second) {
                r->verified = 0;
                snprintf(r->note, sizeof r->note, "query %lld rank %lld: (%d, %lld), expected (%d, %lld)",
                         (long long)q, (long long)t, hd[q * topk + t], (long long)hi[q * topk + t],
                         ref[t].first, (long long)ref[t].second);
                break;
            }
    }
    /* peer: pk_bgemm on the same shapes, query blocks of <= 2 GiB output */
    const int64_t mb = std::max<int64_t>(1, std::min<int64_t>(m, (int64_t(1) << 29) / n));
    DBuf C(size_t(mb * n) * 4);
    auto peer_call = [&] {
        for (int64_t q0 = 0; q0 < m; q0 += mb)
            PK(pk_bgemm(ctx, std::min(mb, m - q0), n, k, Q.as<uint64_t>() + q0 * w, w,
                        X.as<uint64_t>(), w, C.as<int32_t>(), n));
    };
    time_pair(sc.st, pk_call, peer_call, r);
    snprintf(r->peer, sizeof r->peer, "bgemm");
}

} // namespace

extern "C" pk_status pk_bench_gpu_bits(pk_ctx *ctx, const pk_bench_case *c,
                                       pk_bench_result *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    try {
        if (c->id == PK_BENCH_BGEMM) run_bgemm(ctx, c, r);
        else if (c->id == PK_BENCH_HAMMING_TOPK) run_topk(ctx, c, r);
        else {
            snprintf(err, errlen, "%s: not a bits kernel", c->kernel);
            return PK_ERR_UNSUPPORTED;
        }
        return PK_OK;
    } catch (const Fail &f) {
        snprintf(err, errlen, "%s", g_err);
        return f.s;
    } catch (...) {
        snprintf(err, errlen, "out of host memory");
        return PK_ERR_NOMEM;
    }
}
