/* pk_gemm on the CUDA backend: pointer kinds, host staging, the degenerate
 * cases and the choice of kernel by (dtype, mode).
 *
 * Device operands are used in place and the call is asynchronous on the
 * context's stream. Host operands are copied whole (their stored span) into
 * device scratch; a host C is copied back row by row (only the m x n
 * elements, never the gaps between rows) and the call blocks. beta = 0 never
 * reads C; alpha = 0 or k = 0 never reads A or B (C = beta*C). */
#include "cuda/gemm.cuh"

#include <cstdlib>
#include <cstring>

namespace pk_cuda {

int env_choice(pk__env_id var, std::initializer_list<const char *> names)
{
    const char *e = pk__env(var);
    int i = 1;
    for (const char *n : names) {
        if (e && !strcmp(e, n)) return i;
        i++;
    }
    return 0;
}

namespace {

/* Elements of the stored span of a rows x cols matrix with leading dimension
 * ld. */
int64_t span(int64_t rows, int64_t cols, int64_t ld)
{
    return rows == 0 || cols == 0 ? 0 : (rows - 1) * ld + cols;
}

/* The device copy of a host operand (in place when already on the device). */
pk_status on_device(pk_ctx *ctx, const void *p, Where w, size_t bytes, bool copy,
                    void **slot, const void **out)
{
    if (w == kDevice) {
        *out = p;
        return PK_OK;
    }
    pk_status s = dev_alloc(ctx, slot, bytes ? bytes : 16);
    if (s) return s;
    if (copy && bytes && (s = stage_to_device(ctx, p, w, *slot, bytes))) return s;
    *out = *slot;
    return PK_OK;
}

template <class T>
__global__ void k_scale(T *c, int64_t m, int64_t n, int64_t ldc, T beta)
{
    const int64_t total = m * n;
    for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total;
         i += int64_t(gridDim.x) * blockDim.x) {
        T *e = c + (i / n) * ldc + i % n;
        *e = beta == T(0) ? T(0) : beta * *e;
    }
}

/* FP32_ACCURATE's tensor-core kernels split each operand into big =
 * tf32(x) and small = tf32(x - big). A non-finite x, or one that tf32
 * rounding takes to Inf (|x| >= (2 - 2^-11) 2^127), breaks the split: its
 * cross products with the other operand's small parts are Inf * 0 = NaN
 * where FP32 gives +-Inf (or a finite value). k_find_bad raises *bad when an
 * operand holds such a value; the tensor-core kernel then does nothing and
 * the FP32 kernel computes C instead (both launched, each guarded by the
 * flag on the device: no host synchronisation). */
constexpr float kTf32Overflow = 0x1.ffep127f;
constexpr int kFindCols = 4 * kThreads; /* elements of a row a block takes per item */

__global__ void k_find_bad(const float *p, int64_t rows, int64_t cols, int64_t ld, int *bad)
{
    const int64_t chunks = (cols + kFindCols - 1) / kFindCols, items = rows * chunks;
    bool found = false;
    for (int64_t it = blockIdx.x; it < items; it += gridDim.x) {
        const float *row = p + it / chunks * ld;
        const int64_t c0 = it % chunks * kFindCols;
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const int64_t c = c0 + u * kThreads + threadIdx.x;
            if (c < cols) found |= !(fabsf(row[c]) < kTf32Overflow); /* NaN too */
        }
    }
    if (__syncthreads_or(found) && threadIdx.x == 0) *bad = 1;
}

pk_status find_bad(pk_ctx *ctx, const float *p, int64_t rows, int64_t cols, int64_t ld, int *bad)
{
    const int64_t items = rows * ((cols + kFindCols - 1) / kFindCols);
    k_find_bad<<<grid_for(ctx, k_find_bad, items), kThreads, 0, state(ctx)->stream>>>(
        p, rows, cols, ld, bad);
    PK_CU_LAUNCH(ctx, "k_find_bad launch");
    return PK_OK;
}

/* FP32_ACCURATE on the tensor cores, guarded as above. */
pk_status accurate(pk_ctx *ctx, const Prob<float> &p, bool ka, bool kb)
{
    State *s = state(ctx);
    void *flag = nullptr;
    pk_status st = dev_alloc(ctx, &flag, sizeof(int));
    if (st) return st;
    int *bad = static_cast<int *>(flag);
    cudaError_t e = cudaMemsetAsync(bad, 0, sizeof(int), s->stream);
    if (e != cudaSuccess) st = fail_cuda(ctx, e, "cudaMemsetAsync");
    /* The operands as stored: op(A) is m x k, op(B)^T is n x k. */
    if (!st) st = find_bad(ctx, p.a.p, ka ? p.m : p.k, ka ? p.k : p.m, p.a.ld, bad);
    if (!st) st = find_bad(ctx, p.b.p, kb ? p.n : p.k, kb ? p.k : p.n, p.b.ld, bad);
    if (!st)
        st = gemm_wgmma_usable(ctx, p) ? gemm_wgmma_f32(ctx, p, ka, kb, true, bad)
                                       : gemm_tc_f32(ctx, p, ka, kb, true, bad);
    if (!st) st = gemm_simt_f32_guarded(ctx, p, ka, kb, bad);
    dev_free(s, flag);
    return st;
}

