/* FP32 GEMM on the CUDA cores with its tiles brought by the tensor copy
 * engine (sm_90a): the SIMT kernel's 128 x 128 tile, 256 threads and lane
 * layout (gemm_simt.cuh: 8 x 8 a lane, four 16-byte shared loads and 64
 * FMAs a k step, fragments double-buffered), but the k slices arrive in a
 * ring of kStages shared-memory stages, kBKT deep, each filled by two
 * cp.async.bulk.tensor copies (one, and a raw slice: below) that one
 * thread issues and that complete on the stage's mbarrier. In the k loop
 * the other threads load nothing from global memory, stage nothing through
 * registers and compute no addresses for it, and pass one barrier a slice
 * (32 k steps instead of 8).
 *
 * Why: a probe that fed the same loop from a shared tile that never
 * changes ran 4096^3 in 2.55-2.64 ms on an H100, 1.02-1.07x cuBLAS
 * PEDANTIC, while the register-staged kernel took 3.05 ms (0.87x): the
 * loss was in the feeding, not in the FMA loop. Fed by the copy engine the
 * loop ran 2.75 ms (0.97x).
 *
 * Layout: op(A) and op(B) both row-contiguous (TN: A^T is k x m, B is
 * k x n), as the copies need rows of 16-byte multiples in place; NN, NT and
 * TT come here after the caller's row-contiguous copies, the 256 x 128
 * tile's NN as C^T (gemm_simt.cu: big_tile_plan, row_copy_pays), or (the
 * 128 x 128 tile) with one k-contiguous operand as it lies (RAW, below).
 * The copies fill rows and columns past the matrix with zeros, so any m, n
 * and k runs with no guards in the loop: k is padded to a multiple of 32
 * with 0 * 0 terms, as the staged kernel pads it to a multiple of 8. Each C
 * element is the same chain of FMAs in k order as in the staged kernel, so
 * the same bits, but for one case: an exact sum of -0 (all its products -0)
 * with k a multiple of 8 but not of 32 comes out +0 here (-0 + 0 is +0).
 *
 * Two tiles (Tile<BIG>):
 * - 128 x 128: 8 warps of 64 x 32 (2 x 4), lanes of 8 x 8, 3 stages of 32
 *   KiB, 2 blocks an SM; C stored from registers (store_c_tile).
 * - 256 x 128 (BIG): cuBLAS's warp shape, 8 warps of 64 x 64 (4 x 2), lanes
 *   of 8 x 16 (six 16-byte shared loads per 128 FMAs instead of four per
 *   64), 4 stages of 48 KiB, one block an SM. B arrives with each group of
 *   4 columns rotated (rotated_rows_f32; the FMA index undoes it) and C
 *   leaves through shared memory (store_c_staged): each of the two gave
 *   ptxas a k loop 3% faster, and only the two together (H200, TN, a probe
 *   of the kernels alone against cuBLAS PEDANTIC's 2.69 / 20.6-20.7 ms):
 *   4096^3 / 8192^3 in 2.645 / 20.53 ms (1.02 / 1.00-1.01x), where the
 *   128 x 128 tile takes 2.71 / 21.4, and the 256 x 128 tile 2.71-2.72 /
 *   21.24-21.46 with either alone. At 2048^3 (128 blocks for 132 SMs) it
 *   was 3% slower than 128 x 128, so it takes only shapes of two full
 *   waves or more (gemm_simt.cu).
 *
 * The 128 x 128 tile can read one k-contiguous operand as it lies (RAW:
 * NN's A, TT's B, NT's B once A is copied) instead of from a row-contiguous
 * copy: its slice arrives as 128 lines of 32 k (128 bytes each) in a raw
 * buffer of its own, one slice ahead, and after each slice's FMAs the
 * block transposes the next slice into its stage, a 4 x 4 block a thread
 * (raw_to_slice: four 16-byte shared loads and four stores, no bank
 * conflicts). The barrier that starts the next slice publishes it: no
 * barrier is added. The values and the FMA order are those of the copy:
 * the same bits. Why: the copy moved the operand through memory twice (8 m
 * k bytes, ~10 us of 362 at 2048^3 NN); on an H100 2048^3 NN went 362-363
 * -> 356 us (pk bench), NT 2048^3 (one copy instead of two) 444 -> 376-381
 * us. Shapes below the copies' size rule that the register-staged NN / TT
 * kernels took now run here too: 2048 x 2048 x 512 110 -> 100 us. The 256 x
 * 128 tile keeps its copies: transposing its rotated B so (NN as C^T), at
 * the end of each slice or spread over its k steps, ran 4096^3 / 8192^3
 * 1-3% slower than copy + kernel (2.79 / 21.7-21.8 ms against 2.77 /
 * 21.1-21.3), and spread over the k steps the 128 x 128 tile lost too
 * (2048^3 375-381 us). */
