/* `pk bench`: options, the list of cases, the run and the exit status. */
#include "bench.h"
#include "custom.h"
#include "cli.h"
#include "cpu_peers.h"
#include "sysinfo.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char usage[] =
    "usage: pk bench [KERNEL...] [--backend cpu|cuda|auto] [--dtype LIST]\n"
    "                [--quick] [--json] [--reps N] [--seed N]\n"
    "\n"
    "Time pk's kernels on random data, verify every result against an\n"
    "independent reference, and compare with the best peer measured in the\n"
    "same run. One row per case.\n"
    "\n"
    "kernels (default: all): sum prod min max argmin argmax (pk_reduce), dot,\n"
    "  axpy, reduce_axis (sum along axis 0 and axis 1); compute kernels: gemm\n"
    "  (FP32), gemm_tf32, gemm_fp32_accurate (CUDA only), bgemm (binary +-1\n"
    "  GEMM on packed bits), hamming_topk (k nearest binary codes); custom:\n"
    "  user-defined reductions (pk_reducer) vs the built-in of the same bytes\n"
    "\n"
    "  pk bench dist [--backend B] [--quick], under mpirun (one process per\n"
    "  GPU): all-reduce rows against the bare MPI/NCCL call, then the scaling\n"
    "  of the distributed sum and GEMM against one rank ('pk bench dist --help')\n"
    "\n"
    "options:\n"
    "  --backend B    cpu, cuda or auto (default: auto: PK_BACKEND=cpu|cuda|auto\n"
    "                 when set, else CUDA when a device exists)\n"
    "  --dtype LIST   comma-separated dtypes (f32,f64,i32,i64,u32,u64) at the\n"
    "                 f32 sizes (default: f32, plus f64 and i32 at two sizes)\n"
    "  --quick        a few small sizes; finishes in seconds\n"
    "  --json         print {\"device\": {...}, \"results\": [...]} instead of a table\n"
    "  --reps N       timed samples per measurement (default: ~0.25 s worth)\n"
    "  --seed N       seed of the random inputs (default: from the clock)\n"
    "  -h, --help     this text\n"
    "\n"
    "columns:\n"
    "  size      n, or rows x cols and the reduced axis; 'dev': the result is\n"
    "            written to device memory (CUDA, asynchronous)\n"
    "  time      median of the timed samples after warm-up (CPU: monotonic\n"
    "            clock; CUDA: CUDA events)\n"
    "  GB/s      bytes that must move / time: inputs read + outputs written\n"
    "  G|Top/s   compute kernels: GFLOP/s (2mnk per gemm) or, for the bit\n"
    "            kernels, TOP/s (2mnk bit operations); ceil% is of the\n"
    "            compute ceiling measured in this run (named in the note)\n"
    "            (axpy f32: 12 bytes an element: read x, read y, write y)\n"
    "  ceil%     GB/s as a percent of the ceiling measured in this run: the\n"
    "            read bandwidth for reductions, dot and reduce_axis, the copy\n"
    "            bandwidth (read + write) for axpy; cache-resident sizes can\n"
    "            exceed 100%\n"
    "  peer      the fastest peer measured in this run: omp-loop (a plain\n"
    "            '#pragma omp parallel for simd reduction' loop with the same\n"
    "            SIMD path), openblas (cblas_?dot/?axpy with as many threads as\n"
    "            OpenMP), whole-sum (pk's own pk_reduce sum over the same\n"
    "            elements: the yardstick of reduce_axis), cub/cublas on CUDA\n"
    "  ratio     peer time / pk time (above 1: pk is faster)\n"
    "  check     ok, or FAILED with the reason (exit status 1)\n";

static const char *const kernel_names[] = {
    "sum", "prod", "min", "max", "argmin", "argmax", "dot", "axpy", "reduce_axis",
    "gemm", "gemm_tf32", "gemm_fp32_accurate", "bgemm", "hamming_topk", "custom",
};
enum {
    NKERNELS = 15, K_DOT = 6, K_AXPY = 7, K_AXIS = 8,
    K_GEMM = 9, K_GEMM_TF32, K_GEMM_ACC, K_BGEMM, K_TOPK, K_CUSTOM
};

