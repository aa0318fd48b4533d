/* The scalar semantics of every reduction on the device, one type per
 * (op, dtype), with the CPU backend's rules (src/cpu/kernels/acc.h):
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

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace pk_cuda {

/* A double-double: the value is hi + lo. While hi is finite it is the plain
 * running sum and lo its rounding errors; once hi is not finite, lo is
 * meaningless and the value is hi (as a plain sum would give). */
struct DD {
    double hi, lo;
};

__device__ __forceinline__ void two_sum(double a, double b, double &s,
                                        double &e)
{
    s = __dadd_rn(a, b);
    double z = __dsub_rn(s, a);
    e = __dadd_rn(__dsub_rn(a, __dsub_rn(s, z)), __dsub_rn(b, z));
}

__device__ __forceinline__ DD dd_combine(DD a, DD b)
{
    double s, e;
    two_sum(a.hi, b.hi, s, e);
    return DD{s, __dadd_rn(__dadd_rn(a.lo, b.lo), e)};
}

/* a += x (TwoSum into hi, the error into lo). */
__device__ __forceinline__ void dd_add(DD &a, double x)
{
    double s, e;
    two_sum(a.hi, x, s, e);
    a.hi = s;
    a.lo = __dadd_rn(a.lo, e);
}

/* s += v in f32, the rounding error of that add into e (f64): f32 sums'
 * cheap scheme (reduce.cu's thread_partial), one f64 add an element where
 * dd_add takes seven. */
__device__ __forceinline__ void two_sum_f32(float &s, double &e, float v)
{
    const float t = __fadd_rn(s, v), z = __fsub_rn(t, s);
    e = __dadd_rn(e, (double)__fadd_rn(__fsub_rn(s, __fsub_rn(t, z)), __fsub_rn(v, z)));
    s = t;
}

__device__ __forceinline__ double dd_value(DD a)
{
    return isfinite(a.hi) ? __dadd_rn(a.hi, a.lo) : a.hi;
}

/* hi + lo rounded to float once, as the CPU does (src/cpu/kernels/dd.h):
 * through double it rounds twice (1 + 2^-24 + 2^-60 gave 1). The
 * renormalised high part moves to its odd neighbour on the low part's side
 * when that is not 0 and it is even ("round to odd"), then converts. */
__device__ __forceinline__ float dd_to_f32(DD a)
{
    if (!isfinite(a.hi)) return __double2float_rn(a.hi);
    double s, e;
    two_sum(a.hi, a.lo, s, e);
    long long b = __double_as_longlong(s);
    if (e != 0.0 && !(b & 1)) b += (e > 0.0) == (s > 0.0) ? 1 : -1;
    return __double2float_rn(__longlong_as_double(b));
}

/* Float sums, products and dots return one NaN, the default one (positive,
 * quiet, payload 0), as the CPU backend does (src/cpu/kernels/acc.h): which
 * NaN an addition keeps depends on the hardware and the operand order. */
__device__ __forceinline__ float canon_nan(float v)
{
    return v != v ? __int_as_float(0x7fc00000) : v;
}
__device__ __forceinline__ double canon_nan(double v)
{
    return v != v ? __longlong_as_double(0x7ff8000000000000ll) : v;
}

template <class T> struct Lim;
template <> struct Lim<float> {
    static __device__ float lo() { return -__int_as_float(0x7f800000); }
    static __device__ float hi() { return __int_as_float(0x7f800000); }
};
template <> struct Lim<double> {
    static __device__ double lo() { return -__longlong_as_double(0x7ff0000000000000ll); }
    static __device__ double hi() { return __longlong_as_double(0x7ff0000000000000ll); }
};
template <> struct Lim<int32_t> {
    static __device__ int32_t lo() { return INT32_MIN; }
    static __device__ int32_t hi() { return INT32_MAX; }
};
template <> struct Lim<int64_t> {
    static __device__ int64_t lo() { return INT64_MIN; }
    static __device__ int64_t hi() { return INT64_MAX; }
};
template <> struct Lim<uint32_t> {
    static __device__ uint32_t lo() { return 0; }
    static __device__ uint32_t hi() { return UINT32_MAX; }
};
template <> struct Lim<uint64_t> {
    static __device__ uint64_t lo() { return 0; }
    static __device__ uint64_t hi() { return UINT64_MAX; }
};

