/* `pk bench` on the CPU: the bit-matrix rows.
 *
 *  - bgemm m x n x k: pk_bgemm on random bits against the peer
 *    "openblas-sgemm-pm1" (cblas_sgemm on the same matrices as +-1.0f, B
 *    transposed: what a user without pk runs), timed in turns. ops = 2mnk.
 *    Verified on sampled entries against a plain loop over the floats, the
 *    peer's result checked at the same entries.
 *  - hamming_topk q x n x k, topk: pk_hamming_topk against pk_bgemm on the
 *    same shapes ("pk-bgemm": the bare distance computation, which writes
 *    the whole q x n matrix); ops = 2qnk as for bgemm, qps in the JSON.
 *    Verified on sampled queries against all distances and a stable
 *    counting sort.
 *  - The ceiling "popcnt-peak": the popcount throughput of this CPU's path,
 *    all threads, on L1-resident words (independent VPOPCNTQ on AVX-512
 *    VPOPCNTDQ, else scalar POPCNT), as bit-operations per second: 2 * 64
 *    per 64-bit word counted (one XOR and one count per bit pair, as 2mnk
 *    counts them). XOR + popcount + add costs more than the count alone, so
 *    the popcount kernels stay below it. */
#include "bench.h"
#include "cpu_peers.h"

#include <immintrin.h>
#include <omp.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* ---- The ceiling ----------------------------------------------------- */

#define PEAK_WORDS 2048 /* 16 KiB per thread: L1 */
#define PEAK_PASSES 16384 /* ~2 ms per thread */

__attribute__((target("avx512f,avx512vpopcntdq"))) static uint64_t
count_vpopcnt(const uint64_t *w, int passes)
{
    __m512i acc[8];
    for (int a = 0; a < 8; a++) acc[a] = _mm512_setzero_si512();
    for (int p = 0; p < passes; p++)
        for (int i = 0; i < PEAK_WORDS; i += 64)
            for (int a = 0; a < 8; a++)
                acc[a] = _mm512_add_epi64(acc[a], _mm512_popcnt_epi64(
                                                      _mm512_loadu_si512(w + i + 8 * a)));
    uint64_t s = 0;
    for (int a = 0; a < 8; a++) s += (uint64_t)_mm512_reduce_add_epi64(acc[a]);
    return s;
}

__attribute__((target("popcnt"))) static uint64_t count_popcnt(const uint64_t *w, int passes)
{
    uint64_t acc[4] = {0, 0, 0, 0};
    for (int p = 0; p < passes; p++)
        for (int i = 0; i < PEAK_WORDS; i += 4)
            for (int a = 0; a < 4; a++) acc[a] += (uint64_t)__builtin_popcountll(w[i + a]);
    return acc[0] + acc[1] + acc[2] + acc[3];
}

/* CPU seconds of the calling thread: time the OS gives other processes
 * does not count against the silicon. */
static double thread_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Bit-operations per second (2 * 64 per word counted): the sum over threads
 * of each one's own rate on its own CPU clock, best of 5. */
static double popcnt_peak(const char **how)
{
    static double peak;
    static const char *name;
    if (peak > 0) {
        *how = name;
        return peak;
    }
    __builtin_cpu_init();
    int vec = !strcmp(pk_cpu_isa(), "avx512") && __builtin_cpu_supports("avx512vpopcntdq");
    name = vec ? "VPOPCNTQ" : "POPCNT";
    int passes = vec ? PEAK_PASSES : PEAK_PASSES / 8;
    for (int r = 0; r < 5; r++) {
        double ops = 0;
        volatile uint64_t sink = 0;
#pragma omp parallel reduction(+ : ops, sink)
        {
            _Alignas(64) uint64_t w[PEAK_WORDS]; /* split loads would halve it */
            for (int i = 0; i < PEAK_WORDS; i++) w[i] = mix((uint64_t)i);
            /* Untimed first: the core's wide-vector clock settles. */
            sink += vec ? count_vpopcnt(w, passes / 8) : count_popcnt(w, passes / 64);
            double t0 = thread_seconds();
            sink += vec ? count_vpopcnt(w, passes) : count_popcnt(w, passes);
            ops += 128.0 * PEAK_WORDS * passes / (thread_seconds() - t0);
        }
        if (ops > peak) peak = ops;
    }
    *how = name;
    return peak;
}

