/* pk_gemm on the CPU, f32 and f64, all four transpose combinations: every
 * element of C against a long double reference within
 * (3 sqrt(k) + 4) eps (|alpha| sum |a||b| + |beta c|), far below any
 * wrong tile or index and above what a blocked FMA sum reaches on random
 * data. Shapes around every path's microtile (4, 6, 12 rows; 4, 8, 16, 32
 * columns) and cache blocks (kc 256, mc 384), threaded and not; leading
 * dimensions past the width, their padding full of NaN (must not be read)
 * or of a sentinel (C: must not be written); alpha and beta in {0, 1, -2.5};
 * beta = 0 with NaN in C; alpha = 0 and k = 0 with NaN in A and B; NaN and
 * Inf propagation; same bits for 1 thread and the default; alpha or beta
 * inside C; no memory kept by threads that exit; bad arguments, and TF32
 * refused on the CPU for every shape. */
#include "util.h"

static pk_ctx *ctx;

#define SENTINEL 12345.0

typedef struct gcase {
    pk_dtype t;
    int ta, tb;
    int64_t m, n, k, lda, ldb, ldc;
    double alpha, beta;
    int nan_c;          /* beta = 0: fill C with NaN */
    int nan_ab;         /* alpha = 0 or k = 0: A and B all NaN */
} gcase;

static const double scalars[] = {0, 1, -2.5};

static void *make(pk_dtype t, int64_t rows, int64_t cols, int64_t ld, double fill_pad,
                  int all_nan)
{
    int64_t n = rows * ld;
    void *p = pk_test_alloc((size_t)(n ? n : 1) * pk_test_size(t));
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < ld; c++)
            pk_test_setf(t, p, r * ld + c,
                         c >= cols ? fill_pad : all_nan ? NAN : pk_test_uniform(-1, 1));
    return p;
}

static int64_t run_id;

static void run(const gcase *g)
{
    pk_dtype t = g->t;
    int64_t m = g->m, n = g->n, k = g->k;
    int64_t ar = g->ta ? k : m, ac = g->ta ? m : k, br = g->tb ? n : k, bc = g->tb ? k : n;
    void *A = make(t, ar, ac, g->lda, NAN, g->nan_ab);
    void *B = make(t, br, bc, g->ldb, NAN, g->nan_ab);
    void *C = make(t, m, n, g->ldc, SENTINEL, g->nan_c);
    size_t csize = (size_t)(m * g->ldc) * pk_test_size(t);
    void *C0 = pk_test_alloc(csize);
    memcpy(C0, C, csize);
    double eps = t == PK_F64 ? DBL_EPSILON : FLT_EPSILON;
    float af = (float)g->alpha, bf = (float)g->beta;
    const void *alpha = t == PK_F64 ? (const void *)&g->alpha : (const void *)&af;
    const void *beta = t == PK_F64 ? (const void *)&g->beta : (const void *)&bf;
    pk_status s = pk_gemm(ctx, t, PK_GEMM_FP32, g->ta ? PK_TRANS : PK_NO_TRANS,
                          g->tb ? PK_TRANS : PK_NO_TRANS, m, n, k, alpha, A, g->lda, B,
                          g->ldb, beta, C, g->ldc);
    char what[200];
    snprintf(what, sizeof what, "#%lld %s %c%c m=%lld n=%lld k=%lld ld=%lld,%lld,%lld "
             "alpha=%g beta=%g%s%s", (long long)run_id++, pk_dtype_name(t), g->ta ? 'T' : 'N',
             g->tb ? 'T' : 'N', (long long)m, (long long)n, (long long)k, (long long)g->lda,
             (long long)g->ldb, (long long)g->ldc, g->alpha, g->beta,
             g->nan_c ? " NaN-C" : "", g->nan_ab ? " NaN-AB" : "");
    PK_CHECK(s == PK_OK, "%s: %s", what, pk_ctx_error(ctx));
    int bad = 0;
    for (int64_t i = 0; i < m && !bad; i++)
        for (int64_t j = 0; j < g->ldc && !bad; j++) {
            double got = pk_test_getf(t, C, i * g->ldc + j);
            if (j >= n) {
                bad |= !(got == SENTINEL);
                PK_CHECK(got == SENTINEL, "%s: padding C[%lld][%lld] written", what,
                         (long long)i, (long long)j);
                continue;
            }
            long double sum = 0, mag = 0;
            if (g->alpha != 0)
                for (int64_t p = 0; p < k; p++) {
                    long double a = pk_test_getf(t, A, g->ta ? p * g->lda + i : i * g->lda + p);
                    long double b = pk_test_getf(t, B, g->tb ? j * g->ldb + p : p * g->ldb + j);
                    sum += a * b;
                    mag += fabsl(a * b);
                }
            long double c0 = g->beta == 0 ? 0 : pk_test_getf(t, C0, i * g->ldc + j);
            long double ref = g->alpha * sum + g->beta * c0;
            double tol = (3 * sqrt((double)k) + 4) * eps *
                         (double)(fabsl(g->alpha) * mag + fabsl(g->beta * c0));
            if (t == PK_F32) ref = (float)ref; /* the final rounding to f32 */
            double err = fabs(got - (double)ref);
            bad |= !(err <= tol + fabs((double)ref) * eps);
            PK_CHECK(err <= tol + fabs((double)ref) * eps,
                     "%s: C[%lld][%lld] = %.17g, want %.17Lg (err %.3g, tol %.3g)", what,
                     (long long)i, (long long)j, got, ref, err, tol);
        }
    free(A), free(B), free(C), free(C0);
}

