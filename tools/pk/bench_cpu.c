/* `pk bench` on the CPU: random inputs, timing (monotonic clock, median after
 * warm-up), verification against verify.c and the peers of cpu_peers.h, all
 * in one process run. */
#include "bench.h"
#include "cpu_peers.h"
#include "verify.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* ---- Timing ----------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#define ROUNDS 4

/* CPU time of the calling thread: a sample during which it ran less than
 * half the time lost its CPU to another process, or waited for a thread of
 * its team that did (an OpenMP team member queued behind a compiler for a
 * time slice: 8 ms calls of 1 us). */
static double thread_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Time each contender: warm-up, then ROUNDS rounds in which every contender
 * takes its turn for a quarter of its samples, so that noise from other
 * processes falls on all alike; a sample is a batch of calls lasting at least
 * 20 us; the first batch of each short turn is not counted (it absorbs the
 * previous contender's threads winding down). Median per contender, and the
 * samples disturbed by other processes (thread_seconds). */
void bench_time_group(contender *cs, int n, const bench_opts *o)
{
    double warm = o->budget_s * 0.2 > 0.005 ? o->budget_s * 0.2 : 0.005;
    for (int c = 0; c < n; c++) {
        contender *k = &cs[c];
        /* one: the fastest call after the first (which may find cold caches
         * and pages): a call slowed by another process would size the
         * samples wrong. */
        double start = pk_bench_now(), one = INFINITY;
        for (int calls = 0; calls < 2 || (pk_bench_now() - start < warm && calls < 100000);
             calls++) {
            double t0 = pk_bench_now();
            if (k->fn(k->arg)) {
                k->failed = 1;
                break;
            }
            if (calls > 0 && pk_bench_now() - t0 < one) one = pk_bench_now() - t0;
        }
        if (!(one >= 1e-8)) one = 1e-8;
        k->batch = one < 20e-6 ? (int)(20e-6 / one) + 1 : 1;
        double s = o->budget_s / (k->batch * one);
        k->samples = o->reps ? o->reps : s < 5 ? 5 : s > 1000 ? 1000 : (int)s;
        k->ts = malloc((size_t)k->samples * sizeof *k->ts);
        if (!k->ts) k->failed = 1;
        k->nts = 0;
    }
    for (int r = 0; r < ROUNDS; r++)
        for (int c = 0; c < n; c++) {
            contender *k = &cs[c];
            if (k->failed) continue;
            int turn = k->samples * (r + 1) / ROUNDS - k->samples * r / ROUNDS;
            if (k->settle_s > 0 && turn > 0) {
                struct timespec ts = {.tv_sec = (time_t)k->settle_s,
                                      .tv_nsec = (long)((k->settle_s - (double)(time_t)k->settle_s) * 1e9)};
                nanosleep(&ts, NULL);
                double until = pk_bench_now() + k->settle_s / 4;
                for (int w = 0; w < 3 || pk_bench_now() < until; w++)
                    if (k->fn(k->arg)) {
                        k->failed = 1;
                        break;
                    }
            }
            for (int i = turn ? -1 : 0; i < turn && !k->failed; i++) {
                double c0 = thread_seconds(), t0 = pk_bench_now();
                for (int b = 0; b < k->batch; b++)
                    if (k->fn(k->arg)) {
                        k->failed = 1;
                        break;
                    }
                double wall = pk_bench_now() - t0, t = wall / k->batch;
                int lost = thread_seconds() - c0 < 0.5 * wall;
                if (i < 0 && t > 5e-3) i++; /* long calls need no settling: count it */
                if (i < 0) continue;
                k->ts[k->nts++] = t;
                k->disturbed += lost;
            }
        }
    for (int c = 0; c < n; c++) {
        contender *k = &cs[c];
        if (!k->failed && k->nts > 0) {
            k->t = bench_times_of(k->ts, k->nts);
            k->t.disturbed = k->disturbed;
        } else {
            k->failed = 1;
        }
        free(k->ts);
        k->ts = NULL;
    }
}

/* The q-quantile of n sorted values, interpolated linearly. */
static double quantile(const double *ts, int n, double q)
{
    double pos = q * (n - 1);
    int i = (int)pos;
    return i + 1 < n ? ts[i] + (pos - i) * (ts[i + 1] - ts[i]) : ts[n - 1];
}

bench_times bench_times_of(double *ts, int n)
{
    bench_times t = {NAN, NAN, NAN, NAN, 0, 0};
    if (n <= 0) return t;
    qsort(ts, (size_t)n, sizeof *ts, cmp_double);
    t.median = quantile(ts, n, 0.5);
    t.min = ts[0];
    t.max = ts[n - 1];
    if (t.median > 0) t.noise = (quantile(ts, n, 0.75) - quantile(ts, n, 0.25)) / (2 * t.median);
    t.samples = n;
    return t;
}

void bench_add_peers(bench_row *row, const contender *cs, const char *const *names, int n)
{
    for (int i = 1; i < n && row->npeers < BENCH_MAX_PEERS; i++) {
        if (cs[i].failed) continue;
        bench_peer *p = &row->peers[row->npeers++];
        snprintf(p->name, sizeof p->name, "%s", names[i]);
        p->t = cs[i].t;
    }
}

/* ---- Random inputs: kept between cases, regrown when a case needs more - */

enum { KIND_X, KIND_Y, KIND_P, NKINDS }; /* operands; P: inputs of prod */

typedef struct buffer {
    void *p;
    int64_t n;
} buffer;

struct bench_cpu {
    const bench_opts *o;
    buffer bufs[PK_DTYPE_COUNT][NKINDS];
};

static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Never zero: floats are +-[0.5, 1) (prod: 1 +- 2^-10, so that products of
 * 2^26 terms stay finite), integers small and nonzero (prod: odd, so that
 * wrapped products stay nonzero). */
static void fill(void *p, pk_dtype t, int kind, int64_t n, uint64_t seed)
{
    seed = mix(seed ^ ((uint64_t)t << 8 | (uint64_t)kind));
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = mix(seed + 0x9E3779B97F4A7C15ull * (uint64_t)(i + 1));
        double u = (double)(r >> 11) * 0x1p-53;
        double f = kind == KIND_P ? 1 + (u - 0.5) * 0x1p-9
                                  : (r & 1 ? -1 : 1) * (0.5 + 0.5 * u);
        uint64_t k = kind == KIND_P ? (r >> 1) | 1 : 1 + (r >> 44);
        int neg = kind != KIND_P && (r >> 43 & 1);
        switch (t) {
        case PK_F32: ((float *)p)[i] = (float)f; break;
        case PK_F64: ((double *)p)[i] = f; break;
        case PK_I32: ((int32_t *)p)[i] = (int32_t)(uint32_t)(neg ? -k : k); break;
        case PK_I64: ((int64_t *)p)[i] = (int64_t)(neg ? -k : k); break;
        case PK_U32: ((uint32_t *)p)[i] = (uint32_t)k; break;
        default: ((uint64_t *)p)[i] = k; break;
        }
    }
}

