// The host's cost of one small CUDA call, the floor under pk's per-call
// overhead (docs/PYTHON.md, "Performance"): an empty kernel's launch (the
// runtime's <<<>>>), the runtime's pointer query and cudaGetDevice, against
// pk_reduce(SUM, f32) of 1024 device elements into a device result. Host
// microseconds per call, the median of 7 loops of 20,000 calls.
//
//   nvcc -O2 -std=c++17 -Iinclude bench/probes/launch_cost.cu -Lbuild -lpk \
//        -Xlinker -rpath=build -o launch_cost && ./launch_cost
#include <pk.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                                        \
    do {                                                                                   \
        cudaError_t e_ = (call);                                                           \
        if (e_ != cudaSuccess) {                                                           \
            std::fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e_));               \
            std::exit(1);                                                                  \
        }                                                                                  \
    } while (0)

__global__ void empty_kernel(float *p) {
    if (p == nullptr) __trap();
}

template <class F> double us_per_call(F f) {
    constexpr int kCalls = 20000;
    std::vector<double> t;
    for (int rep = 0; rep < 8; rep++) {
        auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < kCalls; i++) f();
        CHECK(cudaDeviceSynchronize());
        auto t1 = std::chrono::steady_clock::now();
        if (rep) t.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / kCalls);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

int main() {
    float *x = nullptr, *out = nullptr;
    CHECK(cudaMalloc(&x, 1024 * sizeof(float)));
    CHECK(cudaMalloc(&out, sizeof(float)));
    CHECK(cudaMemset(x, 0, 1024 * sizeof(float)));
    pk_ctx *ctx = nullptr;
    if (pk_ctx_create(&ctx, PK_BACKEND_CUDA, 0) != PK_OK) {
        std::fprintf(stderr, "pk_ctx_create: %s\n", pk_last_create_error());
        return 1;
    }
    cudaStream_t s = nullptr;  // pk's own stream is a blocking one; so is this
    CHECK(cudaStreamCreate(&s));
    std::printf("empty kernel <<<1, 256>>>        %6.2f us\n",
                us_per_call([&] { empty_kernel<<<1, 256, 0, s>>>(x); }));
    cudaPointerAttributes a;
    std::printf("cudaPointerGetAttributes         %6.2f us\n",
                us_per_call([&] { CHECK(cudaPointerGetAttributes(&a, x)); }));
    int dev = 0;
    std::printf("cudaGetDevice                    %6.2f us\n",
                us_per_call([&] { CHECK(cudaGetDevice(&dev)); }));
    pk_status st = PK_OK;
    std::printf("pk_reduce(SUM, f32, 1024) -> dev %6.2f us\n",
                us_per_call([&] { st = pk_reduce(ctx, PK_SUM, PK_F32, x, 1024, out); }));
    if (st != PK_OK) std::printf("pk_reduce failed: %s\n", pk_ctx_error(ctx));
    pk_ctx_destroy(ctx);
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(x));
    CHECK(cudaFree(out));
    return st == PK_OK ? 0 : 1;
}
