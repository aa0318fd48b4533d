/* The CUDA backend's collectives through NCCL: the communicator (its unique
 * id made by rank 0 and broadcast over MPI), all-reduce, and the panel
 * broadcasts of pk_dist_gemm overlapped with the multiplies. */
#include "dist.h"

#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>

#define CU(d, call)                                                          \
    do {                                                                     \
        cudaError_t pk__c = (call);                                          \
        if (pk__c != cudaSuccess) {                                          \
            (void)cudaGetLastError(); /* not left for a later launch check */ \
            return pk__fail((d)->ctx, PK_ERR_DEVICE, "%s: %s", #call,        \
                            cudaGetErrorString(pk__c));                      \
        }                                                                    \
    } while (0)

#define NC(d, call)                                                          \
    do {                                                                     \
        ncclResult_t pk__n = (call);                                         \
        if (pk__n != ncclSuccess)                                            \
            return pk__fail((d)->ctx, PK_ERR_COMM, "%s: %s", #call,          \
                            ncclGetErrorString(pk__n));                      \
    } while (0)

static cudaStream_t stream_of(pk_dist *d)
{
    return (cudaStream_t)pk__cuda_stream(d->ctx);
}

pk_status pk__dist_nccl_init(pk_dist *d)
{
    static const char fn[] = "pk_dist_create";
    /* NVLink multicast (NVLS) stays off unless the user asks for it: on some
     * hosts it can take GPUs out of service. */
    setenv("NCCL_NVLS_ENABLE", "0", 0);
    /* Everything local first, agreed on: a rank that failed here and left
     * would keep the others in ncclCommInitRank for ever. */
    pk_status s = PK_OK;
    cudaStream_t cs = NULL;
    cudaError_t c = cudaSetDevice(d->ctx->device);
    if (c == cudaSuccess) c = cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking);
    if (c != cudaSuccess) {
        (void)cudaGetLastError();
        s = pk__fail(d->ctx, PK_ERR_DEVICE, "%s: %s", fn, cudaGetErrorString(c));
    }
    d->comm_stream = cs;
    ncclUniqueId id;
    memset(&id, 0, sizeof id);
    ncclResult_t r = ncclSuccess;
    if (!s && d->rank == 0 && (r = ncclGetUniqueId(&id)) != ncclSuccess)
        s = pk__fail(d->ctx, PK_ERR_COMM, "%s: ncclGetUniqueId: %s", fn, ncclGetErrorString(r));
    if ((s = pk__dist_agree(d, fn, s))) return s;
    PK_MPI(d, fn, MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, d->comm));
    NC(d, ncclCommInitRank(&d->nccl, d->size, id, d->rank));
    return PK_OK;
}

void pk__dist_nccl_fini(pk_dist *d)
{
    if (d->nccl) (void)ncclCommDestroy(d->nccl);
    if (d->comm_stream) (void)cudaStreamDestroy((cudaStream_t)d->comm_stream);
    d->nccl = NULL;
    d->comm_stream = NULL;
}

static int on_device(const void *p)
{
    struct cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
}

pk_status pk__dist_cuda_copy(pk_dist *d, void *dst, const void *src, size_t bytes)
{
    /* Host to host (a result the ranks combined, for a host out): no stream
     * round trip (10-13 us a call on an H200 VM). */
    if (!on_device(dst) && !on_device(src)) {
        memcpy(dst, src, bytes);
        return PK_OK;
    }
    CU(d, cudaSetDevice(d->ctx->device));
    CU(d, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream_of(d)));
    CU(d, cudaStreamSynchronize(stream_of(d)));
    return PK_OK;
}

static ncclDataType_t nccl_type(pk_dtype t)
{
    static const ncclDataType_t types[PK_DTYPE_COUNT] = {
        [PK_F32] = ncclFloat32, [PK_F64] = ncclFloat64, [PK_I32] = ncclInt32,
        [PK_I64] = ncclInt64,   [PK_U32] = ncclUint32,  [PK_U64] = ncclUint64,
    };
    return types[t];
}

static ncclRedOp_t nccl_op(pk_op op)
{
    return op == PK_SUM ? ncclSum : op == PK_PROD ? ncclProd : op == PK_MIN ? ncclMin : ncclMax;
}

