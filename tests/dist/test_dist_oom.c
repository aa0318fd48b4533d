/* Allocation failures in the distributed API (a PK_FAULT_INJECTION build,
 * under mpirun): a scenario of pk_dist_* calls runs once with no failure
 * (the golden run), then again for k = 1, 2, ... with rank 0's k-th
 * allocation failing (host or device), until rank 0 makes fewer than k.
 * Each call must give the golden run's bits on every rank, or fail on every
 * rank with PK_ERR_NOMEM (rank 0 with its own message, the others naming
 * rank 0) and then, repeated on the same handle, give them: nothing hangs,
 * the handle stays usable. PK_BACKEND picks the backend (cuda on the GPU
 * machine: the staging and panel buffers of src/dist/nccl.c). */
#include "fault_injection.h"
#include "dist_util.h"
#ifdef PK_TEST_CUDA
#include <cuda_runtime_api.h>
#endif

enum { MAX_CALLS = 16 };

static int rank, nranks;
static pk_dist *dist;
static struct {
    void *p;
    size_t bytes;
} golden[MAX_CALLS];

typedef struct run {
    int64_t k; /* rank 0's failing allocation; 0: none */
    int call;
    int nomem; /* calls of this run that failed with PK_ERR_NOMEM */
} run;

/* One call: s is its first status; again() repeats it. */
static void settle(run *r, const char *what, pk_status s, pk_status (*again)(void),
                   const void *out, size_t bytes)
{
    int c = r->call++;
    const char *msg = pk_ctx_error(pk_dist_ctx(dist));
    if (s == PK_ERR_NOMEM) {
        r->nomem++;
        PK_CHECK(r->k > 0 && r->nomem == 1, "%s: PK_ERR_NOMEM (k = %lld, %d in this run)",
                 what, (long long)r->k, r->nomem);
        PK_CHECK(msg && *msg && (rank == 0 || strstr(msg, "rank 0")),
                 "%s (k = %lld): rank %d's message: '%s'", what, (long long)r->k, rank, msg);
        s = again();
    }
    PK_CHECK(s == PK_OK, "%s (k = %lld): %s: %s", what, (long long)r->k, pk_status_str(s), msg);
    if (s != PK_OK || c >= MAX_CALLS) return;
    if (r->k == 0) {
        golden[c].p = pk_test_alloc(bytes);
        memcpy(golden[c].p, out, bytes);
        golden[c].bytes = bytes;
        return;
    }
    PK_CHECK(golden[c].bytes == bytes && !memcmp(golden[c].p, out, bytes),
             "%s (k = %lld): rank %d's result differs from the run without failures", what,
             (long long)r->k, rank);
}

/* The scenario's data: every rank's shard differs. */
enum { N = 1000, GM = 37, GN = 29, GK = 300 };
static float xf[N], yf[N], A[GM * GK], B[GK * GN], C[GM * GN];
static double xd[N], outd;
static int64_t idx;
#ifdef PK_TEST_CUDA
static float dev_out[N];
static void *dev_buf; /* device copy of xf (CUDA), for the device all-reduce */
#endif
static pk_reducer *red;
static double red_out; /* the f64 accumulator's result */

static pk_status do_sum(void) { return pk_dist_reduce(dist, PK_SUM, PK_F64, xd, N, &outd); }
static pk_status do_argmax(void) { return pk_dist_reduce(dist, PK_ARGMAX, PK_F32, xf, N, &idx); }
static pk_status do_allreduce(void)
{
    memcpy(yf, xf, sizeof yf);
    return pk_dist_allreduce(dist, PK_SUM, PK_F32, yf, yf, N);
}
static pk_status do_gemm(int root)
{
    static const float alpha = 1.5f, beta = 0.5f;
    for (int i = 0; i < GM * GN; i++) C[i] = (float)(i % 7);
    return pk_dist_gemm(dist, PK_F32, PK_GEMM_FP32, PK_NO_TRANS, PK_NO_TRANS, GM, GN, GK,
                        &alpha, A, GK, B, GN, root, &beta, C, GN);
}
static pk_status do_gemm_bcast(void) { return do_gemm(0); }
static pk_status do_gemm_all(void) { return do_gemm(-1); }
static pk_status do_reducer(void) { return pk_dist_reducer_reduce(dist, red, xf, N, &red_out); }
#ifdef PK_TEST_CUDA
static pk_status do_dev_allreduce(void)
{
    if (cudaMemcpy(dev_buf, xf, sizeof xf, cudaMemcpyHostToDevice) != cudaSuccess)
        return PK_ERR_DEVICE;
    pk_status s = pk_dist_allreduce(dist, PK_SUM, PK_F32, dev_buf, dev_buf, N);
    if (!s) s = pk_ctx_sync(pk_dist_ctx(dist));
    if (!s && cudaMemcpy(dev_out, dev_buf, sizeof dev_out, cudaMemcpyDeviceToHost) != cudaSuccess)
        s = PK_ERR_DEVICE;
    return s;
}
#endif

