/* The binary GEMM kernels behind pk_bgemm, pk_hamming and pk_hamming_topk,
 * templated on an epilogue that receives Hamming distances h(i, j):
 *
 * - k_bmma: tensor cores, mma.sync m16n8k256 b1 AND.popc (sm_80+; Hopper has
 *   no XOR.popc): h = popc(a) + popc(b) - 2 popc(a & b), the row popcounts
 *   computed once. CTA tile 128 x 256 of the output, 8 warps of 64 x 64,
 *   K in slabs of 1024 bits (256 bits for codes of <= 512 bits) through a
 *   4-stage (8-stage) cp.async pipeline; shared rows XOR-swizzled in 16-byte
 *   chunks so that ldmatrix reads 8 rows without bank conflicts.
 *   Persistent: one block per SM walks its tiles, the pipeline running on
 *   across tiles. Rows past m or n and words past k are zero-filled by cp.async (zeros add nothing to
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
#include "cuda/bits_wgmma.cuh"

#include <cstdlib>
#include <cstring>

namespace pk_cuda {
namespace bmma {

constexpr int kBM = 128, kBN = 256; /* CTA tile */
constexpr int kThreadsMma = 256;

/* A K slab of kW words (kW * 64 bits) per row: 1024 bits for long codes,
 * 256 bits for codes of at most 8 words (no tensor work on zero fill). */
template <int kW>
struct Slab {
    static constexpr int kRowBytes = kW * 8;
    static constexpr int kChunks = kW / 2; /* 16-byte chunks per row */
    static constexpr int kSteps = kW / 4;  /* m16n8k256 steps */
    static constexpr int kStages = kW == 16 ? 4 : 8;
    static constexpr int kStageBytes = (kBM + kBN) * kRowBytes;
    static constexpr int kSmemBytes = kStages * kStageBytes;
    /* Byte offset of chunk c of row r: XOR-swizzled so that the 8 rows of
     * an ldmatrix phase hit 8 different 16-byte bank groups. */
    __device__ static __forceinline__ uint32_t swz(int r, int c)
    {
        if constexpr (kW == 16) return uint32_t(r * kRowBytes + ((c ^ (r & 7)) << 4));
        else return uint32_t(r * kRowBytes + ((c ^ ((r >> 2) & 1)) << 4));
    }
};

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

template <int kW, class Epi>
__global__ void __launch_bounds__(kThreadsMma, 1)
k_bmma(const uint64_t *__restrict__ A, int64_t lda, const int32_t *__restrict__ pa,
       const uint64_t *__restrict__ B, int64_t ldb, const int32_t *__restrict__ pb,
       int64_t m, int64_t n, int64_t words, int64_t gx, int64_t ntiles, Epi epi)
{
#if __CUDA_ARCH__ >= 800
    using S = Slab<kW>;
    extern __shared__ __align__(128) unsigned char smem[];
    const uint32_t sbase = smem_u32(smem);
    const int warp = int(threadIdx.x) >> 5, lane = int(threadIdx.x) & 31;
    const int wm = warp >> 2, wn = warp & 3; /* 2 x 4 warps of 64 x 64 */
    const int nk = int((words + kW - 1) / kW);
    /* Persistent: this block's tiles are blockIdx.x + i gridDim.x and its
     * slabs one stream, so the next tile's slabs load during this tile's
     * last slab and epilogue. */
    const int64_t mine = (ntiles - blockIdx.x + gridDim.x - 1) / gridDim.x;
    const int64_t total = mine * nk;

    /* The load cursor: thread copies chunk cc of rows rr + i * kStep. */
    constexpr int kStep = kThreadsMma / S::kChunks;
    constexpr int kIA = kBM / kStep, kIB = kBN / kStep;
    const int cc = int(threadIdx.x) % S::kChunks, rr = int(threadIdx.x) / S::kChunks;
    int64_t l_tile = blockIdx.x;
    int l_kb = 0, l_stage = 0;
    const uint64_t *l_pa = A, *l_pb = B;
    unsigned l_va = 0, l_vb = 0;
    auto set_tile = [&]() {
        const int64_t by = l_tile / gx, bx = l_tile - by * gx;
        const int64_t ra = by * kBM + rr, rb = bx * kBN + rr;
        l_pa = A + ra * lda + 2 * cc;
        l_pb = B + rb * ldb + 2 * cc;
        l_va = l_vb = 0;
#pragma unroll
        for (int i = 0; i < kIA; i++) l_va |= unsigned(ra + i * kStep < m) << i;
#pragma unroll
        for (int i = 0; i < kIB; i++) l_vb |= unsigned(rb + i * kStep < n) << i;
    };
    auto issue = [&]() {
        const uint32_t st = sbase + uint32_t(l_stage * S::kStageBytes);
        const int64_t off = int64_t(l_kb) * kW, w = off + 2 * cc;
        const int bytes = w < words ? (words - w >= 2 ? 16 : 8) : 0;
#pragma unroll
        for (int i = 0; i < kIA; i++) {
            const bool ok = bytes && ((l_va >> i) & 1u);
            cp_async16(st + S::swz(rr + i * kStep, cc), ok ? l_pa + i * kStep * lda + off : A,
                       ok ? bytes : 0);
        }
#pragma unroll
        for (int i = 0; i < kIB; i++) {
            const bool ok = bytes && ((l_vb >> i) & 1u);
            cp_async16(st + uint32_t(kBM * S::kRowBytes) + S::swz(rr + i * kStep, cc),
                       ok ? l_pb + i * kStep * ldb + off : B, ok ? bytes : 0);
        }
        l_stage = l_stage + 1 == S::kStages ? 0 : l_stage + 1;
        if (++l_kb == nk) {
            l_kb = 0;
            l_tile += gridDim.x;
            if (l_tile < ntiles) set_tile();
        }
    };

    int acc[4][8][4];
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 8; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) acc[i][j][e] = 0;

    set_tile();
    int64_t issued = 0;