pk_status pk__dist_nccl_stage(pk_dist *d, pk_dtype t, const void *send,
                              const void *recv, int64_t n, void **buf)
{
    static const char fn[] = "pk_dist_allreduce";
    cudaStream_t st = stream_of(d);
    *buf = NULL;
    CU(d, cudaSetDevice(d->ctx->device));
    if (on_device(send) && on_device(recv)) return PK_OK;
    size_t bytes = (size_t)n * pk__dtypes[t].size;
    cudaError_t c = cudaMallocAsync(buf, bytes, st);
    if (c != cudaSuccess) {
        (void)cudaGetLastError();
        *buf = NULL;
        if (c == cudaErrorMemoryAllocation)
            return pk__fail(d->ctx, PK_ERR_NOMEM, "%s: no device memory to stage %zu bytes "
                            "of host data", fn, bytes);
        return pk__fail(d->ctx, PK_ERR_DEVICE, "%s: cudaMallocAsync of the staging buffer: %s",
                        fn, cudaGetErrorString(c));
    }
    if ((c = cudaMemcpyAsync(*buf, send, bytes, cudaMemcpyDefault, st)) != cudaSuccess) {
        (void)cudaGetLastError();
        pk__dist_nccl_unstage(d, *buf);
        *buf = NULL;
        return pk__fail(d->ctx, PK_ERR_DEVICE, "%s: staging send: %s", fn, cudaGetErrorString(c));
    }
    return PK_OK;
}

void pk__dist_nccl_unstage(pk_dist *d, void *buf)
{
    /* Waited for: the call returns with no copy from the caller's memory
     * still running. */
    if (buf && (cudaFreeAsync(buf, stream_of(d)) != cudaSuccess ||
                cudaStreamSynchronize(stream_of(d)) != cudaSuccess))
        (void)cudaGetLastError();
}

pk_status pk__dist_allreduce_nccl(pk_dist *d, pk_op op, pk_dtype t,
                                  const void *send, void *recv, int64_t n, void *buf)
{
    cudaStream_t st = stream_of(d);
    if (!buf) {
        NC(d, ncclAllReduce(send, recv, (size_t)n, nccl_type(t), nccl_op(op), d->nccl, st));
        return PK_OK; /* asynchronous on the context's stream */
    }
    /* Host memory on either side: in place in the staged buffer. */
    size_t bytes = (size_t)n * pk__dtypes[t].size;
    cudaError_t c = cudaSuccess;
    ncclResult_t r = ncclAllReduce(buf, buf, (size_t)n, nccl_type(t), nccl_op(op), d->nccl, st);
    if (r == ncclSuccess) c = cudaMemcpyAsync(recv, buf, bytes, cudaMemcpyDefault, st);
    cudaError_t f = cudaFreeAsync(buf, st);
    if (c == cudaSuccess) c = f;
    if (c == cudaSuccess) c = cudaStreamSynchronize(st);
    if (c != cudaSuccess) (void)cudaGetLastError();
    if (r != ncclSuccess)
        return pk__fail(d->ctx, PK_ERR_COMM, "pk_dist_allreduce: ncclAllReduce: %s",
                        ncclGetErrorString(r));
    if (c != cudaSuccess)
        return pk__fail(d->ctx, PK_ERR_DEVICE, "pk_dist_allreduce: %s", cudaGetErrorString(c));
    return PK_OK;
}

/* Panel p of B (kp rows) into buf on the root, broadcast in place on the
 * communication stream after the multiply that last read buf is done. The
 * broadcast is enqueued even when a step before it failed here (the others
 * wait for it): that failure goes to *late, the call's result. Only NCCL's
 * own failure is returned, and ends the loop. */
