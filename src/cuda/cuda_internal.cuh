/* The CUDA backend's private state and host-side helpers, shared by its .cu
 * files: the per-context state (streams, scratch, staging), error reporting,
 * pointer classification, host staging and the per-call device guard.
 * Nothing here is exported; the entry points are the pk__cuda_ops table. */
#ifndef PK_CUDA_INTERNAL_CUH
#define PK_CUDA_INTERNAL_CUH

#include "core/internal.h"

#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace pk_cuda {

/* Threads per block of every kernel. Fixed: the summation trees are defined
 * in terms of it, so the bits do not depend on the device. */
constexpr int kThreads = 256;

/* Bytes of one staging buffer (per operand and slot) for host inputs. */
constexpr size_t kStageBytes = size_t(8) << 20;

/* Where a pointer lives. */
enum Where {
    kHost = 0,   /* pageable host memory: staged through pinned buffers */
    kPinned = 1, /* page-locked host memory: copied by DMA directly      */
    kDevice = 2  /* device or managed memory: read in place              */
};

/* Host-input staging: two slots (double buffering) of pinned and device
 * buffers for up to two operands, with the events that order them. */
struct Stage {
    size_t bytes = 0;           /* per buffer; 0 = not allocated yet      */
    void *pinned[2][2] = {};    /* [operand][slot]                        */
    void *dev[2][2] = {};
    cudaEvent_t h2d[2] = {};    /* the slot's copies are done             */
    cudaEvent_t done[2] = {};   /* the slot's kernel (and write-back) done */
    bool busy[2] = {};
    /* Pending write-back of a slot to user host memory (axpy's y). */
    void *wb_dst[2] = {};
    const void *wb_src[2] = {};
    size_t wb_bytes[2] = {};
};

/* Driver handles of kernels launched through launch_kernel (launch.cuh),
 * per pk context and keyed by the CUDA context current at the lookup too: a
 * handle belongs to one CUDA context (k_slices alone has 76 instances). */
constexpr int kFnSlots = 256;
struct FnSlot {
    const void *kernel = nullptr;
    void *cuctx = nullptr;  /* CUcontext current when looked up          */
    void *handle = nullptr; /* CUfunction; null: launch through the runtime */
};

struct State {
    int device = 0;
    int sms = 1;
    int cc_major = 0, cc_minor = 0;
    size_t smem_optin = 0;          /* max dynamic shared memory per block */
    bool pools = false;             /* stream-ordered allocation works     */
    signed char split_sum_pdl = -1; /* k_split_sum as a programmatic dependent
                                       launch (gemm_simt.cuh); -1: not asked */
    cudaStream_t own = nullptr;     /* the context's own stream            */
    cudaStream_t stream = nullptr;  /* the stream work goes to             */
    cudaStream_t copy = nullptr;    /* host-to-device staging copies       */
    cudaEvent_t order = nullptr;    /* orders work across stream switches  */
    void *part = nullptr;           /* per-block partials                  */
    size_t part_bytes = 0;
    unsigned *cnt = nullptr;        /* ticket counters, kept at zero       */
    size_t cnt_n = 0;
    void *res_host = nullptr;       /* mapped pinned slot for host results: */
    void *res_dev = nullptr;        /* the value at 0, the call's sequence  */
    uint64_t seq = 0;               /* number at kFlagOffset                */
    void *axis_in = nullptr;        /* reduce_axis: staged host matrix     */
    size_t axis_in_bytes = 0;
    void *axis_out = nullptr;       /* reduce_axis: results for host out   */
    size_t axis_out_bytes = 0;
    Stage st;
    FnSlot fns[kFnSlots];
};

inline State *state(pk_ctx *ctx) { return static_cast<State *>(ctx->impl); }

/* Record a failed CUDA call in ctx: PK_ERR_NOMEM for an allocation failure,
 * PK_ERR_DEVICE otherwise; the message names the call. */
pk_status fail_cuda(pk_ctx *ctx, cudaError_t e, const char *what);

