/* FP32 GEMM on the CUDA cores with its tiles brought by the tensor copy
 * engine (sm_90a): the SIMT kernel's 128 x 128 tile, 256 threads and lane
 * layout (gemm_simt.cuh: 8 x 8 a lane, four 16-byte shared loads and 64
 * FMAs a k step, fragments double-buffered), but the k slices arrive in a
 * ring of kStages shared-memory stages, kBKT deep, each filled by two
 * cp.async.bulk.tensor copies that one thread issues and that complete on
 * the stage's mbarrier. In the k loop the other threads load nothing from
 * global memory, stage nothing through registers and compute no addresses
 * for it, and pass one barrier a slice (32 k steps instead of 8).
 *
 * Why: a probe that fed the same loop from a shared tile that never
 * changes ran 4096^3 in 2.55-2.64 ms on an H100, 1.02-1.07x cuBLAS
 * PEDANTIC, while the register-staged kernel took 3.05 ms (0.87x): the
 * loss was in the feeding, not in the FMA loop. Fed by the copy engine the
 * loop ran 2.75 ms (0.97x; docs/BENCHMARKS.md, twentieth session).
 *
 * Layout: op(A) and op(B) both row-contiguous (TN: A^T is k x m, B is
 * k x n), as the copies need rows of 16-byte multiples in place; NN, NT and
 * TT come here when the caller's row-contiguous copies pay (gemm_simt.cu).
 * The copies fill rows and columns past the matrix with zeros, so any m, n
 * and k runs with no guards in the loop: k is padded to a multiple of 32
 * with 0 * 0 terms, as the staged kernel pads it to a multiple of 8. Each C
 * element is the same chain of FMAs in k order as in the staged kernel, so
 * the same bits, but for one case: an exact sum of -0 (all its products -0)
 * with k a multiple of 8 but not of 32 comes out +0 here (-0 + 0 is +0). */
#include "cuda/gemm_simt.cuh"
#include "cuda/gemm_wgmma.cuh"

namespace pk_cuda {

namespace {

constexpr int kTile = 128, kBKT = 32, kStages = 3;
constexpr int kSliceFloats = kBKT * kTile; /* one operand's slice */
constexpr uint32_t kStageBytes = 2 * kSliceFloats * sizeof(float);
constexpr size_t kTmaSmem = size_t(kStages) * kStageBytes;

__global__ void __launch_bounds__(256, 2)
k_gemm_simt_tma(const __grid_constant__ CUtensorMap ma, const __grid_constant__ CUtensorMap mb,
                Prob<float> p)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    using namespace sm90;
    extern __shared__ __align__(128) float smem[];
    __shared__ __align__(8) uint64_t full[kStages];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = warp / 4, wn = warp % 4, lm = lane >> 2, ln = lane & 3;
    const int arow = wm * 64 + lm * 4, bcol = wn * 32 + ln * 4;
    const int m0 = int(blockIdx.x) * kTile, n0 = int(blockIdx.y) * kTile;
    const int nk = int((p.k + kBKT - 1) / kBKT);

    /* Slice kt into its stage: A^T rows kt*kBKT.. at column m0, B's at n0. */
    auto fill = [&](int kt) {
        const int s = kt % kStages;
        float *dst = smem + s * 2 * kSliceFloats;
        mbar_expect_tx(&full[s], kStageBytes);
        tma_load(dst, &ma, m0, kt * kBKT, &full[s]);
        tma_load(dst + kSliceFloats, &mb, n0, kt * kBKT, &full[s]);
    };
    if (tid == 0) {
        for (int s = 0; s < kStages; s++) mbar_init(&full[s], 1);
        mbar_init_fence();
        for (int kt = 0; kt < kStages - 1 && kt < nk; kt++) fill(kt);
    }
    __syncthreads();

    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 8; j++) acc[i][j] = 0.f;

    for (int kt = 0; kt < nk; kt++) {
        const int s = kt % kStages;
        mbar_wait(&full[s], uint32_t(kt / kStages) & 1u);
        /* Every thread is past slice kt - 1: its stage takes slice
         * kt + kStages - 1 while this one is multiplied. */
        __syncthreads();
        if (tid == 0 && kt + kStages - 1 < nk) fill(kt + kStages - 1);
        const float *sA = smem + s * 2 * kSliceFloats, *sB = sA + kSliceFloats;
        float fa[2][8], fb[2][8];
        lds4(sA + arow, fa[0]);
        lds4(sA + arow + 32, fa[0] + 4);
        lds4(sB + bcol, fb[0]);
        lds4(sB + bcol + 16, fb[0] + 4);
#pragma unroll
        for (int kk = 0; kk < kBKT; kk++) {
            const int cur = kk & 1, nxt = cur ^ 1;
            if (kk + 1 < kBKT) {
                const float *a = sA + (kk + 1) * kTile, *b = sB + (kk + 1) * kTile;
                lds4(a + arow, fa[nxt]);
                lds4(a + arow + 32, fa[nxt] + 4);
                lds4(b + bcol, fb[nxt]);
                lds4(b + bcol + 16, fb[nxt] + 4);
            }
#pragma unroll
            for (int i = 0; i < 8; i++)
#pragma unroll
                for (int j = 0; j < 8; j++) acc[i][j] = mad(fa[cur][i], fb[cur][j], acc[i][j]);
        }
    }
    store_c_tile(p, p.c, acc, int64_t(m0) + arow, int64_t(n0) + bcol);
#else
    (void)p;
#endif
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
           (p.n + kTile - 1) / kTile <= 65535 && tensor_maps_available();
#else
    (void)ctx, (void)p;
    return false;
#endif
}

pk_status gemm_simt_tma_f32(pk_ctx *ctx, const Prob<float> &p)
{
    CUtensorMap ma, mb;
    pk_status st;
    if ((st = tensor_map_2d(ctx, &ma, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, p.a.p, p.k, p.m,
                            p.a.ld * 4, kTile, kBKT, CU_TENSOR_MAP_SWIZZLE_NONE)) ||
        (st = tensor_map_2d(ctx, &mb, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, p.b.p, p.k, p.n,
                            p.b.ld * 4, kTile, kBKT, CU_TENSOR_MAP_SWIZZLE_NONE)))
        return st;
    PK_CU(ctx, cudaFuncSetAttribute(k_gemm_simt_tma, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    int(kTmaSmem)));
    const dim3 grid(unsigned((p.m + kTile - 1) / kTile), unsigned((p.n + kTile - 1) / kTile));
    k_gemm_simt_tma<<<grid, 256, kTmaSmem, state(ctx)->stream>>>(ma, mb, p);
    PK_CU_LAUNCH(ctx, "k_gemm_simt_tma launch");
    return PK_OK;
}

} // namespace pk_cuda
