/* The distributed API under mpirun (tests/CMakeLists.txt runs it on 1 to 4
 * ranks): reductions equal the single-process pk_reduce bit for bit and
 * agree on every rank; all-reduce and the row-sharded GEMM against plain
 * references; a rank with bad arguments makes every rank fail, none hangs;
 * a rank that skips a collective or comes late makes the others fail with
 * PK_ERR_COMM within the timeout. `test_dist exit` (test_dist_exit): a
 * rank that exits; the others return PK_ERR_COMM within the timeout.
 * PK_BACKEND (cpu or cuda) picks the backend; every rank draws the same
 * random data (rank 0's seed is broadcast) and keeps its own shard. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "dist_util.h"
#include <time.h>   /* nanosleep */
#include <unistd.h> /* _exit */
#ifdef PK_TEST_CUDA
#include <cuda_runtime_api.h>
#endif

static int rank, nranks;
static pk_dist *dist;
static pk_ctx *solo; /* a plain context: the single-process reference */

/* Shard r's length: uneven, and empty on the last rank when empty_last. */
static int64_t shard_len(int64_t n, int r, int empty_last)
{
    empty_last = empty_last && nranks > 1;
    if (empty_last && r == nranks - 1) return 0;
    int parts = empty_last ? nranks - 1 : nranks;
    int64_t base = n / parts, extra = n % parts;
    int shift = parts >= 2 && base > 100; /* uneven: rank 0 takes 17 of rank 1's */
    return base + (r < extra) + (r == 0 ? 17 * shift : 0) - (r == 1 ? 17 * shift : 0);
}

static void fill(void *x, pk_dtype t, int64_t n, pk_op op)
{
    for (int64_t i = 0; i < n; i++) {
        double v = op == PK_PROD ? pk_test_uniform(0.9, 1.1) : pk_test_uniform(-1e3, 1e3);
        int64_t iv = op == PK_PROD ? 1 + pk_test_below(2) : pk_test_below(2000) - 1000;
        if (pk_test_below(50) == 0) iv = 7, v = 7; /* ties for the arg ops */
        switch (t) {
        case PK_F32: ((float *)x)[i] = (float)v; break;
        case PK_F64: ((double *)x)[i] = v; break;
        case PK_I32: ((int32_t *)x)[i] = (int32_t)iv; break;
        case PK_I64: ((int64_t *)x)[i] = iv; break;
        /* unsigned: shifted to be positive, except for products (small) */
        case PK_U32: ((uint32_t *)x)[i] = (uint32_t)(iv + (op == PK_PROD ? 0 : 1000)); break;
        default: ((uint64_t *)x)[i] = (uint64_t)(iv + (op == PK_PROD ? 0 : 1000)); break;
        }
    }
}

