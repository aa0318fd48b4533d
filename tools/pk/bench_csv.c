/* `pk bench --csv` and `--markdown`: one line per row, written as the row
 * is measured. CSV (RFC 4180): a header line, then the figures of the JSON
 * rows (the best peer only), numbers exact, empty cells where a figure does
 * not apply. Markdown: a title and a legend, then a table as the human one.
 * Columns: docs/CLI.md. */
#include "bench.h"
#include "custom.h"
#include "cli.h"

#include <math.h>
#include <string.h>

/* ---- CSV -------------------------------------------------------------- */

static const char *const csv_columns[] = {
    "id", "kernel", "backend", "device", "dtype", "n", "m", "k", "topk", "rows", "cols",
    "axis", "reducer", "out_on_device", "status", "verified", "time_s", "time_min_s",
    "time_max_s", "noise", "samples", "disturbed", "bytes", "gbps", "ceiling", "ceiling_gbps",
    "ceiling_pct", "ops", "ops_unit", "ops_per_s", "ops_ceiling", "ops_ceiling_per_s",
    "ops_ceiling_pct", "peer", "peer_time_s", "peer_time_min_s", "peer_time_max_s",
    "peer_noise", "ratio", "reliable", "unreliable_reason", "attempts", "note",
};

void report_csv_header(FILE *f)
{
    for (size_t i = 0; i < sizeof csv_columns / sizeof *csv_columns; i++)
        fprintf(f, "%s%s", i ? "," : "", csv_columns[i]);
    fputs("\r\n", f);
}

/* Cells of the line being written: each but the first starts with a comma. */
static int ncells;

static void sep(FILE *f)
{
    if (ncells++) fputc(',', f);
}

/* A text cell: quoted when it holds a comma, a quote or a line break. */
static void cell(FILE *f, const char *s)
{
    sep(f);
    if (!s) return;
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void num(FILE *f, double v)
{
    sep(f);
    if (isfinite(v)) pk_json_num(f, v);
}

static void integer(FILE *f, int have, int64_t v)
{
    sep(f);
    if (have) pk_json_int(f, v);
}

void report_csv_row(FILE *f, const bench_device *d, const bench_row *r)
{
    const pk_bench_case *c = &r->bc.c;
    const unsigned cols = bench_kernel_of(c)->cols;
    int compute = (cols & BENCH_COL_MNK) != 0, axis = (cols & BENCH_COL_AXIS) && c->rows;
    char id[160];
    report_case_id(id, sizeof id, &r->bc);
    ncells = 0;
    cell(f, id);
    cell(f, c->kernel);
    cell(f, pk_backend_name(r->backend));
    cell(f, d->name);
    cell(f, report_dtype(r));
    integer(f, 1, compute ? c->cols : c->n);
    integer(f, compute, c->rows);
    integer(f, compute, c->k);
    integer(f, c->topk != 0, c->topk);
    integer(f, axis, c->rows);
    integer(f, axis, c->cols);
    integer(f, axis, c->axis);
    cell(f, cols & BENCH_COL_REDUCER ? pk_bench_udrs[c->k % PK_BENCH_NUDR].name : NULL);
    cell(f, c->out_on_device ? "true" : "false");
    cell(f, report_status_field(r));
    cell(f, r->status == BENCH_OK ? "true" : r->status == BENCH_FAILED ? "false" : NULL);
    num(f, r->t.median > 0 ? r->t.median : NAN);
    num(f, r->t.samples ? r->t.min : NAN);
    num(f, r->t.samples ? r->t.max : NAN);
    num(f, r->t.samples ? r->t.noise : NAN);
    integer(f, 1, r->t.samples);
    integer(f, 1, r->t.disturbed);
    integer(f, 1, (int64_t)r->bytes);
    num(f, report_gbps(r));
    cell(f, r->ceiling);
    num(f, r->ceiling_gbps > 0 ? r->ceiling_gbps : NAN);
    num(f, report_ceiling_pct(r));
    integer(f, 1, (int64_t)report_ops(r));
    cell(f, report_ops_unit(r));
    num(f, report_ops_rate(r));
    cell(f, r->ceiling_ops_name[0] ? r->ceiling_ops_name : NULL);
    num(f, r->ceiling_ops > 0 ? r->ceiling_ops : NAN);
    num(f, report_ops_pct(r));
    const bench_peer *p = bench_best_peer(r);
    cell(f, p ? p->name : NULL);
    num(f, p ? p->t.median : NAN);
    num(f, p && p->t.samples ? p->t.min : NAN);
    num(f, p && p->t.samples ? p->t.max : NAN);
    num(f, p && p->t.samples ? p->t.noise : NAN);
    num(f, report_ratio(r));
    cell(f, r->unreliable[0] ? "false" : "true");
    cell(f, r->unreliable[0] ? r->unreliable : NULL);
    integer(f, 1, r->attempts);
    cell(f, r->note);
    fputs("\r\n", f);
}

/* ---- Markdown --------------------------------------------------------- */

/* Text in a table cell: '|' escaped, line breaks as spaces. */
static void md_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '|') fputs("\\|", f);
        else if (*s == '\n' || *s == '\r') fputc(' ', f);
        else fputc(*s, f);
    }
}

