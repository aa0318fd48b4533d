/* `mpirun -np N pk bench dist`: the distributed kernels, in the manner of
 * nccl-tests. All-reduce rows (size, time, algbw, busbw) with the bare
 * collective as the peer (MPI_Allreduce on the CPU, ncclAllReduce on CUDA,
 * on a communicator of its own), timed in turns in the same run; then the
 * scaling rows of the distributed sum and GEMM against one rank doing the
 * whole job (on the CPU with all the node's cores while the other ranks
 * sleep). A time is the median over iterations of the slowest rank's time. */
#include "cli.h"

#include "pk.h"

#include <stdio.h>
#include <string.h>

static const char usage[] =
    "usage: mpirun -np N pk bench dist [--backend cpu|cuda|auto] [--quick]\n"
    "\n"
    "The distributed kernels, one process per GPU (or CPU rank): all-reduce\n"
    "rows (size, time, algbw, busbw) against the bare collective on a\n"
    "communicator of its own (MPI_Allreduce on the CPU, ncclAllReduce on CUDA),\n"
    "then the scaling of the distributed sum and GEMM against one rank doing\n"
    "the whole job. A time is the median of the slowest rank's times.\n"
    "\n"
    "options:\n"
    "  --backend B    cpu, cuda or auto (default: auto: PK_BACKEND=cpu|cuda|auto\n"
    "                 when set, else CUDA when a device exists)\n"
    "  --quick        fewer and smaller sizes; finishes in seconds\n"
    "  -h, --help     this text\n"
    "\n"
    "exit status: 0 success, 1 failure (failed check, no MPI in this build),\n"
    "2 usage error\n";

/* from: where backend came from, for messages (pk_backend_choice). */
static int run_dist(int argc, char **argv, pk_backend backend, const char *from, int quick);

int pk_cmd_bench_dist(int argc, char **argv, pk_cli_mode mode)
{
    int quick = 0, seen = 0, given = 0;
    pk_backend backend = PK_BACKEND_AUTO;
    /* Every argument of `pk bench`, checked here before MPI starts: --help
     * and usage errors must not depend on the build having MPI. */
    for (int i = 1; i < argc; i++) {
        const char *v;
        int missing = 0;
        if (!seen && !strcmp(argv[i], "dist")) seen = 1;
        else if (pk_is_help(argv[i])) {
            fputs(usage, stdout);
            return 0;
        } else if (!strcmp(argv[i], "--quick")) quick = 1;
        else if ((v = pk_opt_value("--backend", argc, argv, &i, &missing))) {
            if (pk_backend_parse(v, &backend) != PK_OK)
                return pk_usage_error("bench dist", "--backend: expected cpu, cuda or auto, "
                                      "got '%s'", v);
            given = 1;
        } else if (missing)
            return pk_usage_error("bench dist", "%s needs a value", argv[i]);
        else
            return pk_usage_error("bench dist", "takes only --backend and --quick, got '%s'",
                                  argv[i]);
    }
    const char *from;
    int rc = pk_backend_choice("bench dist", &backend, given, &from);
    if (rc || mode == PK_CLI_CHECK) return rc;
    return run_dist(argc, argv, backend, from, quick);
}

#ifndef PK_HAVE_MPI
static int run_dist(int argc, char **argv, pk_backend backend, const char *from, int quick)
{
    (void)argc, (void)argv, (void)backend, (void)from, (void)quick;
    fputs("pk bench dist: this build of pk has no MPI (install an MPI such as "
          "Open MPI and configure again)\n", stderr);
    return PK_EXIT_FAIL;
}
#else

#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#ifdef PK_HAVE_NCCL
#include <cuda_runtime_api.h>
#include <nccl.h>
#endif

static int rank, nranks, gpu;
static pk_dist *dist;

#ifdef PK_HAVE_NCCL
static ncclComm_t peer_comm;
#endif

static void *alloc_buf(size_t bytes)
{
#ifdef PK_HAVE_NCCL
    if (gpu) {
        void *p = NULL;
        return cudaMalloc(&p, bytes) == cudaSuccess ? p : NULL;
    }
#endif
    return malloc(bytes);
}

static void free_buf(void *p)
{
#ifdef PK_HAVE_NCCL
    if (gpu) {
        cudaFree(p);
        return;
    }
#endif
    free(p);
}

