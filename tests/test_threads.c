/* Threads: one context per thread, many threads at once. 16 threads (each
 * with its own CPU context; their thread counts differ: OpenMP's default, 1
 * and 2) make 10^4 calls each, mixing pk_reduce (sum, argmax), pk_dot,
 * pk_reduce_axis and two reducers built once and shared read-only by every
 * context (pk_reducer_reduce, pk_reducer_reduce_axis); every result must
 * have the bits of the same call made serially, before the threads start,
 * on one context. A few cases are long enough (PK__PAR_MIN elements) for
 * the contexts' OpenMP teams to run inside the threads.
 *
 * PK_TEST_THREADS=T and PK_TEST_CALLS=C change the 16 x 10^4 (the
 * ThreadSanitizer runs in .ci/run make fewer calls). PK_TEST_ONE_THREAD
 * gives every context one thread, so that no OpenMP team starts: the
 * OpenMP runtime is not instrumented, and TSan takes its internal locking
 * for races (.ci/run runs both ways; docs/ARCHITECTURE.md, threads). */
#include "threads_util.h"

#define NCASES 96
#define BIG ((int64_t)300000) /* above PK__PAR_MIN (2^18): OpenMP teams */
#define ROWS 96
#define COLS 64
#define OUT_MAX (8 * (ROWS > COLS ? ROWS : COLS))

enum kind { K_SUM_F32, K_SUM_I32, K_ARGMAX_F64, K_DOT_F64, K_AXIS_F32, K_RED, K_RED_AXIS, NKINDS };

typedef struct tcase {
    enum kind kind;
    int64_t off, n;     /* 1-D: x[off, off + n) */
    int64_t rows, cols; /* 2-D: a rows x cols block at off, ld COLS */
    int axis;
    size_t bytes;       /* of the result */
    unsigned char want[OUT_MAX];
} tcase;

static float *xf;
static double *xd, *yd;
static int32_t *xi;
static float *mat; /* ROWS x COLS */
static pk_reducer *red_value, *red_arg; /* shared by every context */
static tcase cases[NCASES];

/* One call of case c on ctx into out; the status. */
static pk_status call(pk_ctx *ctx, const tcase *c, void *out)
{
    const float *m = mat + c->off;
    switch (c->kind) {
    case K_SUM_F32: return pk_reduce(ctx, PK_SUM, PK_F32, xf + c->off, c->n, out);
    case K_SUM_I32: return pk_reduce(ctx, PK_SUM, PK_I32, xi + c->off, c->n, out);
    case K_ARGMAX_F64: return pk_reduce(ctx, PK_ARGMAX, PK_F64, xd + c->off, c->n, out);
    case K_DOT_F64: return pk_dot(ctx, PK_F64, c->n, xd + c->off, yd + c->off, out);
    case K_AXIS_F32:
        return pk_reduce_axis(ctx, PK_SUM, PK_F32, m, c->rows, c->cols, COLS, c->axis, out);
    case K_RED: return pk_reducer_reduce(ctx, red_value, xf + c->off, c->n, out);
    default:
        return pk_reducer_reduce_axis(ctx, red_arg, m, c->rows, c->cols, COLS, c->axis, out);
    }
}

static void make_cases(void)
{
    for (int k = 0; k < NCASES; k++) {
        tcase *c = &cases[k];
        c->kind = (enum kind)(k % NKINDS);
        const int big = k % 16 == 3; /* every kind gets some: 16 and 7 are coprime */
        c->n = big ? BIG + pk_test_below(1000) : 1 + pk_test_below(3000);
        c->off = pk_test_below(2 * BIG - c->n);
        c->rows = 1 + pk_test_below(ROWS), c->cols = 1 + pk_test_below(COLS);
        c->axis = (int)pk_test_below(2);
        if (c->kind == K_AXIS_F32 || c->kind == K_RED_AXIS)
            c->off = pk_test_below(ROWS - c->rows + 1) * COLS + pk_test_below(COLS - c->cols + 1);
        const int64_t nout = c->axis == 0 ? c->cols : c->rows;
        c->bytes = c->kind == K_SUM_F32 || c->kind == K_RED ? 4
                   : c->kind == K_AXIS_F32                  ? 4 * (size_t)nout
                   : c->kind == K_RED_AXIS                  ? 8 * (size_t)nout
                                                            : 8;
    }
}

typedef tw_worker worker;

static long ncalls = 10000;

