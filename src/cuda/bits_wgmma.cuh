/* The binary GEMM on Hopper's warpgroup tensor cores (sm_90a): wgmma
 * m64n256k256 b1 AND.popc with both operands in shared memory, fed by the
 * bulk tensor copy engine (TMA) through an mbarrier pipeline; the epilogue
 * interface is bits_mma.cuh's (row(i, j0, h[16], valid)).
 *
 * Why: the mma.sync kernel (k_bmma) feeds m16n8k256 from registers loaded
 * by ldmatrix, and its shared-memory traffic (ldmatrix plus the cp.async
 * fill) approaches the 128 B/clock limit before the tensor cores are busy;
 * wgmma reads the tiles in place and needs no register operands.
 *
 * Block: 384 threads = a producer warpgroup (one thread issues the copies;
 * registers cut to 40) and 2 consumer warpgroups (registers raised to 232),
 * each computing a 64 x 256 half of a 128 x 256 output tile. A stage holds
 * 1024 bits of k (128 bytes = one swizzle row) of the A and B tiles: 48 KiB,
 * 4 stages. Persistent: one block per SM walks the tiles blockIdx.x + i
 * gridDim.x, and the producer runs on into the next tile while the
 * consumers store this one. Store epilogues (Epi::kTileStore, an output
 * whose rows are 16-byte multiples) put each 64 x 128-byte box of results
 * into shared memory and hand it to the copy engine (TMA bulk store, clipped
 * at the matrix edges): measured at 8192^3, per-thread stores (8 rows each
 * instruction) took half of the kernel's time; the bulk store writes whole
 * lines and the warps go on to the next tile. Rows past m or n and bits past k arrive as
 * zeros from the copy engine, and zeros add nothing to AND.popc; padding
 * bits inside the last word are zero by prepare_operand.
 *
 * Used for codes longer than 512 bits (below that a 1024-bit stage would be
 * mostly zero fill; k_bmma has 256-bit slabs for them). */
#ifndef PK_CUDA_BITS_WGMMA_CUH
#define PK_CUDA_BITS_WGMMA_CUH

#include "cuda/bits.cuh"
#include "cuda/gemm_wgmma.cuh"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace pk_cuda {
namespace bwgmma {

constexpr int kBM = 128, kBN = 256, kThreads = 384, kStages = 4;
constexpr int kRowBytes = 128; /* 1024 bits of k a stage */
constexpr int kABytes = kBM * kRowBytes, kBBytes = kBN * kRowBytes;
constexpr int kStageBytes = kABytes + kBBytes;
/* Per consumer warpgroup, two buffers (tiles alternate) of the row
 * popcounts its epilogue needs: 64 of A, 256 of B; and one output box of
 * 64 rows x 128 bytes for the bulk stores. */
constexpr int kSide = 64 + kBN;
constexpr int kOutBox = 64 * 128;
constexpr size_t kSmem = size_t(kStages) * kStageBytes + 2 * kOutBox + 1024 + 2 * kStages * 8 +
                         2 * 2 * kSide * sizeof(int32_t);

/* 4-byte asynchronous copy global -> shared; bytes = 0 zero-fills. */
__device__ __forceinline__ void cp_async4(void *dst, const void *src, int bytes)
{
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(
                     uint32_t(__cvta_generic_to_shared(dst))),
                 "l"(src), "r"(bytes)
                 : "memory");
#endif
}

/* The bulk-store epilogue of one warpgroup's 64 x 256 block (acc as in
 * k_bwgmma; sd: its row popcounts, A's 64 then B's 256; rl: this thread's
 * first row in the block): boxes of 64 rows x 128 bytes, each written into
 * `box` with the 128-byte swizzle the map expects (16-byte chunk c of row r
 * at chunk c ^ (r % 8): the 8 rows of a store hit 8 different chunks) and
 * stored at (c0 + box columns, r0) by thread 0, once the previous box has
 * been read out. */
template <class Epi>
__device__ __forceinline__ void tile_epilogue(const Epi &epi, const CUtensorMap &mc,
                                              const int (&acc)[128], const int32_t *sd,
                                              unsigned char *box, int wg, int tid, int rl,
                                              int c0, int r0)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    using namespace sm90;
    using T = typename Epi::Elem;
    constexpr int kCols = 128 / int(sizeof(T)); /* columns of a box */
    constexpr int kQ = kCols / 8;               /* 8-column groups of a box */
    const int t = tid % 4;