typedef struct plan {
    bench_case *cases;
    int n, cap;
} plan;

static bench_case *add_case(plan *p, int kernel, pk_dtype t, int64_t rows,
                            int64_t cols, int axis, int on_device)
{
    if (p->n == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 64;
        p->cases = realloc(p->cases, (size_t)p->cap * sizeof *p->cases);
        if (!p->cases) {
            fputs("pk bench: out of memory\n", stderr);
            exit(PK_EXIT_FAIL);
        }
    }
    bench_case *c = &p->cases[p->n++];
    memset(c, 0, sizeof *c);
    c->c.kernel = kernel_names[kernel];
    c->c.dtype = t;
    c->c.out_on_device = on_device;
    c->op = kernel < K_DOT ? (pk_op)kernel : PK_SUM;
    if (kernel == K_AXIS) {
        c->c.rows = rows, c->c.cols = cols, c->c.axis = axis;
        c->c.n = rows * cols;
    } else if (kernel >= K_GEMM && kernel != K_CUSTOM) {
        c->c.rows = rows, c->c.cols = cols, c->c.n = cols;
    } else {
        c->c.n = rows;
    }
    return c;
}

/* Compute kernels' shapes: m, n, k (k in bits for bgemm); hamming_topk:
 * queries, database codes, bits, topk. 0 ends a list. */
typedef struct shape4 {
    int64_t a, b, c, d;
} shape4;
static const shape4 cpu_gemm[] = {{256, 256, 256, 0}, {512, 512, 512, 0},
                                  {1024, 1024, 1024, 0}, {2048, 2048, 2048, 0},
                                  {2048, 2048, 256, 0}, {0, 0, 0, 0}};
static const shape4 cpu_gemm_quick[] = {{256, 256, 256, 0}, {512, 512, 512, 0}, {0, 0, 0, 0}};
static const shape4 gpu_gemm[] = {{512, 512, 512, 0}, {1024, 1024, 1024, 0},
                                  {2048, 2048, 2048, 0}, {4096, 4096, 4096, 0},
                                  {8192, 8192, 8192, 0}, {0, 0, 0, 0}};
static const shape4 gpu_gemm_quick[] = {{1024, 1024, 1024, 0}, {4096, 4096, 4096, 0},
                                        {0, 0, 0, 0}};
static const shape4 gpu_gemm_tc[] = {{4096, 4096, 4096, 0}, {8192, 8192, 8192, 0},
                                     {0, 0, 0, 0}};
static const shape4 gpu_gemm_tc_quick[] = {{4096, 4096, 4096, 0}, {0, 0, 0, 0}};
static const shape4 cpu_bgemm[] = {{1024, 1024, 1024, 0}, {2048, 2048, 2048, 0},
                                   {0, 0, 0, 0}};
static const shape4 cpu_bgemm_quick[] = {{512, 512, 512, 0}, {0, 0, 0, 0}};
static const shape4 gpu_bgemm[] = {{4096, 4096, 4096, 0}, {8192, 8192, 8192, 0},
                                   {0, 0, 0, 0}};
static const shape4 gpu_bgemm_quick[] = {{4096, 4096, 4096, 0}, {0, 0, 0, 0}};
static const shape4 cpu_topk[] = {{1000, 100000, 256, 10}, {1000, 100000, 256, 1000},
                                  {0, 0, 0, 0}};
static const shape4 cpu_topk_quick[] = {{100, 10000, 256, 10}, {0, 0, 0, 0}};
static const shape4 gpu_topk[] = {{10000, 1000000, 256, 10}, {10000, 1000000, 256, 1000},
                                  {0, 0, 0, 0}};
static const shape4 gpu_topk_quick[] = {{1000, 1000000, 256, 10}, {0, 0, 0, 0}};

/* The shapes of compute kernel k on a backend; NULL: not run there (the CPU
 * has no TF32, and its FP32_ACCURATE is plain FP32). */
