/* CUB peers of float reductions and of the axis-1 sum (gpu_cub.cuh). */
#define PK_BENCH_CUB_IMPL
#include "gpu_cub.cuh"

#include <cub/device/device_segmented_reduce.cuh>

cudaError_t pk_bench_cub_reduce(pk_dtype t, pk_op op, void *tmp, size_t &tb, const void *x,
                                void *out, int64_t n, cudaStream_t st)
{
    if (t == PK_F32) return cub_reduce<float, float>(op, tmp, tb, (const float *)x, out, n, st);
    if (t == PK_F64) return cub_reduce<double, double>(op, tmp, tb, (const double *)x, out, n, st);
    return pk_bench_cub_reduce_int(t, op, tmp, tb, x, out, n, st);
}

template <class T>
static cudaError_t segsum(void *tmp, size_t &tb, const void *x, void *out, int64_t rows,
                          const int64_t *off, cudaStream_t st)
{
    return cub::DeviceSegmentedReduce::Sum(tmp, tb, static_cast<const T *>(x),
                                           static_cast<T *>(out), rows, off, off + 1, st);
}

cudaError_t pk_bench_cub_segsum_f32(void *tmp, size_t &tb, const void *x, void *out,
                                    int64_t rows, const int64_t *off, cudaStream_t st)
{
    return segsum<float>(tmp, tb, x, out, rows, off, st);
}

cudaError_t pk_bench_cub_segsum_f64(void *tmp, size_t &tb, const void *x, void *out,
                                    int64_t rows, const int64_t *off, cudaStream_t st)
{
    return segsum<double>(tmp, tb, x, out, rows, off, st);
}
