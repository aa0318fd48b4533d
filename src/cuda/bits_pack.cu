/* pk_bits_pack and pk_bits_unpack on the CUDA backend. Pack: one warp per
 * 32-bit half word, each lane tests one element and __ballot_sync gathers
 * the bits (lane l = bit l: LSB first); each row's pk_bits_words(k) words
 * are written (padding bits 0), words past them (ldw larger) are left alone.
 * Unpack: one thread per element. */
#include "cuda/bits.cuh"

namespace pk_cuda {

namespace {

/* Bit of one element: f32 x >= 0 (-0.0 too; NaN fails the test), u8 != 0. */
template <pk_bits_format F>
__device__ __forceinline__ bool bit_of(const void *x, int64_t e)
{
    if constexpr (F == PK_BITS_F32_SIGN) return static_cast<const float *>(x)[e] >= 0.0f;
    else return static_cast<const uint8_t *>(x)[e] != 0;
}

template <pk_bits_format F>
__global__ void __launch_bounds__(kThreads)
k_pack(const void *__restrict__ x, int64_t rows, int64_t k, int64_t ldx,
       uint32_t *__restrict__ bits, int64_t ldw)
{
    const int lane = threadIdx.x & 31;
    const int64_t halves = 2 * ((k + 63) / 64); /* 32-bit halves of a row's words */
    const int64_t total = rows * halves;
    const int64_t warps = int64_t(gridDim.x) * (kThreads / 32);
    for (int64_t w = (int64_t(blockIdx.x) * kThreads + threadIdx.x) / 32; w < total;
         w += warps) {
        const int64_t r = w / halves, hw = w - r * halves;
        const int64_t c = hw * 32 + lane;
        const bool b = c < k && bit_of<F>(x, r * ldx + c);
        const uint32_t v = __ballot_sync(0xffffffffu, b);
        if (lane == 0) bits[r * 2 * ldw + hw] = v; /* little-endian halves */
    }
}

template <pk_bits_format F>
__global__ void __launch_bounds__(kThreads)
k_unpack(const uint64_t *__restrict__ bits, int64_t rows, int64_t k, int64_t ldw,
         void *__restrict__ x, int64_t ldx)
{
    const int64_t total = rows * k;
    for (int64_t e = int64_t(blockIdx.x) * kThreads + threadIdx.x; e < total;
         e += int64_t(gridDim.x) * kThreads) {
        const int64_t r = e / k, c = e - r * k;
        const bool b = (bits[r * ldw + c / 64] >> (c % 64)) & 1u;
        if constexpr (F == PK_BITS_F32_SIGN)
            static_cast<float *>(x)[r * ldx + c] = b ? 1.0f : -1.0f;
        else
            static_cast<uint8_t *>(x)[r * ldx + c] = b ? 1 : 0;
    }
}

size_t esize_of(pk_bits_format fmt) { return fmt == PK_BITS_F32_SIGN ? 4 : 1; }

} // namespace

pk_status bits_pack(pk_ctx *ctx, pk_bits_format fmt, int64_t rows, int64_t k,
                    const void *x, int64_t ldx, uint64_t *bits, int64_t ldw)
{
    DeviceGuard g(ctx);
    if (g.status()) return g.status();
    CallBuffers bufs(ctx);
    /* Each row's words; those between rows (ldw larger) keep their values. */
    const int64_t words = pk_bits_words(k);
    const void *dx = nullptr;
    Output o;
    pk_status s;
    if ((s = input_on_device(ctx, bufs, x, "x", rows, k, ldx, esize_of(fmt), &dx)) ||
        (s = output_on_device(ctx, bufs, bits, "bits", rows, words, ldw, 8, &o)))
        return s;
    const int64_t warps = 2 * rows * words;
    const int64_t blocks = (warps + kThreads / 32 - 1) / (kThreads / 32);
    uint32_t *out = static_cast<uint32_t *>(o.dev);
    cudaStream_t st = state(ctx)->stream;
    if (fmt == PK_BITS_F32_SIGN) {
        auto kern = k_pack<PK_BITS_F32_SIGN>;
        kern<<<grid_for(ctx, kern, blocks), kThreads, 0, st>>>(dx, rows, k, ldx, out, ldw);
    } else {
        auto kern = k_pack<PK_BITS_U8>;
        kern<<<grid_for(ctx, kern, blocks), kThreads, 0, st>>>(dx, rows, k, ldx, out, ldw);
    }
    PK_CU_LAUNCH(ctx, "k_pack launch");
    return finish_output(ctx, o);
}

pk_status bits_unpack(pk_ctx *ctx, pk_bits_format fmt, int64_t rows, int64_t k,
                      const uint64_t *bits, int64_t ldw, void *x, int64_t ldx)
{
    DeviceGuard g(ctx);
    if (g.status()) return g.status();
    CallBuffers bufs(ctx);
    const void *db = nullptr;
    Output o;
    pk_status s;
    if ((s = input_on_device(ctx, bufs, bits, "bits", rows, pk_bits_words(k), ldw, 8, &db)) ||
        (s = output_on_device(ctx, bufs, x, "x", rows, k, ldx, esize_of(fmt), &o)))
        return s;
    const int64_t total = rows * k;
    const int64_t blocks = (total + kThreads - 1) / kThreads;
    cudaStream_t st = state(ctx)->stream;
    const uint64_t *b = static_cast<const uint64_t *>(db);
    if (fmt == PK_BITS_F32_SIGN) {
        auto kern = k_unpack<PK_BITS_F32_SIGN>;
        kern<<<grid_for(ctx, kern, blocks), kThreads, 0, st>>>(b, rows, k, ldw, o.dev, ldx);
    } else {
        auto kern = k_unpack<PK_BITS_U8>;
        kern<<<grid_for(ctx, kern, blocks), kThreads, 0, st>>>(b, rows, k, ldw, o.dev, ldx);
    }
    PK_CU_LAUNCH(ctx, "k_unpack launch");
    return finish_output(ctx, o);
}

} // namespace pk_cuda
