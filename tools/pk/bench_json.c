/* `pk bench --json`: one JSON document, written as the run goes. Its first
 * line holds everything but the rows (schema, build, run, device) and opens
 * "rows": [; then each row is one line of its own (the second and later
 * ones start with a comma), flushed as it is measured; the last line closes
 * the document with "complete" and a summary. An interrupted run (SIGINT,
 * SIGTERM, SIGHUP) still gets a closing line, with "complete": false
 * (bench_out.c); a killed one leaves whole row lines, which `pk bench
 * compare` and pk-roofline read back. Fields: docs/CLI.md. */
#include "bench.h"
#include "custom.h"
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void key(FILE *f, const char *k)
{
    fprintf(f, ", \"%s\": ", k);
}

static void kv_str(FILE *f, const char *k, const char *v)
{
    key(f, k);
    if (v) pk_json_str(f, v);
    else fputs("null", f);
}

static void kv_num(FILE *f, const char *k, double v)
{
    key(f, k);
    pk_json_num(f, v);
}

static void kv_int(FILE *f, const char *k, int64_t v)
{
    key(f, k);
    pk_json_int(f, v);
}

/* The build as an object of strings, from pk_build_config's key=value
 * lines (version, git, compiler, ...). */
static void build_object(FILE *f)
{
    const char *s = pk_build_config();
    fputc('{', f);
    for (int first = 1; *s;) {
        const char *eq = strchr(s, '='), *nl = strchr(s, '\n');
        if (!nl) nl = s + strlen(s);
        if (eq && eq < nl) {
            char k[64], v[512];
            snprintf(k, sizeof k, "%.*s", (int)(eq - s), s);
            snprintf(v, sizeof v, "%.*s", (int)(nl - eq - 1), eq + 1);
            fputs(first ? "" : ", ", f);
            pk_json_str(f, k);
            fputs(": ", f);
            pk_json_str(f, v);
            first = 0;
        }
        s = *nl ? nl + 1 : nl;
    }
    fputc('}', f);
}

void report_json_head(FILE *f, const bench_device *d, const bench_run *run)
{
    fprintf(f, "{\"schema\": \"pk-bench\", \"schema_version\": %d, \"build\": ",
            BENCH_JSON_SCHEMA_VERSION);
    build_object(f);
    fputs(", \"run\": {\"command\": ", f);
    pk_json_str(f, run->command);
    kv_str(f, "started_utc", run->started);
    kv_str(f, "set", run->set);
    kv_int(f, "cases", run->ncases);
    kv_int(f, "seed", (int64_t)d->seed);
    kv_num(f, "load1_at_start", d->load1);
    fputs("}, \"device\": {\"backend\": ", f);
    pk_json_str(f, pk_backend_name(d->backend));
    kv_str(f, "name", d->name);
    kv_str(f, "describe", d->describe);
    for (int i = 0; i < 2; i++) {
        char k[32];
        snprintf(k, sizeof k, "%s_gbps", d->ceil_names[i]);
        kv_num(f, k, d->ceil_gbps[i]);
    }
    if (d->backend == PK_BACKEND_CPU) {
        kv_int(f, "ceiling_bytes", (int64_t)d->ceil_bytes);
        kv_int(f, "llc_bytes", d->llc_bytes);
        kv_int(f, "threads", d->threads);
        kv_str(f, "loop_isa", d->loop_isa);
        kv_str(f, "blas", d->blas);
        kv_int(f, "blas_threads", d->blas_threads);
        kv_str(f, "blas_coretype_set", d->blas ? getenv("PK_BENCH_SET_CORETYPE") : NULL);
    } else {
        kv_int(f, "index", d->cuda_device);
        kv_int(f, "cuda_runtime", d->cuda_runtime);
        kv_int(f, "cuda_driver", d->cuda_driver);
    }
    fputs("}, \"rows\": [\n", f);
}

static void times(FILE *f, const char *prefix, const bench_times *t)
{
    char k[48];
    snprintf(k, sizeof k, "%stime_s", prefix);
    kv_num(f, k, t->median > 0 ? t->median : NAN);
    snprintf(k, sizeof k, "%stime_min_s", prefix);
    kv_num(f, k, t->samples ? t->min : NAN);
    snprintf(k, sizeof k, "%stime_max_s", prefix);
    kv_num(f, k, t->samples ? t->max : NAN);
    snprintf(k, sizeof k, "%snoise", prefix);
    kv_num(f, k, t->samples ? t->noise : NAN);
    snprintf(k, sizeof k, "%ssamples", prefix);
    kv_int(f, k, t->samples);
    snprintf(k, sizeof k, "%sdisturbed", prefix);
    kv_int(f, k, t->disturbed);
}