static void test_reduce(int64_t n, int empty_last)
{
    for (int t = 0; t < PK_DTYPE_COUNT; t++)
        for (int op = 0; op < PK_OP_COUNT; op++) {
            size_t size = pk_dtype_size((pk_dtype)t);
            char *x = malloc((size_t)n * size + 1);
            fill(x, (pk_dtype)t, n, (pk_op)op);
            int64_t at = 0, len = 0;
            for (int r = 0; r <= rank; r++) {
                at += len;
                len = shard_len(n, r, empty_last);
            }
            uint64_t got = 0, want = 0;
            pk_status s = pk_dist_reduce(dist, (pk_op)op, (pk_dtype)t, x + at * size, len, &got);
            pk_status w = pk_reduce(solo, (pk_op)op, (pk_dtype)t, x, n, &want);
            PK_CHECK(s == PK_OK && w == PK_OK, "%s %s n %lld: %s / %s",
                     pk_op_name(op), pk_dtype_name(t), (long long)n, pk_status_str(s),
                     pk_ctx_error(pk_dist_ctx(dist)));
            /* Bitwise, except float products: their partials are plain
             * products, regrouped by the shards (see pk.h). */
            int fprod = op == PK_PROD && pk_test_is_float((pk_dtype)t);
            double g = fprod ? pk_test_getf((pk_dtype)t, &got, 0) : 0;
            double wv = fprod ? pk_test_getf((pk_dtype)t, &want, 0) : 0;
            PK_CHECK(got == want || (fprod && fabs(g - wv) <= 2.0 * (double)n * DBL_EPSILON * fabs(wv) +
                                                     pk_test_ulp((pk_dtype)t, wv)),
                     "%s %s n %lld: bits %016llx, single process %016llx",
                     pk_op_name(op), pk_dtype_name(t), (long long)n,
                     (unsigned long long)got, (unsigned long long)want);
            uint64_t r0 = got;
            MPI_Bcast(&r0, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
            PK_CHECK(r0 == got, "%s %s: rank %d differs from rank 0", pk_op_name(op),
                     pk_dtype_name(t), rank);
            free(x);
        }
}

static double value(pk_dtype t, const void *x, int64_t i)
{
    if (pk_test_is_float(t)) return pk_test_getf(t, x, i);
    uint64_t u = pk_test_getu(t, x, i);
    return pk_test_is_signed(t) ? (double)(int64_t)u : (double)u;
}

/* Integer data give exact results in any order; floats are checked to a
 * relative tolerance. */
static void test_allreduce(int64_t n)
{
    static const pk_op ops[] = {PK_SUM, PK_PROD, PK_MIN, PK_MAX};
    for (int t = 0; t < PK_DTYPE_COUNT; t++)
        for (int o = 0; o < 4; o++)
            for (int in_place = 0; in_place < 2; in_place++) {
                size_t size = pk_dtype_size((pk_dtype)t);
                char *all = malloc((size_t)(n * nranks) * size + 1);
                char *recv = malloc((size_t)n * size + 1);
                fill(all, (pk_dtype)t, n * nranks, ops[o] == PK_PROD ? PK_PROD : PK_SUM);
                char *mine = all + (size_t)(n * rank) * size;
                const void *send = in_place ? (memcpy(recv, mine, (size_t)n * size), recv) : mine;
                pk_status s = pk_dist_allreduce(dist, ops[o], (pk_dtype)t, send, recv, n);
                PK_CHECK(s == PK_OK, "allreduce %s %s: %s", pk_op_name(ops[o]),
                         pk_dtype_name(t), pk_ctx_error(pk_dist_ctx(dist)));
                int bad = 0;
                for (int64_t i = 0; i < n && !bad; i++) {
                    double acc = 0, mag = 0;
                    for (int r = 0; r < nranks; r++) {
                        double v = value((pk_dtype)t, all, n * r + i);
                        mag += fabs(v);
                        if (r == 0) acc = v;
                        else if (ops[o] == PK_SUM) acc += v;
                        else if (ops[o] == PK_PROD) acc *= v;
                        else if (ops[o] == PK_MIN) acc = v < acc ? v : acc;
                        else acc = v > acc ? v : acc;
                    }
                    double got = value((pk_dtype)t, recv, i);
                    /* float: the collective and the reference each round once
                     * per rank, each by at most an ulp of the magnitude */
                    double tol = t == PK_F32   ? 2 * nranks * 0x1p-23 * fmax(mag, fabs(acc))
                                 : t == PK_F64 ? 2 * nranks * 0x1p-52 * fmax(mag, fabs(acc))
                                               : 0;
                    bad = !(fabs(got - acc) <= tol);
                    PK_CHECK(!bad, "allreduce %s %s%s [%lld]: %g, want %g", pk_op_name(ops[o]),
                             pk_dtype_name(t), in_place ? " in place" : "", (long long)i, got, acc);
                }
                free(all);
                free(recv);
            }
}

/* C (m x n, sharded by rows) = A B against an f64 reference, for B on
 * every rank and B broadcast from the last rank in several panels. */
static void test_gemm(int64_t m, int64_t n, int64_t k)
{
    float one = 1, zero = 0, probe = 0;
    if (pk_gemm(solo, PK_F32, PK_GEMM_FP32, PK_NO_TRANS, PK_NO_TRANS, 1, 1, 1, &one, &one, 1,
                &one, 1, &zero, &probe, 1) == PK_ERR_UNSUPPORTED) {
        if (rank == 0) printf("test_dist: gemm skipped: pk_gemm is not in this build\n");
        return;
    }
    float *A = malloc((size_t)(m * k) * sizeof *A), *B = malloc((size_t)(k * n) * sizeof *B);
    float *C = malloc((size_t)(m * n) * sizeof *C);
    for (int64_t i = 0; i < m * k; i++) A[i] = (float)pk_test_uniform(-1, 1);
    for (int64_t i = 0; i < k * n; i++) B[i] = (float)pk_test_uniform(-1, 1);
    int64_t at = 0, len = 0;
    for (int r = 0; r <= rank; r++) {
        at += len;
        len = shard_len(m, r, 0);
    }
    for (int mode = 0; mode < 2; mode++) {
        int root = mode ? nranks - 1 : -1;
        for (int64_t i = 0; i < m * n; i++) C[i] = NAN; /* beta = 0: never read */
        const float *Bmine = root < 0 || rank == root ? B : NULL;
        pk_status s = pk_dist_gemm(dist, PK_F32, PK_GEMM_FP32, PK_NO_TRANS, PK_NO_TRANS, len,
                                   n, k, &one, A + at * k, k, Bmine, n, root, &zero,
                                   C + at * n, n);
        PK_CHECK(s == PK_OK, "gemm root %d: %s", root, pk_ctx_error(pk_dist_ctx(dist)));
        int bad = 0;
        for (int64_t i = at; i < at + len && !bad; i++)
            for (int64_t j = 0; j < n && !bad; j++) {
                double ref = 0, mag = 0;
                for (int64_t l = 0; l < k; l++) {
                    ref += (double)A[i * k + l] * B[l * n + j];
                    mag += fabs((double)A[i * k + l] * B[l * n + j]);
                }
                bad = !(fabs(C[i * n + j] - ref) <= 1e-6 * sqrt((double)k) * mag + 1e-30);
                PK_CHECK(!bad, "gemm root %d C[%lld][%lld] = %g, want %g", root, (long long)i,
                         (long long)j, C[i * n + j], ref);
            }
    }
    free(A), free(B), free(C);
}

static double max_cb(double a, double b, void *user)
{
    (void)user;
    return fmax(a, b); /* NaN ignored either side: associative with NaNs */
}

/* A C map reading i (and its user pointer, which dist must pass on). */
static double index_cb(double x, int64_t i, void *user)
{
    return isnan(x) ? 0 : (double)(i % 7) * *(const double *)user;
}

/* User-defined reducers across ranks against pk_reducer_reduce over the
 * whole array on one context: exact combines give the same bits, sums agree
 * to rounding. One rank may hold nothing. */
static void test_reducers(int64_t n, int empty_last)
{
    pk_ctx *ctx = pk_dist_ctx(dist);
    static const struct {
        const char *map, *combine, *final;
        double identity;
        pk_reducer_kind kind;
        pk_dtype acc;
        int exact;
    } cases[] = {
        {"x*x", "a+b", "sqrt(r)", 0, PK_REDUCER_VALUE, PK_F64, 0}, /* 2-norm */
        {"fabs(x)", "fmax(a,b)", NULL, 0, PK_REDUCER_VALUE, PK_F32, 1},  /* L-inf */
        {"fabs(x)", "fmax(a,b)", NULL, 0, PK_REDUCER_ARG, PK_F32, 1},    /* max-abs index */
        {"x", "isnan(b) ? a : b", NULL, NAN, PK_REDUCER_VALUE, PK_F32, 1}, /* last non-NaN */
        {"x", "isnan(a) ? b : a", NULL, NAN, PK_REDUCER_VALUE, PK_F64, 1}, /* first non-NaN */
        /* maps reading i, the index in the whole array (shards counted from
         * 0 gave other values): exact combines, indices exact in f32 */
        {"isnan(x) ? -1e9 : x + 0.5*i", "fmax(a,b)", NULL, NAN, PK_REDUCER_VALUE, PK_F64, 1},
        {"isnan(x) ? -1 : i + 0x1p-3*x", "fmax(a,b)", NULL, NAN, PK_REDUCER_ARG, PK_F32, 1},
        {"i", "a+b", "r*2", 0, PK_REDUCER_VALUE, PK_F64, 1}, /* sums of integers: exact */
        /* an f32 final by the float function, as the single process: logf
         * of this r and log rounded to float differ in the last bit (exact
         * on the CPU; CUDA's logf is its own, within an ulp or two) */
        {"0x1.12af04p-1 + 0*x", "fmax(a,b)", "log(r)", NAN, PK_REDUCER_VALUE, PK_F32, 2},
    };
    float *x = malloc((size_t)n * sizeof *x + 4);
    for (int64_t i = 0; i < n; i++) {
        x[i] = (float)pk_test_uniform(-100, 100);
        if (pk_test_below(20) == 0) x[i] = NAN;
        if (pk_test_below(50) == 0) x[i] = 99.5f; /* ties for ARG */
    }
    int64_t at = 0, len = 0;
    for (int r = 0; r <= rank; r++) {
        at += len;
        len = shard_len(n, r, empty_last);
    }
    int ncases = (int)(sizeof cases / sizeof *cases);
    static const double two = 2;
    for (int c = 0; c <= ncases + 1; c++) {
        pk_reducer_desc desc = {.input = PK_F32};
        if (c < ncases) {
            desc.acc = cases[c].acc, desc.kind = cases[c].kind, desc.map = cases[c].map;
            desc.combine = cases[c].combine, desc.final = cases[c].final;
            desc.identity = cases[c].identity;
        } else { /* C callbacks: the CPU backend only */
            if (pk_ctx_backend(ctx) != PK_BACKEND_CPU) break;
            desc.acc = PK_F64, desc.kind = PK_REDUCER_VALUE, desc.map = "fabs(x)";
            desc.combine_fn = max_cb, desc.identity = 0;
            if (c == ncases + 1) /* a sum of integers: exact */
                desc.map = NULL, desc.map_fn = index_cb, desc.user = (void *)&two,
                desc.combine = "a+b", desc.combine_fn = NULL;
        }
        pk_reducer *red = NULL, *red_solo = NULL;
        pk_status s = pk_reducer_create(ctx, &desc, &red);
        pk_status w = pk_reducer_create(solo, &desc, &red_solo);
        PK_CHECK(s == PK_OK && w == PK_OK, "reducer %d: %s", c, pk_ctx_error(ctx));
        if (s || w) continue;
        union {
            float f;
            double d;
            int64_t i;
            unsigned char bytes[8];
        } got = {.i = 0}, want = {.i = 0};
        s = pk_dist_reducer_reduce(dist, red, x + at, len, &got);
        w = pk_reducer_reduce(solo, red_solo, x, n, &want);
        PK_CHECK(s == PK_OK && w == PK_OK, "reducer %d n %lld: %s / %s", c, (long long)n,
                 pk_ctx_error(ctx), pk_ctx_error(solo));
        int exact = c >= ncases || cases[c].exact, arg = desc.kind == PK_REDUCER_ARG;
        if (exact == 2) exact = pk_ctx_backend(ctx) == PK_BACKEND_CPU;
        double g = arg ? (double)got.i : desc.acc == PK_F32 ? got.f : got.d;
        double wv = arg ? (double)want.i : desc.acc == PK_F32 ? want.f : want.d;
        PK_CHECK(exact ? memcmp(got.bytes, want.bytes, 8) == 0 || (g != g && wv != wv)
                       : fabs(g - wv) <= (desc.acc == PK_F32 ? 3e-7 : 1e-12) * fabs(wv) ||
                             (g != g && wv != wv),
                 "reducer %d (map %s) n %lld: %.17g vs single process %.17g", c,
                 c < ncases ? cases[c].map : "callback", (long long)n, g, wv);
        pk_reducer_destroy(red);
        pk_reducer_destroy(red_solo);
    }
    /* A rank holding a different reducer: every rank fails. */
    pk_reducer_desc a = {.input = PK_F32, .acc = PK_F32, .combine = "a+b"};
    pk_reducer_desc b = a;
    b.combine = "fmax(a,b)";
    pk_reducer *red = NULL;
    if (pk_reducer_create(ctx, rank == nranks - 1 && nranks > 1 ? &b : &a, &red) == PK_OK) {
        float out;
        pk_status s = pk_dist_reducer_reduce(dist, red, x + at, len, &out);
        PK_CHECK(nranks == 1 ? s == PK_OK : s == PK_ERR_ARG,
                 "differing reducers gave %s", pk_status_str(s));
        pk_reducer_destroy(red);
    }
    free(x);
}

/* Bad arguments on one rank only: every rank must fail, and return. */
static void test_agreement(void)
{
    float x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out;
    int bad_rank = nranks - 1;
    pk_status s = pk_dist_reduce(dist, PK_SUM, PK_F32, x, rank == bad_rank ? -1 : 8, &out);
    PK_CHECK(s == PK_ERR_ARG, "rank %d: n = -1 on rank %d gave %s", rank, bad_rank,
             pk_status_str(s));
    if (rank != bad_rank)
        PK_CHECK(strstr(pk_ctx_error(pk_dist_ctx(dist)), "rank") != NULL,
                 "message should name the failing rank: %s", pk_ctx_error(pk_dist_ctx(dist)));
    if (nranks > 1) {
        s = pk_dist_reduce(dist, rank == bad_rank ? PK_MAX : PK_SUM, PK_F32, x, 8, &out);
        PK_CHECK(s == PK_ERR_ARG, "ops differing between ranks gave %s", pk_status_str(s));
    }
    s = pk_dist_reduce(dist, PK_MIN, PK_F32, x, 0, &out);
    PK_CHECK(s == PK_ERR_ARG, "min of an empty distributed array gave %s", pk_status_str(s));
    s = pk_dist_reduce(dist, PK_SUM, PK_F32, x, 0, &out);
    PK_CHECK(s == PK_OK && out == 0, "sum of nothing: %s, %g", pk_status_str(s), out);
    float v[4] = {1, 2, 3, 4};
    if (nranks > 1) {
        s = pk_dist_allreduce(dist, PK_SUM, PK_F32, v, v, rank == bad_rank ? 3 : 4);
        PK_CHECK(s == PK_ERR_ARG, "allreduce with n differing gave %s", pk_status_str(s));
    }
    s = pk_dist_allreduce(dist, PK_ARGMAX, PK_F32, v, v, 4);
    PK_CHECK(s == PK_ERR_ARG, "allreduce argmax gave %s", pk_status_str(s));
    s = pk_dist_allreduce(dist, PK_SUM, PK_F32, v, rank == bad_rank ? v + 1 : v, 2);
    PK_CHECK(s == PK_ERR_ARG, "allreduce overlapping send/recv gave %s", pk_status_str(s));
    float one = 1;
    s = pk_dist_gemm(dist, PK_F32, PK_GEMM_FP32, PK_NO_TRANS, PK_NO_TRANS, 1, 1, 1, &one, v, 1,
                     v, 1, rank == bad_rank ? nranks : 0, &one, x, 1);
    PK_CHECK(s == PK_ERR_ARG, "gemm with b_root out of range on one rank gave %s",
             pk_status_str(s));
    s = pk_dist_gemm(dist, PK_F32, PK_GEMM_FP32, PK_NO_TRANS, PK_TRANS, 1, 1, 1, &one, v, 1,
                     v, 1, 0, &one, x, 1);
    PK_CHECK(s == PK_ERR_ARG, "gemm broadcast with tb = trans gave %s", pk_status_str(s));
    PK_CHECK(pk_dist_reduce(NULL, PK_SUM, PK_F32, x, 8, &out) == PK_ERR_ARG, "NULL dist");
}

/* Each of two bad ranks keeps its own message (it was replaced by "rank 0
 * failed"); the others name the first bad rank. */
static void test_own_messages(void)
{
    if (nranks < 2) return;
    float x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[8];
    int bad = rank == 0 || rank == nranks - 1;
    const char *msg = pk_ctx_error(pk_dist_ctx(dist));
    pk_status s = pk_dist_reduce(dist, PK_SUM, PK_F32, bad ? NULL : x, 8, out);
    PK_CHECK(s == PK_ERR_ARG && strstr(msg, bad ? "x is NULL" : "rank 0 failed"),
             "reduce, ranks 0 and %d bad: %s", nranks - 1, msg);
    s = pk_dist_allreduce(dist, PK_SUM, PK_F32, bad ? NULL : x, out, 8);
    PK_CHECK(s == PK_ERR_ARG && strstr(msg, bad ? "send is NULL" : "rank 0 failed"),
             "allreduce, ranks 0 and %d bad: %s", nranks - 1, msg);
    pk_reducer_desc desc = {.input = PK_F32, .acc = PK_F32, .combine = "a+b"};
    pk_reducer *red = NULL;
    if (pk_reducer_create(pk_dist_ctx(dist), &desc, &red) == PK_OK) {
        s = pk_dist_reducer_reduce(dist, red, bad ? NULL : x, 8, out);
        PK_CHECK(s == PK_ERR_ARG && strstr(msg, bad ? "x is NULL" : "rank 0 failed"),
                 "reducer, ranks 0 and %d bad: %s", nranks - 1, msg);
        pk_reducer_destroy(red);
    }
}

/* pk_dist_gemm with B broadcast: alpha and beta pointing into C are read
 * once (the panels re-read alpha after C was written); k = 0 with ranks
 * other than the root passing B = NULL, ldb = 0 (was refused); the panel
 * height differing between ranks (PK_DIST_PANEL: the broadcasts mismatched
 * and MPI aborted). Every C element is k, then 2k. */
static void test_gemm_bcast_args(void)
{
    enum { M = 3, N = 2, K = 50 };
    float A[M * K], B[K * N], C[M * N], zero = 0, one = 1;
    for (int i = 0; i < M * K; i++) A[i] = 1;
    for (int i = 0; i < K * N; i++) B[i] = 1;
    char old[64] = "";
    const char *env = getenv("PK_DIST_PANEL");
    if (env) snprintf(old, sizeof old, "%s", env);
    setenv("PK_DIST_PANEL", rank % 2 ? "7" : "3", 1);
    for (int i = 0; i < M * N; i++) C[i] = 1; /* alpha = C[0] = 1, beta = C[1] = 1 */
    C[1] = 0; /* beta = 0 */
    int root = nranks - 1;
    const float *Bm = rank == root ? B : NULL;
    pk_status s = pk_dist_gemm(dist, PK_F32, PK_GEMM_FP32, PK_NO_TRANS, PK_NO_TRANS, M, N, K,
                               &C[0], A, K, Bm, N, root, &C[1], C, N);
    int ok = s == PK_OK;
    for (int i = 0; i < M * N; i++) ok = ok && C[i] == K;
    PK_CHECK(ok, "gemm, alpha and beta in C, panels 3/7: %s, C = %g %g %g ... (want %d)",
             pk_status_str(s), C[0], C[1], C[2], K);
    for (int i = 0; i < M * N; i++) C[i] = K;
    s = pk_dist_gemm(dist, PK_F32, PK_GEMM_FP32, PK_NO_TRANS, PK_NO_TRANS, M, N, K, &one, A,
                     K, Bm, N, root, &one, C, N);
    ok = s == PK_OK;
    for (int i = 0; i < M * N; i++) ok = ok && C[i] == 2 * K;
    PK_CHECK(ok, "gemm, panels 3/7, beta 1: %s, C[0] = %g", pk_status_str(s), C[0]);
    if (old[0]) setenv("PK_DIST_PANEL", old, 1);
    else unsetenv("PK_DIST_PANEL");
    s = pk_dist_gemm(dist, PK_F32, PK_GEMM_FP32, PK_NO_TRANS, PK_NO_TRANS, M, N, 0, &one, A, 1,
                     Bm, rank == root ? N : 0, root, &zero, C, N);
    PK_CHECK(s == PK_OK && C[0] == 0, "gemm k = 0, B = NULL and ldb = 0 off the root: %s (%s)",
             pk_status_str(s), pk_ctx_error(pk_dist_ctx(dist)));
    /* in place on some ranks only: MPI wants all or none */
    double v[3] = {1, 2, 3}, r[3];
    s = pk_dist_allreduce(dist, PK_SUM, PK_F64, v, rank % 2 ? v : r, 3);
    double *res = rank % 2 ? v : r;
    PK_CHECK(s == PK_OK && res[0] == nranks && res[2] == 3 * nranks,
             "allreduce in place on odd ranks: %s, %g", pk_status_str(s), res[0]);
}

#ifdef PK_TEST_CUDA
/* The last rank has no device memory left to stage a host all-reduce: every
 * rank fails and returns (the others used to wait in ncclAllReduce for
 * ever), and the next call works. */
static void test_staging_oom(void)
{
    int ndev = 0;
    if (pk_ctx_backend(pk_dist_ctx(dist)) != PK_BACKEND_CUDA || nranks < 2 ||
        cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < nranks)
        return; /* the starved GPU must be the last rank's alone */
    const int64_t n = (int64_t)64 << 20; /* 256 MiB of f32 to stage */
    float *x = pk_test_alloc((size_t)n * sizeof *x);
    for (int64_t i = 0; i < n; i++) x[i] = 1.0f;
    int starved = rank == nranks - 1, held = 0;
    enum { MAX_HELD = 1 << 14 };
    void **hold = pk_test_alloc(MAX_HELD * sizeof *hold);
    if (starved) {
        int dev = rank % ndev; /* one node: pk_dist_create's choice */
        cudaMemPool_t pool;
        (void)cudaSetDevice(dev);
        if (cudaDeviceGetDefaultMemPool(&pool, dev) == cudaSuccess) (void)cudaMemPoolTrimTo(pool, 0);
        for (size_t chunk = (size_t)1 << 30; chunk >= ((size_t)1 << 20); chunk /= 2)
            while (held < MAX_HELD && cudaMalloc(&hold[held], chunk) == cudaSuccess) held++;
        (void)cudaGetLastError();
    }
    const char *msg = pk_ctx_error(pk_dist_ctx(dist));
    pk_status s = pk_dist_allreduce(dist, PK_SUM, PK_F32, x, x, n);
    PK_CHECK(starved ? s == PK_ERR_NOMEM && strstr(msg, "stage")
                     : s != PK_OK && strstr(msg, "failed"),
             "allreduce, rank %d out of device memory (%d blocks held): %s (%s)",
             nranks - 1, held, pk_status_str(s), msg);
    for (int i = 0; i < held; i++) (void)cudaFree(hold[i]);
    free(hold);
    s = pk_dist_allreduce(dist, PK_SUM, PK_F32, x, x, n);
    PK_CHECK(s == PK_OK && x[0] == (float)nranks && x[n - 1] == (float)nranks,
             "allreduce after the memory came back: %s, %g (%s)", pk_status_str(s), x[0], msg);
    free(x);
}
#endif

/* ---- Faults: a rank that does not come ----------------------------------- */

/* Seconds a failing call may take past its timeout (oversubscribed ranks
 * under ASan wait to be scheduled); the point is that it returns. */
#define FAULT_SLACK 5.0

/* A fresh pk_dist whose collective steps wait at most `limit` seconds, set
 * through PK_DIST_TIMEOUT when by_env, else pk_dist_set_timeout. */
static pk_dist *fault_dist(pk_backend b, double limit, int by_env)
{
    char text[32], old[64] = "";
    const char *env = getenv("PK_DIST_TIMEOUT");
    if (env) snprintf(old, sizeof old, "%s", env);
    snprintf(text, sizeof text, "%g", limit);
    if (by_env) setenv("PK_DIST_TIMEOUT", text, 1);
    pk_dist *fd = NULL;
    pk_status s = pk_dist_create(&fd, b, NULL);
    if (old[0]) setenv("PK_DIST_TIMEOUT", old, 1);
    else unsetenv("PK_DIST_TIMEOUT");
    PK_CHECK(s == PK_OK, "pk_dist_create for a fault: %s", pk_last_create_error());
    if (s) return NULL;
    if (!by_env) {
        s = pk_dist_set_timeout(fd, limit);
        PK_CHECK(s == PK_OK, "pk_dist_set_timeout(%g): %s", limit, pk_status_str(s));
    }
    return fd;
}

/* Collective c on fd (0 reduce, 1 allreduce, 2 gemm with B broadcast from
 * rank 0, 3 user-defined reducer): its status; *took, its seconds. */
static pk_status fault_call(pk_dist *fd, int c, double *took)
{
    float x[64], out[64], one = 1, zero = 0;
    for (int i = 0; i < 64; i++) x[i] = 1;
    pk_reducer *red = NULL;
    pk_reducer_desc desc = {.input = PK_F32, .acc = PK_F32, .combine = "a+b"};
    if (c == 3 && pk_reducer_create(pk_dist_ctx(fd), &desc, &red) != PK_OK) red = NULL;
    pk_status s = PK_ERR_INTERNAL;
    double t0 = MPI_Wtime();
    switch (c) {
    case 0: s = pk_dist_reduce(fd, PK_SUM, PK_F32, x, 64, out); break;
    case 1: s = pk_dist_allreduce(fd, PK_SUM, PK_F32, x, out, 64); break;
    case 2: /* C (2 x 4) = A (2 x 8) B (8 x 4) */
        s = pk_dist_gemm(fd, PK_F32, PK_GEMM_FP32, PK_NO_TRANS, PK_NO_TRANS, 2, 4, 8, &one, x,
                         8, x + 16, 4, 0, &zero, out, 4);
        break;
    default: s = pk_dist_reducer_reduce(fd, red, x, 64, out); break;
    }
    *took = MPI_Wtime() - t0;
    pk_reducer_destroy(red);
    return s;
}

/* The last rank skips each kind of collective (c < 4) or comes late, after
 * three timeouts (c = 4). The others' call returns PK_ERR_COMM within the
 * timeout (plus slack), naming the step and the time; the late rank's too
 * (nobody is left to meet it). A later call on the failed handle returns
 * at once with that message; pk_dist_destroy returns at once. */
static void test_skip_faults(pk_backend b)
{
    if (nranks < 2) return;
    const double limit = 0.5;
    const int odd = nranks - 1;
    static const char *names[] = {"reduce", "allreduce", "gemm", "reducer", "late reduce"};
    for (int c = 0; c < 5; c++) {
        pk_dist *fd = fault_dist(b, limit, c == 0);
        if (!fd) continue;
        const char *msg = pk_ctx_error(pk_dist_ctx(fd));
        if (rank != odd || c == 4) {
            if (rank == odd) {
                struct timespec ts = {1, 500000000}; /* 3 timeouts */
                nanosleep(&ts, NULL);
            }
            double took = 0;
            pk_status s = fault_call(fd, c == 4 ? 0 : c, &took);
            PK_CHECK(s == PK_ERR_COMM && took >= limit && took < limit + FAULT_SLACK &&
                         strstr(msg, "timed out after") && strstr(msg, "MPI_I"),
                     "%s, rank %d %s: rank %d got %s after %.3f s: %s", names[c], odd,
                     c == 4 ? "late" : "absent", rank, pk_status_str(s), took, msg);
            s = fault_call(fd, 1, &took);
            PK_CHECK(s == PK_ERR_COMM && took < 1 && strstr(msg, "failed before") &&
                         strstr(msg, "timed out after"),
                     "%s: the next call on the failed pk_dist: %s after %.3f s: %s", names[c],
                     pk_status_str(s), took, msg);
        }
        /* The rank that skipped holds a healthy handle: on CUDA its NCCL
         * finalize may wait its timeout for peers that aborted, then abort. */
        double t0 = MPI_Wtime();
        pk_dist_destroy(fd);
        PK_CHECK(MPI_Wtime() - t0 < limit + FAULT_SLACK, "%s: pk_dist_destroy took %.3f s",
                 names[c], MPI_Wtime() - t0);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    /* Bad timeouts: refused, the handle unchanged. */
    pk_dist *fd = fault_dist(b, 0, 0); /* 0: for ever */
    if (fd) {
        PK_CHECK(pk_dist_set_timeout(fd, -1) == PK_ERR_ARG &&
                     pk_dist_set_timeout(fd, NAN) == PK_ERR_ARG &&
                     pk_dist_set_timeout(fd, INFINITY) == PK_ERR_ARG &&
                     pk_dist_set_timeout(NULL, 1) == PK_ERR_ARG,
                 "bad timeouts accepted");
        double took = 0;
        pk_status s = fault_call(fd, 1, &took);
        PK_CHECK(s == PK_OK, "allreduce with no timeout: %s", pk_ctx_error(pk_dist_ctx(fd)));
        pk_dist_destroy(fd);
    }
    /* A malformed PK_DIST_TIMEOUT on one rank: creation fails on every rank. */
    if (rank == odd) setenv("PK_DIST_TIMEOUT", "soon", 1);
    fd = (pk_dist *)&rank;
    pk_status s = pk_dist_create(&fd, b, NULL);
    if (rank == odd) unsetenv("PK_DIST_TIMEOUT");
    PK_CHECK(s == PK_ERR_ARG && fd == NULL &&
                 strstr(pk_last_create_error(), rank == odd ? "PK_DIST_TIMEOUT=soon" : "failed"),
             "PK_DIST_TIMEOUT=soon on rank %d: %s: %s", odd, pk_status_str(s),
             pk_last_create_error());
}

/* `test_dist exit`: the last rank exits (status 3: mpirun must be told not
 * to end the job, tests/CMakeLists.txt) before an all-reduce; the others
 * return PK_ERR_COMM within the timeout, then agree among themselves that
 * all went well. Prints "test_dist exit: passed" on success (mpirun's
 * status says nothing: it may report the ranks that left without
 * MPI_Finalize). */
static int exit_fault_main(pk_backend b)
{
    const double limit = 1;
    int dying = rank == nranks - 1 && nranks > 1;
    MPI_Comm alive; /* made before the death */
    MPI_Comm_split(MPI_COMM_WORLD, dying, rank, &alive);
    pk_dist *fd = fault_dist(b, limit, 0);
    if (dying) {
        fflush(stdout);
        _exit(3);
    }
    if (fd) {
        double took = 0;
        pk_status s = fault_call(fd, 1, &took);
        const char *msg = pk_ctx_error(pk_dist_ctx(fd));
        PK_CHECK(nranks == 1 ? s == PK_OK
                             : s == PK_ERR_COMM && took < limit + FAULT_SLACK &&
                                   (strstr(msg, "timed out after") || strstr(msg, "failed")),
                 "rank %d exited: rank %d got %s after %.3f s: %s", nranks - 1, rank,
                 pk_status_str(s), took, msg);
        if (rank == 0) printf("test_dist exit: rank 0: %s after %.3f s: %s\n",
                              pk_status_str(s), took, msg);
        pk_dist_destroy(fd);
    }
    int fails = pk_test_failures, all = 0;
    MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, alive);
    if (rank == 0 && !all)
        printf("test_dist exit: passed (%d ranks returned)\n", nranks - 1);
    /* No MPI_Finalize: with a rank dead, Open MPI 4.1's finalize waits for
     * it at times (its PMIx fence), for ever. */
    fflush(stdout);
    _exit(all ? 1 : 0);
}

#ifdef PK_TEST_CUDA
/* Holds a stream for *(double *)seconds (a host function on it). */
static void CUDART_CB stall(void *seconds)
{
    double sec = *(const double *)seconds;
    struct timespec ts = {(time_t)sec, (long)((sec - (double)(time_t)sec) * 1e9)};
    nanosleep(&ts, NULL);
}

/* NCCL's own wait: every rank passes the agreement (MPI) and enqueues an
 * all-reduce of device memory, but the last rank's stream is held for 2 s
 * by a host function, so the others' NCCL kernels wait past their 1 s
 * timeout. The next call, which waits for that all-reduce, returns
 * PK_ERR_COMM naming ncclAllReduce, with NCCL aborted; the last rank
 * (timeout 6 s) fails too when its kernel finds its peers gone. Every
 * rank returns, destroy returns, and the aborted kernels leave the GPU. */
static void test_nccl_stall(void)
{
    int ndev = 0;
    if (pk_ctx_backend(pk_dist_ctx(dist)) != PK_BACKEND_CUDA || nranks < 2 ||
        cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < nranks)
        return; /* NCCL wants a GPU per rank */
    const int odd = nranks - 1;
    const double limit = rank == odd ? 6 : 1;
    static const double hold = 2;
    pk_dist *fd = fault_dist(PK_BACKEND_CUDA, limit, 0);
    if (!fd) return;
    pk_ctx *ctx = pk_dist_ctx(fd);
    const int64_t n = 1 << 20;
    float *x = NULL, out = 0;
    cudaStream_t held = NULL;
    (void)cudaSetDevice(rank % ndev); /* one node: pk_dist_create's choice */
    int ok = cudaMalloc((void **)&x, (size_t)n * sizeof *x) == cudaSuccess &&
             cudaMemset(x, 0, (size_t)n * sizeof *x) == cudaSuccess &&
             cudaDeviceSynchronize() == cudaSuccess;
    /* every rank on a stream of its own, to see it drain after the abort */
    if (ok)
        ok = cudaStreamCreateWithFlags(&held, cudaStreamNonBlocking) == cudaSuccess &&
             pk_ctx_set_stream(ctx, held) == PK_OK &&
             (rank != odd || cudaLaunchHostFunc(held, stall, (void *)&hold) == cudaSuccess);
    PK_CHECK(ok, "nccl stall: setting up on rank %d failed", rank);
    MPI_Barrier(MPI_COMM_WORLD);
    if (ok) {
        const char *msg = pk_ctx_error(ctx);
        double t0 = MPI_Wtime();
        pk_status s = pk_dist_allreduce(fd, PK_SUM, PK_F32, x, x, n); /* left running */
        PK_CHECK(s == PK_OK, "nccl stall: the all-reduce's enqueue: %s (%s)", pk_status_str(s), msg);
        s = pk_dist_reduce(fd, PK_SUM, PK_F32, x, n, &out);
        double took = MPI_Wtime() - t0;
        PK_CHECK(s == PK_ERR_COMM && strstr(msg, "ncclAllReduce") &&
                     (strstr(msg, "timed out after") || strstr(msg, "failed")) &&
                     took < limit + hold + FAULT_SLACK,
                 "nccl stall, rank %d held: rank %d got %s after %.3f s: %s", odd, rank,
                 pk_status_str(s), took, msg);
        printf("test_dist: nccl stall: rank %d: %s after %.3f s: %s\n", rank,
               pk_status_str(s), took, msg);
    }
    double t0 = MPI_Wtime();
    pk_dist_destroy(fd);
    PK_CHECK(MPI_Wtime() - t0 < FAULT_SLACK, "nccl stall: pk_dist_destroy took %.3f s",
             MPI_Wtime() - t0);
    /* The aborted kernels must leave: poll, a sync could wait for ever. */
    int idle = 0;
    for (int i = 0; i < 200 && held && !idle; i++) {
        idle = cudaStreamQuery(held) == cudaSuccess;
        if (!idle) {
            struct timespec ts = {0, 50000000};
            nanosleep(&ts, NULL);
        }
    }
    PK_CHECK(idle || !held, "nccl stall: rank %d's stream still busy 10 s after the abort",
             rank);
    if (idle) (void)cudaFree(x); /* else leaked: cudaFree would wait */
    if (held) (void)cudaStreamDestroy(held);
    (void)cudaGetLastError();
    MPI_Barrier(MPI_COMM_WORLD);
}
#endif

/* Communicators pk cannot use are refused on every rank, with no abort
 * (MPI_COMM_NULL called MPI's fatal handler) and no crash (an
 * intercommunicator crashed in MPI_Comm_split_type). */
static void test_create_refusals(void)
{
    pk_dist *d = (pk_dist *)&rank;
    MPI_Comm null_comm = MPI_COMM_NULL;
    pk_status s = pk_dist_create(&d, PK_BACKEND_CPU, &null_comm);
    PK_CHECK(s == PK_ERR_ARG && d == NULL, "MPI_COMM_NULL: %s", pk_status_str(s));
    if (nranks < 2) return;
    MPI_Comm half, inter;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 7, &inter);
    d = (pk_dist *)&rank;
    s = pk_dist_create(&d, PK_BACKEND_CPU, &inter);
    PK_CHECK(s == PK_ERR_ARG && d == NULL, "intercommunicator: %s", pk_status_str(s));
    if (!s) pk_dist_destroy(d);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
}

