/* Kernel launches and pointer queries through the CUDA driver's entry
 * points, for the calls whose cost is the host's: a small reduction or axpy
 * is a pointer query or two and one launch, and in the VMs pk is measured in
 * a launch costs 3.6-4.8 us of host time (docs/CUDA.md, "Memory and
 * streams"). The runtime's launch (<<<>>> or cudaLaunchKernel)
 * adds its own bookkeeping on top of the driver's cuLaunchKernel, and
 * cudaPointerGetAttributes costs 2-3x cuPointerGetAttributes.
 *
 * The driver's functions are looked up once through the runtime
 * (cudaGetDriverEntryPointByVersion), so libpk does not link libcuda and
 * still loads on a machine without a driver. Where a lookup fails, no CUDA
 * context is current on the thread yet (the runtime's launch binds the
 * device's), or the driver refused a kernel's handle once, the runtime's
 * path runs instead: the same kernel, the same arguments. Handles are
 * cached per pk context and CUDA context (State::fns). */
#ifndef PK_CUDA_LAUNCH_CUH
#define PK_CUDA_LAUNCH_CUH

#include "cuda/cuda_internal.cuh"

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

namespace pk_cuda {

/* Launch k<<<grid, kThreads, smem, stream>>>(args...) with k's driver
 * handle (looked up once per kernel and context) or, failing that, through
 * cudaLaunchKernel. `fn` is the kernel's address; params points at one
 * value per kernel parameter, of the parameter's exact type. */
pk_status launch_raw(pk_ctx *ctx, const void *fn, int grid, size_t smem, cudaStream_t stream,
                     void **params, const char *name);

template <class Tuple, std::size_t... I>
pk_status launch_tuple(pk_ctx *ctx, const void *fn, int grid, size_t smem, cudaStream_t stream,
                       const char *name, Tuple &vals, std::index_sequence<I...>)
{
    void *params[sizeof...(I) > 0 ? sizeof...(I) : 1] = {static_cast<void *>(&std::get<I>(vals))...};
    return launch_raw(ctx, fn, grid, smem, stream, params, name);
}

/* Typed front end: the arguments are converted to the kernel's parameter
 * types first, so that every pointer in params points at a value of the
 * type the kernel reads. */
template <class... P, class... A>
pk_status launch_kernel(pk_ctx *ctx, void (*k)(P...), int grid, size_t smem,
                        cudaStream_t stream, const char *name, A &&...args)
{
    static_assert(sizeof...(P) == sizeof...(A), "launch_kernel: wrong number of arguments");
    std::tuple<std::decay_t<P>...> vals(std::forward<A>(args)...);
    return launch_tuple(ctx, reinterpret_cast<const void *>(k), grid, smem, stream, name, vals,
                        std::index_sequence_for<P...>{});
}

} // namespace pk_cuda

#endif