#include "cuda/gemm_simt.cuh"
#include "cuda/gemm_wgmma.cuh"

namespace pk_cuda {

namespace {

constexpr int kBKT = 32;

template <bool BIG> struct Tile {
    static constexpr int kWarpsM = BIG ? 4 : 2, kWarpsN = BIG ? 2 : 4;
    static constexpr int kQuads = BIG ? 4 : 2; /* a lane's runs of 4 columns */
    static constexpr int kBM = kWarpsM * 64, kBN = kWarpsN * 16 * kQuads;
    static constexpr int kStages = BIG ? 4 : 3, kMinBlocks = BIG ? 1 : 2;
    /* k steps of a slice unrolled. BIG's 32 steps fully unrolled are ~4300
     * instructions (~69 KB, 5600 in the kernel), likely more than the SM's
     * instruction cache keeps: on some H100s the same SMs ran every block
     * ~10% slower (per-block %globaltimer probe at 2048^3: median 326 us,
     * SMs 44-47 359-362), and Nsight Compute counts 0.25 no-instruction
     * stalls per instruction against 0.07 at 16 steps. BIG runs 16 steps in
     * a loop of two, with each step's FMAs in serpentine order (fma_step).
     * ptxas's schedule for that stalls less: per issued instruction 0.10
     * dispatch (register-bank) stalls against 0.20 and 0.03 short-scoreboard
     * (shared-load) stalls against 0.12; issue active 90% against 84%,
     * 4096^3 TN kernel 2.55 against 2.71 ms; pk bench 4096^3 2.61 ms and
     * 8192^3 20.3 (2.78 and 21.8 on two other H100s). That is ptxas's
     * choice, not a rule: the same order fully unrolled, or j-major orders,
     * ran no faster (2.71-2.73 ms). */
    static constexpr int kUnrollK = BIG ? 16 : kBKT;
    /* BIG reads B rotated (rotated_rows_f32) and sends C out through
     * shared memory (store_c_staged). */
    static constexpr bool kCStaged = BIG;
    static constexpr int kCPitch = kBN + 4; /* floats a row of the staged C tile */
    static constexpr int kSliceA = kBKT * kBM, kSliceB = kBKT * kBN; /* floats */
    static constexpr uint32_t kStageBytes = uint32_t(kSliceA + kSliceB) * sizeof(float);
    static constexpr size_t kSmem = size_t(kStages) * kStageBytes;
};
/* Which operand arrives k-contiguous (the kernel transposes it). */
enum Raw { kRawNone = 0, kRawA = 1, kRawB = 2 };
template <class C, int RAW> struct RawOf {
    static constexpr int kRows = RAW == kRawA ? C::kBM : C::kBN; /* lines of 32 k */
    static constexpr uint32_t kBytes = RAW ? uint32_t(kRows) * kBKT * sizeof(float) : 0;
    /* Bytes the stage's copies bring (the raw operand comes separately). */
    static constexpr uint32_t kFill =
        uint32_t(RAW == kRawA ? C::kSliceB : RAW == kRawB ? C::kSliceA : C::kSliceA + C::kSliceB) *
        sizeof(float);
    static constexpr size_t kSmem = C::kSmem + kBytes;
};
/* Two blocks an SM: 228 KiB, each block's 1 KiB reserve and static mbarriers
 * (under 256 bytes) included. */
static_assert(2 * (RawOf<Tile<false>, kRawA>::kSmem + 1024 + 256) <= 228 * 1024,
              "two 128 x 128 blocks an SM");

/* A raw slice (128 lines of kBKT k, 128 bytes each) transposed into a
 * stage's slice (kBKT rows of 128), a 4 x 4 block a thread: lines 4 mb ..
 * 4 mb + 3 and k 4 kc .. 4 kc + 3, with l = tid % 8, mb = 8 (tid / 64) + l
 * and kc = l ^ (tid / 8 % 8). In each quarter warp the loads hit 16-byte
 * column kc of a line (distinct over l) and the stores column mb % 8 = l
 * of a slice row, so neither conflicts. */
__device__ __forceinline__ void raw_to_slice(const float *raw, float *slice, int tid)
{
    const int l = tid & 7, mb = 8 * (tid >> 6) + l, kc = l ^ ((tid >> 3) & 7);
    float r[4][4];
#pragma unroll
    for (int i = 0; i < 4; i++) lds4(raw + (4 * mb + i) * kBKT + 4 * kc, r[i]);
#pragma unroll
    for (int j = 0; j < 4; j++) {
        const float v[4] = {r[0][j], r[1][j], r[2][j], r[3][j]};
        st4(slice + (4 * kc + j) * 128 + 4 * mb, v);
    }
}
static_assert(Tile<false>::kBN == 128 && Tile<true>::kBN == 128, "n tiles of 128");
/* The k loop's runs tile a slice, and a run's step parity is the slice's
 * (the fragments' double buffer). */
static_assert(kBKT % Tile<true>::kUnrollK == 0 && Tile<true>::kUnrollK % 2 == 0 &&
                  kBKT % Tile<false>::kUnrollK == 0 && Tile<false>::kUnrollK % 2 == 0,
              "runs of an even number of k steps that tile the slice");
static_assert(Tile<true>::kSmem <= 227 * 1024, "one 256 x 128 block an SM");
template <class C> constexpr bool c_fits()
{
    return !C::kCStaged || size_t(C::kBM) * C::kCPitch * sizeof(float) <= C::kSmem;
}
static_assert(c_fits<Tile<false>>() && c_fits<Tile<true>>(), "a staged C tile fits the stages");

/* The block's C tile, staged in shared memory cs (kCPitch a row), to C:
 * alpha*acc (+ beta*C unless beta is 0: C is not read), the same operations
 * as store_c_tile (the same bits). A warp takes a row's 16-byte runs in
 * turn: coalesced. Why: with store_c_tile's guarded, unrolled stores of
 * the 128 accumulators at its end, ptxas scheduled the 256 x 128 kernel's k
 * loop 3-4% slower (H200, 4096^3 TN 2.71 ms against 2.64 with plain
 * stores); staged, the accumulators leave by unconditional shared stores
 * and the guards run on a short loop. */
template <class C, bool CT>
__device__ __forceinline__ void store_c_staged(const Prob<float> &p, const float *cs, int64_t m0,
                                               int64_t n0, int tid)
{
    if constexpr (CT) {
        /* The kernel's product is C^T (p.m: C's columns, p.n: its rows):
         * element (r, c) of the tile goes to C's row n0 + c, column m0 + r.
         * A warp takes 8 r by 4 c: its shared reads hit 32 distinct banks
         * (the pitch is 4 mod 32) and its writes are 32-byte runs of 4 rows
         * of C (whole sectors where C's rows are 32-byte aligned). */
        constexpr int rblocks = C::kBM / 8;
#pragma unroll 4
        for (int q = tid; q < C::kBM * C::kBN; q += 256) {
            const int blk = q >> 5;
            const int r = (blk % rblocks) * 8 + (q & 7), c = (blk / rblocks) * 4 + ((q >> 3) & 3);
            const int64_t gr = n0 + c, gc = m0 + r;
            if (gc >= p.m || gr >= p.n) continue;
            float *dst = p.c + gr * p.ldc + gc;
            *dst = update(cs[r * C::kCPitch + c], p.alpha, p.beta, dst);
        }
        return;
    }
    constexpr int runs = C::kBN / 4;
#pragma unroll 4
    for (int q = tid; q < C::kBM * runs; q += 256) {
        const int r = q / runs, c = (q % runs) * 4;
        const int64_t gm = m0 + r, gn = n0 + c;
        if (gm >= p.m || gn >= p.n) continue;
        float a[4];
        lds4(cs + r * C::kCPitch + c, a);
        float *dst = p.c + gm * p.ldc + gn;
        if (p.c_vec && gn + 4 <= p.n) {
            float v[4], old[4] = {0.f, 0.f, 0.f, 0.f};
            if (p.beta != 0.f) lds4(dst, old); /* generic 16-byte load */
#pragma unroll
            for (int j = 0; j < 4; j++) v[j] = update(a[j], p.alpha, p.beta, &old[j]);
            st4(dst, v);
        } else {
            for (int j = 0; j < 4 && gn + j < p.n; j++)
                dst[j] = update(a[j], p.alpha, p.beta, dst + j);
        }
    }
}

/* One k step: acc[i][j] += a[i] * b[j] (NJ columns). Each row of NJ is
 * taken in turn forwards and backwards (serpentine), so that the FMAs on
 * either side of a row change read the same B value. BIG: B arrives
 * rotated (column c of a group of 4 in b[(c + 3) % 4]). Each accumulator
 * gets the same FMAs in the same k order: the same bits as row-major. The
 * 128 x 128 tile (fully unrolled) gains too: 2048^3 NN kernel 359 -> 340
 * us (Nsight Compute, H100; dispatch stalls 0.49 -> 0.21 an instruction,
 * issue active 83 -> 88%), TN 350 -> 330 us; runs of 16 there gained less
 * (NN 347 us) or lost (row-major at 16: 400 us). */
template <bool BIG, int NJ>
__device__ __forceinline__ void fma_step(float (&acc)[8][NJ], const float (&a)[8],
                                         const float (&b)[NJ])
{
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int jj = 0; jj < NJ; jj++) {
            const int j = (i & 1) ? NJ - 1 - jj : jj;
            acc[i][j] = mad(a[i], b[BIG ? (j & ~3) | ((j + 3) & 3) : j], acc[i][j]);
        }
}

/* CT (256 x 128 only): the problem is C^T (gemm_simt_tma_f32). RAW: the
 * operand whose map (ma or mb) reads it k-contiguous, as it lies. */
template <bool BIG, bool CT, int RAW>
__global__ void __launch_bounds__(256, Tile<BIG>::kMinBlocks)
k_gemm_simt_tma(const __grid_constant__ CUtensorMap ma, const __grid_constant__ CUtensorMap mb,
                Prob<float> p)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    using namespace sm90;
    using C = Tile<BIG>;
    using X = RawOf<C, RAW>;
    static_assert(!CT || C::kCStaged, "C^T leaves through the staged tile");
    static_assert(!RAW || (!BIG && X::kRows == 128), "raw operands: the 128 x 128 tile's");
    constexpr int NJ = 4 * C::kQuads, kStages = C::kStages;
    extern __shared__ __align__(128) float smem[];
    __shared__ __align__(8) uint64_t full[kStages];
    __shared__ __align__(8) uint64_t raw_full;
    float *const raw = smem + kStages * (C::kSliceA + C::kSliceB);
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = warp / C::kWarpsN, wn = warp % C::kWarpsN, lm = lane >> 2, ln = lane & 3;
    const int arow = wm * 64 + lm * 4, bcol = wn * 16 * C::kQuads + ln * 4;
    const int m0 = int(blockIdx.x) * C::kBM, n0 = int(blockIdx.y) * C::kBN;
    const int nk = int((p.k + kBKT - 1) / kBKT);

