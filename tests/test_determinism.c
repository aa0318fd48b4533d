/* Determinism: the same bits on every run, for thread counts 1, 2, 3, 4 and
 * OpenMP's default, and on every SIMD path (avx512, avx2, generic; a path
 * this CPU lacks is skipped). The fast paths also agree with the reference
 * path (PK_CPU_ISA=reference) within a few ulps (sums, products, dots) or
 * exactly (everything else). The SIMD path is chosen once per process, so
 * each path runs in a child process: this program re-executes itself with
 * PK_CPU_ISA set and "--child SEED FILE", and the child writes its results
 * to FILE. */
#include "util.h"

#include <sys/wait.h>
#include <unistd.h>

/* One result of the case list: the bytes pk wrote. */
typedef struct result {
    char name[96];
    pk_op op;          /* PK_OP_COUNT for axpy, PK_SUM for dot */
    pk_dtype rt;       /* dtype of each value */
    int64_t len;       /* elements reduced per value */
    size_t bytes;
    unsigned char *data;
} result;

static result results[4096];
static int nresults;

static void record(const char *name, pk_op op, pk_dtype rt, int64_t len, const void *p,
                   size_t bytes)
{
    if (nresults == (int)(sizeof results / sizeof *results)) {
        printf("FAIL: too many results\n");
        exit(1);
    }
    result *r = &results[nresults++];
    snprintf(r->name, sizeof r->name, "%s", name);
    r->op = op;
    r->rt = rt;
    r->len = len;
    r->bytes = bytes;
    r->data = pk_test_alloc(bytes);
    memcpy(r->data, p, bytes);
}

static void free_results(void)
{
    for (int i = 0; i < nresults; i++) free(results[i].data);
    nresults = 0;
}

#define NBIG 310001
static void *data[PK_TEST_NDTYPES];
static void *data2[2]; /* second operand of dot and axpy (f32, f64) */

/* The same data for a seed, in every process. */
static void make_data(uint64_t seed)
{
    pk_test_state = seed;
    for (int d = 0; d < PK_TEST_NDTYPES; d++) {
        pk_dtype t = pk_test_dtypes[d];
        data[d] = pk_test_alloc((size_t)NBIG * 8);
        for (int64_t i = 0; i < NBIG; i++) {
            if (pk_test_is_float(t)) /* near 1: products stay in range */
                pk_test_setf(t, data[d], i,
                             exp(pk_test_uniform(-0.01, 0.01)) * (pk_test_next() & 1 ? -1 : 1) +
                                 (pk_test_below(50) == 0 ? 1e6 : 0));
            else pk_test_setu(t, data[d], i, pk_test_next());
        }
    }
    for (int d = 0; d < 2; d++) {
        data2[d] = pk_test_alloc((size_t)NBIG * 8);
        for (int64_t i = 0; i < NBIG; i++)
            pk_test_setf(d ? PK_F64 : PK_F32, data2[d], i, pk_test_uniform(-1, 1));
    }
}

static void free_data(void)
{
    for (int d = 0; d < PK_TEST_NDTYPES; d++) free(data[d]);
    for (int d = 0; d < 2; d++) free(data2[d]);
}

