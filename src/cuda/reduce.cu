/* Whole-array reductions and dots, and row reductions of long rows, in one
 * launch each.
 *
 * The summation tree is fixed by the shape alone. A row of `cols` elements
 * is cut into 16-byte vectors and the vectors into `slices` slices of
 * `slice_vecs` vectors (plan_slices). One block reduces one slice: thread t
 * takes vectors t, t + 256, t + 512, ... of the slice in order, then the
 * block combines its threads in a fixed shuffle tree and writes the slice's
 * partial. The block that finishes a row's last slice (an acquire-release
 * ticket counter, draw_ticket) combines the row's partials in a fixed tree and writes
 * the result, then resets the counter. So there is no second launch, no
 * float atomics, and the same bits on every run, whatever the device, the
 * grid size (blocks loop over slices) or the pointer's alignment (unaligned
 * data takes scalar loads in the same order). */
#include <cmath>
#include <type_traits>

#include "cuda/block.cuh"
#include "cuda/launch.cuh"
#include "cuda/ops.cuh"

namespace pk_cuda {

namespace {

/* A slice is at least this many bytes; a launch aims at this many slices
 * (one round of resident blocks on an H100 or H200: 132 SMs x 4). */
constexpr int64_t kMinSliceBytes = 16384;
constexpr int64_t kTargetItems = 512;
/* Vectors in flight per thread and input, and the register budget: 4
 * blocks of 256 threads per SM (64 registers): the 512 slices of a large
 * launch run in one round on a 132-SM H100. f32 sums take 4: with
 * double-double adds that beat 8 at every size on an H100 (2^22: 12.9
 * against 14.4 us; 2^28: 3032 against 2989 GB/s); with f32 TwoSum
 * (two_sum_f32, ops.cuh) 4 and 8 tie at 2^22 and 2^24, and 8 gained
 * nothing at 2^28 on an H200 (and spilled in the dot). The batch size does
 * not change the order of a thread's vectors, so not the bits either. */
template <class Op, bool kDot> struct Unroll {
    static constexpr int value = kDot || kF32Sum<Op> ? 4 : 8;
};
template <class T, bool M> struct Unroll<ArgOp<T, M>, false> { static constexpr int value = 4; };
constexpr int kMinBlocks = 4;

struct SlicePlan {
    int64_t slices, slice_vecs;
};

SlicePlan plan_slices(int64_t rows, int64_t cols, size_t esize)
{
    const int64_t V = int64_t(16 / esize);
    const int64_t nv = (cols + V - 1) / V;
    if (nv == 0) return {1, 0};
    int64_t by_size = (cols * (int64_t)esize + kMinSliceBytes - 1) / kMinSliceBytes;
    int64_t want = (kTargetItems + rows - 1) / rows;
    int64_t s = want < by_size ? want : by_size;
    if (s < 1) s = 1;
    int64_t l = (nv + s - 1) / s;
    return {(nv + l - 1) / l, l};
}

template <class Op> struct SliceArgs {
    const typename Op::In *x, *y; /* y: dot only                          */
    int64_t xoff;                 /* element (r, c) is x[r*ld + c - xoff] */
    int64_t ld, cols;
    int64_t slice_vecs, slices;   /* per row                              */
    int64_t item0, item1;         /* items (row * slices + slice) to do   */
    typename Op::Acc *part;       /* [rows * slices] when slices > 1      */
    unsigned *cnt;                /* [rows]                               */
    typename Op::Out *out;        /* [rows]                               */
    typename Op::Acc *raw;        /* [rows]: the accumulators instead of  */
                                  /* out (the distributed layer's partial) */
    unsigned long long *flag;     /* host results: written seq after out  */
    unsigned long long seq;
};

/* After thread 0 wrote a result: raise the host's flag, if any. */
__device__ __forceinline__ void raise_flag(unsigned long long *flag, unsigned long long seq)
{
    if (!flag) return;
    __threadfence_system();
    *reinterpret_cast<volatile unsigned long long *>(flag) = seq;
}

/* A row's result: finished into out, or (raw) the accumulator itself. One
 * kernel serves both (a template parameter had doubled reduce.cu's kernels
 * for the distributed layer alone). */
template <class Op>
__device__ __forceinline__ void write_result(const SliceArgs<Op> &a, int64_t row,
                                             typename Op::Acc c)
{
    if (a.raw) a.raw[row] = c;
    else a.out[row] = Op::finish(c);
}

/* A thread's pass over its vectors of a slice (vb..ve), in order, kN at a
 * time: f(xv, yv, m, j) per group, vector k of the group being vector
 * j + k * kThreads of m[k] elements (yv: the dot's second input, else
 * unused). A group's loads are all in flight at once. Aligned groups of
 * whole vectors (all of a thread's groups but the last, at most) take
 * 16-byte loads from one moving pointer and m = V: the per-vector bounds
 * checks and 64-bit address arithmetic had been ~80 of the ~250
 * instructions of an f32 sum's group (sm_90a SASS); 2^28 f32 sum on an
 * H200 247 -> 243 us. The rest check each vector; past the slice's end a load is
 * skipped (m = 0), so short slices still load all at once. The groups and
 * their order are the same on both paths, so are the bits. */
template <class Op, bool kDot, bool kAligned, class F>
__device__ __forceinline__ void slice_groups(const SliceArgs<Op> &a, int64_t base, int64_t vb,
                                             int64_t ve, F &&f)
{
    using In = typename Op::In;
    constexpr int V = vec_of<In>();
    constexpr int kN = Unroll<Op, kDot>::value;
    int64_t j = vb + threadIdx.x;
    In xv[kN][V], yv[kN][V];
    if constexpr (kAligned) {
        const int64_t whole = a.cols / V < ve ? a.cols / V : ve; /* vectors of V */
        int full[kN];
#pragma unroll
        for (int k = 0; k < kN; k++) full[k] = V;
        const In *px = a.x + base + j * V, *py = kDot ? a.y + base + j * V : nullptr;
        for (; j + (kN - 1) * kThreads < whole; j += kN * kThreads) {
#pragma unroll
            for (int k = 0; k < kN; k++) {
                uint4 r = ld_stream16(px + k * kThreads * V);
                memcpy(xv[k], &r, 16);
                if constexpr (kDot) {
                    r = ld_stream16(py + k * kThreads * V);
                    memcpy(yv[k], &r, 16);
                }
            }
            f(xv, yv, full, j);
            px += kN * kThreads * V;
            if constexpr (kDot) py += kN * kThreads * V;
        }
    }
    for (; j < ve; j += kN * kThreads) {
        int m[kN];
#pragma unroll
        for (int k = 0; k < kN; k++) {
            const int64_t jj = j + k * kThreads;
            m[k] = 0;
            if (jj < ve) {
                m[k] = load_vec<kAligned>(a.x, base, jj, a.cols, xv[k]);
                if constexpr (kDot) load_vec<kAligned>(a.y, base, jj, a.cols, yv[k]);
            }
        }
        f(xv, yv, m, j);
    }
}

/* One group's elements into acc, in order (Op::add, or add2 for a dot). */
template <class Op, bool kDot, int kN, class In = typename Op::In>
__device__ __forceinline__ void add_group(typename Op::Acc &acc, const In (&x)[kN][vec_of<In>()],
                                          const In (&y)[kN][vec_of<In>()], const int (&m)[kN],
                                          int64_t j)
{
    constexpr int V = vec_of<In>();
#pragma unroll
    for (int k = 0; k < kN; k++)
#pragma unroll
        for (int q = 0; q < V; q++)
            if (q < m[k]) {
                if constexpr (kDot) Op::add2(acc, x[k][q], y[k][q]);
                else Op::add(acc, x[k][q], (j + k * kThreads) * V + q);
            }
}

/* f32 sums add in f32 with TwoSum and send each error term into an f64 sum
 * (the CPU kernels' scheme, docs/ARCHITECTURE.md "Accuracy": exact while
 * the data span stays within ~2^77): one f64 add an element instead of a
 * double-double add's seven, on an H100 31.1 -> 28.6 us at 2^24 and 6.6 ->
 * 5.5 us at 2^16 (probe, device result). A group that leaves the f32 sum or
 * the error sum not finite (Inf or NaN data, or an f32 overflow that f64
 * would not have had) switches the thread to double-double adds: the group
 * is added again from the state before it (s + e, the finite sum of the
 * elements so far), from the registers, and so is the rest. So overflows
 * still give the finite sums of f64, and no element is read twice: a second
 * pass over the thread's elements had made sums of data with a NaN in
 * every thread's part 2x slower (2^28: 704 against 363 us, H100). One check
 * a group, not a vector: a check a vector cost 6% at 2^28 on random data
 * (H200: 262 against 247 us). k_small takes the same steps, so every path
 * gives the same bits. (s, e) while dd is false, acc once it is true. */
template <class Op, int kN>
__device__ __forceinline__ void f32_sum_group(float &s, double &e, bool &dd,
                                              typename Op::Acc &acc, const float (&x)[kN][4],
                                              const int (&m)[kN], int64_t j)
{
    static_assert(vec_of<float>() == 4, "f32 vectors are 16 bytes");
    if (!dd) {
        const float s0 = s;
        const double e0 = e;
#pragma unroll
        for (int k = 0; k < kN; k++)
#pragma unroll
            for (int q = 0; q < 4; q++)
                if (q < m[k]) two_sum_f32(s, e, x[k][q]);
        if (isfinite(s) && isfinite(e)) return;
        dd = true;
        acc = typename Op::Acc{s0, e0};
    }
    add_group<Op, false, kN>(acc, x, x, m, j);
}

/* A thread's partial of its part of a slice. */
template <class Op, bool kDot, bool kAligned>
__device__ __forceinline__ typename Op::Acc thread_partial(const SliceArgs<Op> &a, int64_t base,
                                                           int64_t vb, int64_t ve)
{
    using In = typename Op::In;
    constexpr int V = vec_of<In>();
    constexpr int kN = Unroll<Op, kDot>::value;
    typename Op::Acc acc = Op::identity();
    if constexpr (kF32Sum<Op> && !kDot) {
        float s = 0.0f;
        double e = 0.0;
        bool dd = false;
        slice_groups<Op, kDot, kAligned>(
            a, base, vb, ve,
            [&](const float (&x)[kN][4], const float (&)[kN][4], const int (&m)[kN], int64_t j) {
                f32_sum_group<Op, kN>(s, e, dd, acc, x, m, j);
            });
        return dd ? acc : typename Op::Acc{s, e};
    }
    slice_groups<Op, kDot, kAligned>(
        a, base, vb, ve,
        [&](const In (&x)[kN][V], const In (&y)[kN][V], const int (&m)[kN], int64_t j) {
            add_group<Op, kDot, kN>(acc, x, y, m, j);
        });
    return acc;
}

template <class Op, bool kDot, bool kAligned>
__global__ void __launch_bounds__(kThreads, kMinBlocks) k_slices(SliceArgs<Op> a)
{
    using In = typename Op::In;
    using Acc = typename Op::Acc;
    constexpr int V = vec_of<In>();
    __shared__ bool last;
    const int64_t nv = (a.cols + V - 1) / V;
    for (int64_t item = a.item0 + blockIdx.x; item < a.item1; item += gridDim.x) {
        const int64_t row = item / a.slices, s = item - row * a.slices;
        const int64_t base = row * a.ld - a.xoff;
        const int64_t vb = s * a.slice_vecs;
        const int64_t ve = vb + a.slice_vecs < nv ? vb + a.slice_vecs : nv;
        Acc acc = thread_partial<Op, kDot, kAligned>(a, base, vb, ve);
        acc = block_reduce<Op>(acc);
        if (a.slices == 1) {
            if (threadIdx.x == 0) {
                write_result(a, row, acc);
                raise_flag(a.flag, a.seq);
            }
            continue;
        }
        if (threadIdx.x == 0) {
            store_cg(&a.part[item], acc);
            last = draw_ticket(&a.cnt[row]) == (unsigned)(a.slices - 1);
        }
        __syncthreads();
        if (last) { /* uniform across the block */
            Acc c = Op::identity();
            const Acc *p = a.part + row * a.slices;
            int64_t i = threadIdx.x;
            for (; i + 3 * kThreads < a.slices; i += 4 * kThreads) {
                Acc q[4];
#pragma unroll
                for (int u = 0; u < 4; u++) q[u] = load_cg(p + i + u * kThreads);
#pragma unroll
                for (int u = 0; u < 4; u++) c = Op::combine(c, q[u]);
            }
            for (; i < a.slices; i += kThreads) c = Op::combine(c, load_cg(p + i));
            c = block_reduce<Op>(c);
            if (threadIdx.x == 0) {
                write_result(a, row, c);
                a.cnt[row] = 0;
                raise_flag(a.flag, a.seq);
            }
        }
        __syncthreads();
    }
}

/* Whole arrays of at most kSmallSlices slices, 16-byte aligned in device
 * memory: the slices, element order and combine tree of k_slices (so the
 * same bits), without its loops and 64-bit index arithmetic. A slice has at
 * most 4 * kThreads vectors (plan_slices), so each thread's vectors load at
 * once; the last block combines the partials on one warp (combining with
 * identities, as k_slices's block-wide tree adds, changes no bits). The
 * short code is the point: on an H100 a 2^16 f32 sum took 4.99 us of GPU
 * time against k_slices's 5.82 (1784 SASS instructions against 568; the
 * same work), 2^10 3.81 against 4.29. */
constexpr int64_t kSmallSlices = 32;
constexpr int kSmallVecs = 4;
/* Not for float min/max: in k_small ptxas turned their compare-and-select
 * into FMNMX, whose NaN is the canonical 0x7fffffff, not the input's, so
 * the bits differed from k_slices's (test_cuda_edges, semantics_vs_cpu). */
template <class Op> struct SmallOk { static constexpr bool value = true; };
template <class T, bool M> struct SmallOk<ExtOp<T, M>> {
    static constexpr bool value = !IsFloat<T>::value;
};

template <class Op, bool kDot>
__global__ void __launch_bounds__(kThreads) k_small(SliceArgs<Op> a)
{
    using In = typename Op::In;
    using Acc = typename Op::Acc;
    constexpr int V = vec_of<In>();
    const int nv = int((a.cols + V - 1) / V);
    const int vb = int(blockIdx.x * a.slice_vecs);
    const int ve = vb + int(a.slice_vecs) < nv ? vb + int(a.slice_vecs) : nv;
    In xv[kSmallVecs][V], yv[kSmallVecs][V];
    int m[kSmallVecs];
#pragma unroll
    for (int k = 0; k < kSmallVecs; k++) {
        const int j = vb + int(threadIdx.x) + k * kThreads;
        m[k] = 0;
        if (j < ve) {
            m[k] = load_vec<true>(a.x, 0, j, a.cols, xv[k]);
            if constexpr (kDot) load_vec<true>(a.y, 0, j, a.cols, yv[k]);
        }
    }
    static_assert(!kF32Sum<Op> || kDot || kSmallVecs == Unroll<Op, kDot>::value,
                  "k_small's f32 sums switch to double-double at k_slices's group bounds");
    const int64_t j = vb + int(threadIdx.x);
    Acc acc = Op::identity();
    if constexpr (kF32Sum<Op> && !kDot) { /* thread_partial's steps */
        float s = 0.0f;
        double e = 0.0;
        bool dd = false;
        f32_sum_group<Op, kSmallVecs>(s, e, dd, acc, xv, m, j);
        if (!dd) acc = Acc{s, e};
    } else {
        add_group<Op, kDot, kSmallVecs>(acc, xv, yv, m, j);
    }
    acc = block_reduce<Op>(acc);
    if (a.slices == 1) {
        if (threadIdx.x == 0) {
            write_result(a, 0, acc);
            raise_flag(a.flag, a.seq);
        }
        return;
    }
    __shared__ bool last;
    if (threadIdx.x == 0) {
        store_cg(&a.part[blockIdx.x], acc);
        last = draw_ticket(&a.cnt[0]) == (unsigned)(a.slices - 1);
    }
    __syncthreads();
    if (last && threadIdx.x < 32) {
        Acc c = Op::identity();
        if (int(threadIdx.x) < int(a.slices)) c = Op::combine(c, load_cg(a.part + threadIdx.x));
        c = warp_reduce<Op>(c);
        if (threadIdx.x == 0) {
            write_result(a, 0, c);
            a.cnt[0] = 0;
            raise_flag(a.flag, a.seq);
        }
    }
}

template <class Op, bool kDot>
pk_status launch(pk_ctx *ctx, const SliceArgs<Op> &a, bool aligned)
{
    cudaStream_t st = state(ctx)->stream;
    int64_t items = a.item1 - a.item0;
    if (aligned) {
        auto k = k_slices<Op, kDot, true>;
        return launch_kernel(ctx, k, grid_for(ctx, k, items), 0, st, "k_slices launch", a);
    }
    auto k = k_slices<Op, kDot, false>;
    return launch_kernel(ctx, k, grid_for(ctx, k, items), 0, st, "k_slices launch", a);
}

template <class Op>
pk_status prepare(pk_ctx *ctx, SliceArgs<Op> &a, const SlicePlan &p,
                  int64_t rows, int64_t cols, int64_t ld)
{
    pk_status s;
    if (p.slices > 1 &&
        (s = ensure_partials(ctx, size_t(rows * p.slices) * sizeof(typename Op::Acc))))
        return s;
    if ((s = ensure_counters(ctx, size_t(rows)))) return s;
    State *st = state(ctx);
    a = SliceArgs<Op>{};
    a.ld = ld;
    a.cols = cols;
    a.slice_vecs = p.slice_vecs;
    a.slices = p.slices;
    a.item0 = 0;
    a.item1 = rows * p.slices;
    a.part = static_cast<typename Op::Acc *>(st->part);
    a.cnt = st->cnt;
    return PK_OK;
}

/* The whole-array reduction (kDot: the dot) of n elements: its result, or
 * (raw) its accumulator. Host operands are staged in chunks of whole slices,
 * so the tree is the same as for device operands. */
template <class Op, bool kDot>
pk_status reduce_1d(pk_ctx *ctx, const void *x, Where wx, const void *y,
                    Where wy, int64_t n, void *out, Where wo, bool raw = false)
{
    using In = typename Op::In;
    using Out = typename Op::Out;
    using Acc = typename Op::Acc;
    static_assert(sizeof(Acc) <= kFlagOffset, "a host result fits before the flag");
    const SlicePlan p = plan_slices(1, n, sizeof(In));
    SliceArgs<Op> a;
    pk_status s = prepare(ctx, a, p, 1, n, 0);
    if (s) return s;
    State *st = state(ctx);
    void *res = wo == kDevice ? out : st->res_dev;
    if (raw) a.raw = static_cast<Acc *>(res);
    else a.out = static_cast<Out *>(res);
    if (wo != kDevice) {
        a.flag = reinterpret_cast<unsigned long long *>(static_cast<char *>(st->res_dev) +
                                                        kFlagOffset);
        a.seq = ++st->seq;
    }
    const bool staged = n > 0 && (wx != kDevice || (kDot && wy != kDevice));
    if (!staged) {
        a.x = static_cast<const In *>(x);
        a.y = static_cast<const In *>(y);
        const bool aligned = aligned16(x) && (!kDot || aligned16(y));
        if constexpr (SmallOk<Op>::value) {
            if (aligned && p.slices <= kSmallSlices && p.slice_vecs <= kSmallVecs * kThreads) {
                auto k = k_small<Op, kDot>;
                s = launch_kernel(ctx, k, int(p.slices), 0, st->stream, "k_small launch", a);
            } else {
                s = launch<Op, kDot>(ctx, a, aligned);
            }
        } else {
            s = launch<Op, kDot>(ctx, a, aligned);
        }
    } else {
        const int64_t gran = p.slice_vecs * vec_of<In>();
        const Operand ops[2] = {{x, wx}, {y, wy}};
        auto fn = [&](const void *const *d, int64_t e0, int64_t e1) -> pk_status {
            SliceArgs<Op> b = a;
            b.x = static_cast<const In *>(d[0]);
            b.y = kDot ? static_cast<const In *>(d[1]) : nullptr;
            b.xoff = e0;
            b.item0 = e0 / gran;
            b.item1 = (e1 + gran - 1) / gran;
            return launch<Op, kDot>(ctx, b, aligned16(b.x) && (!kDot || aligned16(b.y)));
        };
        s = run_chunks(ctx, kDot ? 2 : 1, ops, sizeof(In), n, gran, -1, fn);
    }
    if (s) return s;
    return wo == kDevice ? PK_OK
                         : finish_host_result(ctx, out, raw ? sizeof(Acc) : sizeof(Out), a.seq);
}

/* One field of pk__acc per element type, as the CPU kernels keep them, so
 * that partials of any backend combine with the core's rules (op_rules.h). */
void put(pk__acc *a, float v) { a->v.f = v; }
void put(pk__acc *a, double v) { a->v.f = v; }
void put(pk__acc *a, int32_t v) { a->v.i = v; }
void put(pk__acc *a, int64_t v) { a->v.i = v; }
void put(pk__acc *a, uint32_t v) { a->v.u = v; }
void put(pk__acc *a, uint64_t v) { a->v.u = v; }
void put(pk__acc *a, DD v)
{
    a->v.f = v.hi;
    a->lo = std::isfinite(v.hi) ? v.lo : 0.0; /* the CPU's non-finite rule */
}
template <class T> void put(pk__acc *a, ArgAcc<T> v)
{
    put(a, v.v);
    a->idx = v.i;
}

} // namespace

pk_status reduce_partial(pk_ctx *ctx, pk_op op, pk_dtype t, const void *x,
                         int64_t n, pk__acc *acc)
{
    DeviceGuard g(ctx);
    if (g.status()) return g.status();
    Where wx;
    pk_status s = where(ctx, x, "x", &wx);
    if (s) return s;
    return dispatch(op, t, [&](auto o) -> pk_status {
        using Op = decltype(o);
        typename Op::Acc part;
        pk_status r = reduce_1d<Op, false>(ctx, x, wx, nullptr, kDevice, n, &part, kHost, true);
        if (r) return r;
        *acc = pk__acc{};
        put(acc, part);
        return PK_OK;
    });
}

pk_status reduce(pk_ctx *ctx, pk_op op, pk_dtype t, const void *x, int64_t n,
                 void *out)
{
    DeviceGuard g(ctx);
    if (g.status()) return g.status();
    Where wx, wo;
    pk_status s;
    if ((s = where(ctx, x, "x", &wx)) || (s = where(ctx, out, "out", &wo))) return s;
    return dispatch(op, t, [&](auto o) {
        return reduce_1d<decltype(o), false>(ctx, x, wx, nullptr, kDevice, n, out, wo);
    });
}

pk_status dot(pk_ctx *ctx, pk_dtype t, int64_t n, const void *x, const void *y,
              void *out)
{
    DeviceGuard g(ctx);
    if (g.status()) return g.status();
    Where wx, wy, wo;
    pk_status s;
    if ((s = where(ctx, x, "x", &wx)) || (s = where(ctx, y, "y", &wy)) ||
        (s = where(ctx, out, "out", &wo)))
        return s;
    if (t == PK_F32) return reduce_1d<DotOp<float>, true>(ctx, x, wx, y, wy, n, out, wo);
    return reduce_1d<DotOp<double>, true>(ctx, x, wx, y, wy, n, out, wo);
}

pk_status reduce_rows_long(pk_ctx *ctx, pk_op op, pk_dtype t, const void *x,
                           int64_t rows, int64_t cols, int64_t ld, void *out)
{
    return dispatch(op, t, [&](auto o) -> pk_status {
        using Op = decltype(o);
        using In = typename Op::In;
        const SlicePlan p = plan_slices(rows, cols, sizeof(In));
        SliceArgs<Op> a;
        pk_status s = prepare(ctx, a, p, rows, cols, ld);
        if (s) return s;
        a.x = static_cast<const In *>(x);
        a.out = static_cast<typename Op::Out *>(out);
        bool al = aligned16(x) && (rows == 1 || (ld * (int64_t)sizeof(In)) % 16 == 0);
        return launch<Op, false>(ctx, a, al);
    });
}

} // namespace pk_cuda
