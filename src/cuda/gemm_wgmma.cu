/* TF32 and 3xTF32 GEMM on Hopper's warpgroup tensor cores: wgmma
 * m64nNk8 TF32 fed by the bulk tensor copy engine (TMA) through a
 * multi-stage mbarrier pipeline.
 *
 * TF32 wgmma reads shared-memory operands K-major (k contiguous within a
 * row of op(A) and of op(B)^T): A not transposed and B transposed are used
 * in place when TMA can take them (16-byte aligned, ld a multiple of 4);
 * any other operand is first packed by k_pack into k-contiguous scratch (a
 * tiled transpose, ld rounded up to 4), except, in TF32 mode, a
 * row-contiguous op(B) (NN, TN) or op(A) (TT; TN with m > n) fit for
 * TMA: gemm_wgmma_rs.cu reads that one in place, from registers. TF32 mode
 * feeds the raw FP32 values, which the tensor cores truncate to TF32.
 *
 * 3xTF32 needs each operand as big = tf32_rna(x) and small = tf32_rna(x -
 * big) (a raw value would be truncated). B is split by k_pack into two
 * arrays; A arrives raw like TF32's and is split in registers: its
 * fragments are loaded from the shared tile and fed to register-sourced
 * wgmma (half the packing traffic, and a 48 KiB stage instead of 64).
 *
 * Block: 384 threads = a producer warpgroup (one thread issues the TMA
 * copies; registers cut to 40) and 2 consumer warpgroups (registers raised
 * to 232), each computing a 64 x BN half of the 128 x BN tile of C. A
 * stage holds a 32-deep k slice (32 floats = 128 bytes = one swizzle row)
 * of each tile: TF32 BN = 256, 3xTF32 BN = 128 with B's big and small
 * tiles; both 4 stages of 48 KiB. The edges of m, n and k arrive as zeros
 * from the copy engine (its out-of-range fill). With beta = 0 and C fit for
 * the copy engine, C leaves through shared memory by bulk tensor stores
 * (the stages are free by then); otherwise by per-thread stores.
 *
 * 3xTF32 sums each k slice on the tensor cores from zero (small*big +
 * big*small + big*big) and adds it to FP32 accumulators with
 * round-to-nearest adds, as the mma.sync kernel does (gemm_tc.cu): the
 * tensor cores' own accumulation is not round-to-nearest. */
#include "cuda/gemm.cuh"
#include "cuda/gemm_wgmma.cuh"

#include <cuda.h> /* CUtensorMap types only: the driver is reached through cudart */

#include <atomic>