static int64_t pad(void) { return pk_test_below(3) == 0 ? 0 : 1 + pk_test_below(5); }

static void run_shape(pk_dtype t, int ta, int tb, int64_t m, int64_t n, int64_t k,
                      double alpha, double beta)
{
    gcase g = {.t = t, .ta = ta, .tb = tb, .m = m, .n = n, .k = k, .alpha = alpha,
               .beta = beta};
    int64_t ac = ta ? m : k, bc = tb ? k : n;
    g.lda = (ac > 1 ? ac : 1) + pad();
    g.ldb = (bc > 1 ? bc : 1) + pad();
    g.ldc = (n > 1 ? n : 1) + pad();
    g.nan_c = beta == 0;
    g.nan_ab = (alpha == 0 || k == 0) && pk_test_below(2);
    run(&g);
}

/* Every small m and n against a few k: the microtile edges of all paths. */
static void small_shapes(void)
{
    static const int64_t mn[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 11, 12, 13, 15, 16, 17, 31, 32, 33};
    static const int64_t ks[] = {0, 1, 2, 3, 8, 17};
    const int nmn = (int)(sizeof mn / sizeof *mn), nk = (int)(sizeof ks / sizeof *ks);
    for (int d = 0; d < 2; d++)
        for (int tr = 0; tr < 4; tr++)
            for (int a = 0; a < nmn; a++)
                for (int b = 0; b < nmn; b++)
                    for (int c = 0; c < nk; c++)
                        run_shape(d ? PK_F64 : PK_F32, tr & 1, tr >> 1, mn[a], mn[b], ks[c],
                                  scalars[pk_test_below(3)], scalars[pk_test_below(3)]);
}

/* Cache-block edges and the threaded path (m*n*k > 2^20), every alpha/beta. */
static void block_shapes(void)
{
    static const int64_t shapes[][3] = {
        {13, 33, 255}, {25, 65, 256}, {11, 17, 257}, {37, 70, 513}, {383, 9, 40},
        {385, 33, 20},  {384, 31, 7},  {7, 4097, 3},  {1, 700, 600}, {700, 1, 300},
        {97, 129, 1},  {130, 140, 200}, {12, 300, 400}, {200, 64, 300}, {61, 257, 129}};
    for (int d = 0; d < 2; d++)
        for (int tr = 0; tr < 4; tr++)
            for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
                int ab = (int)((s + (size_t)tr) % 9);
                run_shape(d ? PK_F64 : PK_F32, tr & 1, tr >> 1, shapes[s][0], shapes[s][1],
                          shapes[s][2], scalars[ab / 3 == 0 ? 1 : ab / 3 == 1 ? 2 : 0],
                          scalars[ab % 3]);
            }
}

/* NaN in one row of A poisons that row of C only; Inf in one column of B
 * makes that column of C infinite (all other entries finite). */