/* ---- Inputs ----------------------------------------------------------- */

/* rows x k random +-1.0f and the same bits packed (ld = words). */
typedef struct operand {
    float *f;
    uint64_t *w;
    int64_t words;
} operand;

static int operand_make(pk_ctx *ctx, operand *o, int64_t rows, int64_t k, uint64_t seed,
                        int want_floats)
{
    o->words = pk_bits_words(k);
    o->w = malloc((size_t)(rows * o->words) * 8);
    float *f = malloc((size_t)(rows * k) * sizeof *f);
    if (!o->w || !f) {
        free(f);
        return -1;
    }
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < rows * k; i++)
        f[i] = mix(seed + 0x9E3779B97F4A7C15ull * (uint64_t)(i + 1)) & 1 ? 1.0f : -1.0f;
    if (pk_bits_pack(ctx, PK_BITS_F32_SIGN, rows, k, f, k, o->w, o->words) != PK_OK) {
        free(f);
        return -1;
    }
    if (want_floats) o->f = f;
    else free(f), o->f = NULL;
    return 0;
}

/* Hamming distance from the packed bits, one bit at a time (a plain
 * reference independent of pk's word loops). */
static int64_t ref_dist(const uint64_t *a, const uint64_t *b, int64_t k)
{
    int64_t d = 0;
    for (int64_t j = 0; j < k; j++) d += (a[j / 64] >> (j % 64) & 1) != (b[j / 64] >> (j % 64) & 1);
    return d;
}

/* ---- Calls ------------------------------------------------------------ */

typedef struct bits_call {
    pk_ctx *ctx;
    int64_t m, n, k, topk;
    operand a, b;
    int32_t *c;   /* m x n */
    float *cf;    /* m x n: the peer's */
    int32_t *dist;
    int64_t *idx;
    pk_status status;
} bits_call;

static int run_bgemm(void *arg)
{
    bits_call *k = arg;
    k->status = pk_bgemm(k->ctx, k->m, k->n, k->k, k->a.w, k->a.words, k->b.w, k->b.words,
                         k->c, k->n);
    return k->status != PK_OK;
}

static int run_sgemm(void *arg)
{
    bits_call *k = arg;
    return pk_peer_blas_sgemm_pm1(k->m, k->n, k->k, k->a.f, k->b.f, k->cf);
}

static int run_topk(void *arg)
{
    bits_call *k = arg;
    k->status = pk_hamming_topk(k->ctx, k->m, k->n, k->k, k->a.w, k->a.words, k->b.w,
                                k->b.words, k->topk, k->dist, k->idx);
    return k->status != PK_OK;
}

/* ---- Verification ------------------------------------------------------ */

#define SAMPLES 512

static int verify_bgemm(const bits_call *k, int peer, uint64_t seed, char *note, size_t len)
{
    for (int s = 0; s < SAMPLES; s++) {
        int64_t i = (int64_t)(mix(seed + 2 * (uint64_t)s) % (uint64_t)k->m);
        int64_t j = (int64_t)(mix(seed + 2 * (uint64_t)s + 1) % (uint64_t)k->n);
        int64_t want = k->k - 2 * ref_dist(k->a.w + i * k->a.words, k->b.w + j * k->b.words, k->k);
        if (k->c[i * k->n + j] != want) {
            snprintf(note, len, "C[%lld][%lld] = %d, want %lld", (long long)i, (long long)j,
                     k->c[i * k->n + j], (long long)want);
            return 0;
        }
        if (peer && k->cf[i * k->n + j] != (float)want) {
            snprintf(note, len, "the peer's C[%lld][%lld] = %g, want %lld", (long long)i,
                     (long long)j, (double)k->cf[i * k->n + j], (long long)want);
            return 0;
        }
    }
    return 1;
}