namespace pk_cuda {

namespace {

constexpr int kBM = 128, kBK = kWgmmaBK, kThreadsWG = kWgmmaThreads;

/* CTAs per cluster along m. 2: a pair shares its B tile, each CTA loading
 * half of it and multicasting it to both (a third less L2 -> SM traffic);
 * measured slower on an H200 (TF32 4096^3 in place 348 vs 358 TFLOP/s,
 * 3xTF32 98 vs 109), so off by default: the limit is not L2 bandwidth.
 * Build-time switch (-DPK_WGMMA_CLUSTER=2) for further measurements. */
#ifndef PK_WGMMA_CLUSTER
#define PK_WGMMA_CLUSTER 1
#endif
constexpr int kCluster = PK_WGMMA_CLUSTER;
static_assert(kCluster == 1 || kCluster == 2, "PK_WGMMA_CLUSTER: 1 or 2");

template <bool SPLIT> struct Cfg {
    static constexpr int BN = SPLIT ? 128 : 256;
    static constexpr int Stages = 4;
    static constexpr int BParts = SPLIT ? 2 : 1; /* B big (+ small) tiles */
    static constexpr int ABytes = kBM * kBK * 4, BBytes = BN * kBK * 4;
    static constexpr int StageBytes = ABytes + BParts * BBytes;
    static constexpr size_t Smem = size_t(Stages) * StageBytes + 1024 + 2 * Stages * 8;
};

/* One tile of C per CTA; maps: A, B big, B small (B boxes of BN / CL rows),
 * and C (boxes of 64 rows x 32 columns) used when store_c: beta = 0 and C
 * fit for the copy engine. mt: m tiles (a multiple of CL). Launch order:
 * groups of `group` m tiles (a multiple of CL) are walked n tile by n
 * tile, m fastest, so that the CTAs resident at once share a few A and B
 * panels in L2 rather than reading every A panel. skip: FP32_ACCURATE's
 * guard (gemm.cu), or null. CL: CTAs per cluster (along m). */
template <bool SPLIT, int CL>
__global__ void __launch_bounds__(kThreadsWG, 1)
    k_gemm_wgmma(const __grid_constant__ CUtensorMap ma, const __grid_constant__ CUtensorMap mb,
                 const __grid_constant__ CUtensorMap mbs, const __grid_constant__ CUtensorMap mc,
                 Prob<float> p, int mt, int group, int store_c, const int *skip)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    using namespace sm90;
    using C = Cfg<SPLIT>;
    if (skip && flag_raised(skip)) return; /* FP32_ACCURATE's guard (gemm.cu) */
    constexpr int kAcc = C::BN / 2;     /* accumulators a consumer thread */
    constexpr int kConsumerWarps = 8;   /* arrivals of a CTA that release a stage */
    constexpr int kBHalf = C::BBytes / CL; /* the part of a B tile one CTA loads */
    extern __shared__ unsigned char smem_raw[];
    /* The 128-byte swizzle needs 1024-byte aligned tiles. */
    unsigned char *smem = reinterpret_cast<unsigned char *>(
        (reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
    uint64_t *full = reinterpret_cast<uint64_t *>(smem + C::Stages * C::StageBytes);
    uint64_t *empty = full + C::Stages;
    /* Stage s: [A][B big][B small] (the small tile with SPLIT). */
    auto a_tile = [&](int s) { return smem + s * C::StageBytes; };
    auto b_tile = [&](int s, int part) {
        return smem + s * C::StageBytes + C::ABytes + part * C::BBytes;
    };

    const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
    const int2 tile = grouped_tile(int(blockIdx.x), int(gridDim.x), mt, group);
    const int m0 = tile.x * kBM, n0 = tile.y * C::BN;
    const int nk = int((p.k + kBK - 1) / kBK);
    const uint32_t rank = CL > 1 ? cluster_rank() : 0;

    if (threadIdx.x == 0) {
        for (int s = 0; s < C::Stages; s++) {
            mbar_init(&full[s], 1);
            /* With clusters a stage is rewritten (multicast) in every CTA of
             * the cluster: every CTA's consumers must have released it. */
            mbar_init(&empty[s], kConsumerWarps * CL);
        }
        mbar_init_fence();
    }
    if (CL > 1)
        cluster_sync(); /* the peers' barriers exist before any copy or arrival */
    else
        __syncthreads();

    if (wg == 0) { /* producer */
        cut_max_regs<40>();
        if (tid == 0) {
            tma_prefetch_map(&ma);
            tma_prefetch_map(&mb);
            for (int kt = 0; kt < nk; kt++) {
                const int s = kt % C::Stages;
                /* Round r of stage s waits until the consumers released round r - 1. */
                if (kt >= C::Stages) mbar_wait(&empty[s], ((kt / C::Stages) & 1) ^ 1);
                mbar_expect_tx(&full[s], C::StageBytes);
                tma_load(a_tile(s), &ma, kt * kBK, m0, &full[s]);
                if (CL == 1) {
                    tma_load(b_tile(s, 0), &mb, kt * kBK, n0, &full[s]);
                    if (SPLIT) tma_load(b_tile(s, 1), &mbs, kt * kBK, n0, &full[s]);
                } else { /* rows rank * BN / CL .. of B, to every CTA */
                    const int nb = n0 + int(rank) * (C::BN / CL);
                    const uint16_t all = (1u << CL) - 1;
                    tma_load_mc(b_tile(s, 0) + rank * kBHalf, &mb, kt * kBK, nb, &full[s], all);
                    if (SPLIT)
                        tma_load_mc(b_tile(s, 1) + rank * kBHalf, &mbs, kt * kBK, nb, &full[s],
                                    all);
                }
            }
        }
    } else { /* consumers: rows 64 * (wg - 1) .. + 64 of the tile */
        set_max_regs<232>();
        const int arow = (wg - 1) * 64 * kBK * 4; /* byte offset of the half in A */
        const bool signal = (tid & 31) == 0;
        const int w = tid / 32, l = tid % 32;
        const int frow = (wg - 1) * 64 + 16 * w + l / 4; /* SPLIT: this lane's A rows */
        /* A warp's lane 0 releases a stage in every CTA of the cluster. */
        auto release = [&](int s) {
            if (CL == 1)
                mbar_arrive(&empty[s]);
            else
#pragma unroll
                for (int r = 0; r < CL; r++) mbar_arrive_cluster(&empty[s], uint32_t(r));
        };
        float acc[kAcc];
#pragma unroll
        for (int i = 0; i < kAcc; i++) acc[i] = 0.f;
        float part[SPLIT ? kAcc : 1];

        for (int kt = 0; kt < nk; kt++) {
            const int s = kt % C::Stages;
            mbar_wait(&full[s], (kt / C::Stages) & 1);
            const uint64_t db = kmajor_desc(b_tile(s, 0));
            if constexpr (SPLIT) {
                const uint64_t dbs = kmajor_desc(b_tile(s, 1));
                /* A from registers, split here: big = tf32(x), small =
                 * tf32(x - big) (raw values would be truncated). Element i
                 * of step kk's fragment is row frow + 8 (i % 2), k = 8 kk +
                 * l % 4 + 4 (i / 2) of the swizzled tile (row + 8: the same
                 * swizzle, 1024 bytes on); row % 8 = l / 4, so a load's
                 * lanes hit 8 chunks x 4 words: conflict-free. */
                uint32_t big[kBK / 8][4], small[kBK / 8][4];
                const uint32_t at = saddr(a_tile(s));
#pragma unroll
                for (int kk = 0; kk < kBK / 8; kk++)
#pragma unroll
                    for (int i = 0; i < 4; i++) {
                        const int k = 8 * kk + l % 4 + 4 * (i / 2);
                        const float x = lds_f32(at + swz128(frow, 4 * k) + 1024 * (i % 2));
                        const float b = tf32_rna(x);
                        big[kk][i] = __float_as_uint(b);
                        small[kk][i] = __float_as_uint(tf32_rna(x - b));
                    }
                reg_fence(part);
                wgmma_fence();
#pragma unroll
                for (int kk = 0; kk < kBK / 8; kk++) { /* +32 bytes = 8 floats of k */
                    wgmma_rs_n128(part, small[kk], db + 2 * kk, kk);
                    wgmma_rs_n128(part, big[kk], dbs + 2 * kk, 1);
                    wgmma_rs_n128(part, big[kk], db + 2 * kk, 1);
                }
                wgmma_commit();
                wgmma_wait<0>();
                reg_fence(part);
#pragma unroll
                for (int kk = 0; kk < kBK / 8; kk++) reg_fence(big[kk]), reg_fence(small[kk]);
                if (signal) release(s);
#pragma unroll
                for (int i = 0; i < kAcc; i++) acc[i] = __fadd_rn(acc[i], part[i]);
            } else {
                const uint64_t da = kmajor_desc(a_tile(s) + arow);
                reg_fence(acc);
                wgmma_fence();
#pragma unroll
                for (int kk = 0; kk < kBK / 8; kk++) wgmma_n256(acc, da + 2 * kk, db + 2 * kk, 1);
                wgmma_commit();
                reg_fence(acc);
                /* Keep this slice's group in flight; the previous one is done. */
                wgmma_wait<1>();
                if (kt > 0 && signal) release((kt - 1) % C::Stages);
            }
        }
        wgmma_wait<0>();
        reg_fence(acc);

        /* Epilogue: acc[4j + 2h + e] is row 16w + l/4 + 8h, column 8j + 2(l%4) + e. */
        if (store_c) {
            /* Through shared memory and the copy engine. The producer
             * issues exactly nk loads and both warpgroups have waited for
             * all nk, so once both are past their last wgmma no stage is
             * read or written any more (a producer that loads past the
             * last slice, or a persistent grid, must change this:
             * racecheck does not see the copy engine's writes). Each
             * warpgroup lays its 64 x BN half there as boxes of 64 rows x
             * 128 bytes with the 128-byte swizzle (swz128: a store's 8 rows
             * hit 8 chunks), which one thread then stores. The copy engine
             * clips the boxes at m and n. */
            consumers_sync();
            const uint32_t half = saddr(smem) + uint32_t(wg - 1) * (64 * C::BN * 4);
#pragma unroll
            for (int j = 0; j < C::BN / 8; j++)
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    const int r = 16 * w + l / 4 + 8 * h, col = 8 * (j % 4) + 2 * (l % 4);
                    sts_f32x2(half + (j / 4) * 8192 + swz128(r, 4 * col),
                              p.alpha * acc[4 * j + 2 * h], p.alpha * acc[4 * j + 2 * h + 1]);
                }
            fence_proxy_async();
            wg_sync(wg);
            if (tid == 0) {
                unsigned char *box = smem + (wg - 1) * (64 * C::BN * 4);
#pragma unroll
                for (int b = 0; b < C::BN / 32; b++)
                    tma_store(&mc, n0 + 32 * b, m0 + (wg - 1) * 64, box + b * 8192);
                bulk_commit();
                bulk_wait_read<0>(); /* shared memory lives until the copy has read it */
            }
        } else {
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int64_t gm = int64_t(m0) + (wg - 1) * 64 + w * 16 + l / 4 + 8 * h;
                if (gm >= p.m) continue;
                float *crow = p.c + gm * p.ldc;
#pragma unroll
                for (int j = 0; j < C::BN / 8; j++)
#pragma unroll
                    for (int e = 0; e < 2; e++) {
                        const int64_t gn = int64_t(n0) + j * 8 + 2 * (l % 4) + e;
                        if (gn >= p.n) continue;
                        const float v = p.alpha * acc[4 * j + 2 * h + e];
                        crow[gn] = p.beta == 0.f ? v : __fmaf_rn(p.beta, crow[gn], v);
                    }
            }
        }
    }
    if (CL > 1) { /* no CTA leaves while a peer may still arrive on its barriers */
        __syncwarp();
        cluster_sync();
    }
#else
    /* Built without sm_90a code: never launched (gemm_wgmma_usable). */
    __trap();
#endif
}

/* Packs an operand (rows x K, k-contiguous or not) k-contiguous with leading
 * dimension ldp: x as is, or with SPLIT big = tf32(x) and small =
 * tf32(x - big). 32 x 32 tiles through shared memory, 32 x 8 threads. ROT
 * (not with SPLIT) stores each group of 4 along k rotated, position q
 * holding element (q + 1) % 4 of the group, and zeros in the last group's
 * positions past K (the B operand of gemm_simt_tma.cu's 256 x 128 tile). */
template <bool KC, bool SPLIT, bool ROT = false>
__global__ void k_pack(Opnd<float> o, int64_t rows, int64_t K, float *big, float *small,
                       int64_t ldp)
{
    static_assert(!(ROT && SPLIT), "ROT packs one array");
    __shared__ float t[32][33]; /* [row][k] */
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int64_t tiles_k = (K + 31) / 32, tiles_r = (rows + 31) / 32;
    /* Tile (rt, kt) = tile number rt * tiles_k + kt, stepped by gridDim.x
     * with a carry: a division and remainder a thread instead of a tile. */
    const int64_t step_r = gridDim.x / tiles_k, step_k = gridDim.x % tiles_k;
    int64_t rt = blockIdx.x / tiles_k, kt = blockIdx.x % tiles_k;
    while (rt < tiles_r) {
        const int64_t r0 = rt * 32, k0 = kt * 32;
        for (int i = ty; i < 32; i += 8) {
            /* Coalesced along the contiguous dimension of the source. */
            const int64_t r = KC ? r0 + i : r0 + tx, kk = KC ? k0 + tx : k0 + i;
            const float v = r < rows && kk < K ? (KC ? o.p[r * o.ld + kk] : o.p[kk * o.ld + r]) : 0.f;
            if (KC)
                t[i][tx] = v;
            else
                t[tx][i] = v;
        }
        __syncthreads();
        for (int i = ty; i < 32; i += 8) {
            const int64_t r = r0 + i, kk = k0 + tx;
            if (r >= rows || kk >= (ROT ? (K + 3) / 4 * 4 : K)) continue;
            const float x = t[i][tx];
            if (ROT) {
                big[r * ldp + ((kk & ~int64_t(3)) | ((kk + 3) & 3))] = x;
            } else if (SPLIT) {
                const float b = tf32_rna(x);
                big[r * ldp + kk] = b;
                small[r * ldp + kk] = tf32_rna(x - b);
            } else {
                big[r * ldp + kk] = x;
            }
        }
        __syncthreads();
        rt += step_r, kt += step_k;
        if (kt >= tiles_k) kt -= tiles_k, rt++;
    }
}

/* Tensor map of a k-contiguous rows x K float operand (p, ld floats), box
 * 32 (k) x box_rows, 128-byte swizzle, zeros out of range. */
pk_status make_map(pk_ctx *ctx, CUtensorMap *m, const float *p, int64_t rows, int64_t K,
                   int64_t ld, int box_rows)
{
    return tensor_map_2d(ctx, m, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, p, rows, K, ld * 4, kBK,
                         box_rows);
}

/* One operand as the kernel reads it: the k-contiguous big (and small)
 * arrays, packed into scratch when needed (freed stream-ordered). */
struct Packed {
    DevScratch mem;
    const float *big = nullptr, *small = nullptr;
    int64_t ld = 0;
    explicit Packed(State *st) : mem(st) {}
};

/* k_pack over the whole operand on the context's stream (rot: k_pack's
 * ROT, without split). */
pk_status launch_pack(pk_ctx *ctx, const Opnd<float> &o, bool kc, bool split, int64_t rows,
                      int64_t K, float *big, float *small, int64_t ldp, bool rot = false)
{
    const int64_t tiles = (rows + 31) / 32 * ((K + 31) / 32);
    const unsigned blocks = unsigned(tiles < 65536 ? tiles : 65536);
    const dim3 threads(32, 8);
    cudaStream_t stream = state(ctx)->stream;
    if (rot)
        kc ? k_pack<true, false, true><<<blocks, threads, 0, stream>>>(o, rows, K, big, small, ldp)
           : k_pack<false, false, true><<<blocks, threads, 0, stream>>>(o, rows, K, big, small, ldp);
    else if (kc)
        split ? k_pack<true, true><<<blocks, threads, 0, stream>>>(o, rows, K, big, small, ldp)
              : k_pack<true, false><<<blocks, threads, 0, stream>>>(o, rows, K, big, small, ldp);
    else
        split ? k_pack<false, true><<<blocks, threads, 0, stream>>>(o, rows, K, big, small, ldp)
              : k_pack<false, false><<<blocks, threads, 0, stream>>>(o, rows, K, big, small, ldp);
    PK_CU_LAUNCH(ctx, "k_pack launch");
    return PK_OK;
}

bool tma_ok(const Opnd<float> &o) { return aligned16(o.p) && o.ld % 4 == 0; }

pk_status prepare(pk_ctx *ctx, const Opnd<float> &o, bool kc, int64_t rows, int64_t K, bool split,
                  Packed *out)
{
    if (!split && kc && tma_ok(o)) {
        out->big = o.p, out->ld = o.ld;
        return PK_OK;
    }
    const int64_t ldp = (K + 3) / 4 * 4, elems = rows * ldp;
    pk_status st = dev_alloc(ctx, &out->mem.p, size_t(elems) * 4 * (split ? 2 : 1));
    if (st) return st;
    float *big = static_cast<float *>(out->mem.p), *small = split ? big + elems : nullptr;
    out->big = big, out->small = small, out->ld = ldp;
    return launch_pack(ctx, o, kc, split, rows, K, big, small, ldp);
}

/* m tiles per launch-order group (k_gemm_wgmma): 16 keeps the resident CTAs
 * (132 on an H100) on about 16 A panels and 8 B panels. */
constexpr int kGroupM = 16;
static_assert(kGroupM % kCluster == 0, "groups hold whole clusters");

/* PK_GEMM_TF32_PACK in the environment (read once): "always" packs every
 * operand that is not k-contiguous for k_gemm_wgmma, even where
 * k_gemm_wgmma_rs could read it in place (tests run both paths on their
 * shapes so; A/B timing); "a" or "b" makes TN pack op(A) or op(B) for
 * k_gemm_wgmma_rs whatever the shape (A/B timing of the choice below). */
enum Tf32Pack { kPackAuto, kPackAlways, kPackTnA, kPackTnB };
Tf32Pack tf32_pack_env()
{
    static const Tf32Pack mode = [] {
        static const Tf32Pack modes[] = {kPackAuto, kPackAlways, kPackTnA, kPackTnB};
        return modes[env_choice(PK__ENV_GEMM_TF32_PACK, {"always", "a", "b"})];
    }();
    return mode;
}

template <bool SPLIT>
pk_status launch(pk_ctx *ctx, const Prob<float> &p, bool ka, bool kb, const int *skip)
{
    using C = Cfg<SPLIT>;
    State *s = state(ctx);
    Packed a(s), b(s);
    pk_status st;
    CUtensorMap ma, mb, mbs;
    /* TF32 with a row-contiguous operand fit for the copy engine: read in
     * place, through registers, by k_gemm_wgmma_rs (gemm_wgmma_rs.cu), the
     * other operand packed unless it is k-contiguous already: op(B) in NN
     * and TN; op(A) in TT, as C^T = op(B)^T op(A)^T, and in TN when m > n,
     * so that TN packs the smaller operand (H200, TN 8192 x 256 x 4096:
     * 300-393 -> 92-98 us; at 4096^3 either side 459-544 us; same bits). */
    const Tf32Pack pack = tf32_pack_env();
    if (!SPLIT && pack != kPackAlways) {
        const bool b_rows = !kb && tma_ok(p.b), a_rows = !ka && tma_ok(p.a);
        const bool via_ct =
            a_rows && (!b_rows || (pack == kPackAuto ? p.m > p.n : pack == kPackTnB));
        if (b_rows && !via_ct) {
            if ((st = prepare(ctx, p.a, ka, p.m, p.k, false, &a)) ||
                (st = make_map(ctx, &ma, a.big, p.m, p.k, a.ld, kWgmmaRsBM)))
                return st;
            return gemm_wgmma_rs_launch(ctx, p, ma, false);
        }
        if (via_ct) {
            if ((st = prepare(ctx, p.b, kb, p.n, p.k, false, &b)) ||
                (st = make_map(ctx, &mb, b.big, p.n, p.k, b.ld, kWgmmaRsBM)))
                return st;
            Prob<float> t = p; /* C^T's problem; C, ldc, alpha, beta as they are */
            t.m = p.n, t.n = p.m, t.a = p.b, t.b = p.a;
            return gemm_wgmma_rs_launch(ctx, t, mb, true);
        }
    }
    /* A goes raw (3xTF32 splits it in registers), B packed k-contiguous
     * (split when SPLIT). */
    if ((st = prepare(ctx, p.a, ka, p.m, p.k, false, &a)) ||
        (st = prepare(ctx, p.b, kb, p.n, p.k, SPLIT, &b)))
        return st;
    if ((st = make_map(ctx, &ma, a.big, p.m, p.k, a.ld, kBM)) ||
        (st = make_map(ctx, &mb, b.big, p.n, p.k, b.ld, C::BN / kCluster)))
        return st;
    if (SPLIT) {
        if ((st = make_map(ctx, &mbs, b.small, p.n, p.k, b.ld, C::BN / kCluster))) return st;
    } else {
        mbs = mb;
    }
    /* C through the copy engine: beta = 0 (C is not read) and C 16-byte
     * aligned with ldc a multiple of 4 (p.c_vec). */
    const int store_c = p.beta == 0.f && p.c_vec;
    CUtensorMap mc = ma;
    if (store_c && (st = tensor_map_2d(ctx, &mc, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, p.c, p.m, p.n,
                                       p.ldc * 4, 32, 64)))
        return st;
    auto k = k_gemm_wgmma<SPLIT, kCluster>;
    PK_CU(ctx, cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, int(C::Smem)));
    /* m tiles rounded up to whole clusters (a spare CTA reads zeros and
     * writes nothing); one CTA a tile, in k_gemm_wgmma's order. */
    const int64_t mt = ((p.m + kBM - 1) / kBM + kCluster - 1) / kCluster * kCluster;
    const int64_t nt = (p.n + C::BN - 1) / C::BN;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(unsigned(mt * nt));
    cfg.blockDim = dim3(kThreadsWG);
    cfg.dynamicSmemBytes = C::Smem;
    cfg.stream = s->stream;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = kCluster;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    PK_CU(ctx, cudaLaunchKernelEx(&cfg, k, ma, mb, mbs, mc, p, int(mt), kGroupM, store_c, skip));
    PK_CU_LAUNCH(ctx, "k_gemm_wgmma launch");
    return PK_OK;
}

} // namespace