static void scenario(run *r)
{
    settle(r, "pk_dist_reduce sum f64", do_sum(), do_sum, &outd, sizeof outd);
    settle(r, "pk_dist_reduce argmax f32", do_argmax(), do_argmax, &idx, sizeof idx);
    settle(r, "pk_dist_allreduce host", do_allreduce(), do_allreduce, yf, sizeof yf);
    settle(r, "pk_dist_gemm b_root 0", do_gemm_bcast(), do_gemm_bcast, C, sizeof C);
    settle(r, "pk_dist_gemm b_root -1", do_gemm_all(), do_gemm_all, C, sizeof C);
    settle(r, "pk_dist_reducer_reduce", do_reducer(), do_reducer, &red_out, sizeof red_out);
#ifdef PK_TEST_CUDA
    if (dev_buf)
        settle(r, "pk_dist_allreduce device", do_dev_allreduce(), do_dev_allreduce, dev_out,
               sizeof dev_out);
#endif
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    pk_test_init("test_dist_oom");
    pk_test_state = pk_test_seed + (uint64_t)rank * 0x9e3779b97f4a7c15u;
    int rc0 = dist_test_open("test_dist_oom", rank, dist_test_backend(), &dist);
    if (rc0 >= 0) return rc0;
    for (int i = 0; i < N; i++) {
        xf[i] = (float)pk_test_uniform(-1, 1);
        xd[i] = pk_test_uniform(-1e3, 1e3);
    }
    for (int i = 0; i < GM * GK; i++) A[i] = (float)pk_test_uniform(-1, 1);
    for (int i = 0; i < GK * GN; i++) B[i] = (float)pk_test_uniform(-1, 1);
    pk_reducer_desc desc = {.input = PK_F32, .acc = PK_F64, .map = "fabs(x)",
                            .combine = "fmax(a,b)", .identity = 0};
    pk_status s = pk_reducer_create(pk_dist_ctx(dist), &desc, &red);
    PK_CHECK(s == PK_OK, "pk_reducer_create: %s", pk_ctx_error(pk_dist_ctx(dist)));
#ifdef PK_TEST_CUDA
    if (pk_ctx_backend(pk_dist_ctx(dist)) == PK_BACKEND_CUDA &&
        cudaMalloc(&dev_buf, sizeof xf) != cudaSuccess)
        dev_buf = NULL;
#endif
    run golden_run = {0};
    scenario(&golden_run);
    int64_t k = 1, runs = 0, failed_calls = 0, device_allocs = 0;
    for (int more = 1; more; k++) {
        run r = {.k = k};
        if (rank == 0) pk__fault_fail_nth(k);
        scenario(&r);
        int64_t made = rank == 0 ? pk__fault_allocations() : 0;
        if (rank == 0) {
            device_allocs = pk__fault_device_allocations();
            pk__fault_fail_nth(0);
        }
        more = made >= k;
        MPI_Bcast(&more, 1, MPI_INT, 0, MPI_COMM_WORLD);
        runs++;
        failed_calls += r.nomem;
        if (pk_test_failures) break;
    }
    if (rank == 0)
        printf("test_dist_oom: %d ranks, backend %s: %lld runs (rank 0's allocations 1..%lld "
               "failed in turn, %lld of them device), %lld calls gave PK_ERR_NOMEM and then "
               "succeeded\n", nranks, pk_backend_name(pk_ctx_backend(pk_dist_ctx(dist))),
               (long long)runs, (long long)runs - 1, (long long)device_allocs,
               (long long)failed_calls);
#ifdef PK_TEST_CUDA
    if (dev_buf) cudaFree(dev_buf);
#endif
    pk_reducer_destroy(red);
    pk_dist_destroy(dist);
    for (int c = 0; c < MAX_CALLS; c++) free(golden[c].p);
    int fails = pk_test_failures, all = 0;
    MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int rc = pk_test_finish("test_dist_oom");
    MPI_Finalize();
    return all ? 1 : rc;
}