int main(int argc, char **argv)
{
    /* Before MPI_Init: refused, and *d is NULL as on every failure. */
    pk_dist *early = (pk_dist *)&rank;
    pk_status se = pk_dist_create(&early, PK_BACKEND_CPU, NULL);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    pk_test_init("test_dist");
    MPI_Bcast(&pk_test_seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    pk_test_state = pk_test_seed;
    PK_CHECK(se == PK_ERR_ARG && early == NULL, "create before MPI_Init: %s, d %p",
             pk_status_str(se), (void *)early);
    if (rank == 0) printf("test_dist: %d ranks, seed %llu\n", nranks,
                          (unsigned long long)pk_test_seed);

    pk_backend b = dist_test_backend();
    if (argc > 1 && strcmp(argv[1], "exit") == 0) return exit_fault_main(b);
    int rc0 = dist_test_open("test_dist", rank, b, &dist);
    if (rc0 >= 0) return rc0;
    PK_CHECK(pk_dist_rank(dist) == rank && pk_dist_size(dist) == nranks, "rank/size");
    pk_ctx_create(&solo, pk_ctx_backend(pk_dist_ctx(dist)), 0);

    test_agreement();
    test_own_messages();
    test_gemm_bcast_args();
    test_create_refusals();
    test_skip_faults(pk_ctx_backend(pk_dist_ctx(dist)));
    static const int64_t sizes[] = {1, 2, 5, 1000, 16384 * 3 + 5, 1 << 20};
    for (int i = 0; i < 6; i++) {
        if (sizes[i] >= nranks) test_reduce(sizes[i], 0);
        if (sizes[i] >= nranks) test_reduce(sizes[i], 1);
    }
    test_allreduce(1);
    test_allreduce(1000);
    test_reducers(1000, 0);
    test_reducers(100003, 1);
    test_gemm(37, 29, 300);
    test_gemm(100, 70, 1000);
#ifdef PK_TEST_CUDA
    test_staging_oom();
    test_nccl_stall();
#endif

    pk_ctx_destroy(solo);
    pk_dist_destroy(dist);
    int fails = pk_test_failures, all = 0;
    MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int rc = pk_test_finish("test_dist");
    MPI_Finalize();
    return all ? 1 : rc;
}
