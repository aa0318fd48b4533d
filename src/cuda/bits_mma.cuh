/* The binary GEMM kernels behind pk_bgemm, pk_hamming and pk_hamming_topk,
 * templated on an epilogue that receives Hamming distances h(i, j):
 *
 * - k_bmma: tensor cores, mma.sync m16n8k256 b1 AND.popc (sm_80+; Hopper has
 *   no XOR.popc): h = popc(a) + popc(b) - 2 popc(a & b), the row popcounts
 *   computed once. CTA tile 128 x 256 of the output, 8 warps of 64 x 64,
 *   K in slabs of 1024 bits (128 bytes per row) through a 4-stage cp.async
 *   pipeline; shared rows XOR-swizzled in 16-byte chunks (chunk ^ row % 8)
 *   so that ldmatrix reads 8 rows without bank conflicts. Persistent: one
 *   block per SM walks its tiles, the pipeline running on across tiles. Rows past m or n
 *   and words past k are zero-filled by cp.async (zeros add nothing to
 *   AND.popc); padding bits inside the last word are zero by
 *   prepare_operand.
 * - k_popc: CUDA cores, one thread per output, __popcll of the masked XOR.
 *
 * An epilogue provides row(i, j0, h[16], valid): the 16 distances of
 * columns j0 + 8 q + 2 t + e (q < 8, e < 2) held by one thread for row i
 * (valid bit 2q + e set when the column exists), and one(i, j, h). */
#ifndef PK_CUDA_BITS_MMA_CUH
#define PK_CUDA_BITS_MMA_CUH

#include "cuda/bits.cuh"

