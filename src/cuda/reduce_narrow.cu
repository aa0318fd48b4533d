/* Axis reductions of narrow contiguous matrices (ld == cols, cols dividing
 * the 16-byte vector: 1, 2 or 4 columns of 4-byte elements, 1 or 2 of 8-byte
 * ones), such as 10^7 x 2. The matrix is read as one flat array of 16-byte
 * vectors, so each load brings whole rows:
 *
 *  axis = 1 (k_rows_flat): a thread reduces the rows of its vector, each row
 *    in order, and writes them. Grid-stride over vectors.
 *  axis = 0 (k_cols_flat): the flat array is cut into slices as in reduce.cu
 *    (plan fixed by the size). Thread t keeps one partial per vector lane e
 *    (f32 sums: as the whole-array sum, TwoSum in f32 with f64 errors),
 *    whose column is e % cols, over vectors t, t + 256, ... of its slice;
 *    lanes fold into columns in lane order, the block reduces each column,
 *    and the last block (ticket) combines the slices' partials per column.
 *
 * Unaligned data take scalar loads at the same positions: same bits. */
#include "cuda/block.cuh"
#include "cuda/launch.cuh"
#include "cuda/ops.cuh"

namespace pk_cuda {

namespace {

constexpr int kUnroll = 4;      /* k_rows_flat */
constexpr int kColsUnroll = 8;  /* k_cols_flat: as the slice kernel */
constexpr int kSumUnroll = 4;   /* k_cols_flat, f32 sums: as reduce.cu's (8 spilled) */
constexpr int64_t kMinSliceBytes = 16384;
constexpr int64_t kMaxSlices = 512;

/* Vector j of the flat array (m of its elements exist). */
template <class In>
__device__ __forceinline__ int load_flat(const In *x, int64_t j, int64_t n, bool aligned,
                                         In (&v)[vec_of<In>()])
{
    constexpr int V = vec_of<In>();
    const int64_t f = j * V;
    if (aligned && f + V <= n) {
        uint4 q = ld_stream16(x + f);
        memcpy(v, &q, 16);
        return V;
    }
    const int m = n - f < V ? int(n - f) : V;
#pragma unroll
    for (int e = 0; e < V; e++)
        if (e < m) v[e] = ld_ro(x + f + e);
    return m;
}

template <class Op>
__global__ void __launch_bounds__(kThreads)
k_rows_flat(const typename Op::In *x, int64_t rows, int shift, bool aligned,
            typename Op::Out *out)
{
    using In = typename Op::In;
    using Acc = typename Op::Acc;
    constexpr int V = vec_of<In>();
    const int cols = 1 << shift;
    const int64_t n = rows << shift, nv = (n + V - 1) / V;
    const int64_t stride = int64_t(gridDim.x) * kThreads;
    for (int64_t j0 = int64_t(blockIdx.x) * kThreads + threadIdx.x; j0 < nv;
         j0 += kUnroll * stride) {
        In v[kUnroll][V];
        int m[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; u++)
            m[u] = j0 + u * stride < nv ? load_flat(x, j0 + u * stride, n, aligned, v[u]) : 0;
#pragma unroll
        for (int u = 0; u < kUnroll; u++) {
            Acc acc = Op::identity();
#pragma unroll
            for (int e = 0; e < V; e++) {
                if (e >= m[u]) break;
                Op::add(acc, v[u][e], e & (cols - 1));
                if ((e & (cols - 1)) == cols - 1) {
                    out[((j0 + u * stride) * V + e) >> shift] = Op::finish(acc);
                    acc = Op::identity();
                }
            }
        }
    }
}

template <class Op> struct FlatColsArgs {
    const typename Op::In *x;
    int64_t n;        /* rows * cols elements */
    int shift;        /* cols = 1 << shift    */
    bool aligned;
    int64_t slice_vecs, slices;
    typename Op::Acc *part; /* [slices][cols] */
    unsigned *cnt;
    typename Op::Out *out;  /* [cols] */
};

/* Vectors j0, j0 + kThreads, ... (U of them) of the flat array, those
 * before ve; m[u] = 0 for the others. */
template <class Op, int U>
__device__ __forceinline__ void load_group(const FlatColsArgs<Op> &a, int64_t j0, int64_t ve,
                                           typename Op::In (&v)[U][vec_of<typename Op::In>()],
                                           int (&m)[U])
{
#pragma unroll
    for (int u = 0; u < U; u++)
        m[u] = j0 + u * kThreads < ve ? load_flat(a.x, j0 + u * kThreads, a.n, a.aligned, v[u]) : 0;
}

template <class Op>
__global__ void __launch_bounds__(kThreads, 4) k_cols_flat(FlatColsArgs<Op> a)
{
    using In = typename Op::In;
    using Acc = typename Op::Acc;
    constexpr int V = vec_of<In>();
    __shared__ bool last;
    const int cols = 1 << a.shift;
    const int64_t nv = (a.n + V - 1) / V;
    for (int64_t s = blockIdx.x; s < a.slices; s += gridDim.x) {
        const int64_t vb = s * a.slice_vecs;
        const int64_t ve = vb + a.slice_vecs < nv ? vb + a.slice_vecs : nv;
        Acc acc[V];
#pragma unroll
        for (int e = 0; e < V; e++) acc[e] = Op::identity();
        if constexpr (kF32Sum<Op>) {
            /* The whole-array sum's scheme (reduce.cu, thread_partial): TwoSum
             * in f32 with f64 errors per lane, a lane redone with double-double
             * adds where that is not finite. */
            float s[V];
            double er[V];
#pragma unroll
            for (int e = 0; e < V; e++) s[e] = 0.0f, er[e] = 0.0;
            for (int64_t j0 = vb + threadIdx.x; j0 < ve; j0 += kSumUnroll * kThreads) {
                In v[kSumUnroll][V];
                int m[kSumUnroll];
                load_group(a, j0, ve, v, m);
#pragma unroll
                for (int u = 0; u < kSumUnroll; u++)
#pragma unroll
                    for (int e = 0; e < V; e++)
                        if (e < m[u]) two_sum_f32(s[e], er[e], v[u][e]);
            }
            bool redo = false;
#pragma unroll
            for (int e = 0; e < V; e++) {
                if (isfinite(s[e]) && isfinite(er[e])) acc[e] = Acc{s[e], er[e]};
                else redo = true;
            }
            if (redo)
                for (int64_t j0 = vb + threadIdx.x; j0 < ve; j0 += kThreads) {
                    In v[1][V];
                    int m[1];
                    load_group(a, j0, ve, v, m);
#pragma unroll
                    for (int e = 0; e < V; e++)
                        if (e < m[0] && !(isfinite(s[e]) && isfinite(er[e])))
                            Op::add(acc[e], v[0][e], 0);
                }
        } else {
            for (int64_t j0 = vb + threadIdx.x; j0 < ve; j0 += kColsUnroll * kThreads) {
                In v[kColsUnroll][V];
                int m[kColsUnroll];
                load_group(a, j0, ve, v, m);
#pragma unroll
                for (int u = 0; u < kColsUnroll; u++)
#pragma unroll
                    for (int e = 0; e < V; e++)
                        if (e < m[u])
                            Op::add(acc[e], v[u][e], ((j0 + u * kThreads) * V + e) >> a.shift);
            }
        }
        /* Fold lanes into columns, then reduce each column over the block. */
#pragma unroll
        for (int c = 0; c < V; c++) { /* c < cols: uniform over the block */
            if (c >= cols) break;
            Acc ca = acc[c];
#pragma unroll
            for (int e = 0; e < V; e++)
                if (e > c && (e & (cols - 1)) == c) ca = Op::combine(ca, acc[e]);
            ca = block_reduce<Op>(ca);
            if (threadIdx.x == 0) {
                if (a.slices == 1) a.out[c] = Op::finish(ca);
                else store_cg(&a.part[s * cols + c], ca);
            }
        }
        if (a.slices == 1) continue;
        if (threadIdx.x == 0) last = draw_ticket(a.cnt) == (unsigned)(a.slices - 1);
        __syncthreads();
        if (last) {
            for (int c = 0; c < cols; c++) {
                Acc ca = Op::identity();
                for (int64_t i = threadIdx.x; i < a.slices; i += kThreads)
                    ca = Op::combine(ca, load_cg(&a.part[i * cols + c]));
                ca = block_reduce<Op>(ca);
                if (threadIdx.x == 0) a.out[c] = Op::finish(ca);
            }
            if (threadIdx.x == 0) *a.cnt = 0;
        }
        __syncthreads();
    }
}

int log2_of(int64_t c) { return c == 1 ? 0 : c == 2 ? 1 : 2; }

} // namespace

bool narrow_flat(pk_dtype t, int64_t cols, int64_t ld)
{
    const int64_t V = int64_t(16 / pk__dtypes[t].size);
    return ld == cols && (cols == 1 || cols == 2 || cols == 4) && cols <= V;
}

pk_status reduce_narrow(pk_ctx *ctx, pk_op op, pk_dtype t, const void *x, int64_t rows,
                        int64_t cols, int axis, void *out)
{
    return dispatch(op, t, [&](auto o) -> pk_status {
        using Op = decltype(o);
        using In = typename Op::In;
        constexpr int V = vec_of<In>();
        State *st = state(ctx);
        const In *px = static_cast<const In *>(x);
        const int shift = log2_of(cols);
        const bool al = aligned16(x);
        const int64_t n = rows * cols, nv = (n + V - 1) / V;
        if (axis == 1) {
            auto k = k_rows_flat<Op>;
            int64_t blocks = (nv + kThreads * kUnroll - 1) / (kThreads * kUnroll);
            return launch_kernel(ctx, k, grid_for(ctx, k, blocks), 0, st->stream,
                                 "k_rows_flat launch", px, rows, shift, al,
                                 static_cast<typename Op::Out *>(out));
        }
        FlatColsArgs<Op> a;
        a.x = px;
        a.n = n;
        a.shift = shift;
        a.aligned = al;
        int64_t s = (n * int64_t(sizeof(In)) + kMinSliceBytes - 1) / kMinSliceBytes;
        if (s > kMaxSlices) s = kMaxSlices;
        if (s < 1) s = 1;
        a.slice_vecs = (nv + s - 1) / s;
        a.slices = a.slice_vecs ? (nv + a.slice_vecs - 1) / a.slice_vecs : 1;
        pk_status ps;
        if (a.slices > 1 &&
            (ps = ensure_partials(ctx, size_t(a.slices * cols) * sizeof(typename Op::Acc))))
            return ps;
        if ((ps = ensure_counters(ctx, 1))) return ps;
        a.part = static_cast<typename Op::Acc *>(st->part);
        a.cnt = st->cnt;
        a.out = static_cast<typename Op::Out *>(out);
        auto k = k_cols_flat<Op>;
        return launch_kernel(ctx, k, grid_for(ctx, k, a.slices), 0, st->stream,
                             "k_cols_flat launch", a);
    });
}

} // namespace pk_cuda
