/* The GPU side of `pk bench` and `pk info`, implemented in bench/gpu_bench.cu
 * when the build has CUDA and in bench/gpu_stub.c otherwise. The pk command
 * (tools/pk) calls only these; timing with CUDA events, the CUB and cuBLAS
 * peers and the measured ceilings live behind them. */
#ifndef PK_BENCH_GPU_H
#define PK_BENCH_GPU_H

#include "pk.h"

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The kernels of `pk bench`, in the order of its registry (tools/pk/
 * bench_kernels.c): the runners on both sides of this interface switch on
 * them. The pk_reduce kernels come first, numbered as their pk_op. */
typedef enum pk_bench_kernel {
    PK_BENCH_SUM, PK_BENCH_PROD, PK_BENCH_MIN, PK_BENCH_MAX, PK_BENCH_ARGMIN, PK_BENCH_ARGMAX,
    PK_BENCH_DOT, PK_BENCH_AXPY, PK_BENCH_REDUCE_AXIS,
    PK_BENCH_GEMM, PK_BENCH_GEMM_TF32, PK_BENCH_GEMM_FP32_ACCURATE,
    PK_BENCH_BGEMM, PK_BENCH_HAMMING_TOPK, PK_BENCH_CUSTOM,
    PK_BENCH_NKERNELS
} pk_bench_kernel;

typedef struct pk_bench_case {
    pk_bench_kernel id;
    const char *kernel;  /* its name, for output and messages */
    pk_dtype dtype;
    int64_t n;           /* elements; rows * cols for reduce_axis */
    int64_t rows, cols;  /* reduce_axis only */
    int axis;            /* reduce_axis only */
    int out_on_device;   /* 1: result to device memory (asynchronous) */
    /* Compute kernels: gemm and bgemm are rows x cols x k (m x n x k, k in
     * bits for bgemm); hamming_topk has rows queries, cols database codes of
     * k bits and keeps topk. */
    int64_t k, topk;
} pk_bench_case;

typedef struct pk_bench_result {
    double time_ms;      /* median of pk's runs, CUDA events, after warm-up */
    /* ... and their spread (samples 0: not recorded): fastest, slowest,
     * half the interquartile range over the median; the same for the peer */
    double time_min_ms, time_max_ms, noise;
    int samples;
    double peer_time_min_ms, peer_time_max_ms, peer_noise;
    int peer_samples;
    char peer[32];       /* "cub", "cublas", ... or "" when none */
    double peer_time_ms; /* median of the peer's runs; 0 when none */
    int verified;        /* 1 when pk's result matched the reference */
    char note[128];      /* why not verified, or other remarks */
    /* Compute kernels: the measured ceiling in operations per second (0:
     * none), named by ceiling ("fp32-fma", "tf32-mma", "bmma", ...). The
     * bytes and operations of a case are the registry's (bench_case_moved,
     * bench_case_ops), not the runner's. */
    double ceiling_ops;
    char ceiling[24];
} pk_bench_result;

/* 1 when the build has CUDA and a device is present. */
int pk_bench_gpu_available(void);
/* The number of CUDA devices (0: none, or no CUDA in this build). */
int pk_bench_gpu_device_count(void);
/* Make `device` the calling thread's current device (the bench's streams
 * and buffers go there). PK_ERR_NO_DEVICE without CUDA. */
pk_status pk_bench_gpu_select(int device);
/* The CUDA runtime's and the driver's versions (1000 major + 10 minor);
 * 0 where unknown. PK_ERR_NO_DEVICE without CUDA. */
pk_status pk_bench_gpu_versions(int *runtime, int *driver);
/* Run one case on ctx (a CUDA context) with device-resident random inputs.
 * PK_ERR_UNSUPPORTED for a case it does not know; message in err. */
pk_status pk_bench_gpu_run(pk_ctx *ctx, const pk_bench_case *c,
                           pk_bench_result *r, char *err, size_t errlen);
/* The compute kernels' runners (bench/gpu_gemm.cu, bench/gpu_bits.cu),
 * called by pk_bench_gpu_run; same contract. */
pk_status pk_bench_gpu_gemm(pk_ctx *ctx, const pk_bench_case *c,
                            pk_bench_result *r, char *err, size_t errlen);
pk_status pk_bench_gpu_bits(pk_ctx *ctx, const pk_bench_case *c,
                            pk_bench_result *r, char *err, size_t errlen);
/* User-defined reductions (bench/gpu_custom.cu): kernel "custom", k picks
 * the reducer of bench/custom.h. */
pk_status pk_bench_gpu_custom(pk_ctx *ctx, const pk_bench_case *c,
                              pk_bench_result *r, char *err, size_t errlen);
/* Measured ceilings on device `device`: device-to-device copy bandwidth
 * (bytes read + written) and a read-only kernel's bandwidth, in GB/s. */
pk_status pk_bench_gpu_ceilings(int device, double *d2d_gbps,
                                double *read_gbps);
/* pk info's GPU section: text, or a JSON array of device objects when json. */
pk_status pk_bench_gpu_info(FILE *out, int json);

#ifdef __cplusplus
}
#endif
#endif
