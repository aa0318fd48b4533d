/* `pk bench`: the pieces shared by its driver (bench.c), the CPU and GPU
 * runners (bench_cpu.c, bench_gpu.c) and the output (report.c). */
#ifndef PK_BENCH_H
#define PK_BENCH_H

#include "gpu.h"

#include "pk.h"

#include <stdint.h>

typedef struct bench_opts {
    int quick;
    int json;
    int reps;        /* timed samples per block; 0: by time budget */
    double budget_s; /* seconds of timed samples per block when reps = 0 */
    uint64_t seed;
} bench_opts;

/* One case: the GPU bench's description plus the op of reductions. */
typedef struct bench_case {
    pk_bench_case c;
    pk_op op; /* pk_reduce kernels; PK_SUM for reduce_axis */
} bench_case;

#define BENCH_MAX_PEERS 2

typedef struct bench_peer {
    char name[32];
    double time_s;
} bench_peer;

enum { BENCH_OK = 1, BENCH_FAILED = 0, BENCH_SKIPPED = -1 };

typedef struct bench_row {
    bench_case bc;
    pk_backend backend;
    int status;          /* BENCH_OK, BENCH_FAILED (verification or error),
                            BENCH_SKIPPED (case not available) */
    double time_s;       /* median */
    double bytes;        /* inputs read + outputs written */
    const char *ceiling; /* which ceiling ceiling_pct is of */
    double ceiling_gbps;
    int npeers;
    bench_peer peers[BENCH_MAX_PEERS];
    char note[192];
    /* Compute kernels (ops > 0): operations per call, and the ceiling they
     * are a percent of (operations per second, measured in this run). */
    double ops;
    double ceiling_ops;
    char ceiling_ops_name[24];
} bench_row;

/* What the run measured on: printed in the header and as "device". */
typedef struct bench_device {
    pk_backend backend;
    char name[128];      /* CPU model or GPU name */
    char describe[128];  /* pk_ctx_describe */
    const char *ceil_names[2];
    double ceil_gbps[2]; /* CPU: read, copy; CUDA: read, d2d */
    size_t ceil_bytes;   /* CPU: the buffer they were measured on */
    int threads;         /* CPU: OpenMP threads */
    const char *loop_isa;
    const char *blas;    /* OpenBLAS config, or NULL */
    int blas_threads;
    uint64_t seed;
    double load1;        /* 1-minute load average at the start (-1: unknown):
                            other processes make timings unreliable */
} bench_device;

/* 1 for the kernels measured in operations per second (gemm*, bgemm,
 * hamming_topk) rather than bytes per second. */
int bench_is_compute(const char *kernel);
/* 1 for the bit-matrix kernels (bgemm, hamming_topk). */
int bench_is_bits(const char *kernel);

/* One contender of a timed group: pk or a peer. fn returns nonzero on
 * failure. */
typedef struct contender {
    int (*fn)(void *);
    void *arg;
    /* Seconds to sleep before each of its turns (0: none), then calls
     * untimed for settle_s / 4: lets the previous contender's threads go
     * idle and wakes this one's. OpenBLAS's workers spin (with sched_yield)
     * for ~2^28 cycles after a call; on 2 cores they take the CPU from the
     * next contender's team for milliseconds at a time, and on a busy
     * machine a team's first calls after a pause wait for time slices. */
    double settle_s;
    int batch, samples, failed, nts;
    double *ts, median;
} contender;
/* Time the contenders in interleaved turns; fills median (or failed). */
void bench_time_group(contender *cs, int n, const bench_opts *o);
/* Record contenders 1..n-1 (the peers; 0 is pk) that did not fail in row's
 * peers, named names[i]. */
void bench_add_peers(bench_row *row, const contender *cs, const char *const *names, int n);

/* The fastest peer of a row, or NULL. */
const bench_peer *bench_best_peer(const bench_row *r);

/* CPU runner: keeps the random inputs between cases. */
typedef struct bench_cpu bench_cpu;
bench_cpu *bench_cpu_new(const bench_opts *o);
void bench_cpu_free(bench_cpu *b);
void bench_cpu_run(bench_cpu *b, pk_ctx *ctx, const bench_case *c,
                   const bench_device *dev, bench_row *row);

/* CPU runners of the compute kernels (bench_cpu_gemm.c, bench_cpu_bits.c),
 * called by bench_cpu_run; they make their own inputs. */
void bench_cpu_run_gemm(pk_ctx *ctx, const bench_case *c, const bench_device *dev,
                        const bench_opts *o, bench_row *row);
void bench_cpu_run_bits(pk_ctx *ctx, const bench_case *c, const bench_device *dev,
                        const bench_opts *o, bench_row *row);
/* User-defined reductions, kernel "custom" (bench_cpu_custom.c). */
void bench_cpu_run_custom(pk_ctx *ctx, const bench_case *c, const bench_device *dev,
                          const bench_opts *o, bench_row *row);

/* GPU runner: one case through pk_bench_gpu_run. */
void bench_gpu_run(pk_ctx *ctx, const bench_case *c, const bench_device *dev,
                   bench_row *row);

/* Output. */
void report_header(const bench_device *dev);
void report_row(const bench_row *r);
void report_json(const bench_device *dev, const bench_row *rows, int n);
/* "sum", "reduce_axis", ... and the size column ("2^26", "8192x8192 ax0"). */
void report_size(char *buf, size_t len, const bench_case *c);

#endif