/* Runs every case on ctx and records the results in order. */
static void run_cases(pk_ctx *ctx)
{
    static unsigned char out[(NBIG + 8) * 8];
    char name[96];
    const int64_t ns[] = {1, 33, 16385, 3 * 16384 + 1, 70001, NBIG};
    const int64_t shapes[][3] = {{600, 500, 500},  {100000, 3, 3},    {3, 100000, 100001},
                                 {40, 5000, 5000}, {4, 70001, 70001}, {150000, 2, 2},
                                 {1100, 64, 65},   {200, 1500, 1501}, {2100, 130, 131}};
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++)
        if ((shapes[i][0] - 1) * shapes[i][2] + shapes[i][1] > NBIG) {
            printf("FAIL: shape %zu needs more than NBIG elements\n", i);
            exit(1);
        }
    for (int d = 0; d < PK_TEST_NDTYPES; d++) {
        pk_dtype t = pk_test_dtypes[d];
        for (int o = 0; o < PK_TEST_NOPS; o++) {
            pk_op op = pk_test_ops[o];
            pk_dtype rt = pk_reduce_result_dtype(op, t);
            for (size_t i = 0; i < sizeof ns / sizeof *ns; i++) {
                pk_status s = pk_reduce(ctx, op, t, data[d], ns[i], out);
                PK_CHECK(s == PK_OK, "reduce: %s", pk_ctx_error(ctx));
                snprintf(name, sizeof name, "reduce %s %s n=%lld", pk_op_name(op),
                         pk_dtype_name(t), (long long)ns[i]);
                record(name, op, rt, ns[i], out, pk_test_size(rt));
            }
            for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++)
                for (int axis = 0; axis < 2; axis++) {
                    int64_t rows = shapes[i][0], cols = shapes[i][1], ld = shapes[i][2];
                    pk_status s = pk_reduce_axis(ctx, op, t, data[d], rows, cols, ld, axis, out);
                    PK_CHECK(s == PK_OK, "reduce_axis: %s", pk_ctx_error(ctx));
                    snprintf(name, sizeof name, "reduce_axis %s %s %lldx%lld axis %d",
                             pk_op_name(op), pk_dtype_name(t), (long long)rows,
                             (long long)cols, axis);
                    record(name, op, rt, axis ? cols : rows, out,
                           (size_t)(axis ? rows : cols) * pk_test_size(rt));
                }
        }
    }
    for (int d = 0; d < 2; d++) {
        pk_dtype t = d ? PK_F64 : PK_F32;
        size_t sz = pk_test_size(t);
        for (size_t i = 0; i < sizeof ns / sizeof *ns; i++) {
            pk_status s = pk_dot(ctx, t, ns[i], data[d], data2[d], out);
            PK_CHECK(s == PK_OK, "dot: %s", pk_ctx_error(ctx));
            snprintf(name, sizeof name, "dot %s n=%lld", pk_dtype_name(t), (long long)ns[i]);
            record(name, PK_SUM, t, ns[i], out, sz);
            /* axpy into a copy of the second operand. */
            memcpy(out, data2[d], (size_t)ns[i] * sz);
            double alpha = 0.7303;
            float af = (float)alpha;
            s = pk_axpy(ctx, t, ns[i], d ? (void *)&alpha : (void *)&af, data[d], out);
            PK_CHECK(s == PK_OK, "axpy: %s", pk_ctx_error(ctx));
            snprintf(name, sizeof name, "axpy %s n=%lld", pk_dtype_name(t), (long long)ns[i]);
            record(name, PK_OP_COUNT, t, 1, out, (size_t)ns[i] * sz);
        }
    }
}

static size_t total_bytes(void)
{
    size_t b = 0;
    for (int i = 0; i < nresults; i++) b += results[i].bytes;
    return b;
}

/* Whether value a (the reference path's) and b (a fast path's) agree. */
static bool close_enough(const result *r, const unsigned char *a, const unsigned char *b)
{
    if (!pk_test_is_float(r->rt) || r->op == PK_MIN || r->op == PK_MAX || r->op == PK_OP_COUNT)
        return memcmp(a, b, pk_test_size(r->rt)) == 0 || pk_test_same_float(r->rt, a, b);
    double x = pk_test_getf(r->rt, a, 0), y = pk_test_getf(r->rt, b, 0);
    if (isnan(x) || isnan(y) || isinf(x) || isinf(y)) return pk_test_same_float(r->rt, a, b);
    double m = fmax(fabs(x), fabs(y));
    double tol = 2 * pk_test_ulp(r->rt, m);
    if (r->op == PK_PROD) tol += 2.0 * (double)r->len * DBL_EPSILON * m;
    return fabs(x - y) <= tol;
}

/* Runs this program as a child on one SIMD path; 0 ok, 77 path missing. */
static int run_child(const char *self, const char *isa, const char *file)
{
    char seed[32];
    snprintf(seed, sizeof seed, "%" PRIu64, pk_test_seed);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        setenv("PK_CPU_ISA", isa, 1);
        execl(self, self, "--child", seed, file, (char *)NULL);
        _exit(127);
    }
    int st = 0;
    if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st)) return -1;
    return WEXITSTATUS(st);
}

static int child_main(uint64_t seed, const char *file)
{
    pk_test_seed = seed;
    pk_ctx *ctx = pk_test_cpu_ctx(); /* exits 77 if the path is missing */
    make_data(seed);
    run_cases(ctx);
    FILE *f = fopen(file, "wb");
    if (!f) return 1;
    for (int i = 0; i < nresults; i++) fwrite(results[i].data, 1, results[i].bytes, f);
    fclose(f);
    pk_ctx_destroy(ctx);
    return pk_test_failures ? 1 : 0;
}

