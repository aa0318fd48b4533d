/* Thread, warp and block building blocks of the CUDA kernels: loads, shuffles
 * of any partial type, warp and block reductions in a fixed tree, and the
 * L2-coherent partials that blocks hand to the last block of a launch. */
#ifndef PK_CUDA_BLOCK_CUH
#define PK_CUDA_BLOCK_CUH

#include "cuda/cuda_internal.cuh"

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

namespace pk_cuda {

/* ---- loads ---------------------------------------------------------------- */

/* 16 bytes through the read-only path, not kept in L1 (streaming reads).
 * p must be 16-byte aligned and the data must not change during the kernel.
 * No L2 prefetch-size hint: on an H200 `.L2::256B` cost 5-9% at 2^28 (f32
 * sum 262-265 -> 242-252 us, dot 519-523 -> 481-502 us without it, two
 * machines; `.L2::128B` and `.L2::64B` tied with no hint). */
__device__ __forceinline__ uint4 ld_stream16(const void *p)
{
    uint4 r;
    asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
        : "l"(p));
    return r;
}

/* One element through the read-only path. */
template <class T>
__device__ __forceinline__ T ld_ro(const T *p)
{
    if constexpr (sizeof(T) == 4) {
        unsigned v = __ldg(reinterpret_cast<const unsigned *>(p));
        T r;
        memcpy(&r, &v, 4);
        return r;
    } else {
        unsigned long long v = __ldg(reinterpret_cast<const unsigned long long *>(p));
        T r;
        memcpy(&r, &v, 8);
        return r;
    }
}

/* Elements per 16-byte vector. */
template <class T> __host__ __device__ constexpr int vec_of() { return int(16 / sizeof(T)); }

/* Vector j of a row of `cols` elements at x + base: v[0..m) with m the
 * number of elements that exist (vec_of<T>() except at the row's end).
 * kAligned: x + base is 16-byte aligned, so whole vectors load at once. */
template <bool kAligned, class T>
__device__ __forceinline__ int load_vec(const T *x, int64_t base, int64_t j,
                                        int64_t cols, T (&v)[vec_of<T>()])
{
    constexpr int V = vec_of<T>();
    const int64_t c0 = j * V;
    if (kAligned && c0 + V <= cols) {
        uint4 r = ld_stream16(x + base + c0);
        memcpy(v, &r, 16);
        return V;
    }
    const int64_t left = cols - c0;
    const int m = left < V ? (int)left : V;
#pragma unroll
    for (int e = 0; e < V; e++)
        if (e < m) v[e] = ld_ro(x + base + c0 + e);
    return m;
}

/* ---- shuffles and reductions ---------------------------------------------- */

/* __shfl_down_sync of any trivially copyable type, 4 bytes at a time. */
template <class T>
__device__ __forceinline__ T shfl_down(T v, int off, int width = 32)
{
    constexpr int W = int((sizeof(T) + 3) / 4);
    union {
        T t;
        int w[W];
    } u;
    u.t = v;
#pragma unroll
    for (int i = 0; i < W; i++) u.w[i] = __shfl_down_sync(0xffffffffu, u.w[i], off, width);
    return u.t;
}

/* Reduce within aligned groups of `width` lanes (a power of two <= 32):
 * the group's first lane gets the result. Every lane of the warp must call. */
template <class Op>
__device__ __forceinline__ typename Op::Acc warp_reduce(typename Op::Acc a,
                                                        int width = 32)
{
    for (int off = width >> 1; off > 0; off >>= 1)
        a = Op::combine(a, shfl_down(a, off, width));
    return a;
}

/* Reduce over the block (kThreads threads, all of which must call): thread 0
 * gets the result. Ends with a barrier, so it may be called again at once. */
template <class Op>
__device__ __forceinline__ typename Op::Acc block_reduce(typename Op::Acc a)
{
    using Acc = typename Op::Acc;
    constexpr int kWarps = kThreads / 32;
    __shared__ Acc warps[kWarps];
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    a = warp_reduce<Op>(a);
    if (lane == 0) warps[w] = a;
    __syncthreads();
    if (w == 0) {
        a = lane < kWarps ? warps[lane] : Op::identity();
        a = warp_reduce<Op>(a, kWarps);
    }
    __syncthreads();
    return a;
}

/* ---- partials handed between blocks ---------------------------------------- */

/* A block's ticket, drawn by one thread once the block's partials are stored
 * (by that thread, or by others before a __syncthreads): an atomic add with
 * acquire-release semantics at GPU scope. Release publishes the partials to
 * whichever block draws the last ticket; acquire, followed by a
 * __syncthreads in that block, lets all its threads read every partial (the
 * barrier-then-one-thread pattern of CUTLASS's semaphores). It replaces
 * __threadfence (fence.sc) + atomicAdd: 0.3 us less per call on an H100. */
__device__ __forceinline__ unsigned draw_ticket(unsigned *counter)
{
    unsigned prev;
    asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;"
                 : "=r"(prev)
                 : "l"(counter)
                 : "memory");
    return prev;
}

/* Store and load a partial at the L2 (the last block of a launch reads what
 * other blocks wrote, ordered by their tickets). */
template <class T>
__device__ __forceinline__ void store_cg(T *p, const T &v)
{
    static_assert(sizeof(T) % 4 == 0, "partials are whole words");
    const unsigned *s = reinterpret_cast<const unsigned *>(&v);
    unsigned *d = reinterpret_cast<unsigned *>(p);
#pragma unroll
    for (int i = 0; i < int(sizeof(T) / 4); i++) __stcg(d + i, s[i]);
}
template <class T>
__device__ __forceinline__ T load_cg(const T *p)
{
    static_assert(sizeof(T) % 4 == 0, "partials are whole words");
    union {
        T t;
        unsigned w[sizeof(T) / 4];
    } u;
    const unsigned *s = reinterpret_cast<const unsigned *>(p);
#pragma unroll
    for (int i = 0; i < int(sizeof(T) / 4); i++) u.w[i] = __ldcg(s + i);
    return u.t;
}

} // namespace pk_cuda

#endif
