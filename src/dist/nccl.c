/* The CUDA backend's collectives through NCCL: the communicator (its unique
 * id made by rank 0 and broadcast over MPI), all-reduce, and the panel
 * broadcasts of pk_dist_gemm overlapped with the multiplies.
 *
 * The communicator is nonblocking (ncclConfig_t.blocking = 0): no NCCL call
 * can hold the host for ever (the first collective with a peer that never
 * comes used to block in connection setup). Every wait polls the CUDA
 * work and ncclCommGetAsyncError under the pk_dist's timeout; a timeout or
 * an NCCL error aborts the communicator (ncclCommAbort: kernels waiting for
 * a peer return) and makes the pk_dist failed. */
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

/* NCCL is given up: its kernels stop waiting, nothing more is enqueued. */
static pk_status nccl_abort(pk_dist *d, pk_status s)
{
    if (d->nccl) (void)ncclCommAbort(d->nccl);
    d->nccl = NULL;
    d->async_pending = 0; /* nothing is waited for any more */
    return pk__dist_poison(d, s);
}

/* After an NCCL call that returned r: poll until the communicator leaves
 * ncclInProgress (a nonblocking communicator's calls may return it), at
 * most d's timeout. An error or a timeout aborts NCCL. */
static pk_status nccl_ready(pk_dist *d, const char *fn, const char *what, ncclResult_t r)
{
    double t0 = MPI_Wtime(), waited = 0;
    while (r == ncclInProgress) {
        waited = MPI_Wtime() - t0;
        if (d->timeout > 0 && waited >= d->timeout)
            return nccl_abort(d, pk__dist_timed_out(d, fn, what, waited));
        pk__dist_backoff(waited);
        if (ncclCommGetAsyncError(d->nccl, &r) != ncclSuccess) r = ncclInternalError;
    }
    if (r == ncclSuccess) return PK_OK;
    pk__fail(d->ctx, PK_ERR_COMM, "%s: %s failed: %s; this pk_dist is unusable now "
             "(destroy it)", fn, what, ncclGetErrorString(r));
    return nccl_abort(d, PK_ERR_COMM);
}

/* Wait until ev has completed, or (ev NULL) the n streams st are idle,
 * polling NCCL's asynchronous errors, at most d's timeout (0: for ever). */
static pk_status nccl_wait(pk_dist *d, const char *fn, const char *what, cudaEvent_t ev,
                           const cudaStream_t *st, int n)
{
    double t0 = MPI_Wtime(), waited = 0;
    for (;;) {
        cudaError_t c = cudaSuccess;
        if (ev) c = cudaEventQuery(ev);
        for (int i = 0; i < n && c == cudaSuccess; i++) c = cudaStreamQuery(st[i]);
        if (c == cudaSuccess) return PK_OK;
        if (c != cudaErrorNotReady) {
            (void)cudaGetLastError();
            pk__fail(d->ctx, PK_ERR_DEVICE, "%s: waiting for %s: %s; this pk_dist is "
                     "unusable now (destroy it)", fn, what, cudaGetErrorString(c));
            return nccl_abort(d, PK_ERR_DEVICE);
        }
        ncclResult_t r = ncclSuccess;
        if (ncclCommGetAsyncError(d->nccl, &r) != ncclSuccess) r = ncclInternalError;
        waited = MPI_Wtime() - t0;
        if (r != ncclSuccess && r != ncclInProgress) {
            pk__fail(d->ctx, PK_ERR_COMM, "%s: %s failed after %.3g s: %s; this pk_dist "
                     "is unusable now (destroy it)", fn, what, waited, ncclGetErrorString(r));
            return nccl_abort(d, PK_ERR_COMM);
        }
        if (d->timeout > 0 && waited >= d->timeout)
            return nccl_abort(d, pk__dist_timed_out(d, fn, what, waited));
        pk__dist_backoff(waited);
    }
}

static const char left_running[] = "ncclAllReduce (left running by an earlier pk_dist_allreduce)";