/* Random f32 in [-1, 1) (host), copied to the buffer's memory. */
static void fill_buf(float *dst, int64_t n, uint64_t seed)
{
    float *h = gpu ? malloc((size_t)n * sizeof *h) : dst;
    uint64_t z = seed;
    for (int64_t i = 0; i < n; i++) {
        z = z * 6364136223846793005ull + 1442695040888963407ull;
        h[i] = (float)((double)(z >> 40) * 0x1p-23 - 1.0);
    }
#ifdef PK_HAVE_NCCL
    if (gpu) {
        cudaMemcpy(dst, h, (size_t)n * sizeof *h, cudaMemcpyHostToDevice);
        free(h);
    }
#endif
}

/* bytes from buffer memory to the host; a column (stride elements apart)
 * when stride > 1. */
static void get_floats(float *dst, const float *src, int64_t n, int64_t stride)
{
#ifdef PK_HAVE_NCCL
    if (gpu) {
        if (cudaMemcpy2D(dst, sizeof *dst, src, (size_t)stride * sizeof *src, sizeof *dst,
                         (size_t)n, cudaMemcpyDeviceToHost) != cudaSuccess)
            for (int64_t i = 0; i < n; i++) dst[i] = NAN; /* fails the check */
        return;
    }
#endif
    for (int64_t i = 0; i < n; i++) dst[i] = src[i * stride];
}

/* 1 when some of C's rows [r0, r1) (N x N, A x B, all N x N) are wrong:
 * 8 rows x 8 columns against an f64 dot, within 16 sqrt(N) u sum |a||b|. */
static int gemm_rows_wrong(const float *A, const float *B, const float *C, int64_t N,
                           int64_t r0, int64_t r1)
{
    if (r1 <= r0) return 0;
    float *a = malloc((size_t)N * sizeof *a), *b = malloc((size_t)N * sizeof *b), c;
    int bad = !a || !b;
    for (int ci = 0; ci < 8 && !bad; ci++) {
        int64_t j = (N - 1) * ci / 7;
        get_floats(b, B + j, N, N);
        for (int ri = 0; ri < 8 && !bad; ri++) {
            int64_t i = r0 + (r1 - 1 - r0) * ri / 7;
            get_floats(a, A + i * N, N, 1);
            get_floats(&c, C + i * N + j, 1, 1);
            double ref = 0, mag = 0;
            for (int64_t p = 0; p < N; p++)
                ref += (double)a[p] * b[p], mag += fabs((double)a[p] * b[p]);
            bad = !(fabs(c - ref) <= 16 * sqrt((double)N) * 0x1p-24 * mag);
        }
    }
    free(a), free(b);
    return bad;
}

static void device_sync(void)
{
#ifdef PK_HAVE_NCCL
    if (gpu) cudaDeviceSynchronize();
#endif
}

/* 1 when ok holds on every rank: a rank that cannot allocate must not leave
 * the others waiting in the next collective. */
