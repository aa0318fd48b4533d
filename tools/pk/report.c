/* `pk bench` output: the figures every format derives from a row (rates,
 * percents of the ceilings, the ratio, the case's id) and the human table,
 * one row per case, printed as it finishes. CSV and Markdown: bench_csv.c;
 * JSON: bench_json.c. */
#include "bench.h"
#include "custom.h"
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

const bench_peer *bench_best_peer(const bench_row *r)
{
    const bench_peer *best = NULL;
    for (int i = 0; i < r->npeers; i++)
        if (!best || r->peers[i].t.median < best->t.median) best = &r->peers[i];
    return best;
}

/* ---- Derived figures ------------------------------------------------- */

static int timed(const bench_row *r)
{
    return r->t.median > 0;
}

double report_gbps(const bench_row *r)
{
    return timed(r) ? r->bytes / r->t.median * 1e-9 : NAN;
}

double report_ceiling_pct(const bench_row *r)
{
    return r->ceiling_gbps > 0 ? 100 * report_gbps(r) / r->ceiling_gbps : NAN;
}

/* The operations of one call: the runner's count for the compute kernels;
 * else the kernel's per element (an add, multiply or compare; two for dot
 * and axpy, a multiply and an add). */
double report_ops(const bench_row *r)
{
    if (r->ops > 0) return r->ops;
    return (double)r->bc.c.n * bench_kernel_of(&r->bc.c)->elem_ops;
}

double report_ops_rate(const bench_row *r)
{
    return timed(r) ? report_ops(r) / r->t.median : NAN;
}

double report_ops_pct(const bench_row *r)
{
    return r->ceiling_ops > 0 ? 100 * report_ops_rate(r) / r->ceiling_ops : NAN;
}

double report_ratio(const bench_row *r)
{
    const bench_peer *p = bench_best_peer(r);
    return p && timed(r) && p->t.median > 0 ? p->t.median / r->t.median : NAN;
}

const char *report_ops_unit(const bench_row *r)
{
    int fp = r->bc.c.dtype == PK_F32 || r->bc.c.dtype == PK_F64;
    switch (bench_kernel_of(&r->bc.c)->unit) {
    case BENCH_UNIT_BITOP: return "bitop";
    case BENCH_UNIT_FLOP: return "flop";
    case BENCH_UNIT_FLOP_FP: return fp ? "flop" : "op";
    default: return "op";
    }
}

static const char *dtype_of(const pk_bench_case *c)
{
    return bench_is_bits(c->id) ? "b1" : pk_dtype_name(c->dtype);
}

const char *report_dtype(const bench_row *r)
{
    return dtype_of(&r->bc.c);
}

const char *report_status(const bench_row *r)
{
    return r->status == BENCH_OK ? "ok" : r->status == BENCH_SKIPPED ? "skipped" : "FAILED";
}

const char *report_status_field(const bench_row *r)
{
    return r->status == BENCH_OK ? "ok" : r->status == BENCH_SKIPPED ? "skipped" : "failed";
}

static const char *reducer_name(const pk_bench_case *c)
{
    return pk_bench_udrs[c->k % PK_BENCH_NUDR].name;
}

void report_case_id(char *buf, size_t len, const bench_case *bc)
{
    const pk_bench_case *c = &bc->c;
    const char *dt = dtype_of(c);
    long long rows = c->rows, cols = c->cols;
    switch (bench_kernel_of(c)->family) {
    case BENCH_F_TOPK:
        snprintf(buf, len, "%s/%s/q=%lld,n=%lld,k=%lld,topk=%lld", c->kernel, dt, rows, cols,
                 (long long)c->k, (long long)c->topk);
        break;
    case BENCH_F_GEMM:
    case BENCH_F_BITS:
        snprintf(buf, len, "%s/%s/m=%lld,n=%lld,k=%lld", c->kernel, dt, rows, cols,
                 (long long)c->k);
        break;
    case BENCH_F_CUSTOM:
        if (c->rows)
            snprintf(buf, len, "%s/%s/%s/%lldx%lld/axis=%d", c->kernel, dt, reducer_name(c),
                     rows, cols, c->axis);
        else
            snprintf(buf, len, "%s/%s/%s/n=%lld", c->kernel, dt, reducer_name(c),
                     (long long)c->n);
        break;
    case BENCH_F_AXIS:
        snprintf(buf, len, "%s/%s/%lldx%lld/axis=%d", c->kernel, dt, rows, cols, c->axis);
        break;
    default:
        snprintf(buf, len, "%s/%s/n=%lld%s", c->kernel, dt, (long long)c->n,
                 c->out_on_device ? "/dev" : "");
    }
}