    /* Slice kt into its stage: A^T rows kt*kBKT.. at column m0, B's at n0
     * (but the raw operand). */
    auto fill = [&](int kt) {
        const int s = kt % kStages;
        float *dst = smem + s * (C::kSliceA + C::kSliceB);
        mbar_expect_tx(&full[s], X::kFill);
        if (RAW != kRawA) tma_load(dst, &ma, m0, kt * kBKT, &full[s]);
        if (RAW != kRawB) tma_load(dst + C::kSliceA, &mb, n0, kt * kBKT, &full[s]);
    };
    /* The raw operand's slice kt: lines m0.. (n0..) of k kt*kBKT... */
    auto fill_raw = [&](int kt) {
        mbar_expect_tx(&raw_full, X::kBytes);
        tma_load(raw, RAW == kRawA ? &ma : &mb, kt * kBKT, RAW == kRawA ? m0 : n0, &raw_full);
    };
    /* ... transposed into its stage once it has landed. */
    auto transpose_raw = [&](int kt) {
        mbar_wait(&raw_full, uint32_t(kt) & 1u);
        float *st = smem + (kt % kStages) * (C::kSliceA + C::kSliceB);
        raw_to_slice(raw, RAW == kRawA ? st : st + C::kSliceA, tid);
    };
    if (tid == 0) {
        for (int s = 0; s < kStages; s++) mbar_init(&full[s], 1);
        if (RAW) mbar_init(&raw_full, 1);
        mbar_init_fence();
        for (int kt = 0; kt < kStages - 1 && kt < nk; kt++) fill(kt);
        if (RAW && nk > 0) fill_raw(0);
    }
    __syncthreads();
    if (RAW && nk > 0) transpose_raw(0);

