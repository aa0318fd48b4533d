/* `pk bench` output: the table (one row per case, printed as it finishes)
 * and the JSON document. */
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
        if (!best || r->peers[i].time_s < best->time_s) best = &r->peers[i];
    return best;
}

int bench_is_bits(const char *kernel)
{
    return !strcmp(kernel, "bgemm") || !strcmp(kernel, "hamming_topk");
}

int bench_is_compute(const char *kernel)
{
    return !strncmp(kernel, "gemm", 4) || bench_is_bits(kernel);
}

/* The dtype column: bit kernels work on packed bits. */
static const char *row_dtype(const pk_bench_case *c)
{
    return bench_is_bits(c->kernel) ? "b1" : pk_dtype_name(c->dtype);
}

void report_size(char *buf, size_t len, const bench_case *c)
{
    char a[32];
    if (!strcmp(c->c.kernel, "hamming_topk")) {
        pk_fmt_count(a, sizeof a, c->c.cols);
        snprintf(buf, len, "%lldq %s %lldb k%lld", (long long)c->c.rows, a,
                 (long long)c->c.k, (long long)c->c.topk);
    } else if (bench_is_compute(c->c.kernel)) {
        snprintf(buf, len, "%lldx%lldx%lld", (long long)c->c.rows,
                 (long long)c->c.cols, (long long)c->c.k);
    } else if (strcmp(c->c.kernel, "custom") == 0 && c->c.rows) {
        snprintf(buf, len, "%lldx%lld ax%d %s", (long long)c->c.rows, (long long)c->c.cols,
                 c->c.axis, pk_bench_udrs[c->c.k % PK_BENCH_NUDR].name);
    } else if (strcmp(c->c.kernel, "custom") == 0) {
        pk_fmt_count(a, sizeof a, c->c.n);
        snprintf(buf, len, "%s %s", a, pk_bench_udrs[c->c.k % PK_BENCH_NUDR].name);
    } else if (strcmp(c->c.kernel, "reduce_axis") == 0) {
        snprintf(buf, len, "%lldx%lld ax%d", (long long)c->c.rows,
                 (long long)c->c.cols, c->c.axis);
    } else {
        pk_fmt_count(a, sizeof a, c->c.n);
        snprintf(buf, len, "%s%s", a, c->c.out_on_device ? " dev" : "");
    }
}

void report_header(const bench_device *d)
{
    if (strcmp(d->name, d->describe) == 0) printf("pk bench on %s\n", d->name);
    else printf("pk bench on %s: %s\n", d->name, d->describe);
    printf("ceilings measured in this run: %s %.1f GB/s, %s %.1f GB/s", d->ceil_names[0],
           d->ceil_gbps[0], d->ceil_names[1], d->ceil_gbps[1]);
    if (d->backend == PK_BACKEND_CPU)
        printf(" (read + write; %zu MiB buffer)", d->ceil_bytes >> 20);
    printf("\n");
    if (d->backend == PK_BACKEND_CPU) {
        printf("peers: omp-loop (%s build, %d OpenMP threads)", d->loop_isa, d->threads);
        if (d->blas) printf(", openblas (%s; set to %d threads)", d->blas, d->blas_threads);
        if (d->blas && getenv("PK_BENCH_SET_CORETYPE"))
            printf("\n       OPENBLAS_CORETYPE=%s set by pk bench: this OpenBLAS does not "
                   "know this CPU and would run its Prescott (SSE3) kernels",
                   getenv("PK_BENCH_SET_CORETYPE"));
        printf("\n");
    }
    /* A load of a quarter of the CPUs (at least 0.5) means others compete. */
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    double busy = cpus > 2 ? 0.25 * (double)cpus : 0.5;
    printf("seed %llu; load average %.2f at the start%s\n\n", (unsigned long long)d->seed,
           d->load1, d->load1 > busy ? " (other processes are running: timings may be noisy)" : "");
    fflush(stdout);
}

/* The column header, printed again whenever the rows switch between
 * bandwidth kernels (GB/s) and compute kernels (operations per second). */
