/* Host memory on the CUDA backend: inputs in host memory are copied to the
 * device in chunks through two pinned buffers per operand (double
 * buffering), so that the host's copy into one slot, the DMA of the other
 * and the kernel on the previous chunk overlap. Page-locked user memory is
 * copied by DMA directly. The copies run on the context's copy stream and
 * the compute stream waits for them with events; nothing synchronizes the
 * device. */
#include "cuda/cuda_internal.cuh"

#include <cstring>

namespace pk_cuda {

namespace {

/* Wait for slot b's last use, then finish its pending write-back. */
pk_status settle(pk_ctx *ctx, int b)
{
    Stage &g = state(ctx)->st;
    if (!g.busy[b]) return PK_OK;
    PK_CU(ctx, cudaEventSynchronize(g.done[b]));
    g.busy[b] = false;
    if (g.wb_dst[b]) {
        memcpy(g.wb_dst[b], g.wb_src[b], g.wb_bytes[b]);
        g.wb_dst[b] = nullptr;
    }
    return PK_OK;
}

/* The copy stream must not run ahead of work already issued on the compute
 * stream (which may still read a buffer it is about to overwrite, or have
 * just allocated it in stream order). */
pk_status order_copy_after_compute(pk_ctx *ctx)
{
    State *s = state(ctx);
    PK_CU(ctx, cudaEventRecord(s->order, s->stream));
    PK_CU(ctx, cudaStreamWaitEvent(s->copy, s->order, 0));
    return PK_OK;
}

pk_status ensure_stage(pk_ctx *ctx, size_t bytes)
{
    State *s = state(ctx);
    Stage &g = s->st;
    if (g.bytes >= bytes) return PK_OK;
    pk_status st;
    for (int b = 0; b < 2; b++)
        if ((st = settle(ctx, b))) return st;
    for (int k = 0; k < 2; k++)
        for (int b = 0; b < 2; b++) {
            if (g.pinned[k][b]) PK_CU(ctx, cudaFreeHost(g.pinned[k][b]));
            g.pinned[k][b] = nullptr;
            dev_free(s, g.dev[k][b]);
            g.dev[k][b] = nullptr;
        }
    g.bytes = 0;
    for (int k = 0; k < 2; k++)
        for (int b = 0; b < 2; b++) {
            PK_CU(ctx, cuda_host_alloc(&g.pinned[k][b], bytes, cudaHostAllocDefault));
            if ((st = dev_alloc(ctx, &g.dev[k][b], bytes))) return st;
        }
    g.bytes = bytes;
    return PK_OK;
}

} // namespace

pk_status run_chunks_impl(pk_ctx *ctx, int nops, const Operand *ops,
                          size_t esize, int64_t n, int64_t gran, int writeback,
                          ChunkFn fn, void *user)
{
    State *s = state(ctx);
    Stage &g = s->st;
    int64_t per = int64_t(kStageBytes / esize) / gran * gran;
    if (per < gran) per = gran;
    pk_status st;
    if ((st = ensure_stage(ctx, size_t(per) * esize))) return st;
    if ((st = order_copy_after_compute(ctx))) return st;
    bool drain = writeback >= 0;
    for (int k = 0; k < nops; k++) drain |= ops[k].w == kPinned;
    const bool alias = nops == 2 && ops[0].p == ops[1].p;
    int64_t i = 0;
    for (int64_t e0 = 0; e0 < n; e0 += per, i++) {
        const int b = int(i & 1);
        const int64_t e1 = n - e0 < per ? n : e0 + per;
        const size_t bytes = size_t(e1 - e0) * esize;
        if ((st = settle(ctx, b))) return st;
        const void *d[2] = {nullptr, nullptr};
        bool copied = false;
        for (int k = 0; k < nops; k++) {
            const char *hp = static_cast<const char *>(ops[k].p) + size_t(e0) * esize;
            if (ops[k].w == kDevice) {
                d[k] = hp;
            } else if (k == 1 && alias) {
                d[1] = d[0];
            } else {
                const void *from = hp;
                if (ops[k].w == kHost) {
                    memcpy(g.pinned[k][b], hp, bytes);
                    from = g.pinned[k][b];
                }
                PK_CU(ctx, cudaMemcpyAsync(g.dev[k][b], from, bytes,
                                           cudaMemcpyHostToDevice, s->copy));
                d[k] = g.dev[k][b];
                copied = true;
            }
        }
        if (copied) {
            PK_CU(ctx, cudaEventRecord(g.h2d[b], s->copy));
            PK_CU(ctx, cudaStreamWaitEvent(s->stream, g.h2d[b], 0));
        }
        if ((st = fn(user, d, e0, e1))) return st;
        if (writeback >= 0 && ops[writeback].w != kDevice) {
            const int src = writeback == 1 && alias ? 0 : writeback;
            char *dst = static_cast<char *>(const_cast<void *>(ops[writeback].p)) +
                        size_t(e0) * esize;
            if (ops[writeback].w == kPinned) {
                PK_CU(ctx, cudaMemcpyAsync(dst, g.dev[src][b], bytes,
                                           cudaMemcpyDeviceToHost, s->stream));
            } else {
                PK_CU(ctx, cudaMemcpyAsync(g.pinned[src][b], g.dev[src][b], bytes,
                                           cudaMemcpyDeviceToHost, s->stream));
                g.wb_dst[b] = dst;
                g.wb_src[b] = g.pinned[src][b];
                g.wb_bytes[b] = bytes;
            }
        }
        PK_CU(ctx, cudaEventRecord(g.done[b], s->stream));
        g.busy[b] = true;
    }
    if (drain) /* oldest slot first: write-backs land in order */
        for (int64_t j = i >= 2 ? i - 2 : 0; j < i; j++)
            if ((st = settle(ctx, int(j & 1)))) return st;
    return PK_OK;
}

pk_status stage_to_device(pk_ctx *ctx, const void *src, Where w, void *dst,
                          size_t bytes)
{
    State *s = state(ctx);
    Stage &g = s->st;
    pk_status st;
    if (w != kPinned && (st = ensure_stage(ctx, kStageBytes))) return st;
    if ((st = order_copy_after_compute(ctx))) return st;
    const char *from = static_cast<const char *>(src);
    char *to = static_cast<char *>(dst);
    if (w == kPinned) {
        PK_CU(ctx, cudaMemcpyAsync(to, from, bytes, cudaMemcpyHostToDevice, s->copy));
        PK_CU(ctx, cudaEventRecord(g.h2d[0], s->copy));
        PK_CU(ctx, cudaEventSynchronize(g.h2d[0]));
        PK_CU(ctx, cudaStreamWaitEvent(s->stream, g.h2d[0], 0));
        return PK_OK;
    }
    int64_t i = 0;
    for (size_t off = 0; off < bytes; off += g.bytes, i++) {
        const int b = int(i & 1);
        const size_t len = bytes - off < g.bytes ? bytes - off : g.bytes;
        if ((st = settle(ctx, b))) return st;
        memcpy(g.pinned[0][b], from + off, len);
        PK_CU(ctx, cudaMemcpyAsync(to + off, g.pinned[0][b], len,
                                   cudaMemcpyHostToDevice, s->copy));
        PK_CU(ctx, cudaEventRecord(g.done[b], s->copy));
        g.busy[b] = true;
    }
    PK_CU(ctx, cudaEventRecord(g.h2d[0], s->copy));
    PK_CU(ctx, cudaStreamWaitEvent(s->stream, g.h2d[0], 0));
    return PK_OK;
}

} // namespace pk_cuda
