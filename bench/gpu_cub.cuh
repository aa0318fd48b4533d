/* CUB, the peer of pk_reduce and of the axis-1 sum in `pk bench`. Its
 * DeviceReduce instantiations (six ops, six dtypes) were most of
 * gpu_bench.cu's compile time: they live in translation units of their own,
 * float (gpu_cub_float.cu) and integer (gpu_cub_int.cu), built in parallel. */
#ifndef PK_BENCH_GPU_CUB_CUH
#define PK_BENCH_GPU_CUB_CUH

#include "pk.h"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

/* The peer of pk_reduce(op) on n elements of dtype t at x, result to out
 * (argmin/argmax: the index at out, the value 16 bytes in); CUB's
 * two-phase call (tmp NULL: only the scratch size into tb). */
cudaError_t pk_bench_cub_reduce(pk_dtype t, pk_op op, void *tmp, size_t &tb, const void *x,
                                void *out, int64_t n, cudaStream_t st);
/* The integer dtypes' part of it (gpu_cub_int.cu). */
cudaError_t pk_bench_cub_reduce_int(pk_dtype t, pk_op op, void *tmp, size_t &tb,
                                    const void *x, void *out, int64_t n, cudaStream_t st);
/* Row sums of rows segments [off[i], off[i + 1]) of x into out. */
cudaError_t pk_bench_cub_segsum_f32(void *tmp, size_t &tb, const void *x, void *out,
                                    int64_t rows, const int64_t *off, cudaStream_t st);
cudaError_t pk_bench_cub_segsum_f64(void *tmp, size_t &tb, const void *x, void *out,
                                    int64_t rows, const int64_t *off, cudaStream_t st);

#ifdef PK_BENCH_CUB_IMPL
#include <cub/device/device_reduce.cuh>

namespace {

struct Mul {
    template <class A, class B>
    __host__ __device__ A operator()(A a, B b) const { return A(a * A(b)); }
};

/* pk_bench_cub_reduce for input In, result Out. */
template <class In, class Out>
cudaError_t cub_reduce(pk_op op, void *tmp, size_t &tb, const In *x, void *out, int64_t n,
                       cudaStream_t st)
{
    switch (op) {
    case PK_SUM: return cub::DeviceReduce::Sum(tmp, tb, x, static_cast<Out *>(out), n, st);
    case PK_PROD:
        return cub::DeviceReduce::Reduce(tmp, tb, x, static_cast<Out *>(out), n, Mul(), Out(1), st);
    case PK_MIN: return cub::DeviceReduce::Min(tmp, tb, x, static_cast<In *>(out), n, st);
    case PK_MAX: return cub::DeviceReduce::Max(tmp, tb, x, static_cast<In *>(out), n, st);
    case PK_ARGMIN:
        return cub::DeviceReduce::ArgMin(tmp, tb, x, static_cast<In *>(out) + 2,
                                         static_cast<int64_t *>(out), n, st);
    default:
        return cub::DeviceReduce::ArgMax(tmp, tb, x, static_cast<In *>(out) + 2,
                                         static_cast<int64_t *>(out), n, st);
    }
}

} // namespace
#endif

#endif
