/* `pk bench`: options, the backend and device, and the exit status. The
 * cases are in bench_plan.c, the run in bench_run.c, the outputs in
 * bench_out.c; `pk bench compare` in bench_compare.c. */
#include "bench.h"
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char usage[] =
    "usage: pk bench [KERNEL...] [--all | --quick] [--sizes LIST] [--dtype LIST]\n"
    "                [--backend cpu|cuda|auto] [--device N] [--csv [FILE|-]]\n"
    "                [--markdown [FILE|-]] [--json [FILE|-]] [--reps N] [--seed N]\n"
    "                [--max-noise PCT] [--list]\n"
    "       pk bench compare BASE.json NEW.json [--threshold PCT]\n"
    "       mpirun -np N pk bench dist [--backend B] [--quick]\n"
    "\n"
    "Time pk's kernels on random data, verify every result against an\n"
    "independent reference, and compare with the best peer measured in the\n"
    "same run. One row per case, written out as soon as it is measured.\n"
    "\n"
    "which cases:\n"
    "  (default)      the headline rows: each kernel once, at the size that shows\n"
    "                 its ceiling, with its peers (CPU: 14 rows, under a minute\n"
    "                 on an idle 2-core machine)\n"
    "  --all          every kernel at every size, f64 and i32 too (CPU: 99\n"
    "                 cases, about 15-20 minutes on 2 cores)\n"
    "  --quick        every kernel at a few small sizes: a smoke test (seconds)\n"
    "  KERNEL...      only these kernels, at every size of --all (or --quick)\n"
    "  --sizes LIST   these sizes instead: n of the 1-D kernels (those of\n"
    "                 pk_reduce, dot and axpy when no KERNEL is named), m = n = k\n"
    "                 of gemm and bgemm; a list of 1000, 2^20, 1e6 and ranges\n"
    "                 2^20:2^28:x4 (times 4), 1000:5000:+1000 (plus 1000)\n"
    "  --list         print the cases' ids (as in the outputs) instead of running\n"
    "  --dtype LIST   comma-separated dtypes (f32,f64,i32,i64,u32,u64) of the\n"
    "                 kernels that take them; default f32 (--all: plus f64 and\n"
    "                 i32 at two sizes)\n"
    "\n"
    "kernels:\n"
    "  sum prod min max argmin argmax   pk_reduce over n elements\n"
    "  dot axpy                         f32 and f64\n"
    "  reduce_axis                      sum along axis 0 and along axis 1\n"
    "  gemm                             FP32 GEMM (f64 with --dtype f64)\n"
    "  gemm_tf32                        TF32 tensor cores             [CUDA only]\n"
    "  gemm_fp32_accurate               3xTF32, FP32 accuracy         [CUDA only]\n"
    "  bgemm                            binary +-1 GEMM on packed bits\n"
    "  hamming_topk                     k nearest binary codes\n"
    "  custom                           user-defined reductions (pk_reducer) vs\n"
    "                                   the built-in that reads the same bytes\n"
    "  pk bench dist (under mpirun, one process per GPU): all-reduce and the\n"
    "  scaling of the distributed sum and GEMM ('pk bench dist --help')\n"
    "\n"
    "outputs, each to FILE or to stdout (- or no value), several at once:\n"
    "  --csv          a header line, then one line per row\n"
    "  --markdown     the device and a legend, then a table\n"
    "  --json         one JSON document (schema pk-bench 1): the build, the run\n"
    "                 and the device on its first line, then one row per line;\n"
    "                 closed properly even when the run is interrupted\n"
    "  The table below goes to stdout unless one of them does. Every row is\n"
    "  written and flushed as it is measured: an interrupted run keeps what it\n"
    "  measured. Fields: docs/CLI.md. Compare two JSON runs with\n"
    "  'pk bench compare' ('pk bench compare --help').\n"
    "\n"
    "options:\n"
    "  --backend B    cpu, cuda or auto (default: auto: PK_BACKEND=cpu|cuda|auto\n"
    "                 when set, else CUDA when a device exists)\n"
    "  --device N     the CUDA device to run on (default 0; implies CUDA)\n"
    "  --reps N       timed samples per measurement (default: ~0.25 s worth)\n"
    "  --seed N       seed of the random inputs (default: from the clock)\n"
    "  --max-noise P  a row whose pk or peer timings have a noise of P percent\n"
    "                 or more (default 10; CUDA: calls of 20 us or more), a\n"
    "                 median twice their fastest sample, or a timing thread that\n"
    "                 lost its CPU to other processes in a quarter of its samples\n"
    "                 is measured again (up to 3 tries in all; --quick: 1), then\n"
    "                 flagged UNRELIABLE\n"
    "  -h, --help     this text\n"
    "\n"
    "columns:\n"
    "  size      n, or rows x cols and the reduced axis; 'dev': the result is\n"
    "            written to device memory (CUDA, asynchronous)\n"
    "  time      median of the timed samples after warm-up (CPU: monotonic\n"
    "            clock; CUDA: CUDA events)\n"
    "  noise     half the interquartile range of the samples over the median:\n"
    "            the middle half of the samples lie within about +-noise\n"
    "  GB/s      bytes that must move / time: inputs read + outputs written\n"
    "            (axpy f32: 12 bytes an element: read x, read y, write y)\n"
    "  G|Top/s   compute kernels: GFLOP/s (2mnk per gemm) or, for the bit\n"
    "            kernels, TOP/s (2mnk bit operations)\n"
    "  ceil%     of a ceiling measured in this run: the read bandwidth for\n"
    "            reductions, dot, reduce_axis and custom, the copy bandwidth\n"
    "            (read + write) for axpy, the compute ceiling (fma-peak,\n"
    "            popcnt-peak; CUDA: fp32-fma, tf32-mma, bmma-peak) for the\n"
    "            compute kernels; cache-resident sizes can exceed 100%\n"
    "  peer      the fastest peer measured in this run: omp-loop (a plain\n"
    "            '#pragma omp parallel for simd reduction' loop with the same\n"
    "            SIMD path), openblas (cblas_?dot/?axpy/?gemm with as many\n"
    "            threads as OpenMP), whole-sum (pk's own pk_reduce sum over the\n"
    "            same elements: the yardstick of reduce_axis), openblas-sgemm-\n"
    "            pm1 (bgemm as cblas_sgemm on +-1.0f), pk-bgemm (hamming_topk's\n"
    "            distances alone), the built-in of the same bytes (custom);\n"
    "            CUDA: cub, cublas\n"
    "  ratio     peer time / pk time (above 1: pk is faster)\n"
    "  check     ok, or FAILED with the reason (exit status 1); UNRELIABLE:\n"
    "            other processes disturbed the timings (the reason follows;\n"
    "            '?' stands for the figures derived from them), or a figure\n"
    "            is far above its ceiling\n"
    "\n"
    "exit status: 0 every result verified, 1 a failure (a FAILED row, no\n"
    "device, an output that cannot be written), 2 usage error\n";

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