#define PK_CU(ctx, call)                                              \
    do {                                                              \
        cudaError_t e_ = (call);                                      \
        if (e_ != cudaSuccess) return pk_cuda::fail_cuda(ctx, e_, #call); \
    } while (0)

/* After a launch: the launch's own error, named. */
#define PK_CU_LAUNCH(ctx, name)                                       \
    do {                                                              \
        cudaError_t e_ = cudaGetLastError();                          \
        if (e_ != cudaSuccess) return pk_cuda::fail_cuda(ctx, e_, name); \
    } while (0)

/* Makes the context's device current for one call, restoring the caller's
 * device afterwards. Check status() before doing anything. */
class DeviceGuard {
public:
    explicit DeviceGuard(pk_ctx *ctx);
    ~DeviceGuard();
    pk_status status() const { return status_; }

private:
    int prev_ = -1;
    pk_status status_ = PK_OK;
};

/* Classify p (never fails loudly: an unknown pointer is host memory). A
 * device pointer of another device is refused with PK_ERR_UNSUPPORTED. */
pk_status where(pk_ctx *ctx, const void *p, const char *name, Where *w);

/* Every allocation of device or page-locked host memory in the backend goes
 * through these three (and udr.cu's cuModuleLoadData through
 * pk__fault_hit_device too): in a PK_FAULT_INJECTION build each first asks
 * pk__fault_hit_device() (src/core/alloc.h), so that a test can make any one
 * of them fail as the device's being out of memory would
 * (tests/test_cuda_oom.c); otherwise they are the CUDA calls. */
inline cudaError_t cuda_malloc(void **p, size_t bytes)
{
    return pk__fault_hit_device() ? cudaErrorMemoryAllocation : cudaMalloc(p, bytes);
}
inline cudaError_t cuda_malloc_async(void **p, size_t bytes, cudaStream_t st)
{
    return pk__fault_hit_device() ? cudaErrorMemoryAllocation : cudaMallocAsync(p, bytes, st);
}
inline cudaError_t cuda_host_alloc(void **p, size_t bytes, unsigned flags)
{
    return pk__fault_hit_device() ? cudaErrorMemoryAllocation : cudaHostAlloc(p, bytes, flags);
}

/* Grow-on-demand scratch (stream-ordered on the current stream). */
pk_status ensure_partials(pk_ctx *ctx, size_t bytes);
pk_status ensure_counters(pk_ctx *ctx, size_t n);
pk_status ensure_buffer(pk_ctx *ctx, void **buf, size_t *have, size_t bytes);
/* Device allocation and release on the context's current stream. */
pk_status dev_alloc(pk_ctx *ctx, void **p, size_t bytes);
void dev_free(State *s, void *p);
/* One dev_alloc'd block, released (stream-ordered) when this goes out of
 * scope: scratch that lives for one call. */
struct DevScratch {
    State *s;
    void *p = nullptr;
    explicit DevScratch(State *st) : s(st) {}
    DevScratch(const DevScratch &) = delete;
    DevScratch &operator=(const DevScratch &) = delete;
    ~DevScratch() { dev_free(s, p); }
};
/* x (bytes of it, at w) on the device: x itself when it is device memory
 * (or bytes is 0), else staged into the context's input buffer (axis_in),
 * returning once x has been read. A staged input over 256 MiB is not kept
 * past the call (trim_staged_input, on every return path, failed or not;
 * freed stream-ordered after the queued work). */
pk_status stage_input(pk_ctx *ctx, const void *x, Where w, size_t bytes, const void **dx);
void trim_staged_input(State *s);

/* Host results: a kernel writes the value to s->res_dev, then (after
 * __threadfence_system) the call's sequence number at kFlagOffset; the host
 * spins on that word instead of a stream synchronization (microseconds
 * sooner), checking the stream now and then for errors. */
constexpr size_t kFlagOffset = 64;
pk_status finish_host_result(pk_ctx *ctx, void *out, size_t bytes, uint64_t seq);

/* One operand of a staged 1-D loop. */
struct Operand {
    const void *p;
    Where w;
};

/* The per-chunk callback: dptr[k] is operand k's chunk [e0, e1) in device
 * memory (staged or in place); it launches the chunk's work on s->stream. */
typedef pk_status (*ChunkFn)(void *user, const void *const *dptr, int64_t e0,
                             int64_t e1);

/* Run fn over [0, n) in chunks of a multiple of gran elements, staging host
 * operands through pinned buffers: while chunk i runs on the device, chunk
 * i+1 is copied in (two slots, a separate copy stream). writeback >= 0 names
 * an operand (host memory) that the chunk's work modifies: it is copied
 * back. Returns when no user host memory is still in use. */
pk_status run_chunks_impl(pk_ctx *ctx, int nops, const Operand *ops,
                          size_t esize, int64_t n, int64_t gran, int writeback,
                          ChunkFn fn, void *user);

template <class F>
pk_status run_chunks(pk_ctx *ctx, int nops, const Operand *ops, size_t esize,
                     int64_t n, int64_t gran, int writeback, F &f)
{
    return run_chunks_impl(
        ctx, nops, ops, esize, n, gran, writeback,
        [](void *u, const void *const *d, int64_t e0, int64_t e1) {
            return (*static_cast<F *>(u))(d, e0, e1);
        },
        &f);
}

/* Copy `bytes` of host memory to device memory dst, chunked through the
 * pinned buffers so that the host copy overlaps the DMA; s->stream waits for
 * the copies. Returns when src is no longer in use. */
pk_status stage_to_device(pk_ctx *ctx, const void *src, Where w, void *dst,
                          size_t bytes);

/* Resident blocks per SM of a kernel (kThreads threads), cached per kernel
 * in a small lock-free table: 0 when not known yet. */
int occupancy_lookup(const void *kernel);
void occupancy_store(const void *kernel, int blocks);

/* Blocks of a grid-stride kernel: min(items, resident blocks), where the
 * resident count comes from the occupancy calculator. */
template <class K>
int grid_for(pk_ctx *ctx, K kernel, int64_t items)
{
    const void *key = reinterpret_cast<const void *>(kernel);
    int b = occupancy_lookup(key);
    if (b == 0) {
        if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, kernel, kThreads, 0) !=
                cudaSuccess ||
            b < 1) {
            (void)cudaGetLastError();
            b = 1;
        }
        occupancy_store(key, b);
    }
    int64_t resident = (int64_t)b * state(ctx)->sms;
    int64_t g = items < resident ? items : resident;
    return g < 1 ? 1 : (int)g;
}