template <class T> struct IsFloat { static constexpr bool value = false; };
template <> struct IsFloat<float> { static constexpr bool value = true; };
template <> struct IsFloat<double> { static constexpr bool value = true; };

/* The result type of sums and products of integers. */
template <class T> struct Wide { using type = int64_t; };
template <> struct Wide<uint32_t> { using type = uint64_t; };
template <> struct Wide<uint64_t> { using type = uint64_t; };

/* ---- sum ---------------------------------------------------------------- */

/* Integer sums (kProd false) and products: 64 bits, wrapping. */
template <class T, bool kProd> struct IntFold {
    using In = T;
    using Acc = uint64_t;
    using Out = typename Wide<T>::type;
    static __device__ Acc identity() { return kProd ? 1 : 0; }
    static __device__ Acc combine(Acc a, Acc b) { return kProd ? a * b : a + b; }
    static __device__ void add(Acc &a, In x, int64_t)
    {
        a = combine(a, (uint64_t)(typename Wide<T>::type)x);
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
    static __device__ Acc identity() { return DD{0.0, 0.0}; }
    static __device__ void add(Acc &a, In x, int64_t) { dd_add(a, (double)x); }
    static __device__ Acc combine(Acc a, Acc b) { return dd_combine(a, b); }
    static __device__ Out finish(Acc a) { return canon_nan(dd_to_f32(a)); }
};
template <> struct SumOp<double> {
    using In = double;
    using Acc = DD;
    using Out = double;
    static __device__ Acc identity() { return DD{0.0, 0.0}; }
    static __device__ void add(Acc &a, In x, int64_t) { dd_add(a, x); }
    static __device__ Acc combine(Acc a, Acc b) { return dd_combine(a, b); }
    static __device__ Out finish(Acc a) { return canon_nan(dd_value(a)); }
};

/* f32 sums (and f32 dots): kernels may add with two_sum_f32 and start from
 * DD{s, e}, redoing with dd_add where s or e is not finite. */
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
        dd_add(a, __dmul_rn((double)x, (double)y));
    }
};
template <> struct DotOp<double> : SumOp<double> {
    static __device__ void add2(Acc &a, double x, double y)
    {
        double p = __dmul_rn(x, y);
        double pe = __fma_rn(x, y, -p); /* x*y == p + pe exactly */
        double s, e;
        two_sum(a.hi, p, s, e);
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
    static __device__ Acc identity() { return 1.0; }
    static __device__ void add(Acc &a, In x, int64_t) { a = __dmul_rn(a, (double)x); }
    static __device__ Acc combine(Acc a, Acc b) { return __dmul_rn(a, b); }
    static __device__ Out finish(Acc a) { return canon_nan((Out)a); }
};
template <> struct ProdOp<float> : ProdF<float> {};
template <> struct ProdOp<double> : ProdF<double> {};

/* ---- ordering: b replaces a (a earlier) when it is strictly better or the
 * first NaN; equal values keep a. ------------------------------------------ */

template <class T, bool Max>
__device__ __forceinline__ bool takes(T a, T b)
{
    if (IsFloat<T>::value) return a == a && (Max ? !(b <= a) : !(b >= a));
    return Max ? b > a : b < a;
}
template <class T>
__device__ __forceinline__ bool same(T a, T b)
{
    return a == b || (IsFloat<T>::value && a != a && b != b);
}

template <class T, bool Max> struct ExtOp {
    using In = T;
    using Acc = T;
    using Out = T;
    static __device__ Acc identity() { return Max ? Lim<T>::lo() : Lim<T>::hi(); }
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
        return Acc{Max ? Lim<T>::lo() : Lim<T>::hi(), INT64_MAX};
    }
    static __device__ Acc combine(Acc a, Acc b)
    {
        bool t = takes<T, Max>(a.v, b.v) || (same(a.v, b.v) && b.i < a.i);
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