pk_status pk__dist_nccl_settle(pk_dist *d, const char *fn, int block)
{
    if (!d->async_pending) return PK_OK;
    cudaEvent_t ev = (cudaEvent_t)d->async_done;
    if (!block) {
        cudaError_t c = cudaEventQuery(ev);
        if (c == cudaErrorNotReady) return PK_OK; /* the next one queues behind it */
        if (c != cudaSuccess) return nccl_wait(d, fn, left_running, ev, NULL, 0); /* its message */
        d->async_pending = 0;
        return PK_OK;
    }
    pk_status s = nccl_wait(d, fn, left_running, ev, NULL, 0);
    d->async_pending = 0; /* done, or the handle failed for good */
    return s;
}

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
     * would keep the others waiting in the communicator's creation. */
    pk_status s = PK_OK;
    cudaStream_t cs = NULL;
    cudaEvent_t ev = NULL;
    cudaError_t c = cudaSetDevice(d->ctx->device);
    if (c == cudaSuccess) c = cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking);
    if (c == cudaSuccess) c = cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
    if (c != cudaSuccess) {
        (void)cudaGetLastError();
        s = pk__fail(d->ctx, PK_ERR_DEVICE, "%s: %s", fn, cudaGetErrorString(c));
    }
    d->comm_stream = cs;
    d->async_done = ev;
    ncclUniqueId root_id;
    memset(&root_id, 0, sizeof root_id);
    ncclResult_t r = ncclSuccess;
    if (!s && d->rank == 0 && (r = ncclGetUniqueId(&root_id)) != ncclSuccess)
        s = pk__fail(d->ctx, PK_ERR_COMM, "%s: ncclGetUniqueId: %s", fn, ncclGetErrorString(r));
    if ((s = pk__dist_agree(d, fn, s))) return s;
    /* The id goes through the exchange area (2 records, as size >= 1), which
     * an MPI_Ibcast that timed out may still write; only after the agreement,
     * which uses that area too. */
    _Static_assert(sizeof(ncclUniqueId) <= 2 * PK__DIST_RECORD, "the id fits");
    ncclUniqueId *id = (ncclUniqueId *)(void *)d->xbuf;
    memcpy(id, &root_id, sizeof *id);
    MPI_Request req;
    int e = MPI_Ibcast(id, sizeof *id, MPI_BYTE, 0, d->comm, &req);
    if (e != MPI_SUCCESS) return pk__dist_mpi_fail(d, e, fn, "MPI_Ibcast (the NCCL id)");
    if ((s = pk__dist_wait(d, fn, "MPI_Ibcast (the NCCL id)", &req, 1))) return s;
    ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
    cfg.blocking = 0;
    r = ncclCommInitRankConfig(&d->nccl, d->size, *id, d->rank, &cfg);
    if (r != ncclSuccess && r != ncclInProgress) {
        pk__fail(d->ctx, PK_ERR_COMM, "%s: ncclCommInitRankConfig: %s", fn, ncclGetErrorString(r));
        return nccl_abort(d, PK_ERR_COMM);
    }
    return nccl_ready(d, fn, "ncclCommInitRankConfig", r);
}

void pk__dist_nccl_fini(pk_dist *d, int flush)
{
    static const char fn[] = "pk_dist_destroy";
    /* A healthy communicator is finalized (its work flushed, bounded); a
     * failed or stuck one, or one whose creation failed on some rank, is
     * aborted: ncclCommDestroy would wait for ever. */
    if (flush && d->nccl && !d->failed && pk__dist_nccl_settle(d, fn, 1) == PK_OK &&
        nccl_ready(d, fn, "ncclCommFinalize", ncclCommFinalize(d->nccl)) == PK_OK) {
        (void)ncclCommDestroy(d->nccl);
        d->nccl = NULL;
    }
    if (d->nccl) (void)ncclCommAbort(d->nccl);
    d->nccl = NULL;
    if (d->async_done) (void)cudaEventDestroy((cudaEvent_t)d->async_done);
    if (d->comm_stream) (void)cudaStreamDestroy((cudaStream_t)d->comm_stream);
    d->async_done = NULL;
    d->comm_stream = NULL;
}

/* cudaMallocAsync, failed on request in a PK_FAULT_INJECTION build (as the
 * CUDA backend's allocations are: src/cuda/cuda_internal.cuh). */
