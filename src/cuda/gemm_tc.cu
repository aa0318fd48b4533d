/* TF32 and split-TF32 ("3xTF32") GEMM on the tensor cores with
 * mma.sync.m16n8k8 (sm_80 and later, Hopper included).
 *
 * A block of 256 threads computes a 128 x 128 tile of C; its 8 warps (2 x 4)
 * a 64 x 32 tile each: 4 x 4 mma tiles of 16 x 8, 64 FP32 accumulators a
 * lane. The k dimension advances in slices of 16 through a 4-stage cp.async
 * pipeline in dynamic shared memory. Operand tiles are copied as they lie in
 * memory (no transposition on the way), so every transpose combination is a
 * plain 16-byte cp.async (4-byte copies when the operand is not 16-byte
 * aligned; the zero-fill form of cp.async pads the edges): a k-contiguous
 * operand is kept [row][k] with rows of 16 + 4 elements, a row-contiguous one
 * [k][row] with rows of 128 + 8; both paddings make the fragment loads
 * (lane (g, t) reads row g, column t) hit 32 different banks.
 *
 * TF32 rounds each operand to TF32 (cvt.rna) once. 3xTF32 splits each into
 * big = tf32(x) and small = tf32(x - big) and accumulates small*big +
 * big*small + big*big: the products the tensor core forms are exact, the
 * dropped small*small term is below 2^-22 of |a||b|; each 16-deep k slice is
 * summed on the tensor cores from zero and added to the FP32 accumulators
 * with round-to-nearest adds, so the result has FP32 accuracy at three
 * tensor-core products per term. */
#include "cuda/gemm.cuh"

namespace pk_cuda {

namespace {

constexpr int kBM = 128, kBN = 128, kBK = 16, kStages = 4, kThreadsTC = 256;
constexpr int kLdK = kBK + 4;   /* row length of a [row][k] tile */
constexpr int kLdR = kBM + 8;   /* row length of a [k][row] tile */
constexpr int kTileFloats = kBM * kLdK > kBK * kLdR ? kBM * kLdK : kBK * kLdR;
constexpr int kStageFloats = 2 * kTileFloats;
constexpr size_t kSmemBytes = size_t(kStages) * kStageFloats * sizeof(float);

__device__ __forceinline__ uint32_t smem_addr(const void *p)
{
    return uint32_t(__cvta_generic_to_shared(p));
}

/* Copy `bytes` (0..16) of src to dst and zero the rest of the 16 bytes. */
__device__ __forceinline__ void cp16(float *dst, const float *src, int bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)),
                 "l"(src), "r"(bytes));
}
__device__ __forceinline__ void cp4(float *dst, const float *src, int bytes)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_addr(dst)),
                 "l"(src), "r"(bytes));
}
__device__ __forceinline__ void cp_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void cp_wait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

/* Issue the copies of one operand's slice (rows r0.., k k0..) into s. */
template <bool KC>
__device__ __forceinline__ void load_slice(float *s, const Opnd<float> &o, int64_t nrows,
                                           int64_t K, int64_t r0, int64_t k0, int tid)
{
    constexpr int kChunks = kBM * kBK / 4 / kThreadsTC; /* 16-byte chunks a thread */
#pragma unroll
    for (int i = 0; i < kChunks; i++) {
        const int c = tid + i * kThreadsTC;
        int row, kk;
        if (KC) {
            row = c / (kBK / 4);
            kk = c % (kBK / 4) * 4;
        } else {
            kk = c / (kBM / 4);
            row = c % (kBM / 4) * 4;
        }
        const int64_t gr = r0 + row, gk = k0 + kk;
        /* Valid elements of the 4-run: along k when KC, along rows else. */
        int64_t lim = KC ? (gr < nrows ? K - gk : 0) : (gk < K ? nrows - gr : 0);
        lim = lim < 0 ? 0 : lim > 4 ? 4 : lim;
        float *dst = KC ? s + row * kLdK + kk : s + kk * kLdR + row;
        const float *src = lim ? (KC ? o.p + gr * o.ld + gk : o.p + gk * o.ld + gr) : o.p;
        if (o.vec && lim == 4) {
            cp16(dst, src, 16);
        } else {
            /* Partial and empty runs take 4-byte copies (zero-filled past
             * the edge): no copy reaches past the operand's last element. */
#pragma unroll
            for (int j = 0; j < 4; j++) cp4(dst + j, j < lim ? src + j : o.p, j < lim ? 4 : 0);
        }
    }
}

/* x rounded to TF32, as the FP32 bits the mma instruction takes. */
__device__ __forceinline__ uint32_t tf32(float x) { return __float_as_uint(tf32_rna(x)); }