#pragma unroll
    for (int b = 0; b < kBN / kCols; b++) {
        if (tid == 0) bulk_wait_read<0>();
        wg_sync(wg);
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int r = rl + 8 * h;
            const int pai = sd[r];
#pragma unroll
            for (int qq = 0; qq < kQ; qq++) {
                const int j = b * kQ + qq; /* the 8-column group in the block */
                const int col = 8 * j + 2 * t;
                const T v0 = epi.value(xor_popc(pai, sd[64 + col], acc[4 * j + 2 * h]));
                const T v1 = epi.value(xor_popc(pai, sd[64 + col + 1], acc[4 * j + 2 * h + 1]));
                unsigned char *dst = box + swz128(r, (8 * qq + 2 * t) * int(sizeof(T)));
                if constexpr (sizeof(T) == 4) {
                    *reinterpret_cast<int2 *>(dst) = make_int2(int(v0), int(v1));
                } else {
                    *reinterpret_cast<uint32_t *>(dst) =
                        uint32_t(uint16_t(v0)) | uint32_t(uint16_t(v1)) << 16;
                }
            }
        }
        fence_proxy_async();
        wg_sync(wg);
        if (tid == 0) {
            tma_store(&mc, c0 + b * kCols, r0, box);
            bulk_commit();
        }
    }
#endif
}

