/* `pk bench`: the pieces shared by its driver (bench.c), the CPU and GPU
 * runners (bench_cpu.c, bench_gpu.c) and the output (report.c). The
 * kernels: bench_kernels.h. */
#ifndef PK_BENCH_H
#define PK_BENCH_H

#include "bench_kernels.h"
#include "cli.h"
#include "gpu.h"

#include "pk.h"

#include <stdint.h>
#include <stdio.h>

typedef struct bench_opts {
    int quick;
    int list;         /* print the cases' ids instead of running them */
    int reps;         /* timed samples per block; 0: by time budget */
    double budget_s;  /* seconds of timed samples per block when reps = 0 */
    double max_noise; /* a row whose timings are noisier is measured again,
                         then flagged unreliable (bench_row.unreliable) */
    uint64_t seed;
} bench_opts;

/* One contender's timed samples (seconds per call). */
typedef struct bench_times {
    double median, min, max;
    double noise; /* half the interquartile range over the median: the
                     middle half of the samples lie within about +-noise of
                     the median; NAN when unknown */
    int samples;  /* 0: only the median is known */
    int disturbed; /* samples during which the timing thread ran less than
                      half the time (another process had its CPU); CPU only */
} bench_times;

/* One case: the GPU bench's description plus the op of reductions. */
typedef struct bench_case {
    pk_bench_case c;
    pk_op op; /* pk_reduce kernels; PK_SUM for reduce_axis */
} bench_case;

#define BENCH_MAX_PEERS 2

typedef struct bench_peer {
    char name[32];
    bench_times t;
} bench_peer;

enum { BENCH_OK = 1, BENCH_FAILED = 0, BENCH_SKIPPED = -1 };

typedef struct bench_row {
    bench_case bc;
    pk_backend backend;
    int status;          /* BENCH_OK, BENCH_FAILED (verification or error),
                            BENCH_SKIPPED (case not available) */
    bench_times t;       /* pk's times; t.median is "the" time */
    double bytes;        /* inputs read + outputs written (an integer) */
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
    /* Set by the driver (bench.c): how many times the case was measured,
     * and why its timings are not to be trusted ("" when they are). */
    int attempts;
    char unreliable[128];
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
    int64_t llc_bytes;   /* CPU: the largest cache level's total size (0:
                            unknown); rows past 2x it are memory-bound */
    int64_t mem_bytes;   /* CPU: physical memory (0: unknown) */
    int cuda_device;     /* CUDA: the device index (--device) */
    int cuda_runtime, cuda_driver; /* CUDA: versions, 1000 major + 10 minor */
} bench_device;

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
    int disturbed;
    double *ts;
    bench_times t; /* the result */
} contender;
/* Time the contenders in interleaved turns; fills t (or failed). */
void bench_time_group(contender *cs, int n, const bench_opts *o);
/* Record contenders 1..n-1 (the peers; 0 is pk) that did not fail in row's
 * peers, named names[i]. */
void bench_add_peers(bench_row *row, const contender *cs, const char *const *names, int n);

/* The fastest peer of a row, or NULL. */
const bench_peer *bench_best_peer(const bench_row *r);
/* The statistics of n samples (sorted in place). */
bench_times bench_times_of(double *ts, int n);

/* CPU runner: keeps the random inputs between cases. bench_cpu_run runs
 * a case through its kernel's runner (bench_kernels.h). */
typedef struct bench_cpu bench_cpu;
bench_cpu *bench_cpu_new(const bench_opts *o);
void bench_cpu_free(bench_cpu *b);
const bench_opts *bench_cpu_opts(const bench_cpu *b);
void bench_cpu_run(bench_cpu *b, pk_ctx *ctx, const bench_case *c,
                   const bench_device *dev, bench_row *row);

/* The kernels' CPU runners (bench_cpu_runner): the memory-bound kernels on
 * the inputs kept (bench_cpu.c); gemm (bench_cpu_gemm.c), the bit kernels
 * (bench_cpu_bits.c) and the user-defined reductions (bench_cpu_custom.c)
 * make their own. */
bench_cpu_runner bench_cpu_run_memory, bench_cpu_run_gemm, bench_cpu_run_bits,
    bench_cpu_run_custom;

/* GPU runner: one case through pk_bench_gpu_run. */
void bench_gpu_run(pk_ctx *ctx, const bench_case *c, const bench_device *dev,
                   bench_row *row);

/* Output (report.c: the table; bench_csv.c: CSV and Markdown;
 * bench_json.c: JSON; bench_out.c: the files and the streaming). */
typedef struct bench_run {
    const char *set;     /* "headline", "all", "quick", "kernels", "sizes" */
    char command[512];   /* the command line, for the record */
    char started[32];    /* UTC, ISO 8601 */
    int ncases;          /* cases planned */
    int all_cases;       /* cases of `pk bench --all` on this backend */
} bench_run;