static void threads_and_repeats(void)
{
    pk_ctx *ctx = pk_test_cpu_ctx();
    printf("context: %s\n", pk_ctx_describe(ctx));
    pk_ctx_set_threads(ctx, 1);
    run_cases(ctx);
    int base = nresults;
    const int counts[] = {2, 3, 4, 0, 1};
    for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
        PK_CHECK(pk_ctx_set_threads(ctx, counts[c]) == PK_OK, "set_threads");
        run_cases(ctx);
        int differ = 0;
        for (int i = 0; i < base; i++) {
            const result *a = &results[i], *b = &results[base + i];
            if (a->bytes != b->bytes || memcmp(a->data, b->data, a->bytes) != 0) {
                if (differ++ < 5)
                    PK_CHECK(false, "%s: %d threads gave other bits than 1 thread", a->name,
                             counts[c]);
            }
        }
        PK_CHECK(differ == 0, "%d results differ with %d threads", differ, counts[c]);
        for (int i = base; i < nresults; i++) free(results[i].data);
        nresults = base;
    }
    printf("%d results bit-identical over thread counts 1, 2, 3, 4, default, and repeats\n",
           base);
    pk_ctx_destroy(ctx);
}

static void isa_paths(const char *self)
{
    char file[64];
    snprintf(file, sizeof file, "/tmp/pk_test_determinism_%d.bin", (int)getpid());
    const char *isas[] = {"avx512", "avx2", "generic", "reference"};
    size_t want = total_bytes();
    unsigned char *first = NULL;
    const char *first_isa = NULL;
    for (int k = 0; k < 4; k++) {
        int rc = run_child(self, isas[k], file);
        if (rc == PK_TEST_SKIP) {
            printf("%s: this CPU lacks it, skipped\n", isas[k]);
            continue;
        }
        PK_CHECK(rc == 0, "child on %s exited with %d", isas[k], rc);
        if (rc != 0) continue;
        FILE *f = fopen(file, "rb");
        unsigned char *buf = pk_test_alloc(want + 1);
        size_t got = f ? fread(buf, 1, want + 1, f) : 0;
        if (f) fclose(f);
        remove(file);
        PK_CHECK(got == want, "%s wrote %zu bytes, want %zu", isas[k], got, want);
        if (got != want) {
            free(buf);
            continue;
        }
        /* SIMD paths: the same bits as the first path that ran. Reference:
         * close to this process's results. */
        bool ref = strcmp(isas[k], "reference") == 0;
        size_t off = 0;
        int differ = 0;
        for (int i = 0; i < nresults; i++) {
            const result *r = &results[i];
            if (!ref && first && memcmp(first + off, buf + off, r->bytes) != 0 && differ++ < 5)
                PK_CHECK(false, "%s: %s gave other bits than %s", r->name, isas[k], first_isa);
            if (ref) {
                size_t sz = pk_test_size(r->rt);
                for (size_t e = 0; e < r->bytes; e += sz)
                    if (!close_enough(r, buf + off + e, r->data + e) && differ++ < 5)
                        PK_CHECK(false, "%s: value %zu: reference %.17g, fast %.17g", r->name,
                                 e / sz, pk_test_is_float(r->rt) ? pk_test_getf(r->rt, buf + off + e, 0) : 0.0,
                                 pk_test_is_float(r->rt) ? pk_test_getf(r->rt, r->data + e, 0) : 0.0);
            }
            off += r->bytes;
        }
        PK_CHECK(differ == 0, "%d results of %s differ", differ, isas[k]);
        if (differ == 0)
            printf("%s: %d results %s\n", isas[k], nresults,
                   ref ? "agree with the fast path" : first ? "bit-identical" : "(first path)");
        if (!ref && !first) {
            first = buf;
            first_isa = isas[k];
        } else {
            free(buf);
        }
    }
    /* This process's own path must match the SIMD paths too. */
    if (first) {
        size_t off = 0;
        int differ = 0;
        for (int i = 0; i < nresults; i++) {
            if (memcmp(first + off, results[i].data, results[i].bytes) != 0) differ++;
            off += results[i].bytes;
        }
        const char *env = getenv("PK_CPU_ISA");
        if (!env || strcmp(env, "reference") != 0)
            PK_CHECK(differ == 0, "%d results of this process (%s) differ from %s", differ,
                     pk_cpu_isa(), first_isa);
    }
    free(first);
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--child") == 0)
        return child_main(strtoull(argv[2], NULL, 10), argv[3]);
    pk_test_init("test_determinism");
    uint64_t seed = pk_test_seed;
    make_data(seed);
    threads_and_repeats();
    isa_paths("/proc/self/exe");
    free_results();
    free_data();
    return pk_test_finish("test_determinism");
}