    float acc[8][NJ];
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < NJ; j++) acc[i][j] = 0.f;

    for (int kt = 0; kt < nk; kt++) {
        const int s = kt % kStages;
        mbar_wait(&full[s], uint32_t(kt / kStages) & 1u);
        /* Every thread is past slice kt - 1: its stage takes slice
         * kt + kStages - 1 while this one is multiplied. */
        __syncthreads();
        if (tid == 0 && kt + kStages - 1 < nk) fill(kt + kStages - 1);
        /* The raw buffer is free: every thread transposed slice kt. */
        if (RAW && tid == 0 && kt + 1 < nk) fill_raw(kt + 1);
        const float *sA = smem + s * (C::kSliceA + C::kSliceB), *sB = sA + C::kSliceA;
        float fa[2][8], fb[2][NJ];
        lds4(sA + arow, fa[0]);
        lds4(sA + arow + 32, fa[0] + 4);
#pragma unroll
        for (int q = 0; q < C::kQuads; q++) lds4(sB + bcol + 16 * q, fb[0] + 4 * q);
        /* The slice's k steps in runs of kUnrollK: each run unrolled, the
         * loop over the runs not (Tile's comment). */
#pragma unroll 1
        for (int k0 = 0; k0 < kBKT; k0 += C::kUnrollK) {
#pragma unroll
            for (int k1 = 0; k1 < C::kUnrollK; k1++) {
                const int kk = k0 + k1, cur = k1 & 1, nxt = cur ^ 1;
                if (kk + 1 < kBKT) {
                    const float *a = sA + (kk + 1) * C::kBM, *b = sB + (kk + 1) * C::kBN;
                    lds4(a + arow, fa[nxt]);
                    lds4(a + arow + 32, fa[nxt] + 4);
#pragma unroll
                    for (int q = 0; q < C::kQuads; q++) lds4(b + bcol + 16 * q, fb[nxt] + 4 * q);
                }
                fma_step<BIG, NJ>(acc, fa[cur], fb[cur]);
            }
        }
        /* Slice kt + 1's stage last held slice kt + 1 - kStages, which every
         * thread finished before this slice's barrier; the next barrier
         * publishes it. */
        if (RAW && kt + 1 < nk) transpose_raw(kt + 1);
    }
    if constexpr (C::kCStaged) {
        /* Every warp is done with the stages (and every copy into them has
         * landed: each was waited for): they take the C tile. */
        __syncthreads();
#pragma unroll
        for (int i = 0; i < 8; i++)
#pragma unroll
            for (int h = 0; h < C::kQuads; h++)
                st4(smem + (arow + (i & 3) + (i >> 2) * 32) * C::kCPitch + bcol + 16 * h,
                    &acc[i][4 * h]);
        __syncthreads();
        store_c_staged<C, CT>(p, smem, m0, n0, tid);
    } else {
        store_c_tile(p, p.c, acc, int64_t(m0) + arow, int64_t(n0) + bcol);
    }