__device__ __forceinline__ void mma(float (&c)[4], const uint32_t (&a)[4], const uint32_t (&b)[2])
{
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/* Element (row, k) of a tile in its layout. */
template <bool KC>
__device__ __forceinline__ float tile_at(const float *s, int row, int k)
{
    return KC ? s[row * kLdK + k] : s[k * kLdR + row];
}

template <bool KA, bool KB, bool SPLIT>
__global__ void __launch_bounds__(kThreadsTC, SPLIT ? 1 : 2) k_gemm_tc(Prob<float> p, const int *skip)
{
    extern __shared__ __align__(16) float smem[];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = warp >> 2, wn = warp & 3; /* 2 x 4 warps */
    const int g = lane >> 2, t = lane & 3;
    const int64_t m0 = int64_t(blockIdx.x) * kBM, n0 = int64_t(blockIdx.y) * kBN;
    const int64_t nk = (p.k + kBK - 1) / kBK;
    if (skip && flag_raised(skip)) return; /* FP32_ACCURATE's guard (gemm.cu) */

    /* 3xTF32 sums each k slice in part (tensor cores) and adds it to acc on
     * the FP32 cores: the tensor cores' FP32 accumulation does not round to
     * nearest, and over long k its error grew past FP32's (measured 8x). */
    float acc[4][4][4], part[4][4][4];
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) acc[i][j][e] = part[i][j][e] = 0.f;

    auto issue = [&](int64_t kt) {
        float *s = smem + (kt % kStages) * kStageFloats;
        load_slice<KA>(s, p.a, p.m, p.k, m0, kt * kBK, tid);
        load_slice<KB>(s + kTileFloats, p.b, p.n, p.k, n0, kt * kBK, tid);
    };
#pragma unroll
    for (int s = 0; s < kStages - 1; s++) {
        if (s < nk) issue(s);
        cp_commit();
    }

    for (int64_t kt = 0; kt < nk; kt++) {
        cp_wait<kStages - 2>();
        __syncthreads();
        /* The stage refilled here was consumed in iteration kt - 1, which
         * every thread has finished (barrier above). */
        if (kt + kStages - 1 < nk) issue(kt + kStages - 1);
        cp_commit();

        const float *sa = smem + (kt % kStages) * kStageFloats;
        const float *sb = sa + kTileFloats;
#pragma unroll
        for (int ks = 0; ks < kBK; ks += 8) {
            uint32_t ab[4][4], bb[4][2];
            uint32_t as[4][4], bs[4][2];
#pragma unroll
            for (int i = 0; i < 4; i++) {
                const int r = wm * 64 + i * 16 + g;
                const float x[4] = {tile_at<KA>(sa, r, ks + t), tile_at<KA>(sa, r + 8, ks + t),
                                    tile_at<KA>(sa, r, ks + t + 4),
                                    tile_at<KA>(sa, r + 8, ks + t + 4)};
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    ab[i][e] = tf32(x[e]);
                    if (SPLIT) as[i][e] = tf32(x[e] - __uint_as_float(ab[i][e]));
                }
            }
#pragma unroll
            for (int j = 0; j < 4; j++) {
                const int c = wn * 32 + j * 8 + g;
                const float x[2] = {tile_at<KB>(sb, c, ks + t), tile_at<KB>(sb, c, ks + t + 4)};
#pragma unroll
                for (int e = 0; e < 2; e++) {
                    bb[j][e] = tf32(x[e]);
                    if (SPLIT) bs[j][e] = tf32(x[e] - __uint_as_float(bb[j][e]));
                }
            }
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int j = 0; j < 4; j++) {
                    if (SPLIT) {
                        mma(part[i][j], as[i], bb[j]);
                        mma(part[i][j], ab[i], bs[j]);
                        mma(part[i][j], ab[i], bb[j]);
                    } else {
                        mma(acc[i][j], ab[i], bb[j]);
                    }
                }
        }
        if (SPLIT) /* promote the slice's sums with round-to-nearest adds */
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int j = 0; j < 4; j++)
#pragma unroll
                    for (int e = 0; e < 4; e++) {
                        acc[i][j][e] = __fadd_rn(acc[i][j][e], part[i][j][e]);
                        part[i][j][e] = 0.f;
                    }
    }
    cp_wait<0>();

    /* Epilogue: lane (g, t) holds rows g and g + 8, columns 2t and 2t + 1 of
     * each 16 x 8 tile. */
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int64_t gm = m0 + wm * 64 + i * 16 + g + h * 8;
            if (gm >= p.m) continue;
            float *crow = p.c + gm * p.ldc;
#pragma unroll
            for (int j = 0; j < 4; j++)
#pragma unroll
                for (int e = 0; e < 2; e++) {
                    const int64_t gn = n0 + wn * 32 + j * 8 + 2 * t + e;
                    if (gn >= p.n) continue;
                    const float v = p.alpha * acc[i][j][h * 2 + e];
                    crow[gn] = p.beta == 0.f ? v : __fmaf_rn(p.beta, crow[gn], v);
                }
        }
}

template <bool KA, bool KB, bool SPLIT>
pk_status launch(pk_ctx *ctx, const Prob<float> &p, const int *skip)
{
    auto k = k_gemm_tc<KA, KB, SPLIT>;
    PK_CU(ctx, cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    int(kSmemBytes)));
    cudaStream_t st = state(ctx)->stream;
    return over_column_slabs(p.n, kBN, [&](int64_t c0, int64_t w) -> pk_status {
        const Prob<float> q = column_slab(p, KB, c0, w);
        const dim3 grid(unsigned((q.m + kBM - 1) / kBM), unsigned((q.n + kBN - 1) / kBN));
        k<<<grid, kThreadsTC, kSmemBytes, st>>>(q, skip);
        PK_CU_LAUNCH(ctx, "k_gemm_tc launch");
        return PK_OK;
    });
}

template <bool SPLIT>
pk_status launch_split(pk_ctx *ctx, const Prob<float> &p, bool ka, bool kb, const int *skip)
{
    if (ka)
        return kb ? launch<true, true, SPLIT>(ctx, p, skip) : launch<true, false, SPLIT>(ctx, p, skip);
    return kb ? launch<false, true, SPLIT>(ctx, p, skip) : launch<false, false, SPLIT>(ctx, p, skip);
}

} // namespace

pk_status gemm_tc_f32(pk_ctx *ctx, const Prob<float> &p, bool ka, bool kb, bool split,
                      const int *skip)
{
    return split ? launch_split<true>(ctx, p, ka, kb, skip)
                 : launch_split<false>(ctx, p, ka, kb, skip);
}

} // namespace pk_cuda
