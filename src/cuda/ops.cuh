/* The scalar semantics of every reduction on the device, one type per
 * (op, dtype), calling the rules that the CPU backend and the distributed
 * layer share (src/core/op_rules.h):
 *
 *   In, Acc, Out   input element, partial, result types
 *   identity()     the partial of nothing
 *   add(a, x, i)   a followed by element x at index i (the index serves the
 *                  arg ops only)
 *   combine(a, b)  a followed by b
 *   finish(a)      the result
 *
 * f32 and f64 sums and dots are double-double in f64 (TwoSum; TwoProd for
 * f64 products); f32 products accumulate in f64; integer sums and products wrap modulo 2^64; min and max
 * propagate NaN; argmin and argmax order (value, index) totally (NaN first,
 * then the extreme, ties to the lower index), so any combine tree gives the
 * first occurrence. Arithmetic goes through the _rn intrinsics: nvcc never
 * contracts them into fused multiply-adds.
 *
 * dispatch() maps a run-time (op, dtype) to one of these types: the only
 * place where the backend switches on them. */
#ifndef PK_CUDA_OPS_CUH
#define PK_CUDA_OPS_CUH

#include "pk.h"

#include "../core/op_rules.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace pk_cuda {

/* A double-double: the value is hi + lo (op_rules.h). */
using DD = pk__dd;

/* s += v in f32, the rounding error of that add into e (f64): f32 sums'
 * cheap scheme (reduce.cu's thread_partial), one f64 add an element where
 * pk__dd_add_term takes seven. */
__device__ __forceinline__ void two_sum_f32(float &s, double &e, float v)
{
    const float t = __fadd_rn(s, v), z = __fsub_rn(t, s);
    e = __dadd_rn(e, (double)__fadd_rn(__fsub_rn(s, __fsub_rn(t, z)), __fsub_rn(v, z)));
    s = t;
}

/* The default NaN for a NaN result (op_rules.h). */
__device__ __forceinline__ float canon_nan(float v) { return pk__canon_float(v); }
__device__ __forceinline__ double canon_nan(double v) { return pk__canon_double(v); }

/* The facts of each element type (op_rules.h: PK__FOR_DTYPES): whether it is
 * a float, the result type of its sums and products, its range. */
