/* `pk bench` on the CPU: the gemm rows. pk_gemm (FP32 mode) against
 * OpenBLAS cblas_?gemm on the same inputs, timed in turns
 * (bench_time_group); the ceiling is the FMA peak measured in this run
 * ("fma-peak": independent FMA chains on all threads, pk's SIMD path). pk's
 * result is verified first on sampled entries against f64 dot products. */
#include "bench.h"
#include "cpu_peers.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct gemm_call {
    pk_ctx *ctx;
    pk_dtype t;
    int64_t m, n, k;
    const void *A, *B, *alpha, *beta;
    void *C;
    pk_status status;
} gemm_call;

static int run_pk(void *arg)
{
    gemm_call *g = arg;
    g->status = pk_gemm(g->ctx, g->t, PK_GEMM_FP32, PK_NO_TRANS, PK_NO_TRANS,
                        g->m, g->n, g->k, g->alpha, g->A, g->k, g->B, g->n,
                        g->beta, g->C, g->n);
    return g->status != PK_OK;
}

static int run_blas(void *arg)
{
    gemm_call *g = arg;
    return pk_peer_blas_gemm(g->t, 0, 0, g->m, g->n, g->k, g->alpha, g->A, g->k,
                             g->B, g->n, g->beta, g->C, g->n);
}

static double get(pk_dtype t, const void *p, int64_t i)
{
    return t == PK_F64 ? ((const double *)p)[i] : ((const float *)p)[i];
}

/* Uniform in [-1, 1), from a counter (no state to share between threads). */
static void fill(void *p, pk_dtype t, int64_t n, uint64_t seed)
{
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) {
        uint64_t z = seed + 0x9E3779B97F4A7C15ull * (uint64_t)(i + 1);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        double u = (double)(z >> 11) * 0x1p-52 - 1;
        if (t == PK_F64) ((double *)p)[i] = u;
        else ((float *)p)[i] = (float)u;
    }
}

/* Compare sampled entries of C = A*B with f64 (f32 inputs: exact products)
 * dot products: |error| <= 4 eps sqrt(k) sum |a||b|, far above what random
 * data reaches and far below a wrong tile. */
static int verify(const gemm_call *g, char *note, size_t len)
{
    double eps = g->t == PK_F64 ? 0x1p-52 : 0x1p-23;
    int samples = 512;
    for (int s = 0; s < samples; s++) {
        /* Corners and edges first (partial tiles), then spread. */
        int64_t i = s < 4 ? (s & 1 ? g->m - 1 : 0) : (int64_t)((s * 7919ull) % (uint64_t)g->m);
        int64_t j = s < 4 ? (s & 2 ? g->n - 1 : 0) : (int64_t)((s * 104729ull) % (uint64_t)g->n);
        long double ref = 0, mag = 0;
        for (int64_t p = 0; p < g->k; p++) {
            long double x = get(g->t, g->A, i * g->k + p) *
                            (long double)get(g->t, g->B, p * g->n + j);
            ref += x;
            mag += fabsl(x);
        }
        double got = get(g->t, g->C, i * g->n + j);
        double err = fabs(got - (double)ref);
        double tol = 4 * eps * sqrt((double)g->k) * (double)mag + 1e-300;
        if (!(err <= tol)) {
            snprintf(note, len, "C[%lld][%lld] = %.9g, expected %.9g (tol %.3g)",
                     (long long)i, (long long)j, got, (double)ref, tol);
            return 0;
        }
    }
    return 1;
}

void bench_cpu_run_gemm(bench_cpu *b, pk_ctx *ctx, const bench_case *bc,
                        const bench_device *dev, bench_row *row)
{
    const bench_opts *o = bench_cpu_opts(b);
    const pk_bench_case *c = &bc->c;
    memset(row, 0, sizeof *row);
    row->bc = *bc;
    row->backend = PK_BACKEND_CPU;
    row->status = BENCH_FAILED;
    pk_dtype t = c->dtype;
    size_t sz = pk_dtype_size(t);
    int64_t m = c->rows, n = c->cols, k = c->k;
    static double peak[2]; /* measured once per run and dtype */
    int f64 = t == PK_F64;
    if (peak[f64] == 0) peak[f64] = pk_cpu_fma_peak(t);
    row->ops = bench_case_ops(bc);
    row->bytes = bench_case_moved(bc, PK_BACKEND_CPU);
    row->ceiling_ops = peak[f64];
    snprintf(row->ceiling_ops_name, sizeof row->ceiling_ops_name, "fma-peak");

    double one_f64 = 1, zero_f64 = 0;
    float one_f32 = 1, zero_f32 = 0;
    gemm_call g = {.ctx = ctx, .t = t, .m = m, .n = n, .k = k,
                   .alpha = f64 ? (void *)&one_f64 : (void *)&one_f32,
                   .beta = f64 ? (void *)&zero_f64 : (void *)&zero_f32};
    void *A = aligned_alloc(64, ((size_t)(m * k) * sz + 63) & ~(size_t)63);
    void *B = aligned_alloc(64, ((size_t)(k * n) * sz + 63) & ~(size_t)63);
    void *C = aligned_alloc(64, ((size_t)(m * n) * sz + 63) & ~(size_t)63);
    void *C2 = aligned_alloc(64, ((size_t)(m * n) * sz + 63) & ~(size_t)63);
    if (!A || !B || !C || !C2) {
        snprintf(row->note, sizeof row->note, "out of memory for the inputs");
        goto done;
    }
    fill(A, t, m * k, o->seed ^ 0xA);
    fill(B, t, k * n, o->seed ^ 0xB);
    g.A = A, g.B = B, g.C = C;
    if (run_pk(&g)) {
        snprintf(row->note, sizeof row->note, "%s: %s", pk_status_str(g.status),
                 pk_ctx_error(ctx));
        goto done;
    }
    if (!verify(&g, row->note, sizeof row->note)) goto done;
    row->status = BENCH_OK;

    gemm_call gp = g; /* the peer writes its own C */
    gp.C = C2;
    contender cs[2] = {{.fn = run_pk, .arg = &g}, {.fn = run_blas, .arg = &gp}};
    int nc = dev->blas ? 2 : 1;
    /* OpenBLAS's spinning workers and OpenMP's sleeping ones: see contender
     * (both alike, so that neither starts its turn cold). */
    if (nc > 1) cs[0].settle_s = cs[1].settle_s = 0.15;
    bench_time_group(cs, nc, o);
    if (cs[0].failed) {
        row->status = BENCH_FAILED;
        snprintf(row->note, sizeof row->note, "%s: %s", pk_status_str(g.status),
                 pk_ctx_error(ctx));
    } else {
        row->t = cs[0].t;
    }
    static const char *const names[] = {"pk", "openblas"};
    bench_add_peers(row, cs, names, nc);
done:
    free(A), free(B), free(C), free(C2);
}