/* kTile: the bulk-store epilogue through the output map mc (else unused). */
template <class Epi, bool kTile>
__global__ void __launch_bounds__(kThreads, 1)
    k_bwgmma(const __grid_constant__ CUtensorMap ma, const __grid_constant__ CUtensorMap mb,
             const __grid_constant__ CUtensorMap mc, const int32_t *__restrict__ pa, const int32_t *__restrict__ pb, int64_t m,
             int64_t n, int nk, int64_t gx, int64_t ntiles, Epi epi)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    using namespace sm90;
    constexpr int kConsumerWarps = 8; /* arrivals that release a stage */
    extern __shared__ unsigned char smem_raw[];
    /* The 128-byte swizzle needs 1024-byte aligned tiles. */
    unsigned char *smem = reinterpret_cast<unsigned char *>(
        (reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
    unsigned char *obox = smem + kStages * kStageBytes; /* [wg - 1][kOutBox] */
    uint64_t *full = reinterpret_cast<uint64_t *>(obox + 2 * kOutBox);
    uint64_t *empty = full + kStages;
    int32_t *side = reinterpret_cast<int32_t *>(empty + kStages); /* [wg - 1][buffer][kSide] */
    auto a_tile = [&](int s) { return smem + s * kStageBytes; };
    auto b_tile = [&](int s) { return smem + s * kStageBytes + kABytes; };
    const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;

    if (threadIdx.x == 0) {
        for (int s = 0; s < kStages; s++) {
            mbar_init(&full[s], 1);
            mbar_init(&empty[s], kConsumerWarps);
        }
        mbar_init_fence();
    }
    __syncthreads();

    if (wg == 0) { /* producer: the same tiles and k steps, in the same order */
        cut_max_regs<40>();
        if (tid == 0) {
            tma_prefetch_map(&ma);
            tma_prefetch_map(&mb);
            int64_t it = 0; /* stage uses so far */
            for (int64_t t = blockIdx.x; t < ntiles; t += gridDim.x) {
                const int64_t by = t / gx, bx = t - by * gx;
                const int m0 = int(by * kBM), n0 = int(bx * kBN);
                for (int kt = 0; kt < nk; kt++, it++) {
                    const int s = int(it % kStages);
                    /* Use r of stage s waits until the consumers released use r - 1. */
                    if (it >= kStages) mbar_wait(&empty[s], uint32_t((it / kStages) & 1) ^ 1u);
                    mbar_expect_tx(&full[s], kStageBytes);
                    tma_load(a_tile(s), &ma, kt * 32, m0, &full[s]);
                    tma_load(b_tile(s), &mb, kt * 32, n0, &full[s]);
                }
            }
        }
    } else { /* consumers: rows 64 (wg - 1) .. + 64 of each tile */
        set_max_regs<232>();
        const int arow = (wg - 1) * 64 * kRowBytes;
        const bool signal = (tid & 31) == 0;
        const int w = tid / 32, l = tid % 32;
        int acc[128];
        int64_t it = 0;
        int buf = 0;
        for (int64_t t = blockIdx.x; t < ntiles; t += gridDim.x, buf ^= 1) {
            const int64_t by = t / gx, bx = t - by * gx;
            const int64_t rw = by * kBM + (wg - 1) * 64, cb = bx * kBN;
            /* This tile's row popcounts, copied while the tile computes
             * (zeros past m or n), so that the epilogue waits for none. */
            int32_t *sd = side + ((wg - 1) * 2 + buf) * kSide;
            for (int e = tid; e < kSide; e += 128) {
                const int64_t r = e < 64 ? rw + e : cb + (e - 64);
                const bool ok = r < (e < 64 ? m : n);
                cp_async4(sd + e, ok ? (e < 64 ? pa : pb) + r : pa, ok ? 4 : 0);
            }
            asm volatile("cp.async.commit_group;\n" ::: "memory");
#pragma unroll
            for (int i = 0; i < 128; i++) acc[i] = 0;
            int prev = -1; /* the stage whose wgmma group may still run */
            for (int kt = 0; kt < nk; kt++, it++) {
                const int s = int(it % kStages);
                mbar_wait(&full[s], uint32_t((it / kStages) & 1));
                const uint64_t da = kmajor_desc(a_tile(s) + arow), db = kmajor_desc(b_tile(s));
                reg_fence(acc);
                wgmma_fence();
#pragma unroll
                for (int kk = 0; kk < 4; kk++) /* +32 bytes = 256 bits of k */
                    wgmma_b1_n256(acc, da + 2 * kk, db + 2 * kk);
                wgmma_commit();
                reg_fence(acc);
                /* Keep this group in flight; the previous one is done. */
                wgmma_wait<1>();
                if (prev >= 0 && signal) mbar_arrive(&empty[prev]);
                prev = s;
            }
            wgmma_wait<0>();
            reg_fence(acc);
            if (prev >= 0 && signal) mbar_arrive(&empty[prev]);

            /* The popcount copies of all this warpgroup's threads have
             * landed (the buffer's previous readers passed this barrier's
             * last use before they could reach it again). */
            asm volatile("cp.async.wait_all;\n" ::: "memory");
            wg_sync(wg);
            const int rl = w * 16 + l / 4;
            if constexpr (kTile) {
                tile_epilogue<Epi>(epi, mc, acc, sd, obox + (wg - 1) * kOutBox, wg, tid, rl,
                                   int(cb), int(rw));
            } else {

                /* Epilogue: acc[4j + 2h + e] is row 16w + l/4 + 8h, column
                 * 8j + 2(l%4) + e of this warpgroup's 64 x 256 block; handed
                 * to the epilogue 64 columns at a time, as k_bmma does. */
    #pragma unroll
                for (int c = 0; c < 4; c++) {
                    const int cl = 64 * c + 2 * (l % 4);
                    const int64_t j0 = cb + cl;
                    int pbv[16];
                    unsigned valid = 0;
    #pragma unroll
                    for (int q = 0; q < 8; q++)
    #pragma unroll
                        for (int e = 0; e < 2; e++) {
                            pbv[2 * q + e] = sd[64 + cl + 8 * q + e];
                            valid |= unsigned(j0 + 8 * q + e < n) << (2 * q + e);
                        }
    #pragma unroll
                    for (int h = 0; h < 2; h++) {
                        const int64_t i = rw + rl + 8 * h;
                        if (i >= m) continue;
                        const int pai = sd[rl + 8 * h];
                        int d[16];
    #pragma unroll
                        for (int q = 0; q < 8; q++)
    #pragma unroll
                            for (int e = 0; e < 2; e++)
                                d[2 * q + e] = xor_popc(pai, pbv[2 * q + e], acc[4 * (8 * c + q) + 2 * h + e]);
                        epi.row(i, j0, d, valid);
                    }
                }
            }
        }
        /* The last bulk stores have read their box before the block ends. */
        if (kTile && tid == 0) bulk_wait<0>();
    }
#else
    /* Built without sm_90a code: never launched (bits_use_wgmma). */
    __trap();
#endif
}

/* Whether the wgmma kernel takes an (m x words) x (n x words) product:
 * sm_90a code built, a compute capability 9.0 device, codes longer than
 * 512 bits, 32-bit copy coordinates. */
inline bool usable(pk_ctx *ctx, int64_t m, int64_t n, int64_t words)
{
#if defined(PK_CUDA_HAVE_SM90A)
    const State *s = state(ctx);
    const int64_t lim = int64_t(1) << 30;
    return s->cc_major == 9 && s->cc_minor == 0 && words > 8 && m < lim && n < lim &&
           words < lim / 2 && tensor_maps_available();
#else
    (void)ctx, (void)m, (void)n, (void)words;
    return false;
#endif
}

/* The shared-memory opt-in of k_bwgmma<Epi, kTile>, once per device
 * (idempotent if raced). */
template <class Epi, bool kTile> pk_status opt_in_smem(pk_ctx *ctx)
{
    auto k = k_bwgmma<Epi, kTile>;
    static std::atomic<uint64_t> opted{0};
    const uint64_t bit = uint64_t(1) << (ctx->device & 63);
    if (!(opted.load(std::memory_order_relaxed) & bit)) {
        PK_CU(ctx, cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        int(kSmem)));
        opted.fetch_or(bit, std::memory_order_relaxed);
    }
    return PK_OK;
}