/* cuTensorMapEncodeTiled through the runtime's driver entry point (no link
 * against libcuda); nullptr when the driver lacks it. */
using EncodeTiled = CUresult (*)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
                                 const cuuint64_t *, const cuuint64_t *, const cuuint32_t *,
                                 const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,
                                 CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

static EncodeTiled encode_fn()
{
    static std::atomic<void *> fn{nullptr};
    void *f = fn.load(std::memory_order_acquire);
    if (!f) {
        cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault,
                                             &q) != cudaSuccess ||
            q != cudaDriverEntryPointSuccess) {
            (void)cudaGetLastError();
            f = nullptr;
        }
        if (f) fn.store(f, std::memory_order_release);
    }
    return reinterpret_cast<EncodeTiled>(f);
}

bool tensor_maps_available() { return encode_fn() != nullptr; }

pk_status tensor_map_2d(pk_ctx *ctx, CUtensorMap *m, CUtensorMapDataType type, const void *p,
                        int64_t rows, int64_t inner, int64_t ld_bytes, int box_inner,
                        int box_rows, CUtensorMapSwizzle swizzle)
{
    const cuuint64_t dims[2] = {cuuint64_t(inner), cuuint64_t(rows)};
    const cuuint64_t strides[1] = {cuuint64_t(ld_bytes)};
    const cuuint32_t box[2] = {cuuint32_t(box_inner), cuuint32_t(box_rows)};
    const cuuint32_t estr[2] = {1, 1};
    EncodeTiled enc = encode_fn();
    if (!enc) return pk__fail(ctx, PK_ERR_DEVICE, "cuTensorMapEncodeTiled is not available");
    const CUresult r = enc(m, type, 2, const_cast<void *>(p), dims, strides, box, estr,
                           CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                           CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS)
        return pk__fail(ctx, PK_ERR_DEVICE, "cuTensorMapEncodeTiled failed (%d)", int(r));
    return PK_OK;
}