#pragma unroll
    for (int p = 0; p < S::kStages - 1; p++) {
        if (issued < total) issue(), issued++;
        cp_commit();
    }
    /* ldmatrix lanes: A x4 = rows 0-15 of chunk 2s (lanes 0-15) and 2s+1;
     * B x4 = n rows 0-7 chunks 2s, 2s+1, then rows 8-15 chunks 2s, 2s+1. */
    const int a_row = wm * 64 + (lane & 15), a_chunk = lane >> 4;
    const int b_row = wn * 64 + (lane & 7) + ((lane >> 4) << 3), b_chunk = (lane >> 3) & 1;
    auto step = [&](uint32_t sa, int ks) {
        const uint32_t sb = sa + uint32_t(kBM * S::kRowBytes);
        uint32_t af[4][4], bf[8][2];
#pragma unroll
        for (int mi = 0; mi < 4; mi++)
            ldsm_x4(sa + S::swz(a_row + mi * 16, 2 * ks + a_chunk), af[mi][0], af[mi][1],
                    af[mi][2], af[mi][3]);
#pragma unroll
        for (int nj = 0; nj < 4; nj++)
            ldsm_x4(sb + S::swz(b_row + nj * 16, 2 * ks + b_chunk), bf[2 * nj][0],
                    bf[2 * nj][1], bf[2 * nj + 1][0], bf[2 * nj + 1][1]);
#pragma unroll
        for (int mi = 0; mi < 4; mi++)
#pragma unroll
            for (int ni = 0; ni < 8; ni++)
                mma_and_popc(acc[mi][ni], af[mi], bf[ni][0], bf[ni][1]);
    };
    const int g = lane >> 2, t4 = lane & 3;
    int c_stage = 0, c_kb = 0;
    int64_t c_tile = blockIdx.x;
    for (int64_t s = 0; s < total; s++) {
        cp_wait<S::kStages - 2>();
        __syncthreads();
        const uint32_t sa = sbase + uint32_t(c_stage * S::kStageBytes);
        c_stage = c_stage + 1 == S::kStages ? 0 : c_stage + 1;
        step(sa, 0);
        /* The copies go out after the first step's MMAs: the warps do not
         * all stop computing at once to issue them. */
        if (issued < total) issue(), issued++;
        cp_commit();
#pragma unroll
        for (int ks = 1; ks < S::kSteps; ks++) step(sa, ks);
        if (++c_kb != nk) continue;
        c_kb = 0;

        /* Epilogue of the tile: thread (g, t4) holds rows g, g + 8 and
         * columns 2 t4, 2 t4 + 1 of each 16 x 8 tile. */
        const int64_t by = c_tile / gx, bx = c_tile - by * gx;
        c_tile += gridDim.x;
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
                            h[2 * ni + e] = xor_popc(pai, pbv[2 * ni + e], acc[mi][ni][2 * hf + e]);
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

/* PK_BITS_WGMMA=0 in the environment (read once): no wgmma kernel. */
inline bool wgmma_allowed()
{
    static const bool on = [] {
        const char *e = pk__env(PK__ENV_BITS_WGMMA);
        return !(e && !strcmp(e, "0"));
    }();
    return on;
}

/* PK_BITS_SLAB=256 (tests): the 256-bit-slab kernel for every code length,
 * as on GPUs without 192 KiB of shared memory a block. */
inline bool slab256_forced()
{
    static const bool on = [] {
        const char *e = pk__env(PK__ENV_BITS_SLAB);
        return e && !strcmp(e, "256");
    }();
    return on;
}

/* Launch the tensor-core kernel with kW-word slabs: one block per SM. */
template <int kW, class Epi>
pk_status launch_bmma(pk_ctx *ctx, const BitsOperand &a, const BitsOperand &b, int64_t m,
                      int64_t n, int64_t words, const Epi &epi)
{
    State *st = state(ctx);
    auto kern = k_bmma<kW, Epi>;
    constexpr int smem = Slab<kW>::kSmemBytes;
    /* The shared-memory opt-in, once per device (idempotent if raced). */
    static std::atomic<uint64_t> opted{0};
    const uint64_t bit = uint64_t(1) << (ctx->device & 63);
    if (!(opted.load(std::memory_order_relaxed) & bit)) {
        PK_CU(ctx, cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
        opted.fetch_or(bit, std::memory_order_relaxed);
    }
    const int64_t gx = (n + kBN - 1) / kBN, gy = (m + kBM - 1) / kBM;
    const int64_t tiles = gx * gy;
    const int64_t grid = tiles < st->sms ? tiles : st->sms;
    kern<<<unsigned(grid), kThreadsMma, smem, st->stream>>>(a.p, a.ld, a.popc, b.p, b.ld,
                                                            b.popc, m, n, words, gx, tiles, epi);
    PK_CU_LAUNCH(ctx, "k_bmma launch");
    return PK_OK;
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
 * `mma` = bits_use_mma); on Hopper, codes over 512 bits take wgmma
 * (bits_wgmma.cuh; PK_BITS_WGMMA=0 keeps them on mma.sync, for tests and
 * A/B timing). */
template <class Epi>
pk_status launch(pk_ctx *ctx, const BitsOperand &a, const BitsOperand &b, int64_t m,
                 int64_t n, int64_t k, bool mma, const Epi &epi)
{
    const int64_t words = pk_bits_words(k);
    if (mma && bwgmma::usable(ctx, m, n, words) && wgmma_allowed())
        return bwgmma::launch(ctx, a, b, m, n, words, epi);
    /* 1024-bit slabs need 192 KiB of shared memory: Hopper only (A100 and
     * sm_87 allow 163 KiB a block, sm_86/89/120 99 KiB). Elsewhere the
     * 256-bit slabs (96 KiB, any code length) run. */
    if (mma)
        return words <= 8 || state(ctx)->smem_optin < size_t(Slab<16>::kSmemBytes) ||
                       slab256_forced()
                   ? launch_bmma<4>(ctx, a, b, m, n, words, epi)
                   : launch_bmma<16>(ctx, a, b, m, n, words, epi);
    const uint64_t last_mask = k % 64 ? (uint64_t(1) << (k % 64)) - 1 : ~uint64_t(0);
    auto kern = k_popc<Epi>;
    const int64_t total = m * n;
    kern<<<grid_for(ctx, kern, (total + kThreads - 1) / kThreads), kThreads, 0,
           state(ctx)->stream>>>(a.p, a.ld, b.p, b.ld, m, n, words, last_mask, epi);
    PK_CU_LAUNCH(ctx, "k_popc launch");
    return PK_OK;
}

} // namespace bmma
} // namespace pk_cuda

#endif
