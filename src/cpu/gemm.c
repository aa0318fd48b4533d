/* pk_gemm on the CPU: the BLIS loops around the per-ISA microkernels
 * (kernels/gemm_kernels.c), the threading, and the reference loops.
 *
 * Per thread, over its own rectangle of C:
 *   for jc (nc columns)        B panel kc x nc -> L3, packed once per pc
 *     for pc (kc of k)
 *       pack B
 *       for ic (mc rows)       A block mc x kc -> L2, packed
 *         pack A
 *         for jr (nr columns)  B micro-panel kc x nr stays in L1
 *           for ir (mr rows)   microkernel: mr x nr tile in registers
 * The first pc block applies beta (beta = 0: C is not read), later ones add.
 * Threads split C into disjoint rectangles along its longer side (in whole
 * microtiles) and pack their own buffers: no barriers, and the summation
 * order of every element is the same for any thread count. */
#include "cpu.h"
#include "kernels/gemm.h"

#include <omp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Products of at most this many multiply-adds (m*n*k) run on the calling
 * thread: ~2 MFLOP take ~20 us on one core, about a team wake-up. */
#define GEMM_PAR_MIN ((int64_t)1 << 20)

typedef struct gemm_job {
    const pk__gemm_args *a;
    const pk__gemm_kernel *K;
    size_t size; /* element bytes */
    int64_t kc;  /* balanced k block */
} gemm_job;

/* Per-thread packing buffers, grown on demand and kept: a fresh allocation
 * per call would pay its page faults every time. A thread-specific key
 * frees a thread's buffer when the thread exits (OpenMP ends surplus
 * workers when a team shrinks; callers' own threads come and go), so that
 * short-lived threads do not leak. */
static _Thread_local struct {
    void *p;
    size_t bytes;
} pack_buf;

static pthread_key_t pack_key;
static int pack_key_ok; /* 0 until created; without a key the buffer leaks at thread exit */
static pthread_once_t pack_once = PTHREAD_ONCE_INIT;

static void pack_key_create(void)
{
    pack_key_ok = pthread_key_create(&pack_key, pk__free) == 0;
}

static void *pack_space(size_t bytes)
{
    if (pack_buf.bytes >= bytes) return pack_buf.p;
    pthread_once(&pack_once, pack_key_create);
    pk__free(pack_buf.p);
    bytes = (bytes + 4095) & ~(size_t)4095;
    pack_buf.p = pk__aligned_alloc(64, bytes);
    pack_buf.bytes = pack_buf.p ? bytes : 0;
    /* The key's value is what the destructor frees at thread exit. */
    if (pack_key_ok) (void)pthread_setspecific(pack_key, pack_buf.p);
    return pack_buf.p;
}

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

/* Split n into blocks of at most `block`, all about equal, a multiple of
 * `unit` (k = KC + 1 gives two halves, not KC and 1). */
static int64_t balanced(int64_t n, int64_t block, int64_t unit)
{
    return round_up(ceil_div(n, ceil_div(n, block)), unit);
}

/* A thread's rectangle of C, [m0, m1) x [n0, n1), and its packing blocks. */
typedef struct {
    int64_t m0, m1, n0, n1;
    int64_t mc_max, nc_max;
    size_t b_bytes, bytes; /* packed B (aligned), and B and A together */
} gemm_rect_plan;

static gemm_rect_plan plan_rect(const gemm_job *job, int64_t m0, int64_t m1, int64_t n0,
                                int64_t n1)
{
    const pk__gemm_kernel *K = job->K;
    gemm_rect_plan r = {.m0 = m0, .m1 = m1, .n0 = n0, .n1 = n1,
                        .mc_max = balanced(m1 - m0, K->mc, K->mr),
                        .nc_max = balanced(n1 - n0, K->nc, K->nr)};
    /* B first: the microkernel loads its rows as aligned vectors. */
    r.b_bytes = ((size_t)r.nc_max * (size_t)job->kc * job->size + 63) & ~(size_t)63;
    r.bytes = r.b_bytes + (size_t)r.mc_max * (size_t)job->kc * job->size;
    return r;
}

/* The rectangle r of C on this thread, packing into Bp (r->bytes). */
static void gemm_rect(const gemm_job *job, const gemm_rect_plan *r, char *Bp)
{
    const pk__gemm_args *a = job->a;
    const pk__gemm_kernel *K = job->K;
    const size_t sz = job->size;
    const int64_t mr = K->mr, nr = K->nr, kc_max = job->kc;
    const int64_t m0 = r->m0, m1 = r->m1, n0 = r->n0, n1 = r->n1;
    const int64_t mc_max = r->mc_max, nc_max = r->nc_max;
    char *Ap = Bp + r->b_bytes;
    const char *A = a->A, *B = a->B;
    char *C = a->C;
    const double one_f64 = 1;
    const float one_f32 = 1;
    const void *one = a->t == PK_F64 ? (const void *)&one_f64 : (const void *)&one_f32;
    int beta_zero = a->t == PK_F64 ? *(const double *)a->beta == 0
                                   : *(const float *)a->beta == 0;

    for (int64_t jc = n0; jc < n1; jc += nc_max) {
        int64_t nc = min64(nc_max, n1 - jc);
        for (int64_t pc = 0; pc < a->k; pc += kc_max) {
            int64_t kc = min64(kc_max, a->k - pc);
            /* op(B) rows pc.., columns jc.. */
            const char *Bsrc = B + (size_t)(a->tb ? jc * a->ldb + pc : pc * a->ldb + jc) * sz;
            K->pack_b(Bsrc, a->ldb, a->tb, kc, nc, Bp);
            const void *beta = pc > 0 ? one : beta_zero ? NULL : a->beta;
            for (int64_t ic = m0; ic < m1; ic += mc_max) {
                int64_t mc = min64(mc_max, m1 - ic);
                const char *Asrc = A + (size_t)(a->ta ? pc * a->lda + ic : ic * a->lda + pc) * sz;
                K->pack_a(Asrc, a->lda, a->ta, mc, kc, Ap);
                for (int64_t jr = 0; jr < nc; jr += nr) {
                    const char *bp = Bp + (size_t)(jr * kc) * sz;
                    int cols = (int)min64(nr, nc - jr);
                    for (int64_t ir = 0; ir < mc; ir += mr) {
                        char *c = C + (size_t)((ic + ir) * a->ldc + jc + jr) * sz;
                        K->ukr(kc, Ap + (size_t)(ir * kc) * sz, bp, c, a->ldc,
                               (int)min64(mr, mc - ir), cols, a->alpha, beta);
                    }
                }
            }
        }
    }
}