#else
    /* No body for other targets: what only the body uses is named here,
     * or nvcc's unused-entity warnings fire. */
    (void)p, (void)RawOf<Tile<BIG>, RAW>::kFill, (void)&raw_to_slice, (void)Tile<BIG>::kUnrollK;
#endif
}

template <bool BIG, bool CT, int RAW> pk_status launch(pk_ctx *ctx, const Prob<float> &p)
{
    using C = Tile<BIG>;
    using X = RawOf<C, RAW>;
    /* The rotated B (BIG) fills whole groups of 4 columns: its map spans
     * them all, so that a group's last positions are read, not zero-filled.
     * A raw operand's map has m (n) lines: those past it read as zeros. */
    const int64_t b_cols = BIG ? (p.n + 3) / 4 * 4 : p.n;
    constexpr CUtensorMapDataType f32 = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    constexpr CUtensorMapSwizzle none = CU_TENSOR_MAP_SWIZZLE_NONE;
    CUtensorMap ma, mb;
    pk_status st;
    if ((st = RAW == kRawA
                  ? tensor_map_2d(ctx, &ma, f32, p.a.p, p.m, p.k, p.a.ld * 4, kBKT, C::kBM, none)
                  : tensor_map_2d(ctx, &ma, f32, p.a.p, p.k, p.m, p.a.ld * 4, C::kBM, kBKT,
                                  none)) ||
        (st = RAW == kRawB
                  ? tensor_map_2d(ctx, &mb, f32, p.b.p, p.n, p.k, p.b.ld * 4, kBKT, C::kBN, none)
                  : tensor_map_2d(ctx, &mb, f32, p.b.p, p.k, b_cols, p.b.ld * 4, C::kBN, kBKT,
                                  none)))
        return st;
    PK_CU(ctx, cudaFuncSetAttribute(k_gemm_simt_tma<BIG, CT, RAW>,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, int(X::kSmem)));
    const dim3 grid(unsigned((p.m + C::kBM - 1) / C::kBM), unsigned((p.n + C::kBN - 1) / C::kBN));
    k_gemm_simt_tma<BIG, CT, RAW><<<grid, 256, X::kSmem, state(ctx)->stream>>>(ma, mb, p);
    PK_CU_LAUNCH(ctx, "k_gemm_simt_tma launch");
    return PK_OK;
}

} // namespace

