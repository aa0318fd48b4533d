/* CUB peers of integer reductions (gpu_cub.cuh). */
#define PK_BENCH_CUB_IMPL
#include "gpu_cub.cuh"

cudaError_t pk_bench_cub_reduce_int(pk_dtype t, pk_op op, void *tmp, size_t &tb,
                                    const void *x, void *out, int64_t n, cudaStream_t st)
{
    switch (t) {
    case PK_I32: return cub_reduce<int32_t, int64_t>(op, tmp, tb, (const int32_t *)x, out, n, st);
    case PK_I64: return cub_reduce<int64_t, int64_t>(op, tmp, tb, (const int64_t *)x, out, n, st);
    case PK_U32: return cub_reduce<uint32_t, uint64_t>(op, tmp, tb, (const uint32_t *)x, out, n, st);
    default: return cub_reduce<uint64_t, uint64_t>(op, tmp, tb, (const uint64_t *)x, out, n, st);
    }
}
