/* The driver's entry points for launches and pointer queries (launch.cuh
 * says why), and pointer classification. */
#include "cuda/launch.cuh"

#include <cuda.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace pk_cuda {

namespace {

typedef CUresult (*LaunchFn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, CUstream, void **, void **);
typedef CUresult (*PointerAttrsFn)(unsigned, CUpointer_attribute *, void **, CUdeviceptr);
typedef CUresult (*CtxGetCurrentFn)(CUcontext *);

struct Driver {
    LaunchFn launch = nullptr;
    CtxGetCurrentFn ctx_current = nullptr;
    PointerAttrsFn pointer_attrs = nullptr;
};

/* Launches by path, for the tests (pk__cuda_launch_counts). */
std::atomic<unsigned long long> launches_driver{0}, launches_runtime{0};

/* The driver function `symbol` as of CUDA `version`, or null. */
void *entry(const char *symbol, int version)
{
    void *fn = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    cudaError_t e = cudaGetDriverEntryPointByVersion(symbol, &fn, (unsigned)version,
                                                     cudaEnableDefault, &found);
    if (e != cudaSuccess || found != cudaDriverEntryPointSuccess) {
        (void)cudaGetLastError();
        return nullptr;
    }
    return fn;
}

/* Looked up on first use (a thread-safe static): by then a context exists,
 * so the runtime and the driver are initialised. PK_CUDA_LAUNCH=runtime in
 * the environment keeps launches and pointer queries on the runtime's path
 * (tests run it so; A/B timing). */
const Driver &driver()
{
    static const Driver d = [] {
        Driver r;
        const char *env = pk__env(PK__ENV_CUDA_LAUNCH);
        if (env && !strcmp(env, "runtime")) return r;
        r.launch = reinterpret_cast<LaunchFn>(entry("cuLaunchKernel", 4000));
        r.ctx_current = reinterpret_cast<CtxGetCurrentFn>(entry("cuCtxGetCurrent", 4000));
        if (!r.ctx_current) r.launch = nullptr;
        r.pointer_attrs = reinterpret_cast<PointerAttrsFn>(entry("cuPointerGetAttributes", 7000));
        return r;
    }();
    return d;
}

int fn_slot(const void *k, const void *c)
{
    return int(((uintptr_t(k) >> 4) ^ (uintptr_t(c) >> 6)) % kFnSlots);
}

/* k's driver handle for CUDA context c (current on this thread, the
 * context's device: the device guard made it so), looked up on first use.
 * Null: launch through the runtime (no handle, table full, or the driver
 * refused it before). */
FnSlot *kernel_slot(State *s, const void *k, CUcontext c)
{
    for (int i = 0, h = fn_slot(k, c); i < kFnSlots; i++, h = (h + 1) % kFnSlots) {
        FnSlot &e = s->fns[h];
        if (e.kernel == k && e.cuctx == c) return &e;
        if (e.kernel) continue;
        cudaFunction_t f = nullptr;
        if (cudaGetFuncBySymbol(&f, k) != cudaSuccess) {
            (void)cudaGetLastError();
            f = nullptr;
        }
        e.kernel = k;
        e.cuctx = c;
        e.handle = f;
        return &e;
    }
    return nullptr;
}

} // namespace

pk_status launch_raw(pk_ctx *ctx, const void *fn, int grid, size_t smem, cudaStream_t stream,
                     void **params, const char *name)
{
    const Driver &d = driver();
    CUcontext cur = nullptr;
    if (d.launch && d.ctx_current(&cur) == CUDA_SUCCESS && cur) {
        FnSlot *e = kernel_slot(state(ctx), fn, cur);
        if (e && e->handle) {
            if (d.launch(static_cast<CUfunction>(e->handle), (unsigned)grid, 1, 1, kThreads, 1, 1,
                         (unsigned)smem, reinterpret_cast<CUstream>(stream), params,
                         nullptr) == CUDA_SUCCESS) {
                launches_driver.fetch_add(1, std::memory_order_relaxed);
                return PK_OK;
            }
            /* Refused (a launch that fails launches nothing): the runtime
             * from now on, which also reports what is really wrong. */
            e->handle = nullptr;
        }
    }
    /* No context current on this thread yet (the runtime binds the
     * device's), no driver entry points, or no handle. */
    launches_runtime.fetch_add(1, std::memory_order_relaxed);
    cudaError_t e = cudaLaunchKernel(fn, dim3((unsigned)grid), dim3(kThreads), params, smem, stream);
    if (e != cudaSuccess) return fail_cuda(ctx, e, name);
    return PK_OK;
}

pk_status where(pk_ctx *ctx, const void *p, const char *name, Where *w)
{
    *w = kHost;
    if (!p) return PK_OK; /* only when nothing is read through it */
    bool managed, device_mem, host_mem;
    int device;
    const Driver &d = driver();
    unsigned type = 0;
    int ordinal = -1;
    unsigned long long is_managed = 0; /* wide enough for what the driver writes */
    CUpointer_attribute at[3] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                 CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                 CU_POINTER_ATTRIBUTE_IS_MANAGED};
    void *vals[3] = {&type, &ordinal, &is_managed};
    /* The plural query reports no error for memory CUDA does not know: its
     * type reads 0 (host memory). */
    if (d.pointer_attrs &&
        d.pointer_attrs(3, at, vals, reinterpret_cast<CUdeviceptr>(p)) == CUDA_SUCCESS) {
        managed = is_managed != 0;
        device_mem = type == CU_MEMORYTYPE_DEVICE;
        host_mem = type == CU_MEMORYTYPE_HOST;
        device = ordinal;
    } else {
        cudaPointerAttributes a;
        if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
            (void)cudaGetLastError(); /* not known to CUDA: host memory */
            return PK_OK;
        }
        managed = a.type == cudaMemoryTypeManaged;
        device_mem = a.type == cudaMemoryTypeDevice;
        host_mem = a.type == cudaMemoryTypeHost;
        device = a.device;
    }
    if (managed) {
        *w = kDevice;
    } else if (device_mem) {
        if (device != ctx->device)
            return pk__fail(ctx, PK_ERR_UNSUPPORTED,
                            "%s is memory of CUDA device %d; the context runs on "
                            "device %d",
                            name, device, ctx->device);
        *w = kDevice;
    } else if (host_mem) {
        *w = kPinned;
    }
    return PK_OK;
}

} // namespace pk_cuda

/* Test hook (not in pk.h): launches through the driver and the runtime so
 * far in this process. */
extern "C" void pk__cuda_launch_counts(unsigned long long counts[2])
{
    counts[0] = pk_cuda::launches_driver.load(std::memory_order_relaxed);
    counts[1] = pk_cuda::launches_runtime.load(std::memory_order_relaxed);
}
