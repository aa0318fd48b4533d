/* pk_bgemm and pk_hamming on the CUDA backend: the binary GEMM kernels of
 * bits_mma.cuh with a store epilogue (C = k - 2h as int32, or h as int32 or
 * u16), pairs of adjacent columns stored together when aligned. */
#include "cuda/bits_mma.cuh"

namespace pk_cuda {

namespace {

/* out[i * ld + j] = f(h) as T; vec: pairs of T may be stored as one. */
template <class T, bool kBgemm>
struct EpiStore {
    /* The wgmma kernel may store whole boxes of value(h) (bits_wgmma.cuh). */
    using Elem = T;
    static constexpr bool kTileStore = true;
    T *out;
    int64_t ld;
    int32_t k;
    bool vec;

    __device__ __forceinline__ T value(int h) const
    {
        /* k - 2h lies in [-k, k]; 2h alone may pass INT32_MAX */
        return kBgemm ? T(int(unsigned(k) - 2u * unsigned(h))) : T(h);
    }
    __device__ __forceinline__ void one(int64_t i, int64_t j, int h) const
    {
        out[i * ld + j] = value(h);
    }
    __device__ __forceinline__ void row(int64_t i, int64_t j0, const int (&h)[16],
                                        unsigned valid) const
    {
        T *r = out + i * ld;
#pragma unroll
        for (int q = 0; q < 8; q++) {
            const int64_t j = j0 + 8 * q;
            const unsigned v = (valid >> (2 * q)) & 3u;
            if (v == 3u && vec) {
                if constexpr (sizeof(T) == 4) {
                    int2 p;
                    p.x = int(value(h[2 * q]));
                    p.y = int(value(h[2 * q + 1]));
                    *reinterpret_cast<int2 *>(r + j) = p;
                } else {
                    const uint32_t p = uint32_t(uint16_t(value(h[2 * q]))) |
                                       uint32_t(uint16_t(value(h[2 * q + 1]))) << 16;
                    *reinterpret_cast<uint32_t *>(r + j) = p;
                }
            } else {
                if (v & 1u) r[j] = value(h[2 * q]);
                if (v & 2u) r[j + 1] = value(h[2 * q + 1]);
            }
        }
    }
};

/* The tensor cores pay from a few tiles' worth of work; below that (and
 * on GPUs before sm_80) the CUDA-core kernel. */
constexpr int64_t kMinMmaWork = int64_t(1) << 15; /* m * n * words */

template <class T, bool kBgemm>
pk_status run(pk_ctx *ctx, const pk__bits_args *a, void *out, int64_t ld,
              const char *oname)
{
    DeviceGuard g(ctx);
    if (g.status()) return g.status();
    CallBuffers bufs(ctx);
    const bool mma = bits_use_mma(ctx, a->m, a->n, a->k);
    BitsOperand A, B;
    Output o;
    pk_status s;
    if ((s = prepare_operand(ctx, bufs, a->A, kBgemm ? "A" : "Q", a->m, a->lda, a->k, mma,
                             &A)) ||
        (s = prepare_operand(ctx, bufs, a->B, kBgemm ? "B" : "X", a->n, a->ldb, a->k, mma,
                             &B)) ||
        (s = output_on_device(ctx, bufs, out, oname, a->m, a->n, ld, sizeof(T), &o)))
        return s;
    EpiStore<T, kBgemm> epi;
    epi.out = static_cast<T *>(o.dev);
    epi.ld = ld;
    epi.k = int32_t(a->k);
    epi.vec = ld % 2 == 0 && (uintptr_t(o.dev) % (2 * sizeof(T))) == 0;
    if ((s = bmma::launch(ctx, A, B, a->m, a->n, a->k, mma, epi))) return s;
    return finish_output(ctx, o);
}

} // namespace

bool bits_use_mma(pk_ctx *ctx, int64_t m, int64_t n, int64_t k)
{
    const State *s = state(ctx);
    if (s->cc_major < 8) return false;
    const int64_t words = pk_bits_words(k);
    /* m * n * words >= kMinMmaWork, without overflow */
    const double work = double(m) * double(n) * double(words > 0 ? words : 1);
    return work >= double(kMinMmaWork) && k > 0;
}

pk_status bgemm(pk_ctx *ctx, const pk__bits_args *a, int32_t *C, int64_t ldc)
{
    return run<int32_t, true>(ctx, a, C, ldc, "C");
}

pk_status hamming(pk_ctx *ctx, const pk__bits_args *a, pk_hamming_dtype dt, void *D,
                  int64_t ldd)
{
    if (dt == PK_HAMMING_U16) return run<uint16_t, false>(ctx, a, D, ldd, "D");
    return run<int32_t, false>(ctx, a, D, ldd, "D");
}

} // namespace pk_cuda