static void special_values(void)
{
    for (int d = 0; d < 2; d++)
        for (int tr = 0; tr < 4; tr++) {
            pk_dtype t = d ? PK_F64 : PK_F32;
            int ta = tr & 1, tb = tr >> 1;
            int64_t m = 29, n = 45, k = 300;
            int64_t lda = ta ? m : k, ldb = tb ? k : n;
            void *A = make(t, ta ? k : m, lda, lda, 0, 0);
            void *B = make(t, tb ? n : k, ldb, ldb, 0, 0);
            void *C = make(t, m, n, n, 0, 1);
            int64_t i0 = pk_test_below(m), p0 = pk_test_below(k), j0 = pk_test_below(n);
            pk_test_setf(t, A, ta ? p0 * lda + i0 : i0 * lda + p0, NAN);
            int64_t p1 = (p0 + 1) % k;
            pk_test_setf(t, B, tb ? j0 * ldb + p1 : p1 * ldb + j0, INFINITY);
            double one64 = 1, zero64 = 0;
            float one32 = 1, zero32 = 0;
            pk_status s = pk_gemm(ctx, t, PK_GEMM_FP32, ta ? PK_TRANS : PK_NO_TRANS,
                                  tb ? PK_TRANS : PK_NO_TRANS, m, n, k,
                                  d ? (void *)&one64 : (void *)&one32, A, lda, B, ldb,
                                  d ? (void *)&zero64 : (void *)&zero32, C, n);
            PK_CHECK(s == PK_OK, "special: %s", pk_ctx_error(ctx));
            for (int64_t i = 0; i < m; i++)
                for (int64_t j = 0; j < n; j++) {
                    double v = pk_test_getf(t, C, i * n + j);
                    if (i == i0)
                        PK_CHECK(isnan(v), "special %s tr=%d: C[%lld][%lld] = %g, want NaN",
                                 pk_dtype_name(t), tr, (long long)i, (long long)j, v);
                    else if (j == j0)
                        PK_CHECK(isinf(v), "special %s tr=%d: C[%lld][%lld] = %g, want Inf",
                                 pk_dtype_name(t), tr, (long long)i, (long long)j, v);
                    else
                        PK_CHECK(isfinite(v), "special %s tr=%d: C[%lld][%lld] = %g, want finite",
                                 pk_dtype_name(t), tr, (long long)i, (long long)j, v);
                }
            free(A), free(B), free(C);
        }
}

/* Same bits with 1 thread as with the default team (threads split C, never
 * k), and for fp32_accurate (plain FP32 on the CPU) as for fp32. */
static void same_bits(void)
{
    int64_t m = 150, n = 170, k = 300;
    float *A = make(PK_F32, m, k, k, 0, 0), *B = make(PK_F32, k, n, n, 0, 0);
    float *C1 = pk_test_alloc((size_t)(m * n) * 4), *C2 = pk_test_alloc((size_t)(m * n) * 4);
    float one = 1, zero = 0;
    pk_status s1 = pk_gemm(ctx, PK_F32, PK_GEMM_FP32, PK_NO_TRANS, PK_NO_TRANS, m, n, k, &one,
                           A, k, B, n, &zero, C1, n);
    pk_ctx_set_threads(ctx, 1);
    pk_status s2 = pk_gemm(ctx, PK_F32, PK_GEMM_FP32_ACCURATE, PK_NO_TRANS, PK_NO_TRANS, m, n,
                           k, &one, A, k, B, n, &zero, C2, n);
    pk_ctx_set_threads(ctx, 0);
    PK_CHECK(s1 == PK_OK && s2 == PK_OK, "same_bits: %s", pk_ctx_error(ctx));
    PK_CHECK(memcmp(C1, C2, (size_t)(m * n) * 4) == 0,
             "1 thread / fp32_accurate differ from the default team / fp32");
    free(A), free(B), free(C1), free(C2);
}

/* alpha and beta may lie inside C: they are read once, before C is
 * written (the microkernels used to re-read them per tile). Shapes of one
 * tile and of many, threaded; the result must equal a run with copies. */