inline bool aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

/* The backend's entry points (the ops table is in ctx.cu). */
pk_status reduce(pk_ctx *ctx, pk_op op, pk_dtype t, const void *x, int64_t n,
                 void *out);
pk_status reduce_partial(pk_ctx *ctx, pk_op op, pk_dtype t, const void *x,
                         int64_t n, pk__acc *acc);
pk_status dot(pk_ctx *ctx, pk_dtype t, int64_t n, const void *x, const void *y,
              void *out);
pk_status reduce_axis(pk_ctx *ctx, pk_op op, pk_dtype t, const void *x,
                      int64_t rows, int64_t cols, int64_t ld, int axis,
                      void *out);
pk_status axpy(pk_ctx *ctx, pk_dtype t, int64_t n, const void *alpha,
               const void *x, void *y);
pk_status gemm(pk_ctx *ctx, const pk__gemm_args *a);

/* Narrow contiguous matrices (reduce_narrow.cu): whether the shape takes
 * that path, and the reduction along either axis. x and out on the device. */
bool narrow_flat(pk_dtype t, int64_t cols, int64_t ld);
pk_status reduce_narrow(pk_ctx *ctx, pk_op op, pk_dtype t, const void *x,
                        int64_t rows, int64_t cols, int axis, void *out);

/* Row reductions of long rows (also the whole-array reduction, rows = 1):
 * the slice kernel of reduce.cu. x and out are device pointers. */
pk_status reduce_rows_long(pk_ctx *ctx, pk_op op, pk_dtype t, const void *x,
                           int64_t rows, int64_t cols, int64_t ld, void *out);

/* User-defined reductions (udr.cu): NVRTC-compiled kernels. */
pk_status reducer_init(pk_ctx *ctx, pk_reducer *red);
void reducer_fini(pk_reducer *red);
pk_status reducer_reduce(pk_ctx *ctx, const pk_reducer *red, const void *x,
                         int64_t n, int64_t ibase, void *out);
pk_status reducer_reduce_axis(pk_ctx *ctx, const pk_reducer *red,
                              const void *x, int64_t rows, int64_t cols,
                              int64_t ld, int axis, void *out);

} // namespace pk_cuda

#endif