static void *work(void *arg)
{
    worker *w = arg;
    pk_ctx *ctx = NULL;
    if (pk_ctx_create(&ctx, PK_BACKEND_CPU, 0) != PK_OK) {
        snprintf(w->first, sizeof w->first, "pk_ctx_create: %s", pk_last_create_error());
        w->errors++;
        return NULL;
    }
    pk_ctx_set_threads(ctx, w->threads);
    unsigned char out[OUT_MAX];
    /* Each thread walks the cases in its own order. */
    for (long j = 0; j < ncalls; j++) {
        const tcase *c = &cases[(w->id * 37 + j * (2 * w->id + 1)) % NCASES];
        memset(out, 0xA5, sizeof out);
        pk_status s = call(ctx, c, out);
        char which[48];
        snprintf(which, sizeof which, "case %d (kind %d)", (int)(c - cases), (int)c->kind);
        tw_record(w, s, pk_ctx_error(ctx), memcmp(out, c->want, c->bytes) == 0, which);
    }
    pk_ctx_destroy(ctx);
    return NULL;
}

/* Independent checks of the serial results of two kinds (plain loops); the
 * kernels themselves are tested in test_reduce.c and test_reducer.c. */
static void check_serial(const tcase *c)
{
    if (c->kind == K_SUM_I32) {
        int64_t s = 0, got;
        for (int64_t i = 0; i < c->n; i++) s += xi[c->off + i];
        memcpy(&got, c->want, 8);
        PK_CHECK(got == s, "case %d: sum %lld, want %lld", (int)(c - cases), (long long)got,
                 (long long)s);
    } else if (c->kind == K_ARGMAX_F64) {
        int64_t best = 0, got;
        for (int64_t i = 1; i < c->n; i++)
            if (xd[c->off + i] > xd[c->off + best]) best = i;
        memcpy(&got, c->want, 8);
        PK_CHECK(got == best, "case %d: argmax %lld, want %lld", (int)(c - cases),
                 (long long)got, (long long)best);
    }
}

int main(void)
{
    pk_test_init("test_threads");
    const int nthreads = (int)tw_env_long("PK_TEST_THREADS", 16, 1, 1024);
    ncalls = tw_env_long("PK_TEST_CALLS", 10000, 1, 100000000);
    const int one = getenv("PK_TEST_ONE_THREAD") != NULL;

    xf = pk_test_alloc(2 * BIG * sizeof *xf), xi = pk_test_alloc(2 * BIG * sizeof *xi);
    xd = pk_test_alloc(2 * BIG * sizeof *xd), yd = pk_test_alloc(2 * BIG * sizeof *yd);
    mat = pk_test_alloc(ROWS * COLS * sizeof *mat);
    pk_test_fill(PK_F32, xf, 2 * BIG, PK_TEST_UNIFORM);
    pk_test_fill(PK_I32, xi, 2 * BIG, PK_TEST_UNIFORM);
    pk_test_fill(PK_F64, xd, 2 * BIG, PK_TEST_UNIFORM);
    pk_test_fill(PK_F64, yd, 2 * BIG, PK_TEST_UNIFORM);
    pk_test_fill(PK_F32, mat, ROWS * COLS, PK_TEST_SMALL); /* ties for the ARG reducer */

    pk_ctx *ctx = pk_test_cpu_ctx();
    if (one) pk_ctx_set_threads(ctx, 1);
    tw_make_reducers(ctx, &red_value, &red_arg);
    make_cases();
    for (int k = 0; k < NCASES; k++) {
        pk_status s = call(ctx, &cases[k], cases[k].want);
        PK_CHECK(s == PK_OK, "serial case %d: %s", k, pk_ctx_error(ctx));
        check_serial(&cases[k]);
    }
    pk_ctx_destroy(ctx); /* the reducers outlive the context that built them */

    worker *w = calloc((size_t)nthreads, sizeof *w);
    if (!w) return printf("FAIL: no memory\n"), 1;
    for (int t = 0; t < nthreads; t++) {
        w[t].id = t;
        w[t].threads = one ? 1 : t % 3; /* 0: OpenMP's default */
    }
    const long calls = tw_run(nthreads, w, work, ncalls);
    printf("%d threads x %ld calls: %ld calls, %d cases\n", nthreads, ncalls, calls, NCASES);
    pk_reducer_destroy(red_value), pk_reducer_destroy(red_arg);
    free(w), free(xf), free(xi), free(xd), free(yd), free(mat);
    return pk_test_finish("test_threads");
}