static cudaError_t dev_alloc_async(void **p, size_t bytes, cudaStream_t st)
{
    return pk__fault_hit_device() ? cudaErrorMemoryAllocation : cudaMallocAsync(p, bytes, st);
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
    /* The copy in from pageable memory may wait for the stream: an
     * all-reduce left running there is waited for first, bounded. */
    pk_status s = pk__dist_nccl_settle(d, fn, 1);
    if (s) return s;
    size_t bytes = (size_t)n * pk__dtypes[t].size;
    cudaError_t c = dev_alloc_async(buf, bytes, st);
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
    static const char fn[] = "pk_dist_allreduce";
    cudaStream_t st = stream_of(d);
    pk_status s;
    if (!buf) {
        s = nccl_ready(d, fn, "ncclAllReduce",
                       ncclAllReduce(send, recv, (size_t)n, nccl_type(t), nccl_op(op), d->nccl, st));
        if (s) return s;
        /* Asynchronous on the context's stream; the next call that waits
         * on it first waits for this, bounded (pk__dist_nccl_settle). */
        CU(d, cudaEventRecord((cudaEvent_t)d->async_done, st));
        d->async_pending = 1;
        return PK_OK;
    }
    /* Host memory on either side: in place in the staged buffer. The
     * collective is waited for before the copy out: a copy to pageable
     * memory blocks the host until the stream reaches it, past any timeout. */
    size_t bytes = (size_t)n * pk__dtypes[t].size;
    s = nccl_ready(d, fn, "ncclAllReduce",
                   ncclAllReduce(buf, buf, (size_t)n, nccl_type(t), nccl_op(op), d->nccl, st));
    if (!s) s = nccl_wait(d, fn, "ncclAllReduce", NULL, &st, 1);
    cudaError_t c = cudaSuccess;
    if (!s) c = cudaMemcpyAsync(recv, buf, bytes, cudaMemcpyDefault, st);
    /* stream-ordered: never waits for a kernel that an abort left behind */
    cudaError_t f = cudaFreeAsync(buf, st);
    if (c == cudaSuccess) c = f;
    if (!s && c == cudaSuccess) c = cudaStreamSynchronize(st);
    if (c != cudaSuccess) (void)cudaGetLastError();
    if (s) return s;
    if (c != cudaSuccess)
        return pk__fail(d->ctx, PK_ERR_DEVICE, "%s: %s", fn, cudaGetErrorString(c));
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
    pk_status s = nccl_ready(d, "pk_dist_gemm", "ncclBroadcast (a panel of B)",
                             ncclBroadcast(buf, buf, (size_t)(kp * g->n), nccl_type(g->t), root,
                                           d->nccl, cs));
    if (s) return s;
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
    /* On the communication stream, where they are first written; freed there
     * after their last multiply: stream-ordered, so that nothing here waits
     * for a kernel an abort may have left behind. */
    cudaStream_t cs = (cudaStream_t)d->comm_stream;
    cudaError_t c = cudaSetDevice(d->ctx->device);
    for (int i = 0; i < 2 && c == cudaSuccess; i++)
        if ((c = dev_alloc_async(&buf[i], bytes, cs)) != cudaSuccess) buf[i] = NULL;
    if (c != cudaSuccess) {
        (void)cudaGetLastError();
        s = c == cudaErrorMemoryAllocation
                ? pk__fail(d->ctx, PK_ERR_NOMEM, "%s: no device memory for the B panels "
                           "(2 x %zu bytes)", fn, bytes)
                : pk__fail(d->ctx, PK_ERR_DEVICE, "%s: allocating the B panels: %s", fn,
                           cudaGetErrorString(c));
    }
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
    /* Both streams, bounded; after a failure only if NCCL is still there
     * (an abort may leave kernels that a wait would never see finish). */
    const cudaStream_t both[2] = {(cudaStream_t)d->comm_stream, st};
    if (d->nccl) {
        pk_status w = nccl_wait(d, fn, "ncclBroadcast (the panels of B)", NULL, both, 2);
        if (w && !s) s = w;
    }
    for (int i = 0; i < 2; i++) {
        if (buf[i] && ((freed[i] && cudaStreamWaitEvent(cs, freed[i], 0) != cudaSuccess) ||
                       cudaFreeAsync(buf[i], cs) != cudaSuccess))
            (void)cudaGetLastError();
        if (ready[i]) (void)cudaEventDestroy(ready[i]);
        if (freed[i]) (void)cudaEventDestroy(freed[i]);
    }
    if (s) return s;
    return pk__dist_agree(d, fn, late);
}