/* A percent from 0 to 1000, as a fraction. */
static int parse_pct(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !(v >= 0 && v <= 1000)) return -1;
    *out = v / 100;
    return 0;
}

static uint64_t clock_seed(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ((uint64_t)ts.tv_sec * 1000003u) ^ (uint64_t)ts.tv_nsec;
}

/* An output option: --csv, --markdown, --json, with an optional value:
 * "--json=FILE", or the next argument unless it is an option (other than
 * "-"), a kernel or a subcommand; stdout without one. Returns the format
 * (BENCH_FMT_*) or -1 when arg is none of them. */
static int output_option(int argc, char **argv, int *i, const char **path)
{
    static const char *const names[] = {NULL, "--csv", "--markdown", "--json"};
    for (int fmt = BENCH_FMT_CSV; fmt < BENCH_NFMT; fmt++) {
        size_t len = strlen(names[fmt]);
        const char *a = argv[*i];
        if (strncmp(a, names[fmt], len) != 0 || (a[len] && a[len] != '=')) continue;
        *path = "-";
        if (a[len] == '=') *path = a + len + 1;
        else if (*i + 1 < argc) {
            const char *next = argv[*i + 1];
            if ((next[0] != '-' || !strcmp(next, "-")) && bench_kernel_find(next) < 0 &&
                strcmp(next, "dist") && strcmp(next, "compare"))
                *path = argv[++*i];
        }
        return fmt;
    }
    return -1;
}

/* The command line, for the record ("pk bench --all --json out.json"). */
static void command_line(char *buf, size_t len, int argc, char **argv)
{
    size_t at = (size_t)snprintf(buf, len, "pk");
    for (int i = 0; i < argc && at < len; i++) {
        int quote = argv[i][strcspn(argv[i], " \t'\"")] != 0 || !argv[i][0];
        at += (size_t)snprintf(buf + at, len - at, quote ? " '%s'" : " %s", argv[i]);
    }
}

