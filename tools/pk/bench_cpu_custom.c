/* `pk bench custom` on the CPU: user-defined reductions (bench/custom.h)
 * against the built-in kernel that reads the same bytes (pk_dot(x, x) for
 * the sum of squares, pk_reduce max / argmax / sum; along an axis,
 * pk_reduce_axis sum) and, for the max-abs pair, a plain OpenMP loop; timed
 * in turns (bench_time_group). */
#include "bench.h"
#include "custom.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ucall {
    pk_ctx *ctx;
    const pk_reducer *red;
    const pk_bench_udr *u;
    const float *x;
    int64_t n;
    double out[2];
    int64_t rows, cols; /* rows > 0: along `axis` into outv */
    int axis;
    void *outv;
} ucall;

static int run_udr(void *a)
{
    ucall *k = a;
    if (k->rows)
        return pk_reducer_reduce_axis(k->ctx, k->red, k->x, k->rows, k->cols, k->cols, k->axis,
                                      k->outv) != PK_OK;
    return pk_reducer_reduce(k->ctx, k->red, k->x, k->n, k->out) != PK_OK;
}

static int run_builtin(void *a)
{
    ucall *k = a;
    if (k->rows)
        return pk_reduce_axis(k->ctx, PK_SUM, PK_F32, k->x, k->rows, k->cols, k->cols, k->axis,
                              k->outv) != PK_OK;
    const char *p = k->u->peer;
    if (!strcmp(p, "pk_dot")) return pk_dot(k->ctx, PK_F32, k->n, k->x, k->x, k->out) != PK_OK;
    pk_op op = !strcmp(p, "pk_max") ? PK_MAX : !strcmp(p, "pk_argmax") ? PK_ARGMAX : PK_SUM;
    return pk_reduce(k->ctx, op, PK_F32, k->x, k->n, k->out) != PK_OK;
}

/* max |x| and its first index, one pass, OpenMP over fixed chunks. */
static int run_loop(void *a)
{
    ucall *k = a;
    const int64_t chunk = 1 << 16, nc = (k->n + chunk - 1) / chunk;
    float *best = malloc((size_t)nc * sizeof *best);
    int64_t *at = malloc((size_t)nc * sizeof *at);
    if (!best || !at) return free(best), free(at), 1;
#pragma omp parallel for schedule(static)
    for (int64_t c = 0; c < nc; c++) {
        int64_t e = (c + 1) * chunk < k->n ? (c + 1) * chunk : k->n;
        float b = -1;
        int64_t bi = -1;
        for (int64_t i = c * chunk; i < e; i++)
            if (fabsf(k->x[i]) > b) b = fabsf(k->x[i]), bi = i;
        best[c] = b, at[c] = bi;
    }
    float b = -1;
    int64_t bi = -1;
    for (int64_t c = 0; c < nc; c++)
        if (best[c] > b) b = best[c], bi = at[c];
    k->out[0] = b, k->out[1] = (double)bi;
    free(best), free(at);
    return 0;
}

void bench_cpu_run_custom(bench_cpu *b, pk_ctx *ctx, const bench_case *bc,
                          const bench_device *dev, bench_row *row)
{
    const bench_opts *o = bench_cpu_opts(b);
    memset(row, 0, sizeof *row);
    row->bc = *bc;
    row->backend = PK_BACKEND_CPU;
    row->status = BENCH_FAILED;
    const pk_bench_udr *u = &pk_bench_udrs[bc->c.k % PK_BENCH_NUDR];
    const int64_t n = bc->c.n;
    float *x = malloc((size_t)n * sizeof *x);
    if (!x) {
        snprintf(row->note, sizeof row->note, "out of memory for the input");
        return;
    }
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) x[i] = pk_bench_udr_elem(u, o->seed, i, n);
    pk_reducer_desc d = pk_bench_udr_desc(u);
    pk_reducer *red = NULL;
    if (pk_reducer_create(ctx, &d, &red) != PK_OK) {
        snprintf(row->note, sizeof row->note, "%s", pk_ctx_error(ctx));
        free(x);
        return;
    }
    /* along an axis: one output a line, in the accumulator's dtype (the
     * built-in sum's f32 outputs take as many bytes) */
    const int64_t rows = bc->c.rows, cols = bc->c.cols, nout = bc->c.axis ? rows : cols;
    void *outv = rows ? malloc((size_t)nout * 8) : NULL, *outb = rows ? malloc((size_t)nout * 8) : NULL;
    row->bytes = bench_case_moved(bc, PK_BACKEND_CPU);
    const char *peer = rows ? "pk_sum_axis" : u->peer; /* as bench/gpu_custom.cu */
    row->ceiling = dev->ceil_names[0];
    row->ceiling_gbps = dev->ceil_gbps[0];
    ucall k = {ctx, red, u, x, n, {0, 0}, rows, cols, bc->c.axis, outv}, kb = k, kl = k;
    kb.outv = outb;
    if (rows && (!outv || !outb)) {
        snprintf(row->note, sizeof row->note, "out of memory for the outputs");
    } else if (run_udr(&k)) {
        snprintf(row->note, sizeof row->note, "%s", pk_ctx_error(ctx));
    } else if (rows ? pk_bench_udr_verify_axis(u, x, rows, cols, bc->c.axis, outv, row->note,
                                               sizeof row->note)
                    : pk_bench_udr_verify(u, x, n, k.out, row->note, sizeof row->note)) {
        row->status = BENCH_OK;
        snprintf(row->note, sizeof row->note, "%s vs %s", u->name, peer);
    }
    contender cs[3] = {{.fn = run_udr, .arg = &k}, {.fn = run_builtin, .arg = &kb},
                       {.fn = run_loop, .arg = &kl}};
    const char *names[3] = {"udr", peer, "omp-loop"};
    int nc = !rows && (u->kind == PK_REDUCER_ARG || !strcmp(u->name, "linf")) ? 3 : 2;
    bench_time_group(cs, nc, o);
    if (cs[0].failed) row->status = BENCH_FAILED;
    else row->t = cs[0].t;
    bench_add_peers(row, cs, names, nc);
    pk_reducer_destroy(red);
    free(x), free(outv), free(outb);
}