template <class T> struct Dtype;
#define PK__CUDA_DTYPE(D, E, T, C, FLD, RT)                                 \
    template <> struct Dtype<T> {                                           \
        static constexpr bool is_float = PK__IS_FLOAT_##C;                  \
        using Wide = RT;                                                    \
        static __device__ T lo() { return pk__lowest_##D(); }               \
        static __device__ T hi() { return pk__highest_##D(); }              \
    };
PK__FOR_DTYPES(PK__CUDA_DTYPE)
#undef PK__CUDA_DTYPE

template <class T> struct IsFloat { static constexpr bool value = Dtype<T>::is_float; };

/* ---- sum ---------------------------------------------------------------- */

/* Integer sums (kProd false) and products: 64 bits, wrapping. */
template <class T, bool kProd> struct IntFold {
    using In = T;
    using Acc = uint64_t;
    using Out = typename Dtype<T>::Wide;
    static __device__ Acc identity() { return kProd ? PK__PROD_IDENTITY : PK__SUM_IDENTITY; }
    static __device__ Acc combine(Acc a, Acc b)
    {
        return kProd ? pk__wrap_mul(a, b) : pk__wrap_add(a, b);
    }
    static __device__ void add(Acc &a, In x, int64_t)
    {
        a = combine(a, (uint64_t)(typename Dtype<T>::Wide)x);
    }
    static __device__ Out finish(Acc a) { return (Out)a; }
};

template <class T> struct SumOp : IntFold<T, false> {};
/* f32 sums: double-double over the f64 values too (f64 alone loses small
 * values next to cancelling giants; the contract is NumPy's error or better). */
template <> struct SumOp<float> {
    using In = float;
    using Acc = DD;
    using Out = float;
    static __device__ Acc identity() { return DD{PK__SUM_IDENTITY, 0.0}; }
    static __device__ void add(Acc &a, In x, int64_t) { a = pk__dd_add_term(a, (double)x); }
    static __device__ Acc combine(Acc a, Acc b) { return pk__dd_combine(a, b); }
    static __device__ Out finish(Acc a) { return pk__sum_result_f32(a.hi, a.lo); }
};
template <> struct SumOp<double> {
    using In = double;
    using Acc = DD;
    using Out = double;
    static __device__ Acc identity() { return DD{PK__SUM_IDENTITY, 0.0}; }
    static __device__ void add(Acc &a, In x, int64_t) { a = pk__dd_add_term(a, x); }
    static __device__ Acc combine(Acc a, Acc b) { return pk__dd_combine(a, b); }
    static __device__ Out finish(Acc a) { return pk__sum_result_f64(a.hi, a.lo); }
};

/* f32 sums (and f32 dots): kernels may add with two_sum_f32 and start from
 * DD{s, e}, redoing with Op::add where s or e is not finite. */
template <class Op>
constexpr bool kF32Sum = std::is_same<typename Op::Acc, DD>::value &&
                         std::is_same<typename Op::In, float>::value;
/* Sums of any float type (double-double accumulators). */
template <class Op> constexpr bool kDDSum = std::is_same<typename Op::Acc, DD>::value;

/* ---- dot (f32 and f64 only): add2 takes one element of each input ------- */

template <class T> struct DotOp;
template <> struct DotOp<float> : SumOp<float> {
    /* f32 x f32 is exact in f64: the products carry no rounding. */
    static __device__ void add2(Acc &a, float x, float y)
    {
        a = pk__dd_add_term(a, __dmul_rn((double)x, (double)y));
    }
};
template <> struct DotOp<double> : SumOp<double> {
    static __device__ void add2(Acc &a, double x, double y)
    {
        double p = __dmul_rn(x, y);
        double pe = __fma_rn(x, y, -p); /* x*y == p + pe exactly */
        double s, e;
        pk__two_sum(a.hi, p, &s, &e);
        a.hi = s;
        a.lo = __dadd_rn(a.lo, __dadd_rn(e, pe));
    }
};

/* ---- prod --------------------------------------------------------------- */

template <class T> struct ProdOp : IntFold<T, true> {};
template <class T> struct ProdF {
    using In = T;
    using Acc = double;
    using Out = T;
    static __device__ Acc identity() { return PK__PROD_IDENTITY; }
    static __device__ void add(Acc &a, In x, int64_t) { a = pk__prod_step(a, (double)x); }
    static __device__ Acc combine(Acc a, Acc b) { return pk__prod_step(a, b); }
    static __device__ Out finish(Acc a) { return canon_nan((Out)a); }
};
template <> struct ProdOp<float> : ProdF<float> {};
template <> struct ProdOp<double> : ProdF<double> {};

/* ---- ordering: b replaces a (a earlier) when it is strictly better or the
 * first NaN; equal values keep a. ------------------------------------------ */

template <class T, bool Max>
__device__ __forceinline__ bool takes(T a, T b)
{
    if (IsFloat<T>::value) return Max ? PK__MAX_TAKES_F(a, b) : PK__MIN_TAKES_F(a, b);
    return Max ? PK__MAX_TAKES_I(a, b) : PK__MIN_TAKES_I(a, b);
}
template <class T>
__device__ __forceinline__ bool same(T a, T b)
{
    return IsFloat<T>::value ? PK__SAME_F(a, b) : PK__SAME_I(a, b);
}

template <class T, bool Max> struct ExtOp {
    using In = T;
    using Acc = T;
    using Out = T;
    static __device__ Acc identity() { return Max ? Dtype<T>::lo() : Dtype<T>::hi(); }
    static __device__ void add(Acc &a, In x, int64_t)
    {
        if (takes<T, Max>(a, x)) a = x;
    }
    static __device__ Acc combine(Acc a, Acc b) { return takes<T, Max>(a, b) ? b : a; }
    static __device__ Out finish(Acc a) { return a; }
};

template <class T> struct ArgAcc {
    T v;
    int64_t i;
};

template <class T, bool Max> struct ArgOp {
    using In = T;
    using Acc = ArgAcc<T>;
    using Out = int64_t;
    static __device__ Acc identity()
    {
        return Acc{Max ? Dtype<T>::lo() : Dtype<T>::hi(), INT64_MAX};
    }
    static __device__ Acc combine(Acc a, Acc b)
    {
        bool t = PK__ARG_TAKES((takes<T, Max>(a.v, b.v)), same(a.v, b.v), a.i, b.i);
        return t ? b : a;
    }
    static __device__ void add(Acc &a, In x, int64_t i) { a = combine(a, Acc{x, i}); }
    static __device__ Out finish(Acc a) { return a.i; }
};

/* ---- dispatch ------------------------------------------------------------ */

template <class T, class F>
pk_status dispatch_op(pk_op op, F &f)
{
    switch (op) {
    case PK_SUM: return f(SumOp<T>());
    case PK_PROD: return f(ProdOp<T>());
    case PK_MIN: return f(ExtOp<T, false>());
    case PK_MAX: return f(ExtOp<T, true>());
    case PK_ARGMIN: return f(ArgOp<T, false>());
    case PK_ARGMAX: return f(ArgOp<T, true>());
    default: return PK_ERR_INTERNAL;
    }
}

/* f(Op()) for the Op type of (op, t). */
template <class F>
pk_status dispatch(pk_op op, pk_dtype t, F &&f)
{
    switch (t) {
    case PK_F32: return dispatch_op<float>(op, f);
    case PK_F64: return dispatch_op<double>(op, f);
    case PK_I32: return dispatch_op<int32_t>(op, f);
    case PK_I64: return dispatch_op<int64_t>(op, f);
    case PK_U32: return dispatch_op<uint32_t>(op, f);
    case PK_U64: return dispatch_op<uint64_t>(op, f);
    default: return PK_ERR_INTERNAL;
    }
}

} // namespace pk_cuda

#endif