namespace pk_cuda {
namespace bmma {

constexpr int kBM = 128, kBN = 256;     /* CTA tile */
constexpr int kSlabWords = 16;          /* 1024 bits per K slab */
constexpr int kRowBytes = kSlabWords * 8;
constexpr int kStages = 4;
constexpr int kThreadsMma = 256;
constexpr int kStageBytes = (kBM + kBN) * kRowBytes;
constexpr int kSmemBytes = kStages * kStageBytes;

__device__ __forceinline__ uint32_t smem_u32(const void *p)
{
    return uint32_t(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void cp_async16(uint32_t dst, const void *src, int bytes)
{
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
                 "r"(bytes));
#endif
}

__device__ __forceinline__ void cp_commit()
{
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::);
#endif
}

template <int N>
__device__ __forceinline__ void cp_wait()
{
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
#endif
}

__device__ __forceinline__ void ldsm_x4(uint32_t addr, uint32_t &r0, uint32_t &r1,
                                        uint32_t &r2, uint32_t &r3)
{
#if __CUDA_ARCH__ >= 800
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                 : "r"(addr));
#endif
}

__device__ __forceinline__ void mma_and_popc(int (&c)[4], const uint32_t (&a)[4],
                                             uint32_t b0, uint32_t b1)
{
#if __CUDA_ARCH__ >= 800
    asm volatile("mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#endif
}

/* Byte offset of 16-byte chunk c of row r in a stage's tile. */
__device__ __forceinline__ uint32_t swz(int r, int c)
{
    return uint32_t(r * kRowBytes + ((c ^ (r & 7)) << 4));
}

/* Issue the copies of slab kb of `rows` tile rows starting at global row r0
 * (of nrows) into shared memory at base. */
template <int kRows>
__device__ __forceinline__ void load_tile(uint32_t base, const uint64_t *__restrict__ p,
                                          int64_t ld, int64_t r0, int64_t nrows,
                                          int64_t words, int kb)
{
    constexpr int kChunks = kRows * (kRowBytes / 16);
#pragma unroll
    for (int i = 0; i < kChunks / kThreadsMma; i++) {
        const int id = int(threadIdx.x) + i * kThreadsMma;
        const int r = id >> 3, c = id & 7;
        const int64_t w = int64_t(kb) * kSlabWords + 2 * c;
        const int64_t gr = r0 + r;
        int bytes = 0;
        const uint64_t *src = p;
        if (gr < nrows && w < words) {
            bytes = words - w >= 2 ? 16 : 8;
            src = p + gr * ld + w;
        }
        cp_async16(base + swz(r, c), src, bytes);
    }
}

template <class Epi>
__global__ void __launch_bounds__(kThreadsMma, 1)
k_bmma(const uint64_t *__restrict__ A, int64_t lda, const int32_t *__restrict__ pa,
       const uint64_t *__restrict__ B, int64_t ldb, const int32_t *__restrict__ pb,
       int64_t m, int64_t n, int64_t words, int64_t gx, int64_t ntiles, Epi epi)
{
#if __CUDA_ARCH__ >= 800
    extern __shared__ __align__(128) unsigned char smem[];
    const uint32_t sbase = smem_u32(smem);
    const int warp = int(threadIdx.x) >> 5, lane = int(threadIdx.x) & 31;
    const int wm = warp >> 2, wn = warp & 3; /* 2 x 4 warps of 64 x 64 */
    const int nk = int((words + kSlabWords - 1) / kSlabWords);
    /* Persistent: this block's tiles are blockIdx.x + i gridDim.x, and its
     * slabs one stream (tile-major), so the next tile's first slabs load
     * while this tile's epilogue stores. */
    const int64_t mine = (ntiles - blockIdx.x + gridDim.x - 1) / gridDim.x;
    const int64_t total = mine * nk;
    auto tile_of = [&](int64_t s) { return int64_t(blockIdx.x) + (s / nk) * gridDim.x; };

    int acc[4][8][4];
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 8; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) acc[i][j][e] = 0;

    auto load_slab = [&](int64_t s) {
        const int64_t t = tile_of(s), by = t / gx, bx = t - by * gx;
        const int kb = int(s % nk);
        const uint32_t st = sbase + uint32_t((s % kStages) * kStageBytes);
        load_tile<kBM>(st, A, lda, by * kBM, m, words, kb);
        load_tile<kBN>(st + kBM * kRowBytes, B, ldb, bx * kBN, n, words, kb);
    };
#pragma unroll
    for (int s = 0; s < kStages - 1; s++) {
        if (s < total) load_slab(s);
        cp_commit();
    }
    /* ldmatrix lanes: A x4 = rows 0-15 of chunk 2s (lanes 0-15) and 2s+1;
     * B x4 = n rows 0-7 chunks 2s, 2s+1, then rows 8-15 chunks 2s, 2s+1. */
    const int a_row = wm * 64 + (lane & 15), a_chunk = lane >> 4;
    const int b_row = wn * 64 + (lane & 7) + ((lane >> 4) << 3), b_chunk = (lane >> 3) & 1;
    const int g = lane >> 2, t4 = lane & 3;
    for (int64_t s = 0; s < total; s++) {
        cp_wait<kStages - 2>();
        __syncthreads();
        if (s + kStages - 1 < total) load_slab(s + kStages - 1);
        cp_commit();
        const uint32_t sa = sbase + uint32_t((s % kStages) * kStageBytes);
        const uint32_t sb = sa + kBM * kRowBytes;
#pragma unroll
        for (int ks = 0; ks < kSlabWords / 4; ks++) {
            uint32_t af[4][4], bf[8][2];
#pragma unroll
            for (int mi = 0; mi < 4; mi++)
                ldsm_x4(sa + swz(a_row + mi * 16, 2 * ks + a_chunk), af[mi][0], af[mi][1],
                        af[mi][2], af[mi][3]);
#pragma unroll
            for (int nj = 0; nj < 4; nj++)
                ldsm_x4(sb + swz(b_row + nj * 16, 2 * ks + b_chunk), bf[2 * nj][0],
                        bf[2 * nj][1], bf[2 * nj + 1][0], bf[2 * nj + 1][1]);
#pragma unroll
            for (int mi = 0; mi < 4; mi++)
#pragma unroll
                for (int ni = 0; ni < 8; ni++)
                    mma_and_popc(acc[mi][ni], af[mi], bf[ni][0], bf[ni][1]);
        }
        if (s % nk != nk - 1) continue;

        /* Epilogue of the tile: thread (g, t4) holds rows g, g + 8 and
         * columns 2 t4, 2 t4 + 1 of each 16 x 8 tile. */
        const int64_t t = tile_of(s), by = t / gx, bx = t - by * gx;
        const int64_t row0 = by * kBM, jb = bx * kBN + wn * 64 + 2 * t4;
        int pbv[16];
        unsigned valid = 0;
#pragma unroll
        for (int ni = 0; ni < 8; ni++)
#pragma unroll
            for (int e = 0; e < 2; e++) {
                const int64_t j = jb + ni * 8 + e;
                const bool ok = j < n;
                pbv[2 * ni + e] = ok ? pb[j] : 0;
                valid |= unsigned(ok) << (2 * ni + e);
            }
#pragma unroll
        for (int mi = 0; mi < 4; mi++)
#pragma unroll
            for (int hf = 0; hf < 2; hf++) {
                const int64_t i = row0 + wm * 64 + mi * 16 + hf * 8 + g;
                if (i < m) {
                    const int pai = pa[i];
                    int h[16];
#pragma unroll
                    for (int ni = 0; ni < 8; ni++)
#pragma unroll
                        for (int e = 0; e < 2; e++)
                            h[2 * ni + e] = pai + pbv[2 * ni + e] - 2 * acc[mi][ni][2 * hf + e];
                    epi.row(i, jb, h, valid);
                }
#pragma unroll
                for (int ni = 0; ni < 8; ni++) {
                    acc[mi][ni][2 * hf] = 0;
                    acc[mi][ni][2 * hf + 1] = 0;
                }
            }
    }
    cp_wait<0>();
#endif
}

/* CUDA cores: one thread per output, masked XOR popcount. */
template <class Epi>
__global__ void __launch_bounds__(kThreads)
k_popc(const uint64_t *__restrict__ A, int64_t lda, const uint64_t *__restrict__ B,
       int64_t ldb, int64_t m, int64_t n, int64_t words, uint64_t last_mask, Epi epi)
{
    const int64_t total = m * n;
    for (int64_t e = int64_t(blockIdx.x) * kThreads + threadIdx.x; e < total;
         e += int64_t(gridDim.x) * kThreads) {
        const int64_t i = e / n, j = e - i * n;
        const uint64_t *a = A + i * lda, *b = B + j * ldb;
        int h = 0;
        for (int64_t w = 0; w + 1 < words; w++) h += __popcll(a[w] ^ b[w]);
        if (words > 0) h += __popcll((a[words - 1] ^ b[words - 1]) & last_mask);
        epi.one(i, j, h);
    }
}

/* Launch the kernel that fits: operands prepared for it (prepare_operand's
 * `mma` = bits_use_mma). */
template <class Epi>
pk_status launch(pk_ctx *ctx, const BitsOperand &a, const BitsOperand &b, int64_t m,
                 int64_t n, int64_t k, bool mma, const Epi &epi)
{
    State *st = state(ctx);
    const int64_t words = pk_bits_words(k);
    if (mma) {
        auto kern = k_bmma<Epi>;
        /* The shared-memory opt-in, once per device (idempotent if raced). */
        static std::atomic<uint64_t> opted{0};
        const uint64_t bit = uint64_t(1) << (ctx->device & 63);
        if (!(opted.load(std::memory_order_relaxed) & bit)) {
            PK_CU(ctx, cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            kSmemBytes));
            opted.fetch_or(bit, std::memory_order_relaxed);
        }
        const int64_t gx = (n + kBN - 1) / kBN, gy = (m + kBM - 1) / kBM;
        const int64_t tiles = gx * gy;
        const int64_t grid = tiles < st->sms ? tiles : st->sms; /* one block per SM */
        kern<<<unsigned(grid), kThreadsMma, kSmemBytes, st->stream>>>(
            a.p, a.ld, a.popc, b.p, b.ld, b.popc, m, n, words, gx, tiles, epi);
        PK_CU_LAUNCH(ctx, "k_bmma launch");
        return PK_OK;
    }
    const uint64_t last_mask = k % 64 ? (uint64_t(1) << (k % 64)) - 1 : ~uint64_t(0);
    auto kern = k_popc<Epi>;
    const int64_t total = m * n;
    kern<<<grid_for(ctx, kern, (total + kThreads - 1) / kThreads), kThreads, 0,
           st->stream>>>(a.p, a.ld, b.p, b.ld, m, n, words, last_mask, epi);
    PK_CU_LAUNCH(ctx, "k_popc launch");
    return PK_OK;
}

} // namespace bmma
} // namespace pk_cuda

#endif
