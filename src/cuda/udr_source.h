/* The CUDA C++ that user-defined reductions compile with NVRTC: a prelude
 * (types and helpers) that udr.cu fills in, then the kernels. Kept apart
 * from udr.cu so that the generated text reads as one program.
 *
 * Tree (the same bits on every run, whatever the grid): a row is cut into
 * slices of `slice` elements, a slice into chunks of 32 * S elements
 * (S = PK_VEC * PK_U), a chunk into one S-element run per lane. Each lane
 * folds its run in order; a warp folds its lanes in a neighbour tree (lane l
 * with l + d, d = 1, 2, 4, ...), so element order is kept; a slice's chunk
 * values fold in order (contiguous runs per lane, then the same neighbour
 * tree); slices combine in order in the block that takes the row's last
 * ticket. Lines (pk_udr_lines: columns, or short rows) are cut into
 * segments, each a left fold; the segments' partials fold in groups, each a
 * contiguous run per lane and the neighbour tree (pk_udr_fold). Nothing
 * assumes commutativity. */
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
#define PK_NSTAGE 2
#define PK_MAX_CHUNKS 512
#define PK_IDENTITY ((T)__longlong_as_double(%lldLL))
static __device__ __forceinline__ T pk_min(T p, T q) { return q < p ? q : p; }
static __device__ __forceinline__ T pk_max(T p, T q) { return p < q ? q : p; }
/* fmin/fmax: IEEE 754-2019 minimumNumber/maximumNumber, as the CPU's
 * (src/cpu/udr_tmpl.h, src/core/expr.c): a NaN operand is ignored, two NaNs
 * give the default NaN (+, quiet, payload 0; not the GPU's 0x7fffffff),
 * -0 < +0 (equal operands: OR of the bits for fmin, AND for fmax). The
 * same functions as the CPU's selects, written plainly. Commutative and
 * associative bit for bit, so the warp and slice trees give the CPU's bits. */
static __device__ __forceinline__ float pk_qnan(float) { return __int_as_float(0x7fc00000); }
static __device__ __forceinline__ double pk_qnan(double) { return __longlong_as_double(0x7ff8000000000000LL); }
static __device__ __forceinline__ float pk_bits(float p, float q, bool o) { int a = __float_as_int(p), b = __float_as_int(q); return __int_as_float(o ? a | b : a & b); }
static __device__ __forceinline__ double pk_bits(double p, double q, bool o) { long long a = __double_as_longlong(p), b = __double_as_longlong(q); return __longlong_as_double(o ? a | b : a & b); }
static __device__ __forceinline__ T pk_fmin(T p, T q) { return p != p ? (q != q ? pk_qnan(p) : q) : q != q ? p : p == q ? pk_bits(p, q, true) : q < p ? q : p; }
static __device__ __forceinline__ T pk_fmax(T p, T q) { return p != p ? (q != q ? pk_qnan(p) : q) : q != q ? p : p == q ? pk_bits(p, q, false) : q > p ? q : p; }
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

/* One lane's run of S elements starting at index s0, folded in order. */
static __device__ __forceinline__ Acc pk_run(const In *e, long long s0)
{
    Acc v = pk_acc(PK_IDENTITY, -1);
#pragma unroll
    for (int k = 0; k < PK_VEC * PK_U; k++) v = pk_comb2(v, pk_elem(e[k], s0 + k));
    return v;
}

#if __CUDA_ARCH__ >= 800
/* Full chunks go through shared memory: the warp copies a chunk with
 * coalesced 16-byte cp.async (lane l takes vectors l, l + 32, ...), the next
 * one in flight meanwhile, and each lane then reads its own run of PK_U
 * vectors. Read straight from global memory a run is 64 bytes a lane (half
 * coalesced) and the compiler kept two of a lane's four loads in flight:
 * sum of squares at 2^28 reached 89% of the read bandwidth on an H100
 * (pk_dot: 96%); staged, 92-93%.
 * Slot v ^ ((v >> 3) & 7) keeps both the copies and the reads free of bank
 * conflicts (each quarter-warp touches eight different 16-byte banks). No
 * L2 prefetch-size hint: `.L2::256B` tied on an H100 and cost 4-5% on an
 * H200 (sum of squares at 2^28: 299 -> 284 us without it). */