static const shape4 *compute_shapes(int k, int gpu, int quick)
{
    switch (k) {
    case K_GEMM: return gpu ? (quick ? gpu_gemm_quick : gpu_gemm)
                            : (quick ? cpu_gemm_quick : cpu_gemm);
    case K_GEMM_TF32:
    case K_GEMM_ACC: return gpu ? (quick ? gpu_gemm_tc_quick : gpu_gemm_tc) : NULL;
    case K_BGEMM: return gpu ? (quick ? gpu_bgemm_quick : gpu_bgemm)
                             : (quick ? cpu_bgemm_quick : cpu_bgemm);
    case K_TOPK: return gpu ? (quick ? gpu_topk_quick : gpu_topk)
                            : (quick ? cpu_topk_quick : cpu_topk);
    }
    return NULL;
}

static void add_compute(plan *p, int k, unsigned dtypes, int gpu, int quick)
{
    const shape4 *sh = compute_shapes(k, gpu, quick);
    for (int t = 0; sh && t < PK_DTYPE_COUNT; t++) {
        /* gemm: f32 (and f64 when --dtype asks, fp32 mode only); bits: one. */
        if (k >= K_BGEMM ? t != PK_U64
                         : !((dtypes ? dtypes : 1u << PK_F32) >> t & 1) ||
                               (t != PK_F32 && (t != PK_F64 || k != K_GEMM)))
            continue;
        for (int i = 0; sh[i].a; i++) {
            bench_case *c = add_case(p, k, (pk_dtype)t, sh[i].a, sh[i].b, 0, 0);
            c->c.k = sh[i].c, c->c.topk = sh[i].d;
        }
    }
}

/* The sizes of each backend and mode. */
static const int64_t cpu_sizes[] = {1 << 12, 1 << 16, 1 << 20, 1 << 24, 1 << 26};
static const int64_t cpu_quick_sizes[] = {1 << 12, 1 << 16, 1 << 20};
static const int64_t cpu_extra_sizes[] = {1 << 20, 1 << 26}; /* f64, i32 */
static const int64_t gpu_sizes[] = {1 << 10, 1 << 16, 1 << 20, 1 << 24, 1 << 28};
static const int64_t gpu_quick_sizes[] = {1 << 10, 1 << 20};
static const int64_t gpu_device_out_sizes[] = {1 << 10, 1 << 16};
static const int64_t cpu_shapes[][2] = {{8192, 8192}, {10000000, 2}, {2, 10000000}};
static const int64_t cpu_quick_shapes[][2] = {{1024, 1024}, {100000, 2}, {2, 100000}};
static const int64_t gpu_shapes[][2] = {{16384, 16384}, {10000000, 2}, {2, 10000000}};
static const int64_t gpu_quick_shapes[][2] = {{4096, 4096}, {1000000, 2}, {2, 1000000}};
static const int64_t cpu_custom_sizes[] = {1 << 20, 1 << 26};
static const int64_t gpu_custom_sizes[] = {1 << 20, 1 << 24, 1 << 28};
#define COUNT(a) (int)(sizeof(a) / sizeof *(a))

static void add_sizes(plan *p, int k, pk_dtype t, const int64_t *sizes, int n)
{
    for (int i = 0; i < n; i++) add_case(p, k, t, sizes[i], 0, 0, 0);
}