static int verify_topk(const bits_call *k, uint64_t seed, char *note, size_t len)
{
    int64_t *d = malloc((size_t)k->n * 8), *order = malloc((size_t)k->n * 8);
    int64_t *count = calloc((size_t)(k->k + 2), 8);
    int ok = d && order && count;
    if (!ok) snprintf(note, len, "no memory for the reference");
    for (int s = 0; ok && s < 3; s++) {
        int64_t q = (int64_t)(mix(seed + (uint64_t)s) % (uint64_t)k->m);
        memset(count, 0, (size_t)(k->k + 2) * 8);
        for (int64_t j = 0; j < k->n; j++) {
            d[j] = ref_dist(k->a.w + q * k->a.words, k->b.w + j * k->b.words, k->k);
            count[d[j] + 1]++;
        }
        for (int64_t v = 1; v <= k->k + 1; v++) count[v] += count[v - 1];
        for (int64_t j = 0; j < k->n; j++) order[count[d[j]]++] = j;
        for (int64_t r = 0; ok && r < k->topk; r++) {
            int64_t got_i = k->idx[q * k->topk + r], got_d = k->dist[q * k->topk + r];
            if (got_i != order[r] || got_d != d[order[r]]) {
                snprintf(note, len, "query %lld rank %lld: (%lld, %lld), want (%lld, %lld)",
                         (long long)q, (long long)r, (long long)got_d, (long long)got_i,
                         (long long)d[order[r]], (long long)order[r]);
                ok = 0;
            }
        }
    }
    free(d), free(order), free(count);
    return ok;
}

/* ---- The row ---------------------------------------------------------- */

void bench_cpu_run_bits(bench_cpu *b, pk_ctx *ctx, const bench_case *bc,
                        const bench_device *dev, bench_row *row)
{
    const bench_opts *o = bench_cpu_opts(b);
    const pk_bench_case *c = &bc->c;
    int topk = c->id == PK_BENCH_HAMMING_TOPK;
    memset(row, 0, sizeof *row);
    row->bc = *bc;
    row->backend = PK_BACKEND_CPU;
    row->status = BENCH_FAILED;
    bits_call k = {.ctx = ctx, .m = c->rows, .n = c->cols, .k = c->k, .topk = c->topk};
    int peer = !topk && dev->blas;
    row->ops = bench_case_ops(bc);
    row->bytes = bench_case_moved(bc, PK_BACKEND_CPU);
    const char *how;
    row->ceiling_ops = popcnt_peak(&how);
    snprintf(row->ceiling_ops_name, sizeof row->ceiling_ops_name, "popcnt-peak");
    if (operand_make(ctx, &k.a, k.m, k.k, o->seed ^ 0xA, peer) ||
        operand_make(ctx, &k.b, k.n, k.k, o->seed ^ 0xB, peer) ||
        !(k.c = malloc((size_t)(k.m * k.n) * 4)) ||
        (peer && !(k.cf = malloc((size_t)(k.m * k.n) * 4))) ||
        (topk && (!(k.dist = malloc((size_t)(k.m * k.topk) * 4)) ||
                  !(k.idx = malloc((size_t)(k.m * k.topk) * 8))))) {
        snprintf(row->note, sizeof row->note, "out of memory for the inputs");
        goto done;
    }
    int ok = topk ? !run_topk(&k) : !run_bgemm(&k);
    if (ok && peer && run_sgemm(&k)) peer = 0;
    if (!ok) {
        snprintf(row->note, sizeof row->note, "%s: %s", pk_status_str(k.status),
                 pk_ctx_error(ctx));
        goto done;
    }
    if (topk ? verify_topk(&k, o->seed, row->note, sizeof row->note)
             : verify_bgemm(&k, peer, o->seed, row->note, sizeof row->note))
        row->status = BENCH_OK;
    /* pk and its peer in turns (bench_time_group). */
    bits_call kp = k;
    contender cs[2] = {{.fn = topk ? run_topk : run_bgemm, .arg = &k}};
    const char *names[2] = {NULL, topk ? "pk-bgemm" : "openblas-sgemm-pm1"};
    int n = 1;
    if (topk) cs[n++] = (contender){.fn = run_bgemm, .arg = &kp};
    else if (peer) cs[n++] = (contender){.fn = run_sgemm, .arg = &kp};
    bench_time_group(cs, n, o);
    if (cs[0].failed) {
        snprintf(row->note, sizeof row->note, "%s: %s", pk_status_str(k.status),
                 pk_ctx_error(ctx));
        row->status = BENCH_FAILED;
    } else {
        row->t = cs[0].t;
    }
    bench_add_peers(row, cs, names, n);
    if (row->status == BENCH_OK)
        snprintf(row->note, sizeof row->note, "ceiling: %s, %s", how, pk_ctx_describe(ctx));
done:
    free(k.a.f), free(k.a.w), free(k.b.f), free(k.b.w), free(k.c), free(k.cf);
    free(k.dist), free(k.idx);
}