template <class T>
bool vec_ok(const void *p, int64_t ld)
{
    return aligned16(p) && (ld * int64_t(sizeof(T))) % 16 == 0;
}

template <class T>
pk_status compute(pk_ctx *ctx, const pk__gemm_args *a, const void *A, const void *B, void *C)
{
    const T alpha = *static_cast<const T *>(a->alpha), beta = *static_cast<const T *>(a->beta);
    T *c = static_cast<T *>(C);
    if (a->k == 0 || alpha == T(0)) {
        const int64_t blocks = (a->m * a->n + kThreads - 1) / kThreads;
        k_scale<T><<<unsigned(blocks < 4096 ? blocks : 4096), kThreads, 0, state(ctx)->stream>>>(
            c, a->m, a->n, a->ldc, beta);
        PK_CU_LAUNCH(ctx, "k_scale launch");
        return PK_OK;
    }
    /* op(A) rows are m, op(B)^T rows are n; k-contiguous unless transposed
     * (A) or not transposed (B). */
    const bool ka = a->ta == PK_NO_TRANS, kb = a->tb == PK_TRANS;
    Prob<T> p;
    p.m = a->m, p.n = a->n, p.k = a->k;
    p.a = {static_cast<const T *>(A), a->lda, vec_ok<T>(A, a->lda)};
    p.b = {static_cast<const T *>(B), a->ldb, vec_ok<T>(B, a->ldb)};
    p.c = c, p.ldc = a->ldc, p.alpha = alpha, p.beta = beta;
    p.c_vec = vec_ok<T>(C, a->ldc);
    if constexpr (sizeof(T) == 8) {
        return gemm_simt_f64(ctx, p, ka, kb);
    } else {
        if (a->mode == PK_GEMM_FP32) return gemm_simt_f32(ctx, p, ka, kb);
        if (a->mode == PK_GEMM_FP32_ACCURATE) return accurate(ctx, p, ka, kb);
        if (gemm_wgmma_usable(ctx, p)) return gemm_wgmma_f32(ctx, p, ka, kb, false);
        return gemm_tc_f32(ctx, p, ka, kb, false);
    }
}

} // namespace

pk_status gemm(pk_ctx *ctx, const pk__gemm_args *a)
{
    DeviceGuard g(ctx);
    if (g.status()) return g.status();
    State *s = state(ctx);
    const size_t sz = a->t == PK_F32 ? 4 : 8;
    const bool reads_ab = a->k > 0 && (a->t == PK_F32 ? *static_cast<const float *>(a->alpha) != 0.f
                                                      : *static_cast<const double *>(a->alpha) != 0.0);
    const bool reads_c = a->t == PK_F32 ? *static_cast<const float *>(a->beta) != 0.f
                                        : *static_cast<const double *>(a->beta) != 0.0;
    Where wa = kDevice, wb = kDevice, wc;
    pk_status st;
    if (reads_ab && ((st = where(ctx, a->A, "A", &wa)) || (st = where(ctx, a->B, "B", &wb))))
        return st;
    if ((st = where(ctx, a->C, "C", &wc))) return st;

    DevScratch sa(s), sb(s), sc(s); /* device copies of host operands */
    const void *dA = a->A, *dB = a->B, *dC = a->C;
    const int64_t ar = a->ta ? a->k : a->m, ac = a->ta ? a->m : a->k;
    const int64_t br = a->tb ? a->n : a->k, bc = a->tb ? a->k : a->n;
    const size_t cbytes = size_t(span(a->m, a->n, a->ldc)) * sz;
    if (reads_ab &&
        ((st = on_device(ctx, a->A, wa, size_t(span(ar, ac, a->lda)) * sz, true, &sa.p, &dA)) ||
         (st = on_device(ctx, a->B, wb, size_t(span(br, bc, a->ldb)) * sz, true, &sb.p, &dB))))
        return st;
    if ((st = on_device(ctx, a->C, wc, cbytes, reads_c, &sc.p, &dC))) return st;

    void *C = const_cast<void *>(dC);
    st = a->t == PK_F32 ? compute<float>(ctx, a, dA, dB, C) : compute<double>(ctx, a, dA, dB, C);
    if (st) return st;
    if (wc != kDevice) {
        PK_CU(ctx, cudaMemcpy2DAsync(a->C, size_t(a->ldc) * sz, C, size_t(a->ldc) * sz,
                                     size_t(a->n) * sz, size_t(a->m), cudaMemcpyDeviceToHost,
                                     s->stream));
        PK_CU(ctx, cudaStreamSynchronize(s->stream));
    }
    return PK_OK;
}

} // namespace pk_cuda