void report_json_row(FILE *f, const bench_row *r, int first)
{
    const pk_bench_case *c = &r->bc.c;
    const unsigned cols = bench_kernel_of(c)->cols;
    char id[160];
    report_case_id(id, sizeof id, &r->bc);
    fputs(first ? "{\"id\": " : ",{\"id\": ", f);
    pk_json_str(f, id);
    kv_str(f, "kernel", c->kernel);
    kv_str(f, "backend", pk_backend_name(r->backend));
    kv_str(f, "dtype", report_dtype(r));
    kv_int(f, "n", cols & BENCH_COL_MNK ? c->cols : c->n);
    if (cols & BENCH_COL_MNK) {
        kv_int(f, "m", c->rows);
        kv_int(f, "k", c->k);
        if (c->topk) kv_int(f, "topk", c->topk);
    } else if ((cols & BENCH_COL_AXIS) && c->rows) {
        kv_int(f, "rows", c->rows);
        kv_int(f, "cols", c->cols);
        kv_int(f, "axis", c->axis);
    }
    if (cols & BENCH_COL_OP) kv_str(f, "op", pk_op_name(r->bc.op));
    if (cols & BENCH_COL_REDUCER) kv_str(f, "reducer", pk_bench_udrs[c->k % PK_BENCH_NUDR].name);
    if (c->out_on_device) fputs(", \"out_on_device\": true", f);
    kv_str(f, "status", report_status_field(r));
    fprintf(f, ", \"verified\": %s",
            r->status == BENCH_OK ? "true" : r->status == BENCH_FAILED ? "false" : "null");
    times(f, "", &r->t);
    kv_int(f, "bytes", (int64_t)r->bytes);
    kv_num(f, "gbps", report_gbps(r));
    kv_str(f, "ceiling", r->ceiling);
    kv_num(f, "ceiling_gbps", r->ceiling_gbps > 0 ? r->ceiling_gbps : NAN);
    kv_num(f, "ceiling_pct", report_ceiling_pct(r));
    kv_int(f, "ops", (int64_t)report_ops(r));
    kv_str(f, "ops_unit", report_ops_unit(r));
    kv_num(f, "ops_per_s", report_ops_rate(r));
    kv_str(f, "ops_ceiling", r->ceiling_ops_name[0] ? r->ceiling_ops_name : NULL);
    kv_num(f, "ops_ceiling_per_s", r->ceiling_ops > 0 ? r->ceiling_ops : NAN);
    kv_num(f, "ops_ceiling_pct", report_ops_pct(r));
    if (c->topk) kv_num(f, "qps", r->t.median > 0 ? (double)c->rows / r->t.median : NAN);
    const bench_peer *p = bench_best_peer(r);
    kv_str(f, "peer", p ? p->name : NULL);
    kv_num(f, "peer_time_s", p ? p->t.median : NAN);
    kv_num(f, "ratio", report_ratio(r));
    fputs(", \"peers\": [", f);
    for (int i = 0; i < r->npeers; i++) {
        const bench_peer *q = &r->peers[i];
        fprintf(f, "%s{\"name\": ", i ? ", " : "");
        pk_json_str(f, q->name);
        times(f, "", &q->t);
        kv_num(f, "ratio", r->t.median > 0 ? q->t.median / r->t.median : NAN);
        fputc('}', f);
    }
    fputc(']', f);
    fprintf(f, ", \"reliable\": %s", r->unreliable[0] ? "false" : "true");
    kv_str(f, "unreliable_reason", r->unreliable[0] ? r->unreliable : NULL);
    kv_int(f, "attempts", r->attempts);
    kv_str(f, "note", r->note);
    fputs("}\n", f);
}

void report_json_tail(FILE *f, int nrows, int failed, int skipped, int unreliable,
                      double elapsed_s)
{
    fprintf(f, "], \"complete\": true, \"summary\": {\"rows\": %d, \"failed\": %d, "
               "\"skipped\": %d, \"unreliable\": %d, \"elapsed_s\": ",
            nrows, failed, skipped, unreliable);
    pk_json_num(f, elapsed_s);
    fputs("}}\n", f);
}
