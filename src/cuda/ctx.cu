/* The CUDA backend's contexts: creation and teardown, streams, per-context
 * scratch (partials, ticket counters, a mapped pinned result slot), pointer
 * classification, error reporting, and the backend's ops table. */
#include "cuda/bits.cuh"
#include "cuda/cuda_internal.cuh"

#include <atomic>
#include <cstdio>
#include <cstring>
#include <new>

namespace pk_cuda {

/* Initial scratch: partials for 1024 slices of the widest partial (16
 * bytes), counters for 4096 rows or tiles. Both grow on demand. */
constexpr size_t kInitPartials = 1024 * 16;
constexpr size_t kInitCounters = 4096;

pk_status fail_cuda(pk_ctx *ctx, cudaError_t e, const char *what)
{
    (void)cudaGetLastError(); /* clear a non-sticky error */
    pk_status s = e == cudaErrorMemoryAllocation ? PK_ERR_NOMEM : PK_ERR_DEVICE;
    return pk__fail(ctx, s, "CUDA: %s failed: %s (%s)", what, cudaGetErrorName(e),
                    cudaGetErrorString(e));
}

DeviceGuard::DeviceGuard(pk_ctx *ctx)
{
    int cur = -1;
    cudaError_t e = cudaGetDevice(&cur);
    if (e != cudaSuccess) {
        status_ = fail_cuda(ctx, e, "cudaGetDevice");
        return;
    }
    if (cur == ctx->device) return;
    if ((e = cudaSetDevice(ctx->device)) != cudaSuccess) {
        status_ = fail_cuda(ctx, e, "cudaSetDevice");
        return;
    }
    prev_ = cur;
}

DeviceGuard::~DeviceGuard()
{
    if (prev_ >= 0) (void)cudaSetDevice(prev_);
}

pk_status dev_alloc(pk_ctx *ctx, void **p, size_t bytes)
{
    State *s = state(ctx);
    *p = nullptr;
    cudaError_t e = s->pools ? cuda_malloc_async(p, bytes, s->stream) : cuda_malloc(p, bytes);
    if (e == cudaSuccess) return PK_OK;
    *p = nullptr;
    char what[64];
    snprintf(what, sizeof what, "%s of %zu bytes", s->pools ? "cudaMallocAsync" : "cudaMalloc",
             bytes);
    return fail_cuda(ctx, e, what);
}

void dev_free(State *s, void *p)
{
    if (!p) return;
    if (s->pools) (void)cudaFreeAsync(p, s->stream);
    else (void)cudaFree(p);
}

pk_status stage_input(pk_ctx *ctx, const void *x, Where w, size_t bytes, const void **dx)
{
    *dx = x;
    if (w == kDevice || bytes == 0) return PK_OK;
    State *st = state(ctx);
    pk_status s = ensure_buffer(ctx, &st->axis_in, &st->axis_in_bytes, bytes);
    if (s) return s;
    /* stage_to_device returns once x has been read, page-locked x too (an
     * asynchronous copy from it let the call return while the GPU still
     * read x, which a caller with a device result may then reuse). */
    if ((s = stage_to_device(ctx, x, w, st->axis_in, bytes))) return s;
    *dx = st->axis_in;
    return PK_OK;
}

void trim_staged_input(State *s)
{
    if (s->axis_in_bytes <= (size_t(256) << 20)) return;
    dev_free(s, s->axis_in);
    s->axis_in = nullptr;
    s->axis_in_bytes = 0;
}

pk_status ensure_buffer(pk_ctx *ctx, void **buf, size_t *have, size_t bytes)
{
    if (*have >= bytes && *buf) return PK_OK;
    State *s = state(ctx);
    dev_free(s, *buf);
    *buf = nullptr;
    *have = 0;
    size_t want = bytes + bytes / 4; /* some headroom against regrowth */
    pk_status st = dev_alloc(ctx, buf, want);
    if (st) return st;
    *have = want;
    return PK_OK;
}

pk_status ensure_partials(pk_ctx *ctx, size_t bytes)
{
    State *s = state(ctx);
    return ensure_buffer(ctx, &s->part, &s->part_bytes, bytes);
}

pk_status ensure_counters(pk_ctx *ctx, size_t n)
{
    State *s = state(ctx);
    if (s->cnt_n >= n && s->cnt) return PK_OK;
    void *p = s->cnt;
    size_t have = s->cnt_n * sizeof(unsigned);
    pk_status st = ensure_buffer(ctx, &p, &have, n * sizeof(unsigned));
    s->cnt = static_cast<unsigned *>(p);
    s->cnt_n = have / sizeof(unsigned);
    if (st) return st;
    /* Counters start at zero; each kernel's last block puts them back. */
    PK_CU(ctx, cudaMemsetAsync(s->cnt, 0, have, s->stream));
    return PK_OK;
}

namespace {
constexpr int kOccSlots = 1024, kOccProbe = 16;
std::atomic<const void *> occ_key[kOccSlots];
std::atomic<int> occ_val[kOccSlots];
int occ_slot(const void *k) { return int((uintptr_t(k) >> 4) % kOccSlots); }
} // namespace

int occupancy_lookup(const void *kernel)
{
    for (int i = 0, h = occ_slot(kernel); i < kOccProbe; i++, h = (h + 1) % kOccSlots) {
        const void *k = occ_key[h].load(std::memory_order_acquire);
        if (k == kernel) return occ_val[h].load(std::memory_order_relaxed);
        if (!k) return 0;
    }
    return 0;
}

void occupancy_store(const void *kernel, int blocks)
{
    for (int i = 0, h = occ_slot(kernel); i < kOccProbe; i++, h = (h + 1) % kOccSlots) {
        const void *k = occ_key[h].load(std::memory_order_acquire);
        /* A reader that sees the key before the value reads 0: unknown, so
         * it computes the value again. */
        if (!k && occ_key[h].compare_exchange_strong(k, kernel, std::memory_order_acq_rel)) {
            occ_val[h].store(blocks, std::memory_order_relaxed);
            return;
        }
        if (k == kernel) return; /* another thread stored it */
    }
}

pk_status finish_host_result(pk_ctx *ctx, void *out, size_t bytes, uint64_t seq)
{
    State *s = state(ctx);
    uint64_t *flag = reinterpret_cast<uint64_t *>(static_cast<char *>(s->res_host) + kFlagOffset);
    for (unsigned i = 1; __atomic_load_n(flag, __ATOMIC_ACQUIRE) != seq; i++) {
        if (i % 1024) continue;
        /* Now and then: has the stream failed, or finished without the
         * flag (a bug)? After a long wait, stop spinning and block. */
        cudaError_t e = i < (1u << 20) ? cudaStreamQuery(s->stream)
                                       : cudaStreamSynchronize(s->stream);
        if (e == cudaErrorNotReady) continue;
        if (e != cudaSuccess) return fail_cuda(ctx, e, "the reduction kernel");
        if (__atomic_load_n(flag, __ATOMIC_ACQUIRE) != seq)
            return pk__fail(ctx, PK_ERR_INTERNAL, "CUDA: a result was not written");
        break;
    }
    memcpy(out, s->res_host, bytes);
    return PK_OK;
}

namespace {

void release(State *s)
{
    if (s->stream) (void)cudaStreamSynchronize(s->stream);
    if (s->own && s->own != s->stream) (void)cudaStreamSynchronize(s->own);
    if (s->copy) (void)cudaStreamSynchronize(s->copy);
    s->stream = s->own; /* frees below go to the context's own stream */
    Stage &g = s->st;
    for (int k = 0; k < 2; k++)
        for (int b = 0; b < 2; b++) {
            if (g.pinned[k][b]) (void)cudaFreeHost(g.pinned[k][b]);
            dev_free(s, g.dev[k][b]);
        }
    for (int b = 0; b < 2; b++) {
        if (g.h2d[b]) (void)cudaEventDestroy(g.h2d[b]);
        if (g.done[b]) (void)cudaEventDestroy(g.done[b]);
    }
    dev_free(s, s->part);
    dev_free(s, s->cnt);
    dev_free(s, s->axis_in);
    dev_free(s, s->axis_out);
    if (s->res_host) (void)cudaFreeHost(s->res_host);
    if (s->own) {
        (void)cudaStreamSynchronize(s->own);
        (void)cudaStreamDestroy(s->own);
    }
    if (s->copy) (void)cudaStreamDestroy(s->copy);
    if (s->order) (void)cudaEventDestroy(s->order);
    (void)cudaGetLastError();
    delete s;
}

pk_status setup(pk_ctx *ctx, State *s, int device)
{
    cudaDeviceProp prop;
    PK_CU(ctx, cudaGetDeviceProperties(&prop, device));
    s->device = device;
    s->sms = prop.multiProcessorCount > 0 ? prop.multiProcessorCount : 1;
    s->cc_major = prop.major;
    s->cc_minor = prop.minor;
    s->smem_optin = prop.sharedMemPerBlockOptin;
    int pools = 0;
    if (cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, device) !=
        cudaSuccess) {
        (void)cudaGetLastError();
        pools = 0;
    }
    s->pools = pools != 0;
    /* A blocking stream: ordered after work the caller put on the legacy
     * default stream (cudaMemcpy, say), as a caller expects. */
    PK_CU(ctx, cudaStreamCreateWithFlags(&s->own, cudaStreamDefault));
    s->stream = s->own;
    PK_CU(ctx, cudaStreamCreateWithFlags(&s->copy, cudaStreamNonBlocking));
    PK_CU(ctx, cudaEventCreateWithFlags(&s->order, cudaEventDisableTiming));
    for (int b = 0; b < 2; b++) {
        PK_CU(ctx, cudaEventCreateWithFlags(&s->st.h2d[b], cudaEventDisableTiming));
        PK_CU(ctx, cudaEventCreateWithFlags(&s->st.done[b], cudaEventDisableTiming));
    }
    PK_CU(ctx, cuda_host_alloc(&s->res_host, 256, cudaHostAllocMapped));
    memset(s->res_host, 0, 256);
    PK_CU(ctx, cudaHostGetDevicePointer(&s->res_dev, s->res_host, 0));
    pk_status st;
    if ((st = ensure_partials(ctx, kInitPartials))) return st;
    if ((st = ensure_counters(ctx, kInitCounters))) return st;
    PK_CU(ctx, cudaStreamSynchronize(s->own));
    snprintf(ctx->describe, sizeof ctx->describe, "%.200s (sm_%d%d, %d SMs)", prop.name,
             prop.major, prop.minor, s->sms);
    return PK_OK;
}

pk_status cuda_init(pk_ctx *ctx, int device)
{
    /* The messages say why in the user's terms (the status text already
     * says "no CUDA device"); the CUDA error's name stays for searching. */
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        int driver = 0, runtime = 0;
        if (e == cudaErrorInsufficientDriver && cudaDriverGetVersion(&driver) == cudaSuccess &&
            driver == 0)
            return pk__fail(ctx, PK_ERR_NO_DEVICE,
                            "pk_ctx_create: the CUDA backend found no NVIDIA driver "
                            "(libcuda was not found; %s)", cudaGetErrorName(e));
        if (e == cudaErrorInsufficientDriver && cudaRuntimeGetVersion(&runtime) == cudaSuccess)
            return pk__fail(ctx, PK_ERR_NO_DEVICE,
                            "pk_ctx_create: the NVIDIA driver (CUDA %d.%d) is older than this "
                            "build's CUDA runtime %d.%d (%s)", driver / 1000, driver % 1000 / 10,
                            runtime / 1000, runtime % 1000 / 10, cudaGetErrorName(e));
        if (e == cudaErrorNoDevice)
            return pk__fail(ctx, PK_ERR_NO_DEVICE,
                            "pk_ctx_create: the CUDA backend found no GPU (%s)", cudaGetErrorName(e));
        return pk__fail(ctx, PK_ERR_NO_DEVICE,
                        "pk_ctx_create: the CUDA runtime's cudaGetDeviceCount failed: %s (%s)",
                        cudaGetErrorName(e), cudaGetErrorString(e));
    }
    if (n == 0)
        return pk__fail(ctx, PK_ERR_NO_DEVICE, "pk_ctx_create: the CUDA backend found no GPU");
    if (device >= n)
        return pk__fail(ctx, PK_ERR_NO_DEVICE, "pk_ctx_create: CUDA device %d asked for, %d found",
                        device, n);
    /* (a host allocation of the injection build's sequence too) */
    State *s = pk__fault_hit() ? nullptr : new (std::nothrow) State();
    if (!s) return pk__fail(ctx, PK_ERR_NOMEM, "pk_ctx_create: out of host memory");
    ctx->impl = s;
    pk_status st;
    {
        DeviceGuard g(ctx);
        if ((st = g.status()) == PK_OK) st = setup(ctx, s, device);
        if (st) release(s);
    }
    if (st) ctx->impl = nullptr;
    return st;
}