bool gemm_simt_tma_usable(pk_ctx *ctx, const Prob<float> &p)
{
#if defined(PK_CUDA_HAVE_SM90A)
    const State *s = state(ctx);
    /* 32-bit copy coordinates; row strides below the tensor map's 2^40
     * bytes (a legal ld is unbounded when k is 1); n tiles on the grid's y
     * (at most 65535). */
    const int64_t lim = int64_t(1) << 30, ld_lim = int64_t(1) << 37;
    return s->cc_major == 9 && s->cc_minor == 0 && p.a.vec && p.b.vec && p.m < lim &&
           p.n < lim && p.k < lim && p.a.ld < ld_lim && p.b.ld < ld_lim &&
           (p.n + 127) / 128 <= 65535 && tensor_maps_available();
#else
    (void)ctx, (void)p;
    return false;
#endif
}

pk_status gemm_simt_tma_f32(pk_ctx *ctx, const Prob<float> &p, bool big, bool ct, bool ka,
                            bool kb)
{
    if (ka && kb) return pk__fail(ctx, PK_ERR_INTERNAL, "gemm_simt_tma_f32: one raw operand");
    if (!big) {
        if (ct) return pk__fail(ctx, PK_ERR_INTERNAL, "a C^T product needs the 256 x 128 tile");
        return ka ? launch<false, false, kRawA>(ctx, p)
               : kb ? launch<false, false, kRawB>(ctx, p)
                    : launch<false, false, kRawNone>(ctx, p);
    }
    if (ka || kb) return pk__fail(ctx, PK_ERR_INTERNAL, "the 256 x 128 tile reads no raw operand");
    return ct ? launch<true, true, kRawNone>(ctx, p) : launch<true, false, kRawNone>(ctx, p);
}

} // namespace pk_cuda
