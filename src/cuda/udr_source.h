/* The CUDA C++ that user-defined reductions compile with NVRTC: a prelude
 * (types and helpers) that udr.cu fills in, then the kernels. Kept apart
 * from udr.cu so that the generated text reads as one program.
 *
 * Tree (the same bits on every run, whatever the grid): a row is cut into
 * slices of `slice` elements, a slice into 8 warp ranges, a warp range into
 * chunks of 32 * S elements (S = PK_VEC * PK_U), one S-element run per lane.
 * Each lane folds its run in order; a warp folds its lanes in a neighbour
 * tree (lane l with l + d, d = 1, 2, 4, ...), so element order is kept;
 * warp results fold in order per chunk, then per slice; slices combine in
 * order in the block that takes the row's last ticket. Nothing assumes
 * commutativity. */
#ifndef PK_CUDA_UDR_SOURCE_H
#define PK_CUDA_UDR_SOURCE_H

/* printf arguments: In, T, PK_ARG, PK_VEC, the identity's bits, map,
 * combine, final. */
static const char kUdrPrelude[] = R"PK(
typedef %s In;
typedef %s T;
#define PK_ARG %d
#define PK_VEC %d
#define PK_U 4
#define PK_IDENTITY ((T)__longlong_as_double(%lldLL))
static __device__ __forceinline__ T pk_min(T p, T q) { return q < p ? q : p; }
static __device__ __forceinline__ T pk_max(T p, T q) { return p < q ? q : p; }
static __device__ __forceinline__ T pk_fmin(T p, T q) { return q != q ? p : (p != p || q < p) ? q : p; }
static __device__ __forceinline__ T pk_fmax(T p, T q) { return q != q ? p : (p != p || q > p) ? q : p; }
static __device__ __forceinline__ T pk_isnan(T v) { return (T)(v != v); }
static __device__ __forceinline__ T pk_isinf(T v) { return (T)(v - v != v - v && v == v); }
static __device__ __forceinline__ T pk_map(T x, long long ii) { T i = (T)ii; (void)i; (void)x; return %s; }
static __device__ __forceinline__ T pk_comb(T a, T b) { (void)a; (void)b; return %s; }
static __device__ __forceinline__ T pk_final(T r) { (void)r; return %s; }
)PK";

static const char kUdrKernels[] = R"PK(
struct Acc { T v; long long i; };
static __device__ __forceinline__ Acc pk_acc(T v, long long i) { Acc a; a.v = v; a.i = i; return a; }
/* a's index is kept where the combine kept a's value (pk.h) */
static __device__ __forceinline__ Acc pk_comb2(Acc a, Acc b)
{
    T r = pk_comb(a.v, b.v);
#if PK_ARG
    return pk_acc(r, a.i >= 0 && (r == a.v || (r != r && a.v != a.v)) ? a.i : b.i);
#else
    return pk_acc(r, 0);
#endif
}
static __device__ __forceinline__ Acc pk_shfl_down(Acc v, int d)
{
    Acc o;
    o.v = __shfl_down_sync(0xffffffffu, v.v, d);
#if PK_ARG
    o.i = __shfl_down_sync(0xffffffffu, v.i, d);
#else
    o.i = 0;
#endif
    return o;
}
static __device__ __forceinline__ Acc pk_bcast0(Acc v)
{
    v.v = __shfl_sync(0xffffffffu, v.v, 0);
#if PK_ARG
    v.i = __shfl_sync(0xffffffffu, v.i, 0);
#endif
    return v;
}
/* lane 0 gets lanes 0..31 folded in order */
static __device__ __forceinline__ Acc pk_warp_fold(Acc v)
{
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        Acc o = pk_shfl_down(v, d);
        if ((lane & (2 * d - 1)) == 0) v = pk_comb2(v, o);
    }
    return v;
}
static __device__ __forceinline__ Acc pk_elem(In x, long long j) { return pk_acc(pk_map((T)x, j), j); }