/* Derived figures of a row, shared by every format (NAN when not known). */
double report_gbps(const bench_row *r);
double report_ceiling_pct(const bench_row *r); /* of the GB/s ceiling */
double report_ops(const bench_row *r);         /* operations of one call */
double report_ops_rate(const bench_row *r);    /* operations per second */
double report_ops_pct(const bench_row *r);     /* of the compute ceiling */
double report_ratio(const bench_row *r);       /* best peer time / pk time */
/* "flop", "bitop" or "op": what a row's ops count. */
const char *report_ops_unit(const bench_row *r);
/* The dtype column: "b1" for the bit kernels. */
const char *report_dtype(const bench_row *r);
/* "ok", "FAILED", "skipped" (the table); "ok", "failed", "skipped" (the
 * status field of CSV and JSON). */
const char *report_status(const bench_row *r);
const char *report_status_field(const bench_row *r);
/* A stable key of the case: "sum/f32/n=1024", "gemm/f32/m=..,n=..,k=..". */
void report_case_id(char *buf, size_t len, const bench_case *c);
/* The value of key in pk_build_config() ("version", "git", ...), or "?". */
void report_build_value(char *buf, size_t len, const char *key);
/* "8.9 GB/s", "48.6 GFLOP/s", "1.2 TOP/s" (the rate column with units). */
void report_rate(char *buf, size_t len, const bench_row *r);

/* The human table on f. */
void report_header(FILE *f, const bench_device *dev);
void report_row(FILE *f, const bench_row *r);
/* "sum", "reduce_axis", ... and the size column ("2^26", "8192x8192 ax0"). */
void report_size(char *buf, size_t len, const bench_case *c);

/* CSV: a header line, then one line per row. Markdown: a title, a legend
 * and a table, one line per row. */
void report_csv_header(FILE *f);
void report_csv_row(FILE *f, const bench_device *dev, const bench_row *r);
void report_md_header(FILE *f, const bench_device *dev, const bench_run *run);
void report_md_row(FILE *f, const bench_row *r);

/* JSON (schema in docs/CLI.md): the document's head (schema, build, run,
 * device) and "rows": [, each row on a line of its own, then the tail. */
#define BENCH_JSON_SCHEMA_VERSION 1
void report_json_head(FILE *f, const bench_device *dev, const bench_run *run);
void report_json_row(FILE *f, const bench_row *r, int first);
void report_json_tail(FILE *f, int nrows, int failed, int skipped, int unreliable,
                      double elapsed_s);

/* The run (bench_run.c): backend, device (-1: --device not given),
 * ceilings, every case, the summary; returns the exit status. */
int bench_main(const bench_opts *o, pk_backend backend, int backend_given, int device,
               const int *want, unsigned dtypes, const int64_t *sizes, int nsizes, int all,
               bench_run *run);
/* `pk bench compare BASE NEW` (bench_compare.c); argv as pk_cmd_bench's. */
int pk_cmd_bench_compare(int argc, char **argv, pk_cli_mode mode);

/* The kernels and the cases of a run (bench_plan.c). */
typedef enum { BENCH_SET_HEADLINE, BENCH_SET_ALL, BENCH_SET_QUICK } bench_set;
typedef struct bench_plan {
    bench_case *cases, spare;
    int n, cap, oom;
} bench_plan;
typedef struct bench_plan_opts {
    bench_set set;
    const int *want;       /* per kernel; NULL or none set: the set's own */
    unsigned dtypes;       /* --dtype bit set; 0: the set's own */
    int gpu;
    const int64_t *sizes;  /* --sizes, or NULL */
    int nsizes;
} bench_plan_opts;
/* Append the cases; -1 when out of memory. */
int bench_plan_make(bench_plan *p, const bench_plan_opts *o);
/* Parse a --sizes list (1000,2^20,1e6, ranges 2^20:2^28:x4 and
 * 1000:5000:+1000); -1 with the reason in why. *out is malloc'ed. */
int bench_parse_sizes(const char *s, int64_t **out, int *n, char *why, size_t len);
/* Host memory a case needs, in bytes (roughly: its buffers and peers'). */
double bench_case_bytes(const bench_case *c);

/* The outputs of a run (bench_out.c): add each --csv/--markdown/--json
 * while parsing (a usage error returns 2), open them before measuring (1
 * after printing why), then begin, a row at a time, end (1 after a write
 * error). discard: the run failed before begin; remove what it created. */
enum { BENCH_FMT_TABLE, BENCH_FMT_CSV, BENCH_FMT_MD, BENCH_FMT_JSON, BENCH_NFMT };
int bench_out_add(int fmt, const char *path);
int bench_out_stdout_taken(void);
int bench_out_open(void);
void bench_out_discard(void);
/* Forget the outputs added (none opened): after a checked command line. */
void bench_out_forget(void);
/* The human table's stream, or NULL when a format took stdout. */
FILE *bench_out_table(void);
void bench_out_begin(const bench_device *d, const bench_run *run);
void bench_out_row(const bench_device *d, const bench_row *r);
int bench_out_end(int failed, int skipped, int unreliable, double elapsed_s);

#endif