/* dtypes: bit set of the --dtype list, 0 for the default mix. */
static void make_plan(plan *p, const int *want, unsigned dtypes, int gpu, int quick)
{
    const int64_t *sizes = gpu ? (quick ? gpu_quick_sizes : gpu_sizes)
                               : (quick ? cpu_quick_sizes : cpu_sizes);
    int nsizes = gpu ? (quick ? COUNT(gpu_quick_sizes) : COUNT(gpu_sizes))
                     : (quick ? COUNT(cpu_quick_sizes) : COUNT(cpu_sizes));
    const int64_t(*shapes)[2] = gpu ? (quick ? gpu_quick_shapes : gpu_shapes)
                                    : (quick ? cpu_quick_shapes : cpu_shapes);
    unsigned list = dtypes ? dtypes : 1u << PK_F32;
    for (int k = 0; k < NKERNELS; k++) {
        if (!want[k]) continue;
        if (k == K_CUSTOM) { /* user-defined reductions: f32, each reducer */
            if (dtypes && !(dtypes >> PK_F32 & 1)) continue;
            const int64_t *cs = gpu ? gpu_custom_sizes : cpu_custom_sizes;
            int ncs = quick ? 1 : gpu ? COUNT(gpu_custom_sizes) : COUNT(cpu_custom_sizes);
            for (int u = 0; u < PK_BENCH_NUDR; u++)
                for (int i = 0; i < ncs; i++)
                    add_case(p, k, PK_F32, quick ? (gpu ? 1 << 24 : 1 << 20) : cs[i], 0, 0,
                             0)->c.k = u;
            /* the sum of squares along both axes of reduce_axis's shapes */
            for (int s = 0; s < 3; s++)
                for (int axis = 0; axis < 2; axis++) {
                    bench_case *c = add_case(p, k, PK_F32, shapes[s][0] * shapes[s][1], 0, 0, 0);
                    c->c.rows = shapes[s][0], c->c.cols = shapes[s][1], c->c.axis = axis;
                }
            continue;
        }
        if (k >= K_GEMM) {
            add_compute(p, k, dtypes, gpu, quick);
            continue;
        }
        for (int t = 0; t < PK_DTYPE_COUNT; t++) {
            if (!(list >> t & 1)) continue;
            if ((k == K_DOT || k == K_AXPY) && t != PK_F32 && t != PK_F64) continue;
            if (k == K_AXIS) {
                for (int s = 0; s < 3; s++)
                    for (int axis = 0; axis < 2; axis++)
                        add_case(p, k, (pk_dtype)t, shapes[s][0], shapes[s][1], axis, 0);
                continue;
            }
            add_sizes(p, k, (pk_dtype)t, sizes, nsizes);
            if (gpu && k == PK_SUM)
                for (int i = 0; i < (quick ? 1 : COUNT(gpu_device_out_sizes)); i++)
                    add_case(p, k, (pk_dtype)t, gpu_device_out_sizes[i], 0, 0, 1);
        }
        /* The default mix: f64 (and i32 for reductions) at two sizes. */
        if (dtypes || gpu || quick || k == K_AXIS) continue;
        add_sizes(p, k, PK_F64, cpu_extra_sizes, COUNT(cpu_extra_sizes));
        if (k < K_DOT) add_sizes(p, k, PK_I32, cpu_extra_sizes, COUNT(cpu_extra_sizes));
    }
}

/* Each comma-separated item on its own (no limit on the list's length); an
 * empty, over-long or unknown item is an error. */
static int parse_dtypes(const char *s, unsigned *set)
{
    *set = 0;
    for (;;) {
        const size_t len = strcspn(s, ",");
        char item[16];
        pk_dtype t;
        if (len >= sizeof item) return -1;
        memcpy(item, s, len);
        item[len] = 0;
        if (pk_dtype_parse(item, &t) != PK_OK) return -1;
        *set |= 1u << t;
        if (!s[len]) return 0;
        s += len + 1;
    }
}

static uint64_t clock_seed(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ((uint64_t)ts.tv_sec * 1000003u) ^ (uint64_t)ts.tv_nsec;
}

/* Open the context of want (from pk_backend_choice, which already applied
 * PK_BACKEND): auto is CUDA when a device exists and this build's GPU bench
 * can use it. from names the choice in messages. Returns NULL after printing
 * why, with *rc the exit status: a bad value (PK_CPU_ISA=bogus) is a usage
 * error, a backend that cannot run here a failure. */