void cuda_fini(pk_ctx *ctx)
{
    State *s = state(ctx);
    if (!s) return;
    DeviceGuard g(ctx);
    release(s);
    ctx->impl = nullptr;
}

pk_status cuda_set_stream(pk_ctx *ctx, void *stream)
{
    State *s = state(ctx);
    DeviceGuard g(ctx);
    if (g.status()) return g.status();
    cudaStream_t next = stream ? static_cast<cudaStream_t>(stream) : s->own;
    if (next == s->stream) return PK_OK;
#if CUDART_VERSION >= 12080
    /* A stream of another device would fail only at the next launch. */
    int dev = -1;
    PK_CU(ctx, cudaStreamGetDevice(next, &dev));
    if (dev != s->device)
        return pk__fail(ctx, PK_ERR_ARG,
                        "set_stream: the stream belongs to CUDA device %d, the context to %d",
                        dev, s->device);
#endif
    /* Work issued later on `next` must follow the work already issued: it
     * shares the context's scratch. */
    PK_CU(ctx, cudaEventRecord(s->order, s->stream));
    PK_CU(ctx, cudaStreamWaitEvent(next, s->order, 0));
    s->stream = next;
    return PK_OK;
}

pk_status cuda_sync(pk_ctx *ctx)
{
    State *s = state(ctx);
    DeviceGuard g(ctx);
    if (g.status()) return g.status();
    PK_CU(ctx, cudaStreamSynchronize(s->stream));
    return PK_OK;
}

} // namespace
} // namespace pk_cuda

extern "C" int pk__cuda_device_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return n;
}

extern "C" void *pk__cuda_stream(pk_ctx *ctx)
{
    pk_cuda::State *s = pk_cuda::state(ctx);
    return s ? static_cast<void *>(s->stream) : nullptr;
}

extern "C" const pk__backend_ops pk__cuda_ops = {
    pk_cuda::cuda_init,   pk_cuda::cuda_fini,        pk_cuda::cuda_set_stream,
    pk_cuda::cuda_sync,   pk_cuda::reduce,           pk_cuda::reduce_axis,
    pk_cuda::dot,         pk_cuda::axpy,             pk_cuda::gemm,
    pk_cuda::bits_pack,   pk_cuda::bits_unpack,      pk_cuda::bgemm,
    pk_cuda::hamming,     pk_cuda::hamming_topk,     pk_cuda::reduce_partial,
    /* user-defined reductions (udr.cu) */
    pk_cuda::reducer_init, pk_cuda::reducer_fini, pk_cuda::reducer_reduce,
    pk_cuda::reducer_reduce_axis,
};