static void scalars_in_c(void)
{
    static const int64_t shapes[][3] = {{2, 64, 2}, {90, 130, 40}};
    for (int si = 0; si < 2; si++)
        for (int f64 = 0; f64 < 2; f64++)
            for (int which = 0; which < 2; which++) {
                const pk_dtype t = f64 ? PK_F64 : PK_F32;
                const int64_t m = shapes[si][0], n = shapes[si][1], k = shapes[si][2];
                const size_t es = pk_test_size(t);
                void *A = make(t, m, k, k, 0, 0), *B = make(t, k, n, n, 0, 0);
                void *C = make(t, m, n, n, 0, 0), *C2 = pk_test_alloc((size_t)(m * n) * es);
                /* The scalar is C's element 5 (written by the first tile). */
                pk_test_setf(t, C, 5, which ? 1.5 : -0.75);
                memcpy(C2, C, (size_t)(m * n) * es);
                double one64 = 1;
                float one32 = 1;
                const void *one = f64 ? (const void *)&one64 : (const void *)&one32;
                unsigned char copy[8];
                memcpy(copy, (char *)C + 5 * es, es);
                const void *in_c = (char *)C + 5 * es;
                pk_status s1 = pk_gemm(ctx, t, PK_GEMM_FP32, PK_NO_TRANS, PK_NO_TRANS, m, n, k,
                                       which ? one : in_c, A, k, B, n, which ? in_c : one, C, n);
                pk_status s2 = pk_gemm(ctx, t, PK_GEMM_FP32, PK_NO_TRANS, PK_NO_TRANS, m, n, k,
                                       which ? one : copy, A, k, B, n, which ? copy : one, C2, n);
                PK_CHECK(s1 == PK_OK && s2 == PK_OK, "scalars in C: %s", pk_ctx_error(ctx));
                PK_CHECK(memcmp(C, C2, (size_t)(m * n) * es) == 0,
                         "%s %lldx%lldx%lld: %s inside C gives another result than its copy",
                         pk_dtype_name(t), (long long)m, (long long)n, (long long)k,
                         which ? "beta" : "alpha");
                free(A), free(B), free(C), free(C2);
            }
}

/* Threads that run pk_gemm and exit leave nothing behind: each thread's
 * packing buffer is freed at its exit (it used to leak, 256 KiB a thread
 * here). Counted with mallinfo2 where glibc has it; LeakSanitizer checks
 * the same in the sanitizer build. */
#include <pthread.h>

typedef struct thread_job {
    const float *A, *B;
    float *C;
    pk_status s;
} thread_job;

static void *gemm_thread(void *arg)
{
    thread_job *j = arg;
    pk_ctx *c = NULL;
    float one = 1, zero = 0;
    j->s = pk_ctx_create(&c, PK_BACKEND_CPU, 0);
    if (j->s == PK_OK) {
        pk_ctx_set_threads(c, 1);
        j->s = pk_gemm(c, PK_F32, PK_GEMM_FP32, PK_NO_TRANS, PK_NO_TRANS, 128, 128, 256, &one,
                       j->A, 256, j->B, 128, &zero, j->C, 128);
    }
    pk_ctx_destroy(c);
    return NULL;
}

static void threads_exit(void)
{
    float *A = make(PK_F32, 128, 256, 256, 0, 0), *B = make(PK_F32, 256, 128, 128, 0, 0);
    float *C = pk_test_alloc(128 * 128 * 4);
    size_t before = 0;
    for (int i = 0; i < 24; i++) {
        if (i == 4) before = pk_test_heap_in_use(); /* after the library's one-time allocations */
        thread_job j = {A, B, C, PK_ERR_ARG};
        pthread_t th;
        PK_CHECK(pthread_create(&th, NULL, gemm_thread, &j) == 0, "pthread_create");
        pthread_join(th, NULL);
        PK_CHECK(j.s == PK_OK, "gemm on thread %d: %s", i, pk_status_str(j.s));
    }
    const size_t after = pk_test_heap_in_use();
    PK_CHECK(after < before + (1u << 20), "heap grew by %zu bytes over 20 threads",
             after - before);
    free(A), free(B), free(C);
}

