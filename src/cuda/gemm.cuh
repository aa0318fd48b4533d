/* Shared pieces of the CUDA GEMM (gemm.cu, gemm_simt.cu, gemm_tc.cu).
 *
 * Everything is row-major as in the API: C (m x n) = alpha*op(A)*op(B) +
 * beta*C. Each kernel views op(A) as an m x k and op(B)^T as an n x k
 * "operand" whose rows are m (resp. n) and whose inner dimension is k; an
 * operand is either k-contiguous in memory (A not transposed, B transposed)
 * or row-contiguous (A transposed, B not transposed). That one flag per
 * operand covers all four transpose combinations with a single kernel
 * family. Pointers reach the kernels already on the device. */
#ifndef PK_CUDA_GEMM_CUH
#define PK_CUDA_GEMM_CUH

#include "cuda/cuda_internal.cuh"

#include <cstdint>
#include <initializer_list>

namespace pk_cuda {

/* One operand as the kernels see it: element (r, kk) of the logical
 * rows x k matrix is p[r*ld + kk] when kcontig, else p[kk*ld + r]. vec: p is
 * 16-byte aligned and ld a multiple of 16 bytes, so aligned 16-byte runs
 * can be loaded as vectors. */
template <class T> struct Opnd {
    const T *p;
    int64_t ld;
    bool vec;
};

/* The device-resident problem: sizes, operands, C, alpha and beta. */
template <class T> struct Prob {
    int64_t m, n, k;
    Opnd<T> a, b;
    T *c;
    int64_t ldc;
    T alpha, beta;
    bool c_vec; /* C 16-byte aligned with ldc a multiple of 16 bytes */
    /* Split k (SIMT kernel, gridDim.z > 1): block z takes k in
     * [z*kchunk, (z+1)*kchunk) and writes alpha*its sum to
     * c + z*split_stride (ldc = n, beta = 0); a second kernel adds them. */
    int64_t kchunk = 0, split_stride = 0;
};

/* The non-finite guard of FP32_ACCURATE (gemm.cu): a flag in device memory,
 * raised by earlier kernels on the stream when an operand holds values the
 * TF32 split cannot take. A kernel given `skip` does nothing when it is
 * raised; one given `run_if`, nothing unless it is (uniform over the grid). */
__device__ __forceinline__ bool flag_raised(const int *flag) { return *flag != 0; }

/* x rounded to TF32 (to nearest, ties away), kept in an FP32 register: the
 * tensor cores' TF32 inputs, and the big part of 3xTF32's split. */
__device__ __forceinline__ float tf32_rna(float x)
{
    uint32_t r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
    return __uint_as_float(r);
}

/* The GEMM's A/B-timing and test switches: 1 + the index in names of the
 * environment variable var's value, or 0 when it is unset or none of them
 * (gemm.cu). Callers read it once (a static). */
int env_choice(pk__env_id var, std::initializer_list<const char *> names);

/* Launchers (return PK_OK or a recorded failure). ka / kb: whether the A / B
 * operand is k-contiguous. k >= 1 and alpha != 0 here. */
pk_status gemm_simt_f32(pk_ctx *ctx, const Prob<float> &p, bool ka, bool kb);
/* The same, doing nothing unless *run_if != 0 (the guard's fallback). */
pk_status gemm_simt_f32_guarded(pk_ctx *ctx, const Prob<float> &p, bool ka, bool kb,
                                const int *run_if);
pk_status gemm_simt_f64(pk_ctx *ctx, const Prob<double> &p, bool ka, bool kb);
/* The FP32 SIMT kernel fed by the tensor copy engine (gemm_simt_tma.cu), for
 * op(A) and op(B) row-contiguous (TN) or one of them k-contiguous: usable
 * when the build has sm_90a code, the device is compute capability 9.0, the
 * driver encodes tensor maps, both operands (as the kernel reads them:
 * copied or as they lie) are 16-byte aligned with 16-byte row strides
 * (below 2^37 elements), m, n and k are below 2^30 and n needs at most
 * 65535 tiles of 128. */
bool gemm_simt_tma_usable(pk_ctx *ctx, const Prob<float> &p);
/* big: the 256 x 128 tile, which reads B as rotated_rows_f32 leaves it
 * (p.b.ld at least n rounded up to 4); else the 128 x 128 tile. ct (big
 * only): p is C^T's problem (p.m and p.n are C's columns and rows, p.a^T
 * is op(B), p.b is op(A)^T) and C is written transposed, its element
 * (i, j) being the product's (j, i). ka / kb (the 128 x 128 tile, one at
 * most): that operand is k-contiguous and read as it lies. */
pk_status gemm_simt_tma_f32(pk_ctx *ctx, const Prob<float> &p, bool big, bool ct = false,
                            bool ka = false, bool kb = false);
/* Tensor cores (mma.sync m16n8k8 tf32): split = false rounds the inputs to
 * TF32 once; split = true is 3xTF32 (big*big + big*small + small*big). */
pk_status gemm_tc_f32(pk_ctx *ctx, const Prob<float> &p, bool ka, bool kb,
                      bool split, const int *skip = nullptr);
/* The same on Hopper with wgmma + TMA (gemm_wgmma.cu): usable when the build
 * has sm_90a code, the device is compute capability 9.0 and the problem is
 * large enough (else gemm_tc_f32). */
bool gemm_wgmma_usable(pk_ctx *ctx, const Prob<float> &p);
pk_status gemm_wgmma_f32(pk_ctx *ctx, const Prob<float> &p, bool ka, bool kb, bool split,
                         const int *skip = nullptr);

/* dst (cols x rows, leading dimension ldd) = src^T, src rows x cols with
 * leading dimension ld, both f32 in device memory, on the context's stream
 * (gemm_wgmma.cu's packing kernel). */
pk_status transpose_f32(pk_ctx *ctx, const float *src, int64_t ld, int64_t rows, int64_t cols,
                        float *dst, int64_t ldd);

/* dst (K x ldd, ldd >= n rounded up to 4) = op(B) of a K x n operand (kb:
 * B k-contiguous, element (kk, c) at b.p[c * b.ld + kk]; else at
 * b.p[kk * b.ld + c]) made row-contiguous with each group of 4 columns
 * rotated: position q of a group holds its column (q + 1) % 4, and the last
 * group's positions past n hold zeros. The B operand of gemm_simt_tma.cu's
 * 256 x 128 tile. */
pk_status rotated_rows_f32(pk_ctx *ctx, const Opnd<float> &b, bool kb, int64_t K, int64_t n,
                           float *dst, int64_t ldd);

/* Launch fn(grid_x_blocks, offset) over the n dimension in slabs that keep
 * gridDim.y within CUDA's 65535 limit: fn gets the first column n0 of the
 * slab and its width. */
template <class F>
pk_status over_column_slabs(int64_t n, int bn, F &&fn)
{
    const int64_t per = int64_t(65535) * bn;
    for (int64_t n0 = 0; n0 < n; n0 += per) {
        pk_status s = fn(n0, n - n0 < per ? n - n0 : per);
        if (s) return s;
    }
    return PK_OK;
}

/* The problem restricted to columns [n0, n0 + w) of C. */
template <class T>
Prob<T> column_slab(const Prob<T> &p, bool kb, int64_t n0, int64_t w)
{
    Prob<T> q = p;
    q.n = w;
    q.c = p.c + n0;
    q.b.p = p.b.p + (kb ? n0 * p.b.ld : n0);
    q.b.vec = p.b.vec && (kb || n0 % (16 / int64_t(sizeof(T))) == 0);
    q.c_vec = p.c_vec && n0 % (16 / int64_t(sizeof(T))) == 0;
    return q;
}

} // namespace pk_cuda

#endif