/* PK_BITS_TMA_STORE=0 in the environment (read once): per-thread stores
 * only, for tests and A/B timing. */
inline bool tile_store_allowed()
{
    static const bool on = [] {
        const char *e = pk__env(PK__ENV_BITS_TMA_STORE);
        return !(e && !strcmp(e, "0"));
    }();
    return on;
}

/* Launch over prepared operands (device, 16-byte aligned rows, zero
 * padding, row popcounts): one block per SM, or per tile when fewer. */
template <class Epi>
pk_status launch(pk_ctx *ctx, const BitsOperand &a, const BitsOperand &b, int64_t m, int64_t n,
                 int64_t words, const Epi &epi)
{
    State *st = state(ctx);
    CUtensorMap ma, mb;
    pk_status s;
    /* The words as pairs of 32-bit elements: 128-byte boxes of 32. */
    if ((s = tensor_map_2d(ctx, &ma, CU_TENSOR_MAP_DATA_TYPE_UINT32, a.p, m, 2 * words,
                           a.ld * 8, 32, kBM)) ||
        (s = tensor_map_2d(ctx, &mb, CU_TENSOR_MAP_DATA_TYPE_UINT32, b.p, n, 2 * words,
                           b.ld * 8, 32, kBN)))
        return s;
    const int64_t gx = (n + kBN - 1) / kBN, gy = (m + kBM - 1) / kBM;
    const int64_t tiles = gx * gy;
    const int64_t grid = tiles < st->sms ? tiles : st->sms;
    const int nk = int((2 * words + 31) / 32);
    if constexpr (Epi::kTileStore) {
        using T = typename Epi::Elem;
        if (tile_store_allowed() && aligned16(epi.out) &&
            (epi.ld * int64_t(sizeof(T))) % 16 == 0) {
            CUtensorMap mc;
            if ((s = tensor_map_2d(ctx, &mc,
                                   sizeof(T) == 4 ? CU_TENSOR_MAP_DATA_TYPE_INT32
                                                  : CU_TENSOR_MAP_DATA_TYPE_UINT16,
                                   epi.out, m, n, epi.ld * int64_t(sizeof(T)),
                                   128 / int(sizeof(T)), 64)) ||
                (s = opt_in_smem<Epi, true>(ctx)))
                return s;
            k_bwgmma<Epi, true><<<unsigned(grid), kThreads, kSmem, st->stream>>>(
                ma, mb, mc, a.popc, b.popc, m, n, nk, gx, tiles, epi);
            PK_CU_LAUNCH(ctx, "k_bwgmma launch");
            return PK_OK;
        }
    }
    if ((s = opt_in_smem<Epi, false>(ctx))) return s;
    /* The output map is unused without bulk stores. */
    k_bwgmma<Epi, false><<<unsigned(grid), kThreads, kSmem, st->stream>>>(
        ma, mb, ma, a.popc, b.popc, m, n, nk, gx, tiles, epi);
    PK_CU_LAUNCH(ctx, "k_bwgmma launch");
    return PK_OK;
}

} // namespace bwgmma
} // namespace pk_cuda

#endif