static void table_header(int compute, int again)
{
    printf("%s%-18s %-5s %-18s %10s %8s %6s  %-13s %10s %6s  %s\n",
           again ? "\n" : "", "kernel", "dtype", "size", "time",
           compute ? "G|Top/s" : "GB/s", "ceil%", "peer", "peer time", "ratio",
           "check");
}

static double gbps(const bench_row *r)
{
    return r->time_s > 0 ? r->bytes / r->time_s * 1e-9 : NAN;
}

/* Operations per second of a compute row, and its percent of the ceiling. */
static double ops_rate(const bench_row *r)
{
    return r->time_s > 0 && r->ops > 0 ? r->ops / r->time_s : NAN;
}

static double ops_pct(const bench_row *r)
{
    return r->ceiling_ops > 0 ? 100 * ops_rate(r) / r->ceiling_ops : NAN;
}

void report_row(const bench_row *r)
{
    char size[48], t[24] = "-", pt[24] = "-";
    report_size(size, sizeof size, &r->bc);
    const bench_peer *p = bench_best_peer(r);
    if (r->time_s > 0) pk_fmt_time(t, sizeof t, r->time_s);
    if (p) pk_fmt_time(pt, sizeof pt, p->time_s);
    static int shown = -1; /* which header is showing */
    int compute = bench_is_compute(r->bc.c.kernel);
    if (shown != compute) table_header(compute, shown >= 0), shown = compute;
    printf("%-18s %-5s %-18s %10s ", r->bc.c.kernel, row_dtype(&r->bc.c), size, t);
    if (compute) {
        /* GFLOP/s for gemm, TOP/s for the bit kernels (bit operations). */
        double scale = bench_is_bits(r->bc.c.kernel) ? 1e-12 : 1e-9;
        double rate = ops_rate(r) * scale, pct = ops_pct(r);
        if (rate == rate) printf("%8.1f ", rate);
        else printf("%8s ", "-");
        if (pct == pct) printf("%5.0f%% ", pct);
        else printf("%6s ", "-");
    } else if (r->time_s > 0 && r->ceiling_gbps > 0)
        printf("%8.1f %5.0f%% ", gbps(r), 100 * gbps(r) / r->ceiling_gbps);
    else if (r->time_s > 0)
        printf("%8.1f %6s ", gbps(r), "-");
    else
        printf("%8s %6s ", "-", "-");
    printf(" %-13s %10s ", p ? p->name : "-", pt);
    double ratio = p && r->time_s > 0 ? p->time_s / r->time_s : 0;
    if (ratio >= 100) printf("%6.0f  ", ratio);
    else if (ratio > 0) printf("%6.2f  ", ratio);
    else printf("%6s  ", "-");
    const char *check = r->status == BENCH_OK        ? "ok"
                        : r->status == BENCH_SKIPPED ? "skipped"
                                                     : "FAILED";
    printf("%s%s%s\n", check, r->note[0] ? ": " : "", r->note);
    fflush(stdout);
}

static void json_kv_num(const char *key, double v)
{
    printf(", \"%s\": ", key);
    pk_json_num(stdout, v);
}