static void *data(bench_cpu *b, pk_dtype t, int kind, int64_t n)
{
    buffer *buf = &b->bufs[t][kind];
    if (buf->n >= n) return buf->p;
    free(buf->p);
    size_t bytes = (size_t)n * pk_dtype_size(t), align = (size_t)2 << 20;
    bytes = (bytes + align - 1) / align * align;
    if (posix_memalign(&buf->p, align, bytes) != 0) {
        buf->p = NULL, buf->n = 0;
        return NULL;
    }
    madvise(buf->p, bytes, MADV_HUGEPAGE);
    fill(buf->p, t, kind, n, b->o->seed);
    buf->n = n;
    return buf->p;
}

bench_cpu *bench_cpu_new(const bench_opts *o)
{
    bench_cpu *b = calloc(1, sizeof *b);
    if (b) b->o = o;
    return b;
}

void bench_cpu_free(bench_cpu *b)
{
    if (!b) return;
    for (int t = 0; t < PK_DTYPE_COUNT; t++)
        for (int k = 0; k < NKINDS; k++) free(b->bufs[t][k].p);
    free(b);
}

const bench_opts *bench_cpu_opts(const bench_cpu *b) { return b->o; }

/* ---- The calls being timed -------------------------------------------- */

typedef struct call {
    pk_ctx *ctx;
    const bench_case *c;
    const void *x;
    void *y;            /* dot: second input; axpy: in/out */
    void *out;          /* reduction results */
    const void *alpha;
    pk_status status;
} call;