/* The warp's range [lo, hi) of p (indices j), folded; every lane returns it. */
static __device__ Acc pk_warp_range(const In *__restrict__ p, long long lo, long long hi, bool al)
{
    const int lane = threadIdx.x & 31;
    const int S = PK_VEC * PK_U;
    Acc acc = pk_acc(PK_IDENTITY, -1);
    for (long long c = lo; c < hi; c += 32 * S) {
        const long long s0 = c + (long long)lane * S;
        Acc v = pk_acc(PK_IDENTITY, -1);
        if (al && c + 32 * S <= hi) {
            union { uint4 q[PK_U]; In e[S]; } u;
#pragma unroll
            for (int k = 0; k < PK_U; k++) u.q[k] = __ldg(reinterpret_cast<const uint4 *>(p + s0) + k);
#pragma unroll
            for (int e = 0; e < S; e++) v = pk_comb2(v, pk_elem(u.e[e], s0 + e));
        } else {
            for (int e = 0; e < S; e++)
                if (s0 + e < hi) v = pk_comb2(v, pk_elem(p[s0 + e], s0 + e));
        }
        acc = pk_comb2(acc, pk_bcast0(pk_warp_fold(v)));
    }
    return acc;
}

static __device__ __forceinline__ void pk_store(void *out, long long k, Acc a)
{
#if PK_ARG
    static_cast<long long *>(out)[k] = a.i;
#else
    static_cast<T *>(out)[k] = pk_final(a.v);
#endif
}

/* 8 warp values in order: thread 0 gets the fold. */
static __device__ __forceinline__ Acc pk_block_fold(Acc *sh)
{
    Acc b = sh[0];
    for (int k = 1; k < 8; k++) b = pk_comb2(b, sh[k]);
    return b;
}

/* Rows of cols elements, ld apart; `slices` slices of `slice` elements
 * (a multiple of 8 * 32 * S) per row; out[row]. */
extern "C" __global__ void __launch_bounds__(256)
pk_udr_slices(const In *__restrict__ x, long long rows, long long cols, long long ld,
              long long slice, long long slices, Acc *part, unsigned *cnt, void *out)
{
    __shared__ Acc sh[8];
    __shared__ bool last;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const long long items = rows * slices, wlen = slice / 8;
    for (long long item = blockIdx.x; item < items; item += gridDim.x) {
        const long long row = item / slices, s = item - row * slices;
        const In *p = x + row * ld;
        const bool al = (reinterpret_cast<unsigned long long>(p) & 15) == 0;
        long long lo = s * slice + warp * wlen, hi = lo + wlen < cols ? lo + wlen : cols;
        Acc acc = lo < hi ? pk_warp_range(p, lo, hi, al) : pk_acc(PK_IDENTITY, -1);
        if (lane == 0) sh[warp] = acc;
        __syncthreads();
        if (threadIdx.x == 0) {
            Acc b = pk_block_fold(sh);
            last = false;
            if (slices == 1) {
                pk_store(out, row, b);
            } else {
                __stcg(&part[item].v, b.v);
                __stcg(&part[item].i, b.i);
                __threadfence();
                last = atomicAdd(&cnt[row], 1u) == (unsigned)(slices - 1);
            }
        }
        __syncthreads();
        if (last) { /* uniform: the row's partials, in order */
            __threadfence();
            const Acc *q = part + row * slices;
            const long long per = (slices + 255) / 256, b0 = threadIdx.x * per;
            const long long b1 = b0 + per < slices ? b0 + per : slices;
            Acc v = pk_acc(PK_IDENTITY, -1);
            for (long long k = b0; k < b1; k++) v = pk_comb2(v, pk_acc(__ldcg(&q[k].v), __ldcg(&q[k].i)));
            v = pk_warp_fold(v);
            if (lane == 0) sh[warp] = v;
            __syncthreads();
            if (threadIdx.x == 0) {
                pk_store(out, row, pk_block_fold(sh));
                cnt[row] = 0;
            }
        }
        __syncthreads();
    }
}

/* axis 0: a thread per column, a left fold down the rows. */
extern "C" __global__ void __launch_bounds__(256)
pk_udr_cols(const In *__restrict__ x, long long rows, long long cols, long long ld, void *out)
{
    for (long long c = blockIdx.x * 256LL + threadIdx.x; c < cols; c += gridDim.x * 256LL) {
        Acc acc = pk_acc(PK_IDENTITY, -1);
        for (long long r = 0; r < rows; r++) acc = pk_comb2(acc, pk_elem(x[r * ld + c], r));
        pk_store(out, c, acc);
    }
}
)PK";

#endif