/* Threads' rectangles: split the side with more microtiles into nt runs of
 * whole microtiles. */
static pk_status gemm_blocked(pk_ctx *ctx, const pk__gemm_args *a,
                              const pk__gemm_kernel *K)
{
    gemm_job job = {.a = a, .K = K, .size = pk__dtypes[a->t].size,
                    .kc = balanced(a->k, K->kc, 1)};
    int64_t tiles_m = ceil_div(a->m, K->mr), tiles_n = ceil_div(a->n, K->nr);
    int split_m = tiles_m >= tiles_n;
    int64_t tiles = split_m ? tiles_m : tiles_n;
    int nt = 1;
    if ((double)a->m * (double)a->n * (double)a->k > (double)GEMM_PAR_MIN) {
        nt = ctx->threads > 0 ? ctx->threads : omp_get_max_threads();
        if (nt > tiles) nt = (int)tiles;
    }
    /* Every thread gets its packing space before any writes C: out of
     * memory leaves C as it was, also when beta != 0 (C is read). */
    int failed = 0;
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        int t = omp_get_thread_num(), n = omp_get_num_threads();
        int64_t u0 = tiles * t / n, u1 = tiles * (t + 1) / n;
        gemm_rect_plan r = split_m ? plan_rect(&job, min64(u0 * K->mr, a->m),
                                               min64(u1 * K->mr, a->m), 0, a->n)
                                   : plan_rect(&job, 0, a->m, min64(u0 * K->nr, a->n),
                                               min64(u1 * K->nr, a->n));
        char *Bp = pack_space(r.bytes);
        if (!Bp) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp barrier
        int any;
#pragma omp atomic read
        any = failed;
        if (!any) gemm_rect(&job, &r, Bp);
    }
    if (failed)
        return pk__fail(ctx, PK_ERR_NOMEM, "pk_gemm: out of memory for the packing buffers");
    return PK_OK;
}

/* The readable definition (PK_CPU_ISA=reference): one dot product per
 * element, in order, in the dtype. */
#define REF_GEMM(D, T)                                                      \
    static void ref_gemm_##D(const pk__gemm_args *g)                        \
    {                                                                       \
        const T *A = g->A, *B = g->B, alpha = *(const T *)g->alpha,         \
                beta = *(const T *)g->beta;                                 \
        T *C = g->C;                                                        \
        for (int64_t i = 0; i < g->m; i++)                                  \
            for (int64_t j = 0; j < g->n; j++) {                            \
                T s = 0;                                                    \
                for (int64_t p = 0; p < g->k; p++)                          \
                    s += (g->ta ? A[p * g->lda + i] : A[i * g->lda + p]) *  \
                         (g->tb ? B[j * g->ldb + p] : B[p * g->ldb + j]);   \
                T *c = &C[i * g->ldc + j];                                  \
                *c = beta == 0 ? alpha * s : alpha * s + beta * *c;         \
            }                                                               \
    }                                                                       \
    /* alpha = 0 or k = 0: C = beta * C, A and B unread (beta = 0: C too). */ \
    static void scale_c_##D(const pk__gemm_args *g)                         \
    {                                                                       \
        T beta = *(const T *)g->beta, *C = g->C;                            \
        if (beta == 1) return;                                              \
        for (int64_t i = 0; i < g->m; i++)                                  \
            for (int64_t j = 0; j < g->n; j++)                              \
                C[i * g->ldc + j] = beta == 0 ? 0 : beta * C[i * g->ldc + j]; \
    }
REF_GEMM(f32, float)
REF_GEMM(f64, double)

pk_status pk__cpu_gemm(pk_ctx *ctx, const pk__gemm_args *a)
{
    if (a->mode == PK_GEMM_TF32)
        return pk__fail(ctx, PK_ERR_UNSUPPORTED,
                        "pk_gemm: mode tf32 needs tensor cores; the CPU backend "
                        "has none (use fp32 or fp32_accurate)");
    /* fp32 and fp32_accurate: IEEE arithmetic in the dtype. */
    int f64 = a->t == PK_F64;
    int alpha_zero = f64 ? *(const double *)a->alpha == 0 : *(const float *)a->alpha == 0;
    if (a->k == 0 || alpha_zero) {
        if (f64) scale_c_f64(a);
        else scale_c_f32(a);
        return PK_OK;
    }
    const pk__cpu_kernels *k = ctx->impl;
    if (!k->gemm) {
        if (f64) ref_gemm_f64(a);
        else ref_gemm_f32(a);
        return PK_OK;
    }
    return gemm_blocked(ctx, a, f64 ? &k->gemm->f64 : &k->gemm->f32);
}
