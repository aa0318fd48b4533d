/* Operands and outputs of the bit-matrix kernels: host matrices staged to
 * the device, operands repacked for the tensor-core path (16-byte aligned
 * rows, padding bits zeroed: AND.popc would count garbage padding), the row
 * popcounts of the Hamming identity, and host outputs copied back. */
#include "cuda/bits.cuh"

namespace pk_cuda {

namespace {

/* Ones among the k bits of each row: a group of g lanes per row (g = the
 * power of two >= words, at most 32), padding masked off. */
__global__ void __launch_bounds__(kThreads)
k_row_popc(const uint64_t *__restrict__ x, int64_t rows, int64_t ld, int64_t words,
           uint64_t last_mask, int g, int32_t *__restrict__ out)
{
    const int lane = threadIdx.x & 31, sub = lane % g;
    const int64_t per_warp = 32 / g;
    const int64_t warps = int64_t(gridDim.x) * (kThreads / 32);
    for (int64_t w = (int64_t(blockIdx.x) * kThreads + threadIdx.x) / 32;
         w * per_warp < rows; w += warps) {
        const int64_t r = w * per_warp + lane / g;
        int c = 0;
        if (r < rows)
            for (int64_t j = sub; j < words; j += g) {
                uint64_t v = x[r * ld + j];
                if (j == words - 1) v &= last_mask;
                c += __popcll(v);
            }
        for (int o = g / 2; o > 0; o /= 2) c += __shfl_down_sync(0xffffffffu, c, o, g);
        if (r < rows && sub == 0) out[r] = c;
    }
}

/* dst (ld dld) = src with the padding bits of each row's last word zeroed;
 * the word past an odd row length is zero too. */
__global__ void __launch_bounds__(kThreads)
k_repack(const uint64_t *__restrict__ src, int64_t sld, int64_t rows, int64_t words,
         uint64_t last_mask, uint64_t *__restrict__ dst, int64_t dld)
{
    const int64_t total = rows * dld;
    for (int64_t e = int64_t(blockIdx.x) * kThreads + threadIdx.x; e < total;
         e += int64_t(gridDim.x) * kThreads) {
        const int64_t r = e / dld, j = e - r * dld;
        uint64_t v = 0;
        if (j < words) {
            v = src[r * sld + j];
            if (j == words - 1) v &= last_mask;
        }
        dst[e] = v;
    }
}

int64_t span_elems(int64_t rows, int64_t cols, int64_t ld)
{
    return rows > 0 && cols > 0 ? (rows - 1) * ld + cols : 0;
}

} // namespace

pk_status input_on_device(pk_ctx *ctx, CallBuffers &bufs, const void *src,
                          const char *name, int64_t rows, int64_t cols, int64_t ld,
                          size_t esize, const void **dev)
{
    Where w;
    pk_status s = where(ctx, src, name, &w);
    if (s) return s;
    *dev = src;
    if (w == kDevice) return PK_OK;
    const size_t bytes = size_t(span_elems(rows, cols, ld)) * esize;
    void *d = nullptr;
    if ((s = bufs.get(&d, bytes))) return s;
    if (bytes && (s = stage_to_device(ctx, src, w, d, bytes))) return s;
    *dev = d;
    return PK_OK;
}

pk_status output_on_device(pk_ctx *ctx, CallBuffers &bufs, void *user,
                           const char *name, int64_t rows, int64_t cols,
                           int64_t ld, size_t esize, Output *o)
{
    o->user = user;
    o->dev = user;
    o->bytes = size_t(span_elems(rows, cols, ld)) * esize;
    pk_status s = where(ctx, user, name, &o->w);
    if (s || o->w == kDevice) return s;
    if ((s = bufs.get(&o->dev, o->bytes))) return s;
    /* Elements between rows (ld > cols) keep the user's values. */
    if (ld > cols && rows > 1)
        PK_CU(ctx, cudaMemcpyAsync(o->dev, user, o->bytes, cudaMemcpyHostToDevice,
                                   state(ctx)->stream));
    return PK_OK;
}

pk_status finish_output(pk_ctx *ctx, const Output &o)
{
    if (o.w == kDevice || o.bytes == 0) return PK_OK;
    State *s = state(ctx);
    PK_CU(ctx, cudaMemcpyAsync(o.user, o.dev, o.bytes, cudaMemcpyDeviceToHost, s->stream));
    PK_CU(ctx, cudaStreamSynchronize(s->stream));
    return PK_OK;
}

pk_status prepare_operand(pk_ctx *ctx, CallBuffers &bufs, const uint64_t *src,
                          const char *name, int64_t rows, int64_t ld, int64_t k,
                          bool mma, BitsOperand *op)
{
    const int64_t words = pk_bits_words(k);
    const void *dev = nullptr;
    pk_status s = input_on_device(ctx, bufs, src, name, rows, words, ld, 8, &dev);
    if (s) return s;
    op->p = static_cast<const uint64_t *>(dev);
    op->ld = ld;
    op->popc = nullptr;
    if (!mma || rows == 0) return PK_OK;
    State *st = state(ctx);
    const uint64_t last_mask = k % 64 ? (uint64_t(1) << (k % 64)) - 1 : ~uint64_t(0);
    if (words > 0) {
        void *pc = nullptr;
        if ((s = bufs.get(&pc, size_t(rows) * 4))) return s;
        int g = 1;
        while (g < words && g < 32) g *= 2;
        const int64_t warps = (rows + 32 / g - 1) / (32 / g);
        k_row_popc<<<grid_for(ctx, k_row_popc, (warps + 7) / 8), kThreads, 0, st->stream>>>(
            op->p, rows, ld, words, last_mask, g, static_cast<int32_t *>(pc));
        PK_CU_LAUNCH(ctx, "k_row_popc launch");
        op->popc = static_cast<int32_t *>(pc);
    } else {
        void *pc = nullptr;
        if ((s = bufs.get(&pc, size_t(rows) * 4))) return s;
        PK_CU(ctx, cudaMemsetAsync(pc, 0, size_t(rows) * 4, st->stream));
        op->popc = static_cast<int32_t *>(pc);
    }
    const bool ok = aligned16(op->p) && ld % 2 == 0 && k % 64 == 0;
    if (ok || words == 0) return PK_OK;
    const int64_t dld = words + (words & 1);
    void *d = nullptr;
    if ((s = bufs.get(&d, size_t(rows * dld) * 8))) return s;
    const int64_t total = rows * dld;
    k_repack<<<grid_for(ctx, k_repack, (total + kThreads - 1) / kThreads), kThreads, 0,
               st->stream>>>(op->p, ld, rows, words, last_mask, static_cast<uint64_t *>(d),
                             dld);
    PK_CU_LAUNCH(ctx, "k_repack launch");
    op->p = static_cast<const uint64_t *>(d);
    op->ld = dld;
    return PK_OK;
}

} // namespace pk_cuda