static void bad_args(void)
{
    float A[64] = {0}, B[64] = {0}, C[64] = {0}, one = 1, zero = 0;
    double one64 = 1, zero64 = 0;
#define GEMM(t, mode, ta, tb, m, n, k, A_, lda, B_, ldb, C_, ldc)                          \
    pk_gemm(ctx, t, mode, ta, tb, m, n, k, t == PK_F64 ? (void *)&one64 : (void *)&one, A_, \
            lda, B_, ldb, t == PK_F64 ? (void *)&zero64 : (void *)&zero, C_, ldc)
    const pk_trans N = PK_NO_TRANS, T = PK_TRANS;
    PK_CHECK(GEMM(PK_F32, PK_GEMM_MODE_COUNT, N, N, 2, 2, 2, A, 2, B, 2, C, 2) == PK_ERR_ARG,
             "bad mode");
    PK_CHECK(GEMM(PK_F32, PK_GEMM_FP32, (pk_trans)2, N, 2, 2, 2, A, 2, B, 2, C, 2) == PK_ERR_ARG,
             "bad ta");
    PK_CHECK(GEMM(PK_F32, PK_GEMM_FP32, N, (pk_trans)-1, 2, 2, 2, A, 2, B, 2, C, 2) == PK_ERR_ARG,
             "bad tb");
    PK_CHECK(GEMM(PK_I32, PK_GEMM_FP32, N, N, 2, 2, 2, A, 2, B, 2, C, 2) == PK_ERR_ARG,
             "i32 gemm");
    PK_CHECK(GEMM(PK_F64, PK_GEMM_FP32_ACCURATE, N, N, 2, 2, 2, A, 2, B, 2, C, 2) == PK_ERR_ARG,
             "f64 fp32_accurate");
    PK_CHECK(GEMM(PK_F32, PK_GEMM_FP32, N, N, 2, 3, 4, A, 3, B, 3, C, 3) == PK_ERR_ARG,
             "lda < k");
    PK_CHECK(GEMM(PK_F32, PK_GEMM_FP32, T, N, 3, 2, 4, A, 2, B, 2, C, 2) == PK_ERR_ARG,
             "lda < m (A transposed)");
    PK_CHECK(GEMM(PK_F32, PK_GEMM_FP32, N, T, 2, 3, 4, A, 4, B, 3, C, 3) == PK_ERR_ARG,
             "ldb < k (B transposed)");
    PK_CHECK(GEMM(PK_F32, PK_GEMM_FP32, N, N, 2, 3, 4, A, 4, B, 3, C, 2) == PK_ERR_ARG,
             "ldc < n");
    PK_CHECK(GEMM(PK_F32, PK_GEMM_FP32, N, N, -1, 2, 2, A, 2, B, 2, C, 2) == PK_ERR_ARG,
             "m < 0");
    PK_CHECK(GEMM(PK_F32, PK_GEMM_FP32, N, N, 2, 2, 2, NULL, 2, B, 2, C, 2) == PK_ERR_ARG,
             "A NULL");
    PK_CHECK(GEMM(PK_F32, PK_GEMM_FP32, N, N, 2, 2, 2, A, 2, B, 2, NULL, 2) == PK_ERR_ARG,
             "C NULL");
    PK_CHECK(pk_gemm(ctx, PK_F32, PK_GEMM_FP32, N, N, 2, 2, 2, NULL, A, 2, B, 2, &zero, C,
                     2) == PK_ERR_ARG, "alpha NULL");
    PK_CHECK(GEMM(PK_F32, PK_GEMM_FP32, N, N, 2, 2, 2, A, 2, B, 2, A + 2, 2) == PK_ERR_ARG,
             "C overlaps A");
    PK_CHECK(GEMM(PK_F32, PK_GEMM_FP32, N, N, 2, 2, 2, A, 2, A, 2, C, 2) == PK_OK,
             "A and B may overlap: %s", pk_ctx_error(ctx));
    pk_status s = GEMM(PK_F32, PK_GEMM_TF32, N, N, 2, 2, 2, A, 2, B, 2, C, 2);
    PK_CHECK(s == PK_ERR_UNSUPPORTED && strstr(pk_ctx_error(ctx), "tf32"),
             "tf32 on the CPU: %s, %s", pk_status_str(s), pk_ctx_error(ctx));
    /* Empty problems too: the mode is refused whatever the shape. */
    PK_CHECK(GEMM(PK_F32, PK_GEMM_TF32, N, N, 0, 2, 2, A, 2, B, 2, C, 2) == PK_ERR_UNSUPPORTED,
             "tf32 on the CPU with m = 0");
    PK_CHECK(GEMM(PK_F32, PK_GEMM_TF32, N, N, 2, 2, 0, A, 2, B, 2, C, 2) == PK_ERR_UNSUPPORTED,
             "tf32 on the CPU with k = 0");
#undef GEMM
}

int main(void)
{
    pk_test_init("test_gemm");
    ctx = pk_test_cpu_ctx();
    small_shapes();
    block_shapes();
    special_values();
    same_bits();
    scalars_in_c();
    threads_exit();
    bad_args();
    pk_ctx_destroy(ctx);
    return pk_test_finish("test_gemm");
}