static pk_ctx *open_backend(pk_backend want, const char *from, int *rc)
{
    pk_ctx *ctx = NULL;
    const char *resolved = "";
    if (want == PK_BACKEND_AUTO && !pk_bench_gpu_available())
        want = PK_BACKEND_CPU, resolved = " (cpu)";
    *rc = PK_EXIT_FAIL;
    pk_status s = pk_ctx_create(&ctx, want, 0);
    if (s != PK_OK) {
        fprintf(stderr, "pk bench: %s%s: %s\n", from, resolved, pk_last_create_error());
        if (s == PK_ERR_ARG) *rc = PK_EXIT_USAGE;
        return NULL;
    }
    if (pk_ctx_backend(ctx) == PK_BACKEND_CUDA && !pk_bench_gpu_available()) {
        fprintf(stderr, "pk bench: %s: this build's GPU bench has no "
                        "CUDA (bench/gpu.cmake was not built)\n", from);
        pk_ctx_destroy(ctx);
        return NULL;
    }
    return ctx;
}

static int measure_device(pk_ctx *ctx, bench_device *d, const bench_opts *o)
{
    d->backend = pk_ctx_backend(ctx);
    d->seed = o->seed;
    double load[1];
    d->load1 = getloadavg(load, 1) == 1 ? load[0] : -1;
    snprintf(d->describe, sizeof d->describe, "%s", pk_ctx_describe(ctx));
    if (d->backend == PK_BACKEND_CUDA) {
        snprintf(d->name, sizeof d->name, "%s", pk_ctx_describe(ctx));
        d->ceil_names[0] = "read", d->ceil_names[1] = "d2d";
        pk_status s = pk_bench_gpu_ceilings(0, &d->ceil_gbps[1], &d->ceil_gbps[0]);
        if (s != PK_OK) {
            fprintf(stderr, "pk bench: measuring the GPU ceilings: %s\n", pk_status_str(s));
            return -1;
        }
        return 0;
    }
    pk_sysinfo si;
    pk_sysinfo_read(&si);
    snprintf(d->name, sizeof d->name, "%s", si.model);
    d->threads = omp_get_max_threads();
    d->loop_isa = pk_peer_loop_isa();
    d->blas = pk_peer_blas_config();
    d->blas_threads = pk_peer_blas_set_threads(d->threads);
    d->ceil_names[0] = "read", d->ceil_names[1] = "copy";
    /* --quick: half the buffer (still twice a 260 MB L3), fewer passes. */
    d->ceil_bytes = o->quick ? PK_CEILING_BYTES / 2 : PK_CEILING_BYTES;
    if (pk_cpu_ceilings(d->ceil_bytes, o->quick ? 3 : PK_CEILING_REPS, &d->ceil_gbps[0],
                        &d->ceil_gbps[1]) != 0) {
        fprintf(stderr, "pk bench: no memory for the bandwidth buffer\n");
        return -1;
    }
    return 0;
}

static void progress(const bench_opts *o, int i, int n, const bench_case *c,
                     int done)
{
    static int tty = -1;
    if (tty < 0) tty = isatty(STDERR_FILENO);
    char size[64];
    if (tty) {
        if (done) fputs("\r\033[K", stderr);
        else {
            report_size(size, sizeof size, c);
            fprintf(stderr, "[%d/%d] %s %s %s ...", i + 1, n, c->c.kernel,
                    pk_dtype_name(c->c.dtype), size);
        }
    } else if (!done && o->json && !o->quick) {
        report_size(size, sizeof size, c);
        fprintf(stderr, "pk bench: [%d/%d] %s %s %s\n", i + 1, n, c->c.kernel,
                pk_dtype_name(c->c.dtype), size);
    }
    fflush(stderr);
}