static pk_status bcast_panel(pk_dist *d, const pk__gemm_args *g, int root,
                             int64_t k0, int64_t kp, void *buf, cudaEvent_t free_ev,
                             cudaEvent_t ready_ev, pk_status *late)
{
    cudaStream_t cs = (cudaStream_t)d->comm_stream;
    size_t size = pk__dtypes[g->t].size;
    cudaError_t c = cudaStreamWaitEvent(cs, free_ev, 0);
    if (c == cudaSuccess && d->rank == root)
        c = cudaMemcpy2DAsync(buf, (size_t)g->n * size,
                              (const char *)g->B + (size_t)(k0 * g->ldb) * size,
                              (size_t)g->ldb * size, (size_t)g->n * size, (size_t)kp,
                              cudaMemcpyDefault, cs);
    NC(d, ncclBroadcast(buf, buf, (size_t)(kp * g->n), nccl_type(g->t), root, d->nccl, cs));
    if (c == cudaSuccess) c = cudaEventRecord(ready_ev, cs);
    if (c != cudaSuccess) {
        (void)cudaGetLastError();
        if (!*late)
            *late = pk__fail(d->ctx, PK_ERR_DEVICE, "pk_dist_gemm: panel of B at row %lld: %s",
                             (long long)k0, cudaGetErrorString(c));
    }
    return PK_OK;
}

pk_status pk__dist_gemm_bcast_nccl(pk_dist *d, const pk__gemm_args *g,
                                   int b_root, int64_t panel)
{
    static const char fn[] = "pk_dist_gemm";
    cudaStream_t st = stream_of(d);
    size_t bytes = (size_t)(panel * g->n) * pk__dtypes[g->t].size;
    void *buf[2] = {NULL, NULL};
    cudaEvent_t ready[2] = {NULL, NULL}, freed[2] = {NULL, NULL};
    pk_status s = PK_OK, late = PK_OK;
    if (cudaSetDevice(d->ctx->device) != cudaSuccess ||
        cudaMalloc(&buf[0], bytes) != cudaSuccess || cudaMalloc(&buf[1], bytes) != cudaSuccess)
        s = pk__fail(d->ctx, PK_ERR_NOMEM, "%s: no device memory for the B panels", fn);
    for (int i = 0; i < 2 && !s; i++)
        if (cudaEventCreateWithFlags(&ready[i], cudaEventDisableTiming) != cudaSuccess ||
            cudaEventCreateWithFlags(&freed[i], cudaEventDisableTiming) != cudaSuccess ||
            cudaEventRecord(freed[i], st) != cudaSuccess)
            s = pk__fail(d->ctx, PK_ERR_DEVICE, "%s: creating events failed", fn);
    s = pk__dist_agree(d, fn, s);
    static const float onef = 1;
    static const double oned = 1;
    const void *one = g->t == PK_F32 ? (const void *)&onef : (const void *)&oned;
    size_t size = pk__dtypes[g->t].size;
    int64_t np = (g->k + panel - 1) / panel;
    /* Every rank enqueues every broadcast, even after a local failure
     * (late), so that no rank waits on a collective another rank skipped. */
    for (int64_t p = 0; p < np && !s; p++) {
        int64_t k0 = p * panel, kp = g->k - k0 < panel ? g->k - k0 : panel;
        s = bcast_panel(d, g, b_root, k0, kp, buf[p % 2], freed[p % 2], ready[p % 2], &late);
        if (s || late || g->m == 0) continue;
        if (cudaStreamWaitEvent(st, ready[p % 2], 0) != cudaSuccess) {
            late = pk__fail(d->ctx, PK_ERR_DEVICE, "%s: cudaStreamWaitEvent failed", fn);
            continue;
        }
        const char *A = (const char *)g->A + (size_t)(g->ta ? k0 * g->lda : k0) * size;
        late = pk_gemm(d->ctx, g->t, g->mode, g->ta, PK_NO_TRANS, g->m, g->n, kp, g->alpha,
                       A, g->lda, buf[p % 2], g->n, p == 0 ? g->beta : one, g->C, g->ldc);
        if (!late && cudaEventRecord(freed[p % 2], st) != cudaSuccess)
            late = pk__fail(d->ctx, PK_ERR_DEVICE, "%s: cudaEventRecord failed", fn);
    }
    if (cudaStreamSynchronize((cudaStream_t)d->comm_stream) != cudaSuccess ||
        cudaStreamSynchronize(st) != cudaSuccess)
        if (!s && !late) late = pk__fail(d->ctx, PK_ERR_DEVICE, "%s: synchronize failed", fn);
    for (int i = 0; i < 2; i++) {
        if (ready[i]) (void)cudaEventDestroy(ready[i]);
        if (freed[i]) (void)cudaEventDestroy(freed[i]);
        if (buf[i]) (void)cudaFree(buf[i]);
    }
    if (s) return s;
    return pk__dist_agree(d, fn, late);
}
