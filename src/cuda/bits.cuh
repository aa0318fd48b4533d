/* The bit-matrix kernels of the CUDA backend (bits_*.cu): operand
 * preparation (host staging, padding masks, row popcounts), the binary GEMM
 * kernels with pluggable epilogues (bits_mma.cuh), and their entry points. */
#ifndef PK_CUDA_BITS_CUH
#define PK_CUDA_BITS_CUH

#include "cuda/cuda_internal.cuh"

#include <cstdint>

namespace pk_cuda {

/* popc(a ^ b) = popc(a) + popc(b) - 2 popc(a & b), in wrapping 32-bit
 * arithmetic: for codes over 2^30 bits the sum alone passes INT32_MAX (UB in
 * int), the result (at most k < 2^31) does not. */
__device__ __forceinline__ int xor_popc(int pa, int pb, int both)
{
    return int(unsigned(pa) + unsigned(pb) - 2u * unsigned(both));
}

/* Per-call device buffers, released (stream-ordered) when the call ends. */
struct CallBuffers {
    pk_ctx *ctx;
    void *p[16] = {};
    int n = 0;
    explicit CallBuffers(pk_ctx *c) : ctx(c) {}
    ~CallBuffers()
    {
        for (int i = 0; i < n; i++) dev_free(state(ctx), p[i]);
    }
    CallBuffers(const CallBuffers &) = delete;
    CallBuffers &operator=(const CallBuffers &) = delete;
    /* A device buffer of `bytes` (at least 16) owned by this call. */
    pk_status get(void **out, size_t bytes)
    {
        *out = nullptr;
        if (n == 16) return pk__fail(ctx, PK_ERR_INTERNAL, "CUDA bits: too many buffers");
        pk_status s = dev_alloc(ctx, out, bytes < 16 ? 16 : bytes);
        if (s == PK_OK) p[n++] = *out;
        return s;
    }
};

/* A bit-matrix operand as the kernels read it: device memory; for the
 * tensor-core path (`mma`) also 16-byte aligned rows (ld even, base
 * aligned) with zero padding bits, else copied into such a buffer.
 * popc[r] = ones among row r's k bits (tensor-core path only). */
struct BitsOperand {
    const uint64_t *p = nullptr;
    int64_t ld = 0;
    const int32_t *popc = nullptr;
};

pk_status prepare_operand(pk_ctx *ctx, CallBuffers &bufs, const uint64_t *src,
                          const char *name, int64_t rows, int64_t ld, int64_t k,
                          bool mma, BitsOperand *op);

/* Copy a host matrix (rows x cols elements of esize bytes, ld apart) to a new
 * device buffer of the call, or return src when it is device memory. */
pk_status input_on_device(pk_ctx *ctx, CallBuffers &bufs, const void *src,
                          const char *name, int64_t rows, int64_t cols, int64_t ld,
                          size_t esize, const void **dev);

/* An output: device memory as is, else a device buffer of the call that
 * finish_output copies back (blocking). */
struct Output {
    void *user = nullptr, *dev = nullptr;
    size_t bytes = 0;
    Where w = kDevice;
};
pk_status output_on_device(pk_ctx *ctx, CallBuffers &bufs, void *user,
                           const char *name, int64_t rows, int64_t cols,
                           int64_t ld, size_t esize, Output *o);
pk_status finish_output(pk_ctx *ctx, const Output &o);

/* Whether the binary GEMM takes the tensor cores (sm_80+ and a shape worth
 * a tile) rather than the CUDA-core __popc kernel. */
bool bits_use_mma(pk_ctx *ctx, int64_t m, int64_t n, int64_t k);

/* Entry points (the ops table is in ctx.cu). */
pk_status bits_pack(pk_ctx *ctx, pk_bits_format fmt, int64_t rows, int64_t k,
                    const void *x, int64_t ldx, uint64_t *bits, int64_t ldw);
pk_status bits_unpack(pk_ctx *ctx, pk_bits_format fmt, int64_t rows, int64_t k,
                      const uint64_t *bits, int64_t ldw, void *x, int64_t ldx);
pk_status bgemm(pk_ctx *ctx, const pk__bits_args *a, int32_t *C, int64_t ldc);
pk_status hamming(pk_ctx *ctx, const pk__bits_args *a, pk_hamming_dtype dt, void *D,
                  int64_t ldd);
pk_status hamming_topk(pk_ctx *ctx, const pk__bits_args *a, int64_t topk,
                       int32_t *dist, int64_t *idx);

} // namespace pk_cuda

#endif