static int run_pk(void *arg)
{
    call *k = arg;
    const pk_bench_case *c = &k->c->c;
    switch (c->id) {
    case PK_BENCH_DOT: k->status = pk_dot(k->ctx, c->dtype, c->n, k->x, k->y, k->out); break;
    case PK_BENCH_AXPY:
        k->status = pk_axpy(k->ctx, c->dtype, c->n, k->alpha, k->x, k->y);
        break;
    case PK_BENCH_REDUCE_AXIS:
        k->status = pk_reduce_axis(k->ctx, k->c->op, c->dtype, k->x, c->rows, c->cols, c->cols,
                                   c->axis, k->out);
        break;
    default: k->status = pk_reduce(k->ctx, k->c->op, c->dtype, k->x, c->n, k->out);
    }
    return k->status != PK_OK;
}

static int run_loop(void *arg)
{
    call *k = arg;
    const pk_bench_case *c = &k->c->c;
    if (c->id == PK_BENCH_DOT) return pk_peer_loop_dot(c->dtype, c->n, k->x, k->y, k->out);
    if (c->id == PK_BENCH_AXPY) return pk_peer_loop_axpy(c->dtype, c->n, k->alpha, k->x, k->y);
    return pk_peer_loop_reduce(k->c->op, c->dtype, k->x, c->n, k->out);
}

static int run_blas(void *arg)
{
    call *k = arg;
    const pk_bench_case *c = &k->c->c;
    if (c->id == PK_BENCH_DOT) return pk_peer_blas_dot(c->dtype, c->n, k->x, k->y, k->out);
    return pk_peer_blas_axpy(c->dtype, c->n, k->alpha, k->x, k->y);
}

/* The yardstick of reduce_axis: pk's whole-array sum of as many elements. */
static int run_whole_sum(void *arg)
{
    call *k = arg;
    const pk_bench_case *c = &k->c->c;
    k->status = pk_reduce(k->ctx, PK_SUM, c->dtype, k->x, c->n, k->out);
    return k->status != PK_OK;
}

/* Run pk once on fresh inputs and check the result. */
static int verify(call *k, bench_row *row)
{
    const pk_bench_case *c = &k->c->c;
    char *note = row->note;
    size_t len = sizeof row->note;
    if (c->id == PK_BENCH_AXPY) {
        size_t bytes = (size_t)c->n * pk_dtype_size(c->dtype);
        void *y0 = malloc(bytes);
        if (!y0) {
            snprintf(note, len, "no memory for the reference");
            return 0;
        }
        memcpy(y0, k->y, bytes);
        int ok = !run_pk(k) && pk_verify_axpy(c->dtype, c->n, k->alpha, k->x, y0,
                                               k->y, note, len);
        free(y0);
        return ok;
    }
    if (run_pk(k)) return 0;
    if (c->id == PK_BENCH_DOT)
        return pk_verify_dot(c->dtype, c->n, k->x, k->y, k->out, note, len);
    if (c->id == PK_BENCH_REDUCE_AXIS)
        return pk_verify_reduce_axis(k->c->op, c->dtype, k->x, c->rows, c->cols,
                                     c->axis, k->out, note, len);
    return pk_verify_reduce(k->c->op, c->dtype, k->x, c->n, k->out, note, len);
}

void bench_cpu_run(bench_cpu *b, pk_ctx *ctx, const bench_case *bc,
                   const bench_device *dev, bench_row *row)
{
    const bench_kernel *kn = bench_kernel_of(&bc->c);
    if (kn->cpu) {
        kn->cpu(b, ctx, bc, dev, row);
        return;
    }
    memset(row, 0, sizeof *row);
    row->bc = *bc;
    row->backend = PK_BACKEND_CPU;
    row->status = BENCH_SKIPPED;
    snprintf(row->note, sizeof row->note, "%s: CUDA only", kn->name);
}

