/* What the GPU benchmark runners (gpu_bench.cu, gpu_bits.cu, gpu_gemm.cu)
 * share: failures thrown as Fail with the message in g_err (each runner's
 * entry point catches it and copies g_err out), the CK/PK checks, a device
 * buffer freed on scope exit, and the hash behind their random data. Each
 * including file gets its own copy (an unnamed namespace): the runners stay
 * separate translation units that compile in parallel. */
#ifndef PK_BENCH_GPU_UTIL_CUH
#define PK_BENCH_GPU_UTIL_CUH

#include "pk.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <utility>

namespace {

struct Fail {
    pk_status s;
};
char g_err[256];

/* Throws Fail on a failed CUDA call (out of memory: PK_ERR_NOMEM). */
#define CK(call)                                                                  \
    do {                                                                          \
        cudaError_t e_ = (call);                                                  \
        if (e_ != cudaSuccess) {                                                  \
            snprintf(g_err, sizeof g_err, "%s: %s", #call, cudaGetErrorString(e_)); \
            throw Fail{e_ == cudaErrorMemoryAllocation ? PK_ERR_NOMEM : PK_ERR_DEVICE}; \
        }                                                                         \
    } while (0)
/* Throws Fail on a failed pk call. */
#define PK(call)                                                                  \
    do {                                                                          \
        pk_status s_ = (call);                                                    \
        if (s_ != PK_OK) {                                                        \
            snprintf(g_err, sizeof g_err, "%s: %s", #call, pk_status_str(s_));     \
            throw Fail{s_};                                                       \
        }                                                                         \
    } while (0)

/* A device buffer freed on scope exit. */
struct DBuf {
    void *p = nullptr;
    DBuf() = default;
    explicit DBuf(size_t bytes) { CK(cudaMalloc(&p, bytes ? bytes : 16)); }
    DBuf(const DBuf &) = delete;
    DBuf &operator=(const DBuf &) = delete;
    DBuf(DBuf &&o) noexcept : p(o.p) { o.p = nullptr; }
    DBuf &operator=(DBuf &&o) noexcept
    {
        std::swap(p, o.p);
        return *this;
    }
    ~DBuf() { if (p) (void)cudaFree(p); }
    template <class T> T *as() const { return static_cast<T *>(p); }
};

/* SplitMix64's finalizer: element i of seed's random data is
 * mix(seed ^ i * 0xD1B54A32D192ED03). */
__host__ __device__ inline uint64_t mix(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

} // namespace

#endif