static int all_ranks(int ok)
{
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef int (*op_fn)(void *arg);

/* Time fns in turns, iters times each after warm-up; medians in med[]. */
static void time_turns(op_fn *fns, void **args, int n, int iters, double *med)
{
    double *ts = malloc((size_t)(n * iters) * sizeof *ts);
    for (int f = 0; f < n; f++) {
        fns[f](args[f]);
        device_sync();
    }
    for (int it = 0; it < iters; it++)
        for (int f = 0; f < n; f++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            fns[f](args[f]);
            device_sync();
            double t = MPI_Wtime() - t0, worst;
            MPI_Allreduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            ts[f * iters + it] = worst;
        }
    for (int f = 0; f < n; f++) {
        qsort(ts + f * iters, (size_t)iters, sizeof *ts, cmp_double);
        med[f] = ts[f * iters + iters / 2];
    }
    free(ts);
}

/* ---- all-reduce ---------------------------------------------------------- */

typedef struct ar_arg {
    float *send, *recv;
    int64_t n;
    int failed;
} ar_arg;

static int run_pk_allreduce(void *p)
{
    ar_arg *a = p;
    a->failed |= pk_dist_allreduce(dist, PK_SUM, PK_F32, a->send, a->recv, a->n) != PK_OK;
    return a->failed;
}

static int run_peer_allreduce(void *p)
{
    ar_arg *a = p;
#ifdef PK_HAVE_NCCL
    if (gpu) {
        cudaStream_t st = (cudaStream_t)0;
        a->failed |= ncclAllReduce(a->send, a->recv, (size_t)a->n, ncclFloat32, ncclSum,
                                   peer_comm, st) != ncclSuccess;
        return a->failed;
    }
#endif
    a->failed |= MPI_Allreduce(a->send, a->recv, (int)a->n, MPI_FLOAT, MPI_SUM,
                               MPI_COMM_WORLD) != MPI_SUCCESS;
    return a->failed;
}

static int bench_allreduce(int quick)
{
    static const int64_t cpu_bytes[] = {1 << 16, 1 << 20, 1 << 24, 1 << 26};
    static const int64_t gpu_bytes[] = {1 << 20, 1 << 24, 1 << 28, 1 << 30, (int64_t)1 << 32};
    const int64_t *sizes = gpu ? gpu_bytes : cpu_bytes;
    int count = gpu ? (quick ? 3 : 5) : (quick ? 2 : 4);
    int failed = 0;
    if (rank == 0)
        printf("all-reduce, f32 sum; peer: %s\n%12s %12s %10s %8s %8s  %10s %8s %6s  %s\n",
               gpu ? "ncclAllReduce" : "MPI_Allreduce", "size (B)", "count", "pk time",
               "algbw", "busbw", "peer time", "busbw", "ratio", "check");
    for (int i = 0; i < count; i++) {
        int64_t n = sizes[i] / 4;
        ar_arg a = {alloc_buf((size_t)sizes[i]), alloc_buf((size_t)sizes[i]), n, 0};
        ar_arg b = {a.send, alloc_buf((size_t)sizes[i]), n, 0};
        if (!all_ranks(a.send && a.recv && b.recv)) {
            if (rank == 0) printf("%12lld: out of memory (on some rank)\n", (long long)sizes[i]);
            free_buf(a.send), free_buf(a.recv), free_buf(b.recv);
            failed = 1;
            break;
        }
        fill_buf(a.send, n, 1234 + (uint64_t)rank);
        op_fn fns[2] = {run_pk_allreduce, run_peer_allreduce};
        void *args[2] = {&a, &b};
        double med[2];
        int iters = sizes[i] >= (1 << 28) ? 10 : quick ? 10 : 30;
        time_turns(fns, args, 2, iters, med);
        /* pk's sum must equal the peer's bit for bit on a sample. */
        float pa[64], pb[64];
        int64_t m = n < 64 ? n : 64;
#ifdef PK_HAVE_NCCL
        if (gpu) {
            cudaMemcpy(pa, a.recv, (size_t)m * 4, cudaMemcpyDeviceToHost);
            cudaMemcpy(pb, b.recv, (size_t)m * 4, cudaMemcpyDeviceToHost);
        } else
#endif
        {
            memcpy(pa, a.recv, (size_t)m * 4);
            memcpy(pb, b.recv, (size_t)m * 4);
        }
        int bad = a.failed || b.failed || memcmp(pa, pb, (size_t)m * 4) != 0, anybad;
        MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        failed |= anybad;
        double alg = (double)sizes[i] / med[0] * 1e-9, palg = (double)sizes[i] / med[1] * 1e-9;
        double busf = nranks > 1 ? 2.0 * (nranks - 1) / nranks : 1.0;
        if (rank == 0)
            printf("%12lld %12lld %8.1f us %8.2f %8.2f  %7.1f us %8.2f %6.3f  %s\n",
                   (long long)sizes[i], (long long)n, med[0] * 1e6, alg, alg * busf,
                   med[1] * 1e6, palg * busf, med[1] / med[0], anybad ? "FAILED" : "ok");
        free_buf(a.send), free_buf(a.recv), free_buf(b.recv);
    }
    return failed;
}

/* ---- scaling: the distributed sum and GEMM against one rank ----------- */

typedef struct scale_arg {
    pk_ctx *solo;
    const float *x, *A, *B;
    float *C, *out;
    int64_t n, m, k;
    int b_root, failed;
} scale_arg;

static int run_dist_sum(void *p)
{
    scale_arg *a = p;
    a->failed |= pk_dist_reduce(dist, PK_SUM, PK_F32, a->x, a->n, a->out) != PK_OK;
    return a->failed;
}

static int run_dist_gemm(void *p)
{
    scale_arg *a = p;
    float one = 1, zero = 0;
    a->failed |= pk_dist_gemm(dist, PK_F32, PK_GEMM_FP32, PK_NO_TRANS, PK_NO_TRANS, a->m,
                              a->n, a->k, &one, a->A, a->k, a->B, a->n, a->b_root, &zero,
                              a->C, a->n) != PK_OK;
    return a->failed;
}

/* One rank does the whole job; the others sleep (not spin) meanwhile. */
static double time_solo(int (*fn)(scale_arg *), scale_arg *a, int iters)
{
    double *ts = malloc((size_t)iters * sizeof *ts), med = 0;
    if (rank == 0) {
        fn(a);
        device_sync();
        for (int i = 0; i < iters; i++) {
            double t0 = MPI_Wtime();
            fn(a);
            device_sync();
            ts[i] = MPI_Wtime() - t0;
        }
        qsort(ts, (size_t)iters, sizeof *ts, cmp_double);
        med = ts[iters / 2];
    }
    MPI_Request req;
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    for (int done = 0; !done;) {
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (!done) nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    MPI_Bcast(&med, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    free(ts);
    return med;
}

static int solo_sum(scale_arg *a)
{
    return a->failed |= pk_reduce(a->solo, PK_SUM, PK_F32, a->x, a->n, a->out) != PK_OK;
}

static int solo_gemm(scale_arg *a)
{
    float one = 1, zero = 0;
    return a->failed |= pk_gemm(a->solo, PK_F32, PK_GEMM_FP32, PK_NO_TRANS, PK_NO_TRANS,
                                a->m, a->n, a->k, &one, a->A, a->k, a->B, a->n, &zero,
                                a->C, a->n) != PK_OK;
}

static void print_scale(const char *what, const char *shape, double t, double solo,
                        double ideal, int bad)
{
    if (rank == 0)
        printf("%-14s %-24s %5d %10.3f ms %10.3f ms %8.2fx %6.2fx  %s\n", what, shape, nranks,
               t * 1e3, solo * 1e3, solo / t * ideal, gpu ? (double)nranks : 1.0,
               bad ? "FAILED" : "ok");
}

static int bench_scaling(int quick, pk_ctx *solo)
{
    int failed = 0;
    if (rank == 0)
        printf("\nscaling against one rank; speedup = throughput ratio (CUDA: one GPU per rank, "
               "ideal = ranks; CPU: the same cores, ideal = 1)\n"
               "%-14s %-24s %5s %13s %13s %9s %7s  %s\n", "kernel", "shape", "ranks",
               "time", "1-rank time", "speedup", "ideal", "check");
    /* Sum: on CUDA one shard of 2^30 per GPU against one GPU summing one
     * shard (throughput scaled); on the CPU one total split across ranks
     * against one process with all cores. */
    int64_t shard = gpu ? (quick ? (int64_t)1 << 26 : (int64_t)1 << 30)
                        : (quick ? (int64_t)1 << 22 : (int64_t)1 << 26) / nranks;
    int64_t total = gpu ? shard : shard * nranks;
    float *x = alloc_buf((size_t)total * sizeof *x), r_dist = 0, r_solo = 0;
    if (!all_ranks(x != NULL)) {
        if (rank == 0) printf("dist_sum: out of memory (on some rank)\n");
        free_buf(x);
        return 1;
    }
    fill_buf(x, total, 99); /* the same data on every rank: rank r uses shard r */
    scale_arg a = {.solo = solo, .x = gpu ? x : x + shard * rank, .n = shard, .out = &r_dist};
    op_fn fns[1] = {run_dist_sum};
    void *args[1] = {&a};
    double t;
    time_turns(fns, args, 1, quick ? 10 : 30, &t);
    scale_arg s = {.solo = solo, .x = x, .n = gpu ? shard : total, .out = &r_solo};
    double t1 = time_solo(solo_sum, &s, quick ? 10 : 30);
    int bad = a.failed || s.failed || (!gpu && nranks > 0 && rank == 0 &&
                                       memcmp(&r_dist, &r_solo, 4) != 0);
    MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    char shape[64];
    snprintf(shape, sizeof shape, "%lld f32%s", (long long)(gpu ? shard * nranks : total),
             gpu ? " (2^k per rank)" : "");
    print_scale("dist_sum", shape, t, t1, gpu ? (double)nranks : 1.0, bad);
    failed |= bad;
    free_buf(x);

    /* GEMM: m rows split across ranks, B on every rank and from rank 0. */
    int64_t N = gpu ? (quick ? 8192 : 32768) : (quick ? 512 : 1024);
    int64_t rows = N / nranks + (rank < N % nranks);
    float *A = alloc_buf((size_t)(N * N) * 4), *B = alloc_buf((size_t)(N * N) * 4);
    float *C = alloc_buf((size_t)(N * N) * 4);
    if (!all_ranks(A && B && C)) {
        if (rank == 0) printf("dist_gemm: out of memory (on some rank)\n");
        free_buf(A), free_buf(B), free_buf(C);
        return 1;
    }
    fill_buf(A, N * N, 5), fill_buf(B, N * N, 6);
    int64_t first = (N / nranks) * rank + (rank < N % nranks ? rank : N % nranks);
    scale_arg sg = {.solo = solo, .A = A, .B = B, .C = C, .m = N, .n = N, .k = N};
    double tg1 = time_solo(solo_gemm, &sg, quick ? 3 : 5);
    for (int root = -1; root <= 0; root++) {
        scale_arg g = {.A = A + first * N, .B = B, .C = C + first * N, .m = rows, .n = N,
                       .k = N, .b_root = root};
        op_fn gf[1] = {run_dist_gemm};
        void *ga[1] = {&g};
        double tg;
        time_turns(gf, ga, 1, quick ? 3 : 5, &tg);
        int gbad = g.failed || sg.failed ||
                   gemm_rows_wrong(A, B, C, N, first, first + rows), any;
        MPI_Allreduce(&gbad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        snprintf(shape, sizeof shape, "%lldx%lldx%lld B %s", (long long)N, (long long)N,
                 (long long)N, root < 0 ? "replicated" : "bcast");
        print_scale("dist_gemm", shape, tg, tg1, 1.0, any);
        failed |= any;
    }
    free_buf(A), free_buf(B), free_buf(C);
    return failed;
}

static int run_dist(int argc, char **argv, pk_backend backend, const char *from, int quick)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    pk_status s = pk_dist_create(&dist, backend, NULL);
    if (s != PK_OK) {
        if (rank == 0) fprintf(stderr, "pk bench dist: %s: %s\n", from, pk_last_create_error());
        MPI_Finalize();
        return PK_EXIT_FAIL;
    }
    gpu = pk_ctx_backend(pk_dist_ctx(dist)) == PK_BACKEND_CUDA;
    pk_ctx *solo = NULL;
    if (pk_ctx_create(&solo, pk_ctx_backend(pk_dist_ctx(dist)), 0) != PK_OK) {
        fprintf(stderr, "pk bench dist: %s\n", pk_last_create_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (!gpu) {
        /* Each rank gets its share of the cores; one rank alone gets all. */
        pk_ctx_set_threads(pk_dist_ctx(dist), cores / nranks > 0 ? (int)(cores / nranks) : 1);
        pk_ctx_set_threads(solo, (int)cores);
    }
#ifdef PK_HAVE_NCCL
    if (gpu) {
        /* This process's GPU, chosen as pk_dist_create does. */
        MPI_Comm node;
        int local = 0, ndev = 1;
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
        MPI_Comm_rank(node, &local);
        MPI_Comm_free(&node);
        if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1) ndev = 1;
        cudaSetDevice(local % ndev);
        ncclUniqueId id;
        if (rank == 0) ncclGetUniqueId(&id);
        MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
        if (ncclCommInitRank(&peer_comm, nranks, id, rank) != ncclSuccess)
            MPI_Abort(MPI_COMM_WORLD, 1);
    }
#endif
    if (rank == 0)
        printf("pk bench dist: %d ranks, backend %s (%s); %ld cores per node seen by rank 0\n\n",
               nranks, gpu ? "cuda" : "cpu", pk_ctx_describe(pk_dist_ctx(dist)), cores);
    int failed = bench_allreduce(quick);
    failed |= bench_scaling(quick, solo);
#ifdef PK_HAVE_NCCL
    if (gpu) ncclCommDestroy(peer_comm);
#endif
    pk_ctx_destroy(solo);
    pk_dist_destroy(dist);
    MPI_Finalize();
    return failed ? PK_EXIT_FAIL : 0;
}
#endif