static void utc_now(char *buf, size_t len)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int bench_command(int argc, char **argv, pk_cli_mode mode)
{
    bench_opts o = {.budget_s = 0.25, .max_noise = 0.10, .seed = clock_seed()};
    pk_backend backend = PK_BACKEND_AUTO;
    int nk = bench_kernel_count(), *want = calloc((size_t)nk, sizeof *want);
    int any = 0, backend_given = 0, all = 0, device = -1, nsizes = 0;
    int64_t *sizes = NULL;
    unsigned dtypes = 0;
    if (!want) return fputs("pk bench: out of memory\n", stderr), PK_EXIT_FAIL;
    int rc = 0;
    for (int i = 1; i < argc && !rc; i++) {
        const char *a = argv[i], *v;
        int missing = 0, fmt;
        int64_t num;
        char why[160];
        if (pk_is_help(a)) {
            fputs(usage, stdout);
            free(want), free(sizes);
            return 0;
        } else if (strcmp(a, "--quick") == 0) {
            o.quick = 1;
        } else if (strcmp(a, "--all") == 0) {
            all = 1;
        } else if (strcmp(a, "--list") == 0) {
            o.list = 1;
        } else if ((fmt = output_option(argc, argv, &i, &v)) >= 0) {
            rc = bench_out_add(fmt, v);
        } else if ((v = pk_opt_value("--backend", argc, argv, &i, &missing))) {
            if (pk_backend_parse(v, &backend) != PK_OK)
                rc = pk_usage_error("bench", "--backend: expected cpu, cuda or auto, got '%s'", v);
            backend_given = 1;
        } else if ((v = pk_opt_value("--device", argc, argv, &i, &missing))) {
            if (pk_parse_int(v, 0, 4095, &num) != 0)
                rc = pk_usage_error("bench", "--device: expected a CUDA device index (0, 1, ...), got '%s'", v);
            device = (int)num;
        } else if ((v = pk_opt_value("--dtype", argc, argv, &i, &missing))) {
            if (parse_dtypes(v, &dtypes) != 0)
                rc = pk_usage_error("bench", "--dtype: expected a list of f32,f64,i32,i64,u32,u64, got '%s'", v);
        } else if ((v = pk_opt_value("--sizes", argc, argv, &i, &missing))) {
            free(sizes);
            if (bench_parse_sizes(v, &sizes, &nsizes, why, sizeof why) != 0)
                rc = pk_usage_error("bench", "--sizes: %s", why);
        } else if ((v = pk_opt_value("--reps", argc, argv, &i, &missing))) {
            if (pk_parse_int(v, 1, 1000000, &num) != 0)
                rc = pk_usage_error("bench", "--reps: expected an integer from 1 to 1000000, got '%s'", v);
            o.reps = (int)num;
        } else if ((v = pk_opt_value("--seed", argc, argv, &i, &missing))) {
            if (pk_parse_int(v, 0, INT64_MAX, &num) != 0)
                rc = pk_usage_error("bench", "--seed: expected a non-negative integer, got '%s'", v);
            o.seed = (uint64_t)num;
        } else if ((v = pk_opt_value("--max-noise", argc, argv, &i, &missing))) {
            if (parse_pct(v, &o.max_noise) != 0)
                rc = pk_usage_error("bench", "--max-noise: expected a percent from 0 to 1000, got '%s'", v);
        } else if (missing) {
            rc = pk_usage_error("bench", "%s needs a value", a);
        } else if (a[0] == '-') {
            rc = pk_usage_error("bench", "unknown option '%s'", a);
        } else if (strcmp(a, "dist") == 0 || strcmp(a, "compare") == 0) {
            /* Only as a positional argument (not an option's value): their
             * own parsers check every argument again. */
            free(want), free(sizes);
            return a[0] == 'd' ? pk_cmd_bench_dist(argc, argv, mode)
                               : pk_cmd_bench_compare(argc, argv, mode);
        } else {
            int k = bench_kernel_find(a);
            if (k < 0) {
                char list[256];
                bench_kernel_list(list, sizeof list);
                rc = pk_usage_error("bench", "unknown kernel '%s'; kernels: %s", a, list);
            } else {
                want[k] = any = 1;
            }
        }
    }
    if (!rc && all && o.quick)
        rc = pk_usage_error("bench", "--all and --quick: choose one (--quick is every kernel "
                            "at small sizes)");
    for (int k = 0; k < nk && !rc && sizes; k++)
        if (want[k] && !bench_kernel_takes_size(k))
            rc = pk_usage_error("bench", "--sizes: %s has shapes of its own; leave out "
                                "--sizes or %s", bench_kernel_name(k), bench_kernel_name(k));
    if (!rc && device >= 0) {
        /* --device means CUDA; with --backend cpu it is a contradiction. */
        if (backend_given && backend == PK_BACKEND_CPU)
            rc = pk_usage_error("bench", "--device %d: the CPU backend has no devices "
                                "(--backend cpu given)", device);
        backend = PK_BACKEND_CUDA, backend_given = 1;
        int count = pk_bench_gpu_device_count();
        if (!rc && count > 0 && device >= count)
            rc = pk_usage_error("bench", "--device %d: this machine has %d CUDA device%s "
                                "(0%s%d)", device, count, count == 1 ? "" : "s",
                                count == 1 ? "" : " to ", count == 1 ? 0 : count - 1);
    }
    if (rc || mode == PK_CLI_CHECK) {
        free(want), free(sizes);
        return rc;
    }
    if (o.quick) o.budget_s = 0.03;

    bench_run run = {.set = sizes ? "sizes" : o.quick ? "quick" : all ? "all"
                            : any ? "kernels" : "headline"};
    command_line(run.command, sizeof run.command, argc, argv);
    utc_now(run.started, sizeof run.started);
    rc = bench_main(&o, backend, backend_given, device, want, dtypes, sizes, nsizes, all, &run);
    free(want), free(sizes);
    return rc;
}

int pk_cmd_bench(int argc, char **argv, pk_cli_mode mode)
{
    int rc = bench_command(argc, argv, mode);
    if (mode == PK_CLI_CHECK) bench_out_forget(); /* the next check starts afresh */
    return rc;
}
