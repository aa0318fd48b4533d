/* axpy on the CUDA backend: y = alpha*x + y, one rounding for the product and
 * one for the sum (__fmul_rn / __fadd_rn are never fused), so the bits match
 * the CPU backend. A persistent grid-stride kernel with 16-byte streaming
 * loads and stores, several vectors in flight per thread. x may be y. */
#include "cuda/block.cuh"
#include "cuda/launch.cuh"

namespace pk_cuda {

namespace {

constexpr int kUnroll = 4;

__device__ __forceinline__ float mul_add(float a, float x, float y)
{
    return __fadd_rn(__fmul_rn(a, x), y);
}
__device__ __forceinline__ double mul_add(double a, double x, double y)
{
    return __dadd_rn(__dmul_rn(a, x), y);
}

/* Aligned: x and y are 16-byte aligned, whole vectors first, then the tail. */
template <class T>
__global__ void __launch_bounds__(kThreads)
k_axpy_vec(int64_t n, T alpha, const T *x, T *y)
{
    constexpr int V = vec_of<T>();
    const int64_t nv = n / V;
    const int64_t stride = int64_t(gridDim.x) * kThreads;
    const uint4 *xv = reinterpret_cast<const uint4 *>(x);
    uint4 *yv = reinterpret_cast<uint4 *>(y);
    int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x;
    for (; i + (kUnroll - 1) * stride < nv; i += kUnroll * stride) {
        uint4 a[kUnroll], b[kUnroll];
#pragma unroll
        for (int k = 0; k < kUnroll; k++) {
            a[k] = __ldcs(xv + i + k * stride);
            b[k] = __ldcs(yv + i + k * stride);
        }
#pragma unroll
        for (int k = 0; k < kUnroll; k++) {
            T xs[V], ys[V];
            memcpy(xs, &a[k], 16);
            memcpy(ys, &b[k], 16);
#pragma unroll
            for (int e = 0; e < V; e++) ys[e] = mul_add(alpha, xs[e], ys[e]);
            memcpy(&b[k], ys, 16);
            __stcs(yv + i + k * stride, b[k]);
        }
    }
    for (; i < nv; i += stride) {
        uint4 a = __ldcs(xv + i), b = __ldcs(yv + i);
        T xs[V], ys[V];
        memcpy(xs, &a, 16);
        memcpy(ys, &b, 16);
#pragma unroll
        for (int e = 0; e < V; e++) ys[e] = mul_add(alpha, xs[e], ys[e]);
        memcpy(&b, ys, 16);
        __stcs(yv + i, b);
    }
    const int64_t t = nv * V + int64_t(blockIdx.x) * kThreads + threadIdx.x;
    if (t < n) y[t] = mul_add(alpha, x[t], y[t]);
}

template <class T>
__global__ void __launch_bounds__(kThreads)
k_axpy_scalar(int64_t n, T alpha, const T *x, T *y)
{
    const int64_t stride = int64_t(gridDim.x) * kThreads;
    for (int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x; i < n; i += stride)
        y[i] = mul_add(alpha, x[i], y[i]);
}

template <class T>
pk_status launch_axpy(pk_ctx *ctx, int64_t n, T alpha, const T *x, T *y)
{
    cudaStream_t st = state(ctx)->stream;
    const int64_t blocks = (n / vec_of<T>() + kThreads - 1) / kThreads;
    if (aligned16(x) && aligned16(y)) {
        auto k = k_axpy_vec<T>;
        return launch_kernel(ctx, k, grid_for(ctx, k, blocks), 0, st, "k_axpy launch", n, alpha,
                             x, y);
    }
    auto k = k_axpy_scalar<T>;
    return launch_kernel(ctx, k, grid_for(ctx, k, (n + kThreads - 1) / kThreads), 0, st,
                         "k_axpy launch", n, alpha, x, y);
}

template <class T>
pk_status axpy_t(pk_ctx *ctx, int64_t n, T alpha, const void *x, Where wx,
                 void *y, Where wy)
{
    if (wx == kDevice && wy == kDevice)
        return launch_axpy<T>(ctx, n, alpha, static_cast<const T *>(x), static_cast<T *>(y));
    const Operand ops[2] = {{x, wx}, {y, wy}};
    auto fn = [&](const void *const *d, int64_t e0, int64_t e1) -> pk_status {
        return launch_axpy<T>(ctx, e1 - e0, alpha, static_cast<const T *>(d[0]),
                              static_cast<T *>(const_cast<void *>(d[1])));
    };
    return run_chunks(ctx, 2, ops, sizeof(T), n, vec_of<T>(), wy == kDevice ? -1 : 1, fn);
}

} // namespace

pk_status axpy(pk_ctx *ctx, pk_dtype t, int64_t n, const void *alpha,
               const void *x, void *y)
{
    DeviceGuard g(ctx);
    if (g.status()) return g.status();
    Where wx, wy;
    pk_status s;
    if ((s = where(ctx, x, "x", &wx)) || (s = where(ctx, y, "y", &wy))) return s;
    if (t == PK_F32) return axpy_t<float>(ctx, n, *static_cast<const float *>(alpha), x, wx, y, wy);
    return axpy_t<double>(ctx, n, *static_cast<const double *>(alpha), x, wx, y, wy);
}

} // namespace pk_cuda
