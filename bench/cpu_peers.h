/* The CPU side of `pk bench` and `pk info` that is not pk: the peers pk is
 * compared with and the machine's measured ceilings.
 *
 *  - "omp-loop": the plain `#pragma omp parallel for simd reduction(...)`
 *    loop (neither deterministic nor accurate: f32 sums accumulate in f32),
 *    compiled once per SIMD path and run with the path pk itself uses, so the
 *    comparison is ISA for ISA.
 *  - "openblas": cblas_?dot and cblas_?axpy, when the build found OpenBLAS
 *    (PK_HAVE_OPENBLAS); its thread count is set to OpenMP's.
 *  - Ceilings: read bandwidth (an OpenMP read-only reduction over a buffer far
 *    past the last-level cache) and copy bandwidth (a parallel memcpy,
 *    counting bytes read + written). */
#ifndef PK_BENCH_CPU_PEERS_H
#define PK_BENCH_CPU_PEERS_H

#include "pk.h"

#include <stddef.h>
#include <stdint.h>

/* Seconds on the monotonic clock. */
double pk_bench_now(void);

/* The SIMD path the omp-loop peers run ("avx512", "avx2" or "generic"),
 * matching pk_cpu_isa(). */
const char *pk_peer_loop_isa(void);
/* The omp-loop peer of pk_reduce: same result dtype as pk_reduce. Returns 0,
 * or -1 for an op/dtype it does not have. argmin/argmax are a per-thread
 * scan (OpenMP has no arg reductions). */
int pk_peer_loop_reduce(pk_op op, pk_dtype t, const void *x, int64_t n,
                        void *out);
/* The omp-loop peers of pk_dot and pk_axpy (f32, f64); 0 or -1. */
int pk_peer_loop_dot(pk_dtype t, int64_t n, const void *x, const void *y,
                     void *out);
int pk_peer_loop_axpy(pk_dtype t, int64_t n, const void *alpha,
                      const void *x, void *y);

/* OpenBLAS: NULL when the build has none, else its configuration string. */
const char *pk_peer_blas_config(void);
/* OpenBLAS releases up to 0.3.21 do not recognise recent Xeons and fall back
 * to their Prescott (SSE3) kernels, a weak peer. When that happened and
 * OPENBLAS_CORETYPE is unset, this returns the core type that selects
 * OpenBLAS's kernels for this CPU's ISA ("SkylakeX", "Haswell"); else NULL.
 * OpenBLAS reads the variable when it loads: the caller re-executes. */
const char *pk_peer_blas_better_coretype(void);
/* Set OpenBLAS's thread count; returns the count in effect (0: no BLAS). */
int pk_peer_blas_set_threads(int n);
/* cblas_?dot / cblas_?axpy for f32, f64; -1 without BLAS, for another
 * dtype or for n beyond OpenBLAS's 32-bit sizes. */
int pk_peer_blas_dot(pk_dtype t, int64_t n, const void *x, const void *y,
                     void *out);
int pk_peer_blas_axpy(pk_dtype t, int64_t n, const void *alpha,
                      const void *x, void *y);

/* "openblas-sgemm-pm1", the peer of pk_bgemm: what a user without pk runs on
 * a +-1 problem: C = A * B^T with cblas_sgemm (row-major, B transposed as
 * pk_bgemm's B) on +-1.0f matrices A (m x k) and B (n x k); C is m x n.
 * -1 without BLAS or for sizes past OpenBLAS's int. */
int pk_peer_blas_sgemm_pm1(int64_t m, int64_t n, int64_t k, const float *A,
                           const float *B, float *C);
/* cblas_?gemm with CblasRowMajor (ta, tb: 1 = transposed), f32 or f64;
 * -1 without BLAS, for another dtype or sizes past 32 bits. */
int pk_peer_blas_gemm(pk_dtype t, int ta, int tb, int64_t m, int64_t n,
                      int64_t k, const void *alpha, const void *A, int64_t lda,
                      const void *B, int64_t ldb, const void *beta, void *C,
                      int64_t ldc);
/* The measured FMA peak of this machine in FLOP/s (2 per lane per FMA) for
 * dtype t (f32, f64), all OpenMP threads, on pk's SIMD path: "fma-peak",
 * the ceiling of the gemm rows. Best of 10 passes of 5-10 ms. */
double pk_cpu_fma_peak(pk_dtype t);

/* Measure the ceilings on a buffer of `bytes` (the copy runs from one half
 * to the other), best of `reps` passes, in GB/s (10^9 bytes/s). Returns 0,
 * or -1 when the buffer cannot be allocated. */
int pk_cpu_ceilings(size_t bytes, int reps, double *read_gbps,
                    double *copy_gbps);

#endif
