/* CUDA-event timing shared by the GPU benchmark runners (gpu_bench.cu,
 * gpu_gemm.cu, gpu_bits.cu, gpu_custom.cu), so that every row is timed the
 * same way: each call between its own pair of events, calls queued back to
 * back in blocks of a fixed length, pk and its peer in alternating blocks
 * (each side first in turn), the median over all of a side's calls. Why
 * alternating: the VMs' launch cost and clocks drift between phases; one
 * block a side had given 512^3 gemm ratios of 0.70 and 1.73 in two runs of
 * one build.
 *
 * Functions return the first CUDA error (the callers check it their way);
 * fn() issues one call on the stream and reports its own failures. */
#ifndef PK_BENCH_GPU_TIMING_CUH
#define PK_BENCH_GPU_TIMING_CUH

#include "gpu.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

namespace pk_bench {

constexpr int kRounds = 10; /* blocks a side */

/* Times (ms) of reps calls of fn on st, each between two events, appended
 * to ms. */
template <class F>
cudaError_t time_calls(cudaStream_t st, F &&fn, int reps, std::vector<float> &ms)
{
    std::vector<cudaEvent_t> ev(2 * size_t(reps), nullptr);
    cudaError_t e = cudaSuccess;
    for (auto &x : ev)
        if (e == cudaSuccess) e = cudaEventCreate(&x);
    for (int r = 0; r < reps && e == cudaSuccess; r++) {
        e = cudaEventRecord(ev[2 * r], st);
        fn();
        if (e == cudaSuccess) e = cudaEventRecord(ev[2 * r + 1], st);
    }
    if (e == cudaSuccess) e = cudaStreamSynchronize(st);
    for (int r = 0; r < reps && e == cudaSuccess; r++) {
        float t = 0;
        e = cudaEventElapsedTime(&t, ev[2 * r], ev[2 * r + 1]);
        ms.push_back(t);
    }
    for (auto &x : ev)
        if (x) (void)cudaEventDestroy(x);
    return e;
}

/* After `warm` untimed calls, the number of calls (2 ... max_reps) that
 * fill about block_ms, from one timed call. */
template <class F>
cudaError_t block_reps(cudaStream_t st, F &&fn, int warm, float block_ms, int max_reps, int *reps)
{
    for (int i = 0; i < warm; i++) fn();
    cudaError_t e = cudaStreamSynchronize(st);
    std::vector<float> one;
    if (e == cudaSuccess) e = time_calls(st, fn, 1, one);
    *reps = max_reps;
    if (e == cudaSuccess && one[0] > 0)
        *reps = std::max(2, std::min(max_reps, int(block_ms / one[0])));
    return e;
}

inline double median_of(std::vector<float> ms)
{
    if (ms.empty()) return 0;
    std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
    return ms[ms.size() / 2];
}

/* Record a side's samples in r: pk's (peer false) or the peer's. The
 * median and its spread, for pk bench's noise figure and outlier checks. */
inline void record(pk_bench_result *r, std::vector<float> ms, bool peer = false)
{
    if (ms.empty()) return;
    std::sort(ms.begin(), ms.end());
    const size_t n = ms.size();
    auto q = [&](double f) {
        const double pos = f * double(n - 1);
        const size_t i = size_t(pos);
        return i + 1 < n ? ms[i] + (pos - double(i)) * (ms[i + 1] - ms[i]) : double(ms[n - 1]);
    };
    const double med = q(0.5), noise = med > 0 ? (q(0.75) - q(0.25)) / (2 * med) : 0;
    if (peer) {
        r->peer_time_ms = med, r->peer_time_min_ms = ms[0], r->peer_time_max_ms = ms[n - 1];
        r->peer_noise = noise, r->peer_samples = int(n);
    } else {
        r->time_ms = med, r->time_min_ms = ms[0], r->time_max_ms = ms[n - 1];
        r->noise = noise, r->samples = int(n);
    }
}

/* kRounds blocks of ra calls of a and of rb calls of b, alternating, each
 * side first in turn; times appended to ta and tb. */
template <class F, class G>
cudaError_t time_alternating(cudaStream_t st, F &&a, int ra, std::vector<float> &ta, G &&b,
                             int rb, std::vector<float> &tb)
{
    cudaError_t e = cudaSuccess;
    for (int round = 0; round < kRounds && e == cudaSuccess; round++) {
        if (round & 1) e = time_calls(st, b, rb, tb);
        if (e == cudaSuccess) e = time_calls(st, a, ra, ta);
        if (e == cudaSuccess && !(round & 1)) e = time_calls(st, b, rb, tb);
    }
    return e;
}

/* `rounds` blocks of reps calls of fn (a side with no peer). */
template <class F>
cudaError_t time_rounds(cudaStream_t st, F &&fn, int reps, std::vector<float> &ms,
                        int rounds = kRounds)
{
    cudaError_t e = cudaSuccess;
    for (int round = 0; round < rounds && e == cudaSuccess; round++)
        e = time_calls(st, fn, reps, ms);
    return e;
}

} // namespace pk_bench

#endif