void report_md_header(FILE *f, const bench_device *d, const bench_run *run)
{
    char version[64], git[64];
    report_build_value(version, sizeof version, "version");
    report_build_value(git, sizeof git, "git");
    fprintf(f, "## pk bench on ");
    md_text(f, d->name);
    if (strcmp(d->name, d->describe)) {
        fputs(": ", f);
        md_text(f, d->describe);
    }
    fprintf(f, "\n\npk %s (git %s), `", version, git);
    md_text(f, run->command);
    fprintf(f, "`, %s UTC, seed %llu, load average %.2f at the start.\n", run->started,
            (unsigned long long)d->seed, d->load1);
    fprintf(f, "Ceilings measured in this run: %s %.1f GB/s, %s %.1f GB/s.\n\n",
            d->ceil_names[0], d->ceil_gbps[0], d->ceil_names[1], d->ceil_gbps[1]);
    fputs("time: median of the timed samples; noise: half their interquartile range over "
          "the median; ceil%: of the ceiling measured in this run (GB/s, or the compute "
          "ceiling for GEMM and the bit kernels); ratio: peer time / pk time (above 1: pk is "
          "faster); ?: timings disturbed by other processes (UNRELIABLE).\n\n", f);
    fputs("| kernel | dtype | size | time | noise | rate | ceil% | peer | peer time | ratio "
          "| check |\n|:--|:--|:--|--:|--:|--:|--:|:--|--:|--:|:--|\n", f);
}

void report_md_row(FILE *f, const bench_row *r)
{
    char size[48], t[24] = "-", pt[24] = "-", noise[16] = "-", rate[32], pct[16] = "-",
                   ratio[16] = "-";
    int doubtful = r->unreliable[0] != 0, compute = bench_is_compute(r->bc.c.id);
    report_size(size, sizeof size, &r->bc);
    const bench_peer *p = bench_best_peer(r);
    if (r->t.median > 0) pk_fmt_time(t, sizeof t, r->t.median);
    if (r->t.samples > 0 && r->t.noise == r->t.noise)
        snprintf(noise, sizeof noise, "%.0f%%", 100 * r->t.noise);
    if (p) pk_fmt_time(pt, sizeof pt, p->t.median);
    report_rate(rate, sizeof rate, r);
    double c = compute ? report_ops_pct(r) : report_ceiling_pct(r), q = report_ratio(r);
    if (c == c) snprintf(pct, sizeof pct, "%.0f%%", c);
    if (q == q) snprintf(ratio, sizeof ratio, q >= 100 ? "%.0f" : "%.2f", q);
    if (doubtful && r->t.median > 0) {
        snprintf(rate, sizeof rate, "?");
        snprintf(pct, sizeof pct, "?");
        if (q == q) snprintf(ratio, sizeof ratio, "?");
    }
    fprintf(f, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s", r->bc.c.kernel,
            report_dtype(r), size, t, noise, rate, pct, p ? p->name : "-", pt, ratio,
            report_status(r));
    if (r->note[0]) {
        fputs(": ", f);
        md_text(f, r->note);
    }
    if (doubtful) {
        fputs("; **UNRELIABLE**: ", f);
        md_text(f, r->unreliable);
    }
    fputs(" |\n", f);
}