#define PK_STAGED 1
static __device__ __forceinline__ int pk_slot(int v) { return v ^ ((v >> 3) & 7); }
static __device__ __forceinline__ void pk_stage(const In *src, uint4 *dst, int lane)
{
#pragma unroll
    for (int k = 0; k < PK_U; k++) {
        const int v = k * 32 + lane;
        const unsigned a = (unsigned)__cvta_generic_to_shared(dst + pk_slot(v));
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(a),
                     "l"(reinterpret_cast<const uint4 *>(src) + v) : "memory");
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
}
#else
#define PK_STAGED 0
#endif

/* The warp's chunks w, w + 8, w + 16, ... (w: the warp) of the slice
 * [b0, b1) of p, each folded; chunk k's value goes to res[k]. The block's
 * eight warps thus read the slice front to back together, as the built-in
 * reductions do. stg: the warp's PK_NSTAGE x 32 * PK_U vectors of shared
 * memory. */
static __device__ __forceinline__ void pk_warp_chunks(const In *__restrict__ p, long long b0,
                                                      long long b1, long long ib, bool al,
                                                      uint4 *stg, Acc *res)
{
    const int lane = threadIdx.x & 31;
    const int S = PK_VEC * PK_U;
    const long long C = 32LL * S;
    const int nch = (int)((b1 - b0 + C - 1) / C);
    int k = threadIdx.x >> 5;
#if PK_STAGED
    const int full = al ? (int)((b1 - b0) / C) : 0; /* chunks [0, full): whole, aligned */
#pragma unroll
    for (int j = 0; j < PK_NSTAGE - 1; j++) {
        const int kk = k + 8 * j;
        if (kk < full) pk_stage(p + b0 + kk * C, stg + j * 32 * PK_U, lane);
        else asm volatile("cp.async.commit_group;" ::: "memory");
    }
    for (int f = 0; k < full; f++, k += 8) {
        const int kn = k + 8 * (PK_NSTAGE - 1);
        if (kn < full) pk_stage(p + b0 + kn * C, stg + ((f + PK_NSTAGE - 1) % PK_NSTAGE) * 32 * PK_U, lane);
        else asm volatile("cp.async.commit_group;" ::: "memory");
        asm volatile("cp.async.wait_group %0;" :: "n"(PK_NSTAGE - 1) : "memory");
        __syncwarp();
        const uint4 *cur = stg + (f % PK_NSTAGE) * 32 * PK_U;
        union { uint4 q[PK_U]; In e[S]; } u;
#pragma unroll
        for (int j = 0; j < PK_U; j++) u.q[j] = cur[pk_slot(lane * PK_U + j)];
        __syncwarp(); /* every lane has read this buffer before it is refilled */
        Acc v = pk_warp_fold(pk_run(u.e, ib + b0 + k * C + (long long)lane * S));
        if (lane == 0) res[k] = v;
    }
    asm volatile("cp.async.wait_group 0;" ::: "memory");
#else
    (void)stg;
#endif
    for (; k < nch; k += 8) {
        const long long c = b0 + k * C, s0 = c + (long long)lane * S;
        Acc v = pk_acc(PK_IDENTITY, -1);
        if (al && c + C <= b1) {
            union { uint4 q[PK_U]; In e[S]; } u;
#pragma unroll
            for (int j = 0; j < PK_U; j++) u.q[j] = __ldg(reinterpret_cast<const uint4 *>(p + s0) + j);
            v = pk_run(u.e, ib + s0);
        } else {
            for (int e = 0; e < S; e++)
                if (s0 + e < b1) v = pk_comb2(v, pk_elem(p[s0 + e], ib + s0 + e));
        }
        v = pk_warp_fold(v);
        if (lane == 0) res[k] = v;
    }
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
 * (a multiple of 8 and at most PK_MAX_CHUNKS chunks of 32 * S) per row;
 * out[row]. */
extern "C" __global__ void __launch_bounds__(256)
pk_udr_slices(const In *__restrict__ x, long long rows, long long cols, long long ld,
              long long ib, long long slice, long long slices, Acc *part, unsigned *cnt,
              void *out)
{
    __shared__ Acc sh[8];
    __shared__ Acc res[PK_MAX_CHUNKS];
    __shared__ bool last;
    __shared__ uint4 stg[8][PK_NSTAGE * 32 * PK_U];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const long long items = rows * slices, C = 32LL * PK_VEC * PK_U;
    for (long long item = blockIdx.x; item < items; item += gridDim.x) {
        const long long row = item / slices, s = item - row * slices;
        const In *p = x + row * ld;
        const bool al = (reinterpret_cast<unsigned long long>(p) & 15) == 0;
        const long long b0 = s * slice, b1 = b0 + slice < cols ? b0 + slice : cols;
        pk_warp_chunks(p, b0, b1, ib, al, stg[warp], res);
        __syncthreads();
        if (warp == 0) { /* the chunks in order: lane runs, then the lanes */
            const int nch = (int)((b1 - b0 + C - 1) / C), per = (nch + 31) / 32;
            const int k0 = lane * per < nch ? lane * per : nch, k1 = k0 + per < nch ? k0 + per : nch;
            Acc b = pk_acc(PK_IDENTITY, -1);
            for (int k = k0; k < k1; k++) b = pk_comb2(b, res[k]);
            b = pk_warp_fold(b);
            if (lane == 0) {
                last = false;
                if (slices == 1) {
                    pk_store(out, row, b);
                } else {
                    __stcg(&part[item].v, b.v);
                    __stcg(&part[item].i, b.i);
                    unsigned prev; /* acq_rel ticket, as draw_ticket in block.cuh */
                    asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;"
                                 : "=r"(prev) : "l"(&cnt[row]) : "memory");
                    last = prev == (unsigned)(slices - 1);
                }
            }
        }
        __syncthreads();
        if (last) { /* uniform: the row's partials, in order */
            const Acc *q = part + row * slices;
            const long long per = (slices + 255) / 256, k0 = threadIdx.x * per;
            const long long k1 = k0 + per < slices ? k0 + per : slices;
            Acc v = pk_acc(PK_IDENTITY, -1);
            for (long long k = k0; k < k1; k++) v = pk_comb2(v, pk_acc(__ldcg(&q[k].v), __ldcg(&q[k].i)));
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

/* Lines of `along` elements, element k of line j at x[k * sa + j * sl]
 * (axis 0: a column, sa = ld, sl = 1; axis 1 of short rows: a row, sa = 1,
 * sl = ld), cut into segments of `seg` elements: thread t takes line
 * t % lines of segment t / lines, a left fold. With one segment that is the
 * line's result; else the partial goes to part[s * lines + j] (pk_udr_fold). */
extern "C" __global__ void __launch_bounds__(256)
pk_udr_lines(const In *__restrict__ x, long long along, long long lines, long long sa,
             long long sl, long long seg, long long segs, Acc *part, void *out)
{
    const long long total = segs * lines;
    for (long long t = blockIdx.x * 256LL + threadIdx.x; t < total; t += gridDim.x * 256LL) {
        const long long s = t / lines, j = t - s * lines, k0 = s * seg;
        const long long k1 = k0 + seg < along ? k0 + seg : along;
        const In *p = x + j * sl;
        Acc acc = pk_acc(PK_IDENTITY, -1);
#pragma unroll 4
        for (long long k = k0; k < k1; k++) acc = pk_comb2(acc, pk_elem(p[k * sa], k));
        if (segs == 1) pk_store(out, j, acc);
        else part[t] = acc;
    }
}

/* One level of the segments' fold: a warp per (group g, line j), the
 * partials part[k * lines + j] for k in [g * group, g * group + group) in
 * order (a contiguous run per lane, then the warp's neighbour tree); the
 * result goes to next[g * lines + j], or with one group to out[j]. */
extern "C" __global__ void __launch_bounds__(256)
pk_udr_fold(const Acc *__restrict__ part, long long lines, long long n, long long group,
            Acc *next, void *out)
{
    const int lane = threadIdx.x & 31;
    const long long groups = (n + group - 1) / group, items = groups * lines;
    const long long warps = gridDim.x * 8LL;
    for (long long it = blockIdx.x * 8LL + (threadIdx.x >> 5); it < items; it += warps) {
        const long long g = it / lines, j = it - g * lines, b0 = g * group;
        const long long m = b0 + group < n ? group : n - b0, per = (m + 31) / 32;
        const long long k0 = lane * per < m ? lane * per : m, k1 = k0 + per < m ? k0 + per : m;
        Acc v = pk_acc(PK_IDENTITY, -1);
        for (long long k = k0; k < k1; k++) v = pk_comb2(v, part[(b0 + k) * lines + j]);
        v = pk_warp_fold(v);
        if (lane == 0) {
            if (groups == 1) pk_store(out, j, v);
            else next[it] = v;
        }
    }
}
)PK";

#endif