void report_size(char *buf, size_t len, const bench_case *bc)
{
    const pk_bench_case *c = &bc->c;
    char a[32];
    switch (bench_kernel_of(c)->family) {
    case BENCH_F_TOPK:
        pk_fmt_count(a, sizeof a, c->cols);
        snprintf(buf, len, "%lldq %s %lldb k%lld", (long long)c->rows, a, (long long)c->k,
                 (long long)c->topk);
        break;
    case BENCH_F_GEMM:
    case BENCH_F_BITS:
        snprintf(buf, len, "%lldx%lldx%lld", (long long)c->rows, (long long)c->cols,
                 (long long)c->k);
        break;
    case BENCH_F_CUSTOM:
        if (c->rows) {
            snprintf(buf, len, "%lldx%lld ax%d %s", (long long)c->rows, (long long)c->cols,
                     c->axis, reducer_name(c));
        } else {
            pk_fmt_count(a, sizeof a, c->n);
            snprintf(buf, len, "%s %s", a, reducer_name(c));
        }
        break;
    case BENCH_F_AXIS:
        snprintf(buf, len, "%lldx%lld ax%d", (long long)c->rows, (long long)c->cols, c->axis);
        break;
    default:
        pk_fmt_count(a, sizeof a, c->n);
        snprintf(buf, len, "%s%s", a, c->out_on_device ? " dev" : "");
    }
}

void report_build_value(char *buf, size_t len, const char *key)
{
    size_t klen = strlen(key);
    for (const char *s = pk_build_config(); *s;) {
        const char *nl = strchr(s, '\n');
        if (!nl) nl = s + strlen(s);
        if (!strncmp(s, key, klen) && s[klen] == '=') {
            snprintf(buf, len, "%.*s", (int)(nl - s - klen - 1), s + klen + 1);
            return;
        }
        s = *nl ? nl + 1 : nl;
    }
    snprintf(buf, len, "?");
}

void report_rate(char *buf, size_t len, const bench_row *r)
{
    bench_rate rate = bench_kernel_of(&r->bc.c)->rate;
    if (!timed(r)) snprintf(buf, len, "-");
    else if (rate == BENCH_RATE_TOPS) snprintf(buf, len, "%.2f TOP/s", report_ops_rate(r) * 1e-12);
    else if (rate == BENCH_RATE_GFLOPS)
        snprintf(buf, len, "%.1f GFLOP/s", report_ops_rate(r) * 1e-9);
    else snprintf(buf, len, "%.1f GB/s", report_gbps(r));
}

/* ---- The table ------------------------------------------------------- */