static void json_row(const bench_row *r)
{
    const pk_bench_case *c = &r->bc.c;
    printf("{\"kernel\": \"%s\", \"backend\": \"%s\", \"dtype\": \"%s\", \"n\": %lld",
           c->kernel, pk_backend_name(r->backend), row_dtype(c), (long long)c->n);
    if (bench_is_compute(c->kernel)) {
        printf(", \"m\": %lld, \"k\": %lld", (long long)c->rows, (long long)c->k);
        if (c->topk) printf(", \"topk\": %lld", (long long)c->topk);
        json_kv_num("ops", r->ops);
        json_kv_num(bench_is_bits(c->kernel) ? "tops" : "gflops",
                    ops_rate(r) * (bench_is_bits(c->kernel) ? 1e-12 : 1e-9));
        printf(", \"ops_ceiling\": ");
        pk_json_str(stdout, r->ceiling_ops_name);
        json_kv_num("ops_ceiling_pct", ops_pct(r));
        if (c->topk && r->time_s > 0) json_kv_num("qps", (double)c->rows / r->time_s);
    }
    if (strcmp(c->kernel, "reduce_axis") == 0)
        printf(", \"op\": \"%s\", \"rows\": %lld, \"cols\": %lld, \"axis\": %d",
               pk_op_name(r->bc.op), (long long)c->rows, (long long)c->cols, c->axis);
    if (strcmp(c->kernel, "custom") == 0) {
        printf(", \"reducer\": \"%s\"", pk_bench_udrs[c->k % PK_BENCH_NUDR].name);
        if (c->rows)
            printf(", \"rows\": %lld, \"cols\": %lld, \"axis\": %d", (long long)c->rows,
                   (long long)c->cols, c->axis);
    }
    if (c->out_on_device) printf(", \"out_on_device\": true");
    double t = r->time_s > 0 ? r->time_s * 1e3 : NAN;
    json_kv_num("time_ms", t);
    json_kv_num("gbps", gbps(r));
    json_kv_num("bytes", r->bytes);
    printf(", \"ceiling\": ");
    pk_json_str(stdout, r->ceiling ? r->ceiling : "");
    json_kv_num("ceiling_pct", r->ceiling_gbps > 0 ? 100 * gbps(r) / r->ceiling_gbps : NAN);
    const bench_peer *p = bench_best_peer(r);
    printf(", \"peer\": ");
    if (p) pk_json_str(stdout, p->name);
    else printf("null");
    json_kv_num("peer_time_ms", p ? p->time_s * 1e3 : NAN);
    json_kv_num("ratio", p ? p->time_s * 1e3 / t : NAN);
    printf(", \"peers\": [");
    for (int i = 0; i < r->npeers; i++) {
        printf("%s{\"name\": ", i ? ", " : "");
        pk_json_str(stdout, r->peers[i].name);
        json_kv_num("time_ms", r->peers[i].time_s * 1e3);
        json_kv_num("ratio", r->peers[i].time_s * 1e3 / t);
        printf("}");
    }
    printf("], \"verified\": %s",
           r->status == BENCH_OK ? "true" : r->status == BENCH_FAILED ? "false" : "null");
    if (r->status == BENCH_SKIPPED) printf(", \"skipped\": true");
    if (r->note[0]) {
        printf(", \"note\": ");
        pk_json_str(stdout, r->note);
    }
    printf("}");
}

void report_json(const bench_device *d, const bench_row *rows, int n)
{
    printf("{\"device\": {\"backend\": \"%s\", \"name\": ", pk_backend_name(d->backend));
    pk_json_str(stdout, d->name);
    printf(", \"describe\": ");
    pk_json_str(stdout, d->describe);
    for (int i = 0; i < 2; i++) {
        char key[32];
        snprintf(key, sizeof key, "%s_gbps", d->ceil_names[i]);
        json_kv_num(key, d->ceil_gbps[i]);
    }
    if (d->backend == PK_BACKEND_CPU) {
        printf(", \"threads\": %d, \"loop_isa\": ", d->threads);
        pk_json_str(stdout, d->loop_isa);
        printf(", \"blas\": ");
        if (d->blas) pk_json_str(stdout, d->blas);
        else printf("null");
        printf(", \"blas_threads\": %d, \"blas_coretype_set\": ", d->blas_threads);
        if (d->blas && getenv("PK_BENCH_SET_CORETYPE"))
            pk_json_str(stdout, getenv("PK_BENCH_SET_CORETYPE"));
        else
            printf("null");
        printf(", \"ceiling_bytes\": %zu", d->ceil_bytes);
    }
    printf(", \"seed\": %llu", (unsigned long long)d->seed);
    json_kv_num("load1", d->load1);
    printf("}, \"results\": [");
    for (int i = 0; i < n; i++) {
        printf(i ? ",\n  " : "\n  ");
        json_row(&rows[i]);
    }
    printf("\n]}\n");
}
