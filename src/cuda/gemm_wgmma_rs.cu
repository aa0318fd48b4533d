/* TF32 GEMM on Hopper with a row-contiguous operand read in place (op(B)
 * in NN and TN, op(A) in TT and in TN with m > n, where op(B) is packed):
 * register-sourced wgmma (see k_gemm_wgmma_rs below). NT, the packing
 * kernel and 3xTF32 are in gemm_wgmma.cu. */
#include "cuda/gemm.cuh"
#include "cuda/gemm_wgmma.cuh"

namespace pk_cuda {

namespace {

constexpr int kBK = kWgmmaBK, kThreadsWG = kWgmmaThreads;

/* m tiles per launch-order group: 8 of 256 rows, the 2048 rows of
 * k_gemm_wgmma's 16 of 128 (the CTAs resident at once share a few A and B
 * panels in L2). */
constexpr int kGroupM = 8;

/* TF32 with op(B) row-contiguous (NN, TN): op(B) is read as it lies, with
 * no packing pass. TF32 wgmma reads shared memory K-major only, so the
 * roles swap: the CTA computes C^T for a tile of 256 rows (m) x 128 columns
 * (n) of C. wgmma's B operand is the k-contiguous op(A) tile (256 rows,
 * 128-byte swizzle, as in k_gemm_wgmma); its A operand is op(B)^T, from
 * registers. The copy engine brings op(B)'s tile as it lies, as 4 boxes of
 * 32 k rows x 32 columns with the 128-byte swizzle (one unswizzled box 136
 * columns wide, padded for conflict-free loads, ran 15% slower at 4096^3). A
 * consumer warpgroup owns 64 columns of C (2 boxes, 32 a warp pair); lane
 * l = 4g + t of warp w holds wgmma rows g and g + 8, which stand for the
 * adjacent columns n and n + 1, so each fragment load and each store of C
 * is a pair. A warp's 8 column pairs are chunks {0, 1, 4, 5} (odd w: {2, 3,
 * 6, 7}) of its box rows: chunk c of k row r lies at c ^ r % 8, so the
 * lanes' 4 rows (t) spread them over all 8 chunks, conflict-free.
 *
 * TC (TT: op(A) row-contiguous, op(B) k-contiguous; TN with m > n, op(B)
 * packed k-contiguous): the same kernel on the problem C^T = op(B)^T
 * op(A)^T, its m and n and its operands exchanged by the caller; the
 * result goes to C transposed, by per-thread stores (a lane's pair is
 * then two adjacent columns of a row of C).
 *
 * Pipeline: one wgmma (a k step of 8) per commit group, its fragments
 * loaded just before it (after the previous step's wait) into one of four
 * register sets, two groups left in flight after each (cuBLAS's schedule).
 * In this form CUDA 13.0's ptxas keeps the wgmma asynchronous (SASS: each
 * HGMMA followed by WARPGROUP.DEPBAR.LE gsb0, 0x2; no C7513 / C7515 note,
 * which would mean every wgmma serialized). */
constexpr int kRsBM = kWgmmaRsBM, kRsBN = 128, kRsStages = 4;
constexpr int kRsABytes = kRsBM * kBK * 4, kRsBBytes = kBK * kRsBN * 4;
constexpr int kRsStageBytes = kRsABytes + kRsBBytes; /* 48 KiB */
static_assert(kRsStageBytes % 1024 == 0 && kRsABytes % 1024 == 0,
              "128-byte swizzled tiles need 1024-byte alignment");
static_assert(kRsBM * kRsBN * 4 <= kRsStages * kRsStageBytes, "C boxes fit in the stages");
constexpr size_t kRsSmem = size_t(kRsStages) * kRsStageBytes + 1024 + 2 * kRsStages * 8;

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
/* c[0] (and c[1] when two) = v + beta c (beta = 0: c not read); pair: one
 * 8-byte access (c 8-byte aligned). */
__device__ __forceinline__ void store_pair(float *c, bool two, bool pair, float v0, float v1,
                                           float beta)
{
    if (two && pair) {
        if (beta != 0.f) {
            const float2 old = *reinterpret_cast<const float2 *>(c);
            v0 = __fmaf_rn(beta, old.x, v0), v1 = __fmaf_rn(beta, old.y, v1);
        }
        *reinterpret_cast<float2 *>(c) = make_float2(v0, v1);
    } else {
        c[0] = beta == 0.f ? v0 : __fmaf_rn(beta, c[0], v0);
        if (two) c[1] = beta == 0.f ? v1 : __fmaf_rn(beta, c[1], v1);
    }
}
#endif

template <bool TC>
__global__ void __launch_bounds__(kThreadsWG, 1)
    k_gemm_wgmma_rs(const __grid_constant__ CUtensorMap ma, const __grid_constant__ CUtensorMap mb,
                    const __grid_constant__ CUtensorMap mc, Prob<float> p, int mt, int group,
                    int store_c)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    using namespace sm90;
    constexpr int kConsumerWarps = 8, kSteps = kBK / 8;
    constexpr int kRsPending = 2;         /* wgmma groups left in flight */
    constexpr int kRsBox = kBK * 32 * 4; /* bytes of a 32 x 32 box of op(B) */
    static_assert(kRsPending >= 1 && kRsPending < kSteps, "a register set is rewritten kSteps on");
    extern __shared__ unsigned char smem_raw[];
    unsigned char *smem = reinterpret_cast<unsigned char *>(
        (reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
    uint64_t *full = reinterpret_cast<uint64_t *>(smem + kRsStages * kRsStageBytes);
    uint64_t *empty = full + kRsStages;
    auto a_tile = [&](int s) { return smem + s * kRsStageBytes; };
    auto b_tile = [&](int s) { return a_tile(s) + kRsABytes; };

    const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
    const int2 tile = grouped_tile(int(blockIdx.x), int(gridDim.x), mt, group);
    const int m0 = tile.x * kRsBM, n0 = tile.y * kRsBN;
    const int nk = int((p.k + kBK - 1) / kBK);
    if (threadIdx.x == 0) {
        for (int s = 0; s < kRsStages; s++) {
            mbar_init(&full[s], 1);
            mbar_init(&empty[s], kConsumerWarps);
        }
        mbar_init_fence();
    }
    __syncthreads();

    if (wg == 0) { /* producer */
        cut_max_regs<40>();
        if (tid == 0) {
            tma_prefetch_map(&ma);
            tma_prefetch_map(&mb);
            for (int kt = 0; kt < nk; kt++) {
                const int s = kt % kRsStages;
                if (kt >= kRsStages) mbar_wait(&empty[s], ((kt / kRsStages) & 1) ^ 1);
                mbar_expect_tx(&full[s], kRsStageBytes);
                tma_load(a_tile(s), &ma, kt * kBK, m0, &full[s]);
#pragma unroll
                for (int b = 0; b < kRsBN / 32; b++)
                    tma_load(b_tile(s) + b * kRsBox, &mb, n0 + 32 * b, kt * kBK, &full[s]);
            }
        }
        return;
    }
    set_max_regs<232>();
    const int w = tid / 32, l = tid % 32, g = l / 4, t = l % 4;
    const int chunk = (g / 2 < 2 ? g / 2 : g / 2 + 2) + 2 * (w % 2);
    const int box = 2 * (wg - 1) + w / 2;                 /* of op(B)'s and of C's */
    const int nl = 32 * box + 4 * chunk + 2 * (g % 2); /* columns n0 + nl, + 1 */
    /* Byte offsets in the B tile of k rows t and t + 4 (+ 8j for step j). */
    const uint32_t at = uint32_t(box) * kRsBox + 8 * (g % 2);
    const uint32_t row_t = at + t * 128 + ((chunk ^ t) << 4);
    const uint32_t row_t4 = at + (t + 4) * 128 + ((chunk ^ (t + 4)) << 4);
    const bool signal = (tid & 31) == 0;
    float acc[128];
#pragma unroll
    for (int i = 0; i < 128; i++) acc[i] = 0.f;
    reg_fence(acc);
    wgmma_fence();
    uint32_t f[kSteps][4]; /* a register set a k step of the slice */
    for (int kt = 0; kt < nk; kt++) {
        const int s = kt % kRsStages;
        mbar_wait(&full[s], (kt / kRsStages) & 1);
        const uint32_t bs = saddr(b_tile(s));
        const uint64_t db = kmajor_desc(a_tile(s));
#pragma unroll
        for (int j = 0; j < kSteps; j++) {
            /* Columns nl, nl + 1 at k = 8j + t (f[j][0..1]) and 8j + t + 4. */
            lds_u32x2(bs + row_t + 1024 * j, f[j][0], f[j][1]);
            lds_u32x2(bs + row_t4 + 1024 * j, f[j][2], f[j][3]);
            wgmma_fence();
            wgmma_rs_n256(acc, f[j], db + 2 * j); /* +32 bytes = 8 floats of k */
            wgmma_commit();
            wgmma_wait<kRsPending>();
            /* Slice kt - 1's last wgmma (kRsPending + j steps back) is done. */
            if (j == kRsPending - 1 && kt > 0 && signal) mbar_arrive(&empty[(kt - 1) % kRsStages]);
        }
    }
    wgmma_wait<0>();
    reg_fence(acc);

    if constexpr (TC) { /* C^T: acc[4j + 2h + e] is C[n0 + nl + h][m0 + 8j + 2t + e] */
        const bool pairs = uintptr_t(p.c) % 8 == 0 && p.ldc % 2 == 0; /* columns are even */
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int64_t row = int64_t(n0) + nl + h;
            if (row >= p.n) continue;
            float *crow = p.c + row * p.ldc;
#pragma unroll
            for (int j = 0; j < kRsBM / 8; j++) {
                const int64_t col = int64_t(m0) + 8 * j + 2 * t;
                if (col >= p.m) continue;
                store_pair(crow + col, col + 1 < p.m, pairs, p.alpha * acc[4 * j + 2 * h],
                           p.alpha * acc[4 * j + 2 * h + 1], p.beta);
            }
        }
        return;
    }
    /* acc[4j + 2h + e]: column n0 + nl + h of C, row m0 + 8j + 2t + e. */
    if (store_c) {
        /* As in k_gemm_wgmma (the same reasoning about the stages): boxes of
         * 256 rows x 32 columns, 128-byte swizzle; this lane's pair is byte
         * 8 (g % 2) of `chunk` of its rows (rows 2t + e spread the warp's
         * chunks over all 8 as above: conflict-free). */
        consumers_sync();
        const uint32_t cbox = saddr(smem) + uint32_t(box) * (kRsBM * 128) + 8 * (g % 2);
#pragma unroll
        for (int j = 0; j < kRsBM / 8; j++)
#pragma unroll
            for (int e = 0; e < 2; e++) {
                const int r = 8 * j + 2 * t + e;
                sts_f32x2(cbox + r * 128 + ((chunk ^ (r & 7)) << 4), p.alpha * acc[4 * j + e],
                          p.alpha * acc[4 * j + 2 + e]);
            }
        fence_proxy_async();
        wg_sync(wg);
        if (tid == 0) {
            unsigned char *half = smem + 2 * (wg - 1) * (kRsBM * 128);
#pragma unroll
            for (int b = 0; b < 2; b++)
                tma_store(&mc, n0 + (wg - 1) * 64 + 32 * b, m0, half + b * (kRsBM * 128));
            bulk_commit();
            bulk_wait_read<0>();
        }
        return;
    }
    const int64_t n = int64_t(n0) + nl;
    const int nv = n + 1 < p.n ? 2 : n < p.n ? 1 : 0; /* columns inside */
    if (!nv) return;
    const bool pairs = nv == 2 && (uintptr_t(p.c) % 8 == 0) && p.ldc % 2 == 0;
#pragma unroll
    for (int j = 0; j < kRsBM / 8; j++)
#pragma unroll
        for (int e = 0; e < 2; e++) {
            const int64_t gm = int64_t(m0) + 8 * j + 2 * t + e;
            if (gm >= p.m) continue;
            store_pair(p.c + gm * p.ldc + n, nv == 2, pairs, p.alpha * acc[4 * j + e],
                       p.alpha * acc[4 * j + 2 + e], p.beta);
        }
#else
    /* Built without sm_90a code: never launched (gemm_wgmma_usable). */
    __trap();
#endif
}

} // namespace

pk_status gemm_wgmma_rs_launch(pk_ctx *ctx, const Prob<float> &p, const CUtensorMap &ma,
                               bool c_transposed)
{
    State *s = state(ctx);
    pk_status st;
    CUtensorMap mb, mc;
    /* op(B) as it lies: k rows x n columns, boxes of 32 x 32. */
    if ((st = tensor_map_2d(ctx, &mb, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, p.b.p, p.k, p.n,
                            p.b.ld * 4, 32, kBK)))
        return st;
    const int store_c = !c_transposed && p.beta == 0.f && p.c_vec;
    mc = ma;
    if (store_c && (st = tensor_map_2d(ctx, &mc, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, p.c, p.m, p.n,
                                       p.ldc * 4, 32, kRsBM)))
        return st;
    auto k = c_transposed ? k_gemm_wgmma_rs<true> : k_gemm_wgmma_rs<false>;
    PK_CU(ctx, cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kRsSmem)));
    /* Launch order as k_gemm_wgmma's: groups of kGroupM m tiles. */
    const int64_t mt = (p.m + kRsBM - 1) / kRsBM, nt = (p.n + kRsBN - 1) / kRsBN;
    k<<<unsigned(mt * nt), kThreadsWG, kRsSmem, s->stream>>>(ma, mb, mc, p, int(mt), kGroupM,
                                                             store_c);
    PK_CU_LAUNCH(ctx, "k_gemm_wgmma_rs launch");
    return PK_OK;
}

} // namespace pk_cuda
