/* The driver's entry points for launches and pointer queries (launch.cuh
 * says why), and pointer classification. */
#include "cuda/launch.cuh"

#include <cuda.h>

#include <cstdlib>
#include <cstring>

namespace pk_cuda {

namespace {

typedef CUresult (*LaunchFn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, CUstream, void **, void **);
typedef CUresult (*PointerAttrsFn)(unsigned, CUpointer_attribute *, void **, CUdeviceptr);

struct Driver {
    LaunchFn launch = nullptr;
    PointerAttrsFn pointer_attrs = nullptr;
};

/* The driver function `symbol` as of CUDA `version`, or null. */
void *entry(const char *symbol, int version)
{
    void *fn = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
    cudaError_t e = cudaGetDriverEntryPointByVersion(symbol, &fn, (unsigned)version,
                                                     cudaEnableDefault, &found);
#else
    (void)version;
    cudaError_t e = cudaGetDriverEntryPoint(symbol, &fn, cudaEnableDefault, &found);
#endif
    if (e != cudaSuccess || found != cudaDriverEntryPointSuccess) {
        (void)cudaGetLastError();
        return nullptr;
    }
    return fn;
}

/* Looked up on first use (a thread-safe static): by then a context exists,
 * so the runtime and the driver are initialised. PK_CUDA_LAUNCH=runtime in
 * the environment keeps both on the runtime's path (tests run it so; A/B
 * timing). */
const Driver &driver()
{
    static const Driver d = [] {
        Driver r;
        const char *env = getenv("PK_CUDA_LAUNCH");
        if (env && !strcmp(env, "runtime")) return r;
        r.launch = reinterpret_cast<LaunchFn>(entry("cuLaunchKernel", 4000));
        r.pointer_attrs = reinterpret_cast<PointerAttrsFn>(entry("cuPointerGetAttributes", 7000));
        return r;
    }();
    return d;
}

int fn_slot(const void *k) { return int((uintptr_t(k) >> 4) % kFnSlots); }

/* k's driver handle in this context (the current device's), looked up on
 * first use; null when the table is full or the lookup fails. */
CUfunction kernel_handle(State *s, const void *k)
{
    for (int i = 0, h = fn_slot(k); i < kFnSlots; i++, h = (h + 1) % kFnSlots) {
        if (s->fns[h].kernel == k) return static_cast<CUfunction>(s->fns[h].handle);
        if (s->fns[h].kernel) continue;
        cudaFunction_t f = nullptr;
        if (cudaGetFuncBySymbol(&f, k) != cudaSuccess || !f) {
            (void)cudaGetLastError();
            return nullptr;
        }
        s->fns[h].kernel = k;
        s->fns[h].handle = f;
        return reinterpret_cast<CUfunction>(f);
    }
    return nullptr;
}

} // namespace

pk_status launch_raw(pk_ctx *ctx, const void *fn, int grid, size_t smem, cudaStream_t stream,
                     void **params, const char *name)
{
    const Driver &d = driver();
    if (d.launch) {
        CUfunction f = kernel_handle(state(ctx), fn);
        /* A refusal (another context current on this thread, say) falls
         * through to the runtime, which reports what is really wrong. */
        if (f && d.launch(f, (unsigned)grid, 1, 1, kThreads, 1, 1, (unsigned)smem,
                          reinterpret_cast<CUstream>(stream), params, nullptr) == CUDA_SUCCESS)
            return PK_OK;
    }
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