pk_status transpose_f32(pk_ctx *ctx, const float *src, int64_t ld, int64_t rows, int64_t cols,
                        float *dst, int64_t ldd)
{
    /* src read as a cols x rows operand that is not k-contiguous: its
     * element (r, kk) is src[kk * ld + r], written to dst[r * ldd + kk]. */
    return launch_pack(ctx, Opnd<float>{src, ld, false}, false, false, cols, rows, dst, nullptr,
                       ldd);
}

pk_status rotated_rows_f32(pk_ctx *ctx, const Opnd<float> &b, bool kb, int64_t K, int64_t n,
                           float *dst, int64_t ldd)
{
    /* dst's rows are k and its columns op(B)'s: a plain copy when B is
     * row-contiguous (k_pack's k-contiguous case), else a transpose. */
    if (ldd < (n + 3) / 4 * 4)
        return pk__fail(ctx, PK_ERR_INTERNAL, "rotated_rows_f32: ldd below n rounded up to 4");
    return launch_pack(ctx, b, !kb, false, K, n, dst, nullptr, ldd, true);
}

bool gemm_wgmma_usable(pk_ctx *ctx, const Prob<float> &p)
{
#if defined(PK_CUDA_HAVE_SM90A)
    const State *s = state(ctx);
    /* Coordinates are 32-bit for the copy engine; the grid (one CTA a
     * 128 x 128 tile at most) stays below 2^31 CTAs. Small problems stay on
     * mma.sync (no packing, no scratch). */
    const int64_t lim = int64_t(1) << 30;
    return s->cc_major == 9 && s->cc_minor == 0 && p.m < lim && p.n < lim && p.k < lim &&
           (p.m / 128 + 2) * (p.n / 128 + 1) < (int64_t(1) << 31) && p.m >= 64 && p.n >= 64 &&
           p.k >= 16 &&
           double(p.m) * double(p.n) * double(p.k) >= 0x1p22 && /* no overflow */
           tensor_maps_available();
#else
    (void)ctx, (void)p;
    return false;
#endif
}

pk_status gemm_wgmma_f32(pk_ctx *ctx, const Prob<float> &p, bool ka, bool kb, bool split,
                         const int *skip)
{
    return split ? launch<true>(ctx, p, ka, kb, skip) : launch<false>(ctx, p, ka, kb, skip);
}

} // namespace pk_cuda
