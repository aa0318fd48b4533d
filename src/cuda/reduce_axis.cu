/* Axis reductions of a row-major rows x cols matrix with leading dimension
 * ld, in one launch, deterministic (every tree is fixed by the shape):
 *
 *  axis = 1, cols <= kShortRow: k_rows. A group of g lanes (g = the power of
 *    two >= cols, at most 32) reduces one row: lane l takes elements l, l+g,
 *    ... in order, then the group combines in a fixed shuffle tree. A warp
 *    reads 32/g rows at once (coalesced for short contiguous rows), each
 *    lane keeps several rows in flight.
 *  axis = 1, longer rows: the slice kernel of reduce.cu, one or more blocks
 *    per row.
 *  axis = 0: k_cols. Threads run over columns (ct columns a block; 16-byte
 *    vectors when the rows are aligned and wide), j row lanes (a power of
 *    two) share a block's rows when the matrix is narrow, and the rows are cut
 *    into nrb row blocks of h rows fixed by the shape. Each row block writes
 *    one partial per column; the last row block to finish a column tile
 *    combines them in order (ticket counter per tile) and writes the result.
 *
 * Host inputs are staged to the device whole (through the pinned buffers);
 * host outputs are written to a device buffer and copied back. */
#include "cuda/block.cuh"
#include "cuda/launch.cuh"
#include "cuda/ops.cuh"