int pk_cmd_bench(int argc, char **argv)
{
    bench_opts o = {.budget_s = 0.25, .seed = clock_seed()};
    pk_backend backend = PK_BACKEND_AUTO;
    int want[NKERNELS] = {0}, any = 0, backend_given = 0;
    unsigned dtypes = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        int missing = 0;
        int64_t num;
        if (pk_is_help(a)) {
            fputs(usage, stdout);
            return 0;
        } else if (strcmp(a, "--quick") == 0) {
            o.quick = 1;
        } else if (strcmp(a, "--json") == 0) {
            o.json = 1;
        } else if ((v = pk_opt_value("--backend", argc, argv, &i, &missing))) {
            if (pk_backend_parse(v, &backend) != PK_OK)
                return pk_usage_error("bench", "--backend: expected cpu, cuda or auto, got '%s'", v);
            backend_given = 1;
        } else if ((v = pk_opt_value("--dtype", argc, argv, &i, &missing))) {
            if (parse_dtypes(v, &dtypes) != 0)
                return pk_usage_error("bench", "--dtype: expected a list of f32,f64,i32,i64,u32,u64, got '%s'", v);
        } else if ((v = pk_opt_value("--reps", argc, argv, &i, &missing))) {
            if (pk_parse_int(v, 1, 1000000, &num) != 0)
                return pk_usage_error("bench", "--reps: expected an integer from 1 to 1000000, got '%s'", v);
            o.reps = (int)num;
        } else if ((v = pk_opt_value("--seed", argc, argv, &i, &missing))) {
            if (pk_parse_int(v, 0, INT64_MAX, &num) != 0)
                return pk_usage_error("bench", "--seed: expected a non-negative integer, got '%s'", v);
            o.seed = (uint64_t)num;
        } else if (missing) {
            return pk_usage_error("bench", "%s needs a value", a);
        } else if (a[0] == '-') {
            return pk_usage_error("bench", "unknown option '%s'", a);
        } else if (strcmp(a, "dist") == 0) {
            /* Only as a positional argument (not an option's value): its
             * own parser checks every argument again. */
            return pk_cmd_bench_dist(argc, argv);
        } else {
            int k = 0;
            while (k < NKERNELS && strcmp(a, kernel_names[k]) != 0) k++;
            if (k == NKERNELS)
                return pk_usage_error("bench", "unknown kernel '%s'; kernels: sum prod min max "
                                      "argmin argmax dot axpy reduce_axis gemm gemm_tf32 "
                                      "gemm_fp32_accurate bgemm hamming_topk custom", a);
            want[k] = any = 1;
        }
    }
    if (!any)
        for (int k = 0; k < NKERNELS; k++) want[k] = 1;
    if (o.quick) o.budget_s = 0.03;

    const char *from;
    int rc = pk_backend_choice("bench", &backend, backend_given, &from);
    if (rc) return rc;
    pk_ctx *ctx = open_backend(backend, from, &rc);
    if (!ctx) return rc;
    int gpu = pk_ctx_backend(ctx) == PK_BACKEND_CUDA;
    plan p = {0};
    make_plan(&p, want, dtypes, gpu, o.quick);
    if (p.n == 0) {
        pk_ctx_destroy(ctx);
        return pk_usage_error("bench", "no cases: dot, axpy and gemm take only f32 and "
                              "f64; gemm_tf32 and gemm_fp32_accurate run on CUDA only");
    }

    bench_device dev = {0};
    if (measure_device(ctx, &dev, &o) != 0) {
        pk_ctx_destroy(ctx);
        free(p.cases);
        return PK_EXIT_FAIL;
    }
    if (!o.json) report_header(&dev);

    bench_row *rows = calloc((size_t)p.n, sizeof *rows);
    bench_cpu *cpu = gpu ? NULL : bench_cpu_new(&o);
    if (!rows || (!gpu && !cpu)) {
        fputs("pk bench: out of memory\n", stderr);
        return PK_EXIT_FAIL;
    }
    int failed = 0;
    for (int i = 0; i < p.n; i++) {
        progress(&o, i, p.n, &p.cases[i], 0);
        if (gpu) bench_gpu_run(ctx, &p.cases[i], &dev, &rows[i]);
        else bench_cpu_run(cpu, ctx, &p.cases[i], &dev, &rows[i]);
        progress(&o, i, p.n, &p.cases[i], 1);
        failed |= rows[i].status == BENCH_FAILED;
        if (!o.json) report_row(&rows[i]);
    }
    if (o.json) report_json(&dev, rows, p.n);
    bench_cpu_free(cpu);
    free(rows);
    free(p.cases);
    pk_ctx_destroy(ctx);
    if (failed) fputs("pk bench: some results FAILED verification or errored\n", stderr);
    return failed ? PK_EXIT_FAIL : 0;
}