void report_header(FILE *f, const bench_device *d)
{
    if (strcmp(d->name, d->describe) == 0) fprintf(f, "pk bench on %s\n", d->name);
    else fprintf(f, "pk bench on %s: %s\n", d->name, d->describe);
    fprintf(f, "ceilings measured in this run: %s %.1f GB/s, %s %.1f GB/s", d->ceil_names[0],
            d->ceil_gbps[0], d->ceil_names[1], d->ceil_gbps[1]);
    if (d->backend == PK_BACKEND_CPU)
        fprintf(f, " (read + write; %zu MiB buffer)", d->ceil_bytes >> 20);
    fprintf(f, "\n");
    if (d->backend == PK_BACKEND_CPU) {
        fprintf(f, "peers: omp-loop (%s build, %d OpenMP threads)", d->loop_isa, d->threads);
        if (d->blas) fprintf(f, ", openblas (%s; set to %d threads)", d->blas, d->blas_threads);
        if (d->blas && getenv("PK_BENCH_SET_CORETYPE"))
            fprintf(f, "\n       OPENBLAS_CORETYPE=%s set by pk bench: this OpenBLAS does not "
                       "know this CPU and would run its Prescott (SSE3) kernels",
                    getenv("PK_BENCH_SET_CORETYPE"));
        fprintf(f, "\n");
    } else {
        fprintf(f, "CUDA device %d; runtime %d.%d, driver %d.%d\n", d->cuda_device,
                d->cuda_runtime / 1000, d->cuda_runtime % 1000 / 10, d->cuda_driver / 1000,
                d->cuda_driver % 1000 / 10);
    }
    /* A load of a quarter of the CPUs (at least 0.5) means others compete. */
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    double busy = cpus > 2 ? 0.25 * (double)cpus : 0.5;
    fprintf(f, "seed %llu; load average %.2f at the start%s\n", (unsigned long long)d->seed,
            d->load1, d->load1 > busy ? " (other processes are running: timings may be noisy)" : "");
    fprintf(f, "time: median of the timed samples; noise: half their interquartile range; "
               "ceil%%: of the ceiling above;\nratio: peer time / pk time (above 1: pk is "
               "faster); '?': timings disturbed, row flagged UNRELIABLE ('pk bench --help')\n\n");
    fflush(f);
}

/* The column header, printed again whenever the rows switch between
 * bandwidth kernels (GB/s) and compute kernels (operations per second). */
static void table_header(FILE *f, int compute, int again)
{
    fprintf(f, "%s%-18s %-5s %-18s %10s %6s %8s %6s  %-13s %10s %6s  %s\n", again ? "\n" : "",
            "kernel", "dtype", "size", "time", "noise", compute ? "G|Top/s" : "GB/s", "ceil%",
            "peer", "peer time", "ratio", "check");
}

void report_row(FILE *f, const bench_row *r)
{
    char size[48], t[24] = "-", pt[24] = "-", noise[16] = "-";
    report_size(size, sizeof size, &r->bc);
    const bench_peer *p = bench_best_peer(r);
    if (timed(r)) pk_fmt_time(t, sizeof t, r->t.median);
    if (r->t.samples > 0 && r->t.noise == r->t.noise)
        snprintf(noise, sizeof noise, "%.0f%%", 100 * r->t.noise);
    if (p) pk_fmt_time(pt, sizeof pt, p->t.median);
    static int shown = -1; /* which header is showing */
    int compute = bench_is_compute(r->bc.c.id), doubtful = r->unreliable[0] != 0;
    if (shown != compute) table_header(f, compute, shown >= 0), shown = compute;
    fprintf(f, "%-18s %-5s %-18s %10s %6s ", r->bc.c.kernel, report_dtype(r), size, t, noise);
    /* GFLOP/s for gemm, TOP/s for the bit kernels (bit operations). */
    double scale = bench_kernel_of(&r->bc.c)->rate == BENCH_RATE_TOPS ? 1e-12 : 1e-9;
    double rate = compute ? report_ops_rate(r) * scale : report_gbps(r);
    double pct = compute ? report_ops_pct(r) : report_ceiling_pct(r);
    if (doubtful && timed(r)) fprintf(f, "%8s %6s ", "?", "?");
    else {
        if (rate == rate) fprintf(f, "%8.1f ", rate);
        else fprintf(f, "%8s ", "-");
        if (pct == pct) fprintf(f, "%5.0f%% ", pct);
        else fprintf(f, "%6s ", "-");
    }
    fprintf(f, " %-13s %10s ", p ? p->name : "-", pt);
    double ratio = report_ratio(r);
    if (ratio == ratio && doubtful) fprintf(f, "%6s  ", "?");
    else if (ratio >= 100) fprintf(f, "%6.0f  ", ratio);
    else if (ratio == ratio) fprintf(f, "%6.2f  ", ratio);
    else fprintf(f, "%6s  ", "-");
    fprintf(f, "%s%s%s", report_status(r), r->note[0] ? ": " : "", r->note);
    if (doubtful) fprintf(f, "; UNRELIABLE: %s", r->unreliable);
    fprintf(f, "\n");
    fflush(f);
}