namespace pk_cuda {

namespace {

constexpr int64_t kShortRow = 2048;
constexpr int kRowUnroll = 8;
constexpr int kColUnroll = 8;
/* Axis 0: aim at this many blocks; a block gets at least kMinColElems. */
constexpr int64_t kColTarget = 1024;
constexpr int64_t kMinColElems = 8192;

/* ---- axis 1, short rows -------------------------------------------------- */

template <class Op> struct RowsArgs {
    const typename Op::In *x;
    int64_t rows, cols, ld;
    int g;
    typename Op::Out *out;
};

template <class Op>
__global__ void __launch_bounds__(kThreads) k_rows(RowsArgs<Op> a)
{
    using In = typename Op::In;
    using Acc = typename Op::Acc;
    const int lane = threadIdx.x & 31, g = a.g, gl = lane & (g - 1);
    const int64_t gpw = 32 / g; /* rows per warp step */
    const int64_t warp = int64_t(blockIdx.x) * (kThreads / 32) + (threadIdx.x >> 5);
    const int64_t stride = int64_t(gridDim.x) * (kThreads / 32) * gpw;
    for (int64_t r0 = warp * gpw; r0 < a.rows; r0 += kRowUnroll * stride) {
        Acc acc[kRowUnroll];
        int64_t row[kRowUnroll];
#pragma unroll
        for (int u = 0; u < kRowUnroll; u++) {
            row[u] = r0 + lane / g + u * stride;
            acc[u] = Op::identity();
        }
        for (int64_t c = gl; c < a.cols; c += g) {
            In v[kRowUnroll];
#pragma unroll
            for (int u = 0; u < kRowUnroll; u++)
                if (row[u] < a.rows) v[u] = ld_ro(a.x + row[u] * a.ld + c);
#pragma unroll
            for (int u = 0; u < kRowUnroll; u++)
                if (row[u] < a.rows) Op::add(acc[u], v[u], c);
        }
#pragma unroll
        for (int u = 0; u < kRowUnroll; u++) {
            Acc r = warp_reduce<Op>(acc[u], g);
            if (gl == 0 && row[u] < a.rows) a.out[row[u]] = Op::finish(r);
        }
    }
}

/* ---- axis 0 ------------------------------------------------------------------ */

template <class Op> struct ColsArgs {
    const typename Op::In *x;
    int64_t rows, cols, ld;
    int64_t ct;  /* columns per block (tile)          */
    int j;       /* row lanes (power of two)          */
    int64_t h;   /* rows per row block                */
    int64_t nrb; /* row blocks (gridDim.y)            */
    bool aligned; /* rows 16-byte aligned: vector loads */
    typename Op::Acc *part; /* [nrb][cols] when nrb > 1 */
    unsigned *cnt;          /* [tiles]                  */
    typename Op::Out *out;
};

/* Combine the row lanes' partials (V == 1 only) in a shared-memory tree:
 * lane 0 of each column ends with the result. All threads must call. */
template <class Op>
__device__ typename Op::Acc combine_lanes(typename Op::Acc a, int jl, int ctt, int J)
{
    using Acc = typename Op::Acc;
    __shared__ Acc sm[kThreads];
    if (J == 1) return a;
    sm[threadIdx.x] = a;
    __syncthreads();
    for (int s = J >> 1; s > 0; s >>= 1) {
        if (jl < s) sm[threadIdx.x] = Op::combine(sm[threadIdx.x], sm[threadIdx.x + s * ctt]);
        __syncthreads();
    }
    a = sm[threadIdx.x];
    __syncthreads();
    return a;
}

/* Load m <= V consecutive columns at p: one 16-byte load when V > 1, all V
 * exist and p is aligned, else one element at a time. */
template <int V, class In>
__device__ __forceinline__ void load_cols(const In *p, int m, In (&v)[V], bool aligned)
{
    if (V > 1 && m == V && aligned) {
        uint4 q = ld_stream16(p);
        memcpy(v, &q, 16);
        return;
    }
#pragma unroll
    for (int e = 0; e < V; e++)
        if (e < m) v[e] = ld_ro(p + e);
}

template <class Op, bool kWide>
__global__ void __launch_bounds__(kThreads, 2) k_cols(ColsArgs<Op> a)
{
    using In = typename Op::In;
    using Acc = typename Op::Acc;
    constexpr int V = kWide ? vec_of<In>() : 1;
    __shared__ bool last;
    const int J = a.j, ctt = int(a.ct / V);
    const int jl = threadIdx.x / ctt, tc = threadIdx.x % ctt;
    const int64_t tile = blockIdx.x, rb = blockIdx.y;
    const int64_t c0 = tile * a.ct + int64_t(tc) * V;
    const bool active = jl < J && c0 < a.cols;
    /* Columns this thread owns: V, or fewer at the matrix's right edge. */
    const int m = active ? (a.cols - c0 < V ? int(a.cols - c0) : V) : 0;
    const int64_t rbeg = rb * a.h;
    const int64_t rend = rbeg + a.h < a.rows ? rbeg + a.h : a.rows;
    Acc acc[V];
#pragma unroll
    for (int e = 0; e < V; e++) acc[e] = Op::identity();
    if (active) {
        int64_t r = rbeg + jl;
        for (; r + (kColUnroll - 1) * J < rend; r += kColUnroll * J) {
            In v[kColUnroll][V];
#pragma unroll
            for (int u = 0; u < kColUnroll; u++)
                load_cols<V>(a.x + (r + u * J) * a.ld + c0, m, v[u], a.aligned);
#pragma unroll
            for (int u = 0; u < kColUnroll; u++)
#pragma unroll
                for (int e = 0; e < V; e++)
                    if (e < m) Op::add(acc[e], v[u][e], r + u * J);
        }
        for (; r < rend; r += J) {
            In v[V];
            load_cols<V>(a.x + r * a.ld + c0, m, v, a.aligned);
#pragma unroll
            for (int e = 0; e < V; e++)
                if (e < m) Op::add(acc[e], v[e], r);
        }
    }
#pragma unroll
    for (int e = 0; e < V; e++) acc[e] = combine_lanes<Op>(acc[e], jl, ctt, J);
    const bool writer = jl == 0 && c0 < a.cols;
    if (a.nrb == 1) {
        if (writer)
#pragma unroll
            for (int e = 0; e < V; e++)
                if (e < m) a.out[c0 + e] = Op::finish(acc[e]);
        return;
    }
    if (writer)
#pragma unroll
        for (int e = 0; e < V; e++)
            if (e < m) store_cg(&a.part[rb * a.cols + c0 + e], acc[e]);
    __syncthreads();
    if (threadIdx.x == 0) last = draw_ticket(&a.cnt[tile]) == (unsigned)(a.nrb - 1);
    __syncthreads();
    if (!last) return; /* uniform across the block */
#pragma unroll
    for (int e = 0; e < V; e++) acc[e] = Op::identity();
    if (active) {
        constexpr int Q = kWide ? 2 : 4; /* partials in flight per column */
        int64_t b = jl;
        for (; b + (Q - 1) * J < a.nrb; b += Q * J) {
            Acc q[Q][V];
#pragma unroll
            for (int u = 0; u < Q; u++)
#pragma unroll
                for (int e = 0; e < V; e++)
                    if (e < m) q[u][e] = load_cg(&a.part[(b + u * J) * a.cols + c0 + e]);
#pragma unroll
            for (int u = 0; u < Q; u++)
#pragma unroll
                for (int e = 0; e < V; e++)
                    if (e < m) acc[e] = Op::combine(acc[e], q[u][e]);
        }
        for (; b < a.nrb; b += J)
#pragma unroll
            for (int e = 0; e < V; e++)
                if (e < m) acc[e] = Op::combine(acc[e], load_cg(&a.part[b * a.cols + c0 + e]));
    }
#pragma unroll
    for (int e = 0; e < V; e++) acc[e] = combine_lanes<Op>(acc[e], jl, ctt, J);
    if (writer)
#pragma unroll
        for (int e = 0; e < V; e++)
            if (e < m) a.out[c0 + e] = Op::finish(acc[e]);
    if (threadIdx.x == 0) a.cnt[tile] = 0;
}

/* Store m <= V consecutive results at p: whole 16-byte stores when all V
 * exist, they fill whole 16-byte words and p is aligned (a warp's scalar
 * stores each touch a quarter of every sector), else one at a time. */
template <int V, class Out>
__device__ __forceinline__ void store_outs(Out *p, const Out (&o)[V], int m)
{
    constexpr int kWords = int(V * sizeof(Out) / 16);
    if (V * sizeof(Out) % 16 == 0 && m == V && (reinterpret_cast<uintptr_t>(p) & 15) == 0) {
#pragma unroll
        for (int w = 0; w < kWords; w++) {
            uint4 q;
            memcpy(&q, reinterpret_cast<const char *>(o) + 16 * w, 16);
            reinterpret_cast<uint4 *>(p)[w] = q;
        }
        return;
    }
#pragma unroll
    for (int e = 0; e < V; e++)
        if (e < m) p[e] = o[e];
}

/* axis 0 when one row block covers all rows and each thread owns whole
 * columns (J == 1): the same per-column order as k_cols, but a persistent
 * grid-stride loop with several column vectors in flight per thread (for
 * matrices of few long rows, such as 2 x 10^7). */
template <class Op, bool kVec>
__global__ void __launch_bounds__(kThreads, 2)
k_cols_few(const typename Op::In *x, int64_t rows, int64_t cols, int64_t ld,
           typename Op::Out *out)
{
    using In = typename Op::In;
    using Acc = typename Op::Acc;
    constexpr int V = kVec ? vec_of<In>() : 1, U = 4;
    const int64_t groups = (cols + V - 1) / V;
    const int64_t stride = int64_t(gridDim.x) * kThreads;
    if constexpr (kDDSum<Op>) {
        /* A sum of two rows is one addition in the input dtype (then + 0,
         * so that -0 + -0 gives +0 as every sum path does): one rounding of
         * the exact sum, the bits of the double-double adds and of the
         * CPU's pair sums, without their f64 work and conversions (2 x 10^7
         * f32 on an H200: 48.6 -> 35.0 us). */
        if (rows == 2) {
            for (int64_t g0 = int64_t(blockIdx.x) * kThreads + threadIdx.x; g0 < groups;
                 g0 += U * stride) {
                In v[U][2][V] = {};
                int m[U];
#pragma unroll
                for (int u = 0; u < U; u++) {
                    const int64_t c0 = (g0 + u * stride) * V;
                    m[u] = g0 + u * stride >= groups ? 0 : cols - c0 < V ? int(cols - c0) : V;
                    if (m[u]) {
                        load_cols<V>(x + c0, m[u], v[u][0], true);
                        load_cols<V>(x + ld + c0, m[u], v[u][1], true);
                    }
                }
#pragma unroll
                for (int u = 0; u < U; u++) {
                    typename Op::Out o[V];
#pragma unroll
                    for (int e = 0; e < V; e++) o[e] = canon_nan((v[u][0][e] + v[u][1][e]) + In(0));
                    store_outs<V>(out + (g0 + u * stride) * V, o, m[u]);
                }
            }
            return;
        }
    }
    for (int64_t g0 = int64_t(blockIdx.x) * kThreads + threadIdx.x; g0 < groups;
         g0 += U * stride) {
        Acc acc[U][V];
        int m[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const int64_t c0 = (g0 + u * stride) * V;
            m[u] = g0 + u * stride >= groups ? 0 : cols - c0 < V ? int(cols - c0) : V;
#pragma unroll
            for (int e = 0; e < V; e++) acc[u][e] = Op::identity();
        }
#pragma unroll 2
        for (int64_t r = 0; r < rows; r++) {
            In v[U][V];
#pragma unroll
            for (int u = 0; u < U; u++)
                if (m[u]) load_cols<V>(x + r * ld + (g0 + u * stride) * V, m[u], v[u], true);
#pragma unroll
            for (int u = 0; u < U; u++)
#pragma unroll
                for (int e = 0; e < V; e++)
                    if (e < m[u]) Op::add(acc[u][e], v[u][e], r);
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            typename Op::Out o[V];
#pragma unroll
            for (int e = 0; e < V; e++) o[e] = Op::finish(acc[u][e]);
            store_outs<V>(out + (g0 + u * stride) * V, o, m[u]);
        }
    }
}

template <class Op>
pk_status rows_short(pk_ctx *ctx, const void *x, int64_t rows, int64_t cols,
                     int64_t ld, void *out)
{
    RowsArgs<Op> a;
    a.x = static_cast<const typename Op::In *>(x);
    a.rows = rows;
    a.cols = cols;
    a.ld = ld;
    a.g = 1;
    while (a.g < 32 && a.g < cols) a.g <<= 1;
    a.out = static_cast<typename Op::Out *>(out);
    const int64_t per_block = (kThreads / 32) * (32 / a.g) * kRowUnroll;
    auto k = k_rows<Op>;
    return launch_kernel(ctx, k, grid_for(ctx, k, (rows + per_block - 1) / per_block), 0,
                         state(ctx)->stream, "k_rows launch", a);
}

template <class Op>
pk_status cols_reduce(pk_ctx *ctx, const void *x, int64_t rows, int64_t cols,
                      int64_t ld, void *out)
{
    using In = typename Op::In;
    constexpr int V = vec_of<In>();
    /* The tree, fixed by the shape: wide matrices give each thread V
     * columns, 64 column threads x 4 row lanes a block; narrow ones one
     * column a thread and 2^k row lanes; row blocks of h rows make about
     * kColTarget blocks of at least kMinColElems elements, with at most 32
     * partials per row lane to combine. */
    const bool wide = cols >= 64 * V;
    ColsArgs<Op> a;
    a.x = static_cast<const In *>(x);
    a.rows = rows;
    a.cols = cols;
    a.ld = ld;
    a.ct = wide ? 64 * V : (cols < kThreads ? cols : kThreads);
    int j = wide ? 4 : 1;
    if (!wide)
        while (2 * j * a.ct <= kThreads) j <<= 1;
    a.j = j;
    const int64_t tiles0 = (cols + a.ct - 1) / a.ct;
    int64_t nrb = (kColTarget + tiles0 - 1) / tiles0;
    const int64_t by_size = rows * a.ct / kMinColElems;
    if (nrb > by_size) nrb = by_size;
    if (nrb > 32 * j) nrb = 32 * j;
    if (nrb < 1) nrb = 1;
    const int64_t h = rows == 0 ? 0 : (rows + nrb - 1) / nrb;
    nrb = h == 0 ? 1 : (rows + h - 1) / h;
    a.h = h;
    a.nrb = nrb;
    /* Who loads how: does not change the tree. */
    const bool vec = aligned16(x) && (ld * int64_t(sizeof(In))) % 16 == 0;
    a.aligned = vec;
    const int64_t tiles = (cols + a.ct - 1) / a.ct;
    pk_status s;
    if (nrb > 1) {
        if ((s = ensure_partials(ctx, size_t(nrb * cols) * sizeof(typename Op::Acc)))) return s;
        if ((s = ensure_counters(ctx, size_t(tiles)))) return s;
    }
    State *st = state(ctx);
    /* One row block: each column in row order; sums of two rows of any
     * width too (k_cols_few adds them once). */
    if (nrb == 1 && (wide || (kDDSum<Op> && rows == 2))) {
        const int64_t groups = (cols + V - 1) / V;
        const int64_t blocks = (groups + 4 * kThreads - 1) / (4 * kThreads);
        auto kv = k_cols_few<Op, true>;
        auto ks = k_cols_few<Op, false>;
        auto k = vec ? kv : ks;
        return launch_kernel(ctx, k, grid_for(ctx, k, vec ? blocks : blocks * V), 0, st->stream,
                             "k_cols_few launch", a.x, rows, cols, ld,
                             static_cast<typename Op::Out *>(out));
    }
    a.part = static_cast<typename Op::Acc *>(st->part);
    a.cnt = st->cnt;
    a.out = static_cast<typename Op::Out *>(out);
    if (tiles > 0x7fffffffLL || nrb > 65535)
        return pk__fail(ctx, PK_ERR_INTERNAL, "reduce_axis: grid %lld x %lld too large",
                        (long long)tiles, (long long)nrb);
    const dim3 grid{unsigned(tiles), unsigned(nrb), 1u};
    if (wide) k_cols<Op, true><<<grid, kThreads, 0, st->stream>>>(a);
    else k_cols<Op, false><<<grid, kThreads, 0, st->stream>>>(a);
    PK_CU_LAUNCH(ctx, "k_cols launch");
    return PK_OK;
}

/* reduce_axis on a device-resident (or staged) x: the result to out, through
 * the context's buffer when out is not device memory. */
pk_status reduce_axis_staged(pk_ctx *ctx, pk_op op, pk_dtype t, const void *dx, int64_t rows,
                             int64_t cols, int64_t ld, int axis, void *out, Where wo,
                             size_t out_bytes)
{
    State *st = state(ctx);
    pk_status s;
    void *dout = out;
    if (wo != kDevice) {
        if ((s = ensure_buffer(ctx, &st->axis_out, &st->axis_out_bytes, out_bytes))) return s;
        dout = st->axis_out;
    }
    if (rows > 0 && narrow_flat(t, cols, ld))
        s = reduce_narrow(ctx, op, t, dx, rows, cols, axis, dout);
    else if (axis == 1 && cols > kShortRow)
        s = reduce_rows_long(ctx, op, t, dx, rows, cols, ld, dout);
    else
        s = dispatch(op, t, [&](auto o) {
            using Op = decltype(o);
            return axis == 1 ? rows_short<Op>(ctx, dx, rows, cols, ld, dout)
                             : cols_reduce<Op>(ctx, dx, rows, cols, ld, dout);
        });
    if (s) return s;
    if (wo != kDevice) {
        PK_CU(ctx, cudaMemcpyAsync(out, dout, out_bytes, cudaMemcpyDeviceToHost, st->stream));
        PK_CU(ctx, cudaStreamSynchronize(st->stream));
    }
    return PK_OK;
}

} // namespace

pk_status reduce_axis(pk_ctx *ctx, pk_op op, pk_dtype t, const void *x,
                      int64_t rows, int64_t cols, int64_t ld, int axis,
                      void *out)
{
    DeviceGuard g(ctx);
    if (g.status()) return g.status();
    State *st = state(ctx);
    Where wx, wo;
    pk_status s;
    if ((s = where(ctx, x, "x", &wx)) || (s = where(ctx, out, "out", &wo))) return s;
    const size_t esize = pk__dtypes[t].size;
    const size_t osize = pk__dtypes[pk_reduce_result_dtype(op, t)].size;
    const int64_t nout = axis == 0 ? cols : rows;
    const int64_t count = rows > 0 && cols > 0 ? (rows - 1) * ld + cols : 0;
    const void *dx;
    s = stage_input(ctx, x, wx, size_t(count) * esize, &dx);
    if (!s) s = reduce_axis_staged(ctx, op, t, dx, rows, cols, ld, axis, out, wo, nout * osize);
    trim_staged_input(st);
    return s;
}

} // namespace pk_cuda