/* pk_reduce's kernels, dot, axpy and reduce_axis. */
void bench_cpu_run_memory(bench_cpu *b, pk_ctx *ctx, const bench_case *bc,
                          const bench_device *dev, bench_row *row)
{
    const pk_bench_case *c = &bc->c;
    memset(row, 0, sizeof *row);
    row->bc = *bc;
    row->backend = PK_BACKEND_CPU;
    row->status = BENCH_FAILED;
    int is_dot = c->id == PK_BENCH_DOT;
    int is_axpy = c->id == PK_BENCH_AXPY;
    int is_axis = c->id == PK_BENCH_REDUCE_AXIS;
    size_t size = pk_dtype_size(c->dtype);
    int64_t nout = is_axis ? (c->axis == 0 ? c->cols : c->rows) : 1;

    double one_f64 = 0.7;
    float one_f32 = 0.7f;
    call k = {.ctx = ctx, .c = bc};
    k.alpha = c->dtype == PK_F64 ? (const void *)&one_f64 : (const void *)&one_f32;
    k.x = data(b, c->dtype, bc->op == PK_PROD && !is_axis ? KIND_P : KIND_X, c->n);
    k.y = is_dot || is_axpy ? data(b, c->dtype, KIND_Y, c->n) : NULL;
    k.out = malloc((size_t)nout * 8);
    if (!k.x || ((is_dot || is_axpy) && !k.y) || !k.out) {
        snprintf(row->note, sizeof row->note, "out of memory for the inputs");
        free(k.out);
        return;
    }

    row->bytes = bench_case_moved(bc, PK_BACKEND_CPU);
    row->ceiling = dev->ceil_names[is_axpy];
    row->ceiling_gbps = dev->ceil_gbps[is_axpy];

    if (verify(&k, row)) row->status = BENCH_OK;
    if (k.status != PK_OK) {
        snprintf(row->note, sizeof row->note, "%s: %s", pk_status_str(k.status),
                 pk_ctx_error(ctx));
        free(k.out);
        return;
    }
    /* pk and its peers, on the same inputs, in turns (bench_time_group). */
    call kp = k; /* the peers' own status */
    contender cs[1 + BENCH_MAX_PEERS] = {{.fn = run_pk, .arg = &k}};
    const char *names[1 + BENCH_MAX_PEERS];
    int n = 1;
    if (is_axis) {
        names[n] = "whole-sum", cs[n++] = (contender){.fn = run_whole_sum, .arg = &kp};
    } else {
        names[n] = "omp-loop", cs[n++] = (contender){.fn = run_loop, .arg = &kp};
        if ((is_dot || is_axpy) && dev->blas) {
            names[n] = "openblas", cs[n++] = (contender){.fn = run_blas, .arg = &kp};
            /* OpenBLAS's spinning workers took a core from the turn after
             * theirs (pk's): axpy 2^26 on 2 cores, pk 24-48 ms there against
             * 22-25 ms alone. Every contender settles alike (contender). */
            for (int i = 0; i < n; i++) cs[i].settle_s = 0.15;
        }
    }
    bench_time_group(cs, n, b->o);
    if (cs[0].failed) {
        if (k.status == PK_OK) snprintf(row->note, sizeof row->note, "out of memory");
        else snprintf(row->note, sizeof row->note, "%s: %s", pk_status_str(k.status),
                      pk_ctx_error(ctx));
        row->status = BENCH_FAILED;
    } else {
        row->t = cs[0].t;
    }
    bench_add_peers(row, cs, names, n);
    if (is_axis && !cs[0].failed && !cs[1].failed && row->status == BENCH_OK)
        /* The yardstick is bandwidth: the output's bytes count. */
        snprintf(row->note, sizeof row->note, "axis/whole %.2f in GB/s (output counted)",
                 row->bytes / cs[0].t.median / ((double)c->n * (double)size / cs[1].t.median));
    free(k.out);
}
