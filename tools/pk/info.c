/* `pk info`: the CPU (model, topology, caches, SIMD paths, OpenMP threads,
 * measured read and copy bandwidth) and the CUDA devices (bench/gpu.h). */
#include "cli.h"
#include "cpu_peers.h"
#include "gpu.h"
#include "sysinfo.h"

#include "pk.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: pk info [--json] [--no-measure]\n"
    "\n"
    "Describe this machine as pk sees it: CPU model, cores, caches, the SIMD\n"
    "path pk uses (PK_CPU_ISA=avx512|avx2|generic overrides it) and the paths\n"
    "the CPU supports, OpenMP threads, and the measured memory bandwidth:\n"
    "  read   an OpenMP read-only reduction over a 1 GiB buffer (best of 5)\n"
    "  copy   a parallel memcpy of 512 MiB, counting bytes read + written\n"
    "then the CUDA devices (each with its measured bandwidths), or why there\n"
    "are none: not in this build, or no device or driver found; last, every\n"
    "environment variable pk reads, with its value here.\n"
    "\n"
    "options:\n"
    "  --json         print one JSON object instead of text\n"
    "  --no-measure   skip the bandwidth measurements\n"
    "  -h, --help     this text\n";

typedef struct info {
    pk_sysinfo sys;
    const char *isa, *prefetch;
    int threads;
    double read_gbps, copy_gbps; /* 0: not measured */
    const char *blas;
} info;

static void fmt_bytes(char *buf, size_t len, int64_t b)
{
    if (b >= (int64_t)1 << 30 && b % ((int64_t)1 << 30) == 0)
        snprintf(buf, len, "%lld GiB", (long long)(b >> 30));
    else if (b >= (int64_t)1 << 30) snprintf(buf, len, "%.1f GiB", (double)b / (1 << 30));
    else if (b >= 1 << 20) snprintf(buf, len, "%lld MiB", (long long)(b >> 20));
    else snprintf(buf, len, "%lld KiB", (long long)(b >> 10));
}

static void print_text(const info *in)
{
    const pk_sysinfo *s = &in->sys;
    char buf[64];
    printf("pk %s\n\nCPU\n", pk_version());
    printf("  %-17s %s\n", "model", s->model);
    printf("  %-17s %d physical, %d logical, %d socket%s\n", "cores", s->cores,
           s->logical_cpus, s->sockets, s->sockets == 1 ? "" : "s");
    fmt_bytes(buf, sizeof buf, s->mem_bytes);
    printf("  %-17s %s\n", "memory", buf);
    for (int i = 0; i < s->ncaches; i++) {
        const pk_cache_info *c = &s->caches[i];
        char name[32];
        const char *kind = strcmp(c->type, "Data") == 0          ? "d"
                           : strcmp(c->type, "Instruction") == 0 ? "i"
                                                                 : "";
        snprintf(name, sizeof name, "L%d%s cache", c->level, kind);
        fmt_bytes(buf, sizeof buf, c->size);
        printf("  %-17s %s, %d-byte lines, shared by %d CPU%s\n", name, buf,
               c->line, c->shared_cpus, c->shared_cpus == 1 ? "" : "s");
    }
    printf("  %-17s %s", "SIMD path", in->isa);
    const char *env = getenv("PK_CPU_ISA");
    if (env && *env) printf(" (PK_CPU_ISA=%s)", env);
    printf("; supported:");
    for (int i = 0; i < pk_isa_count; i++)
        if (pk_isa_supported(pk_isa_names[i])) printf(" %s", pk_isa_names[i]);
    printf("\n  %-17s %s", "prefetch", in->prefetch);
    env = getenv("PK_CPU_PREFETCH");
    if (env && *env) printf(" (PK_CPU_PREFETCH=%s)", env);
    printf(" (whole-array loops hint into L1, axis-0 sweeps into L2: l1, on Intel and Zen 4 with"
           " AVX-512; the reverse: l2)");
    printf("\n  %-17s %d of %d processors\n", "OpenMP threads", in->threads,
           omp_get_num_procs());
    if (in->read_gbps > 0) {
        printf("  %-17s %.1f GB/s (OpenMP read-only reduction, 1 GiB, best of %d)\n",
               "read bandwidth", in->read_gbps, PK_CEILING_REPS);
        printf("  %-17s %.1f GB/s (parallel memcpy 512 MiB, read + write counted)\n",
               "copy bandwidth", in->copy_gbps);
    }
    printf("  %-17s %s\n", "BLAS (bench peer)", in->blas ? in->blas : "none");
    const char *core = pk_peer_blas_better_coretype();
    if (core)
        printf("  %-17s OpenBLAS does not know this CPU (Prescott kernels); pk bench sets "
               "OPENBLAS_CORETYPE=%s\n", "", core);
    /* The CUDA section follows, from the GPU bench: "CUDA device N: ..." per
     * device, or one "CUDA: ..." line saying why there is none. */
    printf("\n");
    fflush(stdout);
}

static void print_json(const info *in)
{
    const pk_sysinfo *s = &in->sys;
    printf("{\"version\": \"%s\", \"cpu\": {\"model\": ", pk_version());
    pk_json_str(stdout, s->model);
    printf(", \"logical_cpus\": %d, \"cores\": %d, \"sockets\": %d, "
           "\"memory_bytes\": %lld, \"caches\": [",
           s->logical_cpus, s->cores, s->sockets, (long long)s->mem_bytes);
    for (int i = 0; i < s->ncaches; i++) {
        const pk_cache_info *c = &s->caches[i];
        printf("%s{\"level\": %d, \"type\": ", i ? ", " : "", c->level);
        pk_json_str(stdout, c->type);
        printf(", \"size_bytes\": %lld, \"line_bytes\": %d, \"shared_cpus\": %d}",
               (long long)c->size, c->line, c->shared_cpus);
    }
    printf("], \"isa\": ");
    pk_json_str(stdout, in->isa);
    printf(", \"prefetch\": ");
    pk_json_str(stdout, in->prefetch);
    printf(", \"isa_supported\": [");
    for (int i = 0, k = 0; i < pk_isa_count; i++)
        if (pk_isa_supported(pk_isa_names[i]))
            printf("%s\"%s\"", k++ ? ", " : "", pk_isa_names[i]);
    printf("], \"omp_threads\": %d, \"read_gbps\": ", in->threads);
    if (in->read_gbps > 0) pk_json_num(stdout, in->read_gbps);
    else fputs("null", stdout);
    printf(", \"copy_gbps\": ");
    if (in->copy_gbps > 0) pk_json_num(stdout, in->copy_gbps);
    else fputs("null", stdout);
    printf(", \"bandwidth_bytes\": %zu, \"blas_peer\": ", PK_CEILING_BYTES);
    if (in->blas) pk_json_str(stdout, in->blas);
    else fputs("null", stdout);
    printf("}, \"cuda\": ");
    fflush(stdout);
}

/* The environment variables pk reads (pk_env_vars): text rows, or the
 * JSON object's "environment" member. */
static void print_env(int json)
{
    pk_env_var vars[32];
    int n = pk_env_vars(vars, 32);
    if (n > 32) n = 32;
    if (json) {
        printf(", \"environment\": [");
        for (int i = 0; i < n; i++) {
            printf("%s{\"name\": \"%s\", \"values\": ", i ? ", " : "", vars[i].name);
            pk_json_str(stdout, vars[i].values);
            printf(", \"value\": ");
            if (vars[i].value) pk_json_str(stdout, vars[i].value);
            else fputs("null", stdout);
            printf("}");
        }
        printf("]");
        return;
    }
    printf("\nEnvironment (what pk reads; unset: the default)\n");
    for (int i = 0; i < n; i++)
        printf("  %-17s %-9s %s: %s\n", vars[i].name, vars[i].value ? vars[i].value : "unset",
               vars[i].values, vars[i].what);
}

int pk_cmd_info(int argc, char **argv, pk_cli_mode mode)
{
    int json = 0, measure = 1;
    for (int i = 1; i < argc; i++) {
        if (pk_is_help(argv[i])) {
            fputs(usage, stdout);
            return 0;
        } else if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (strcmp(argv[i], "--no-measure") == 0) {
            measure = 0;
        } else if (argv[i][0] == '-') {
            return pk_usage_error("info", "unknown option '%s'", argv[i]);
        } else {
            return pk_usage_error("info", "unexpected argument '%s'", argv[i]);
        }
    }
    if (mode == PK_CLI_CHECK) return 0;

    int rc = 0;
    info in = {0};
    pk_sysinfo_read(&in.sys);
    pk_ctx *ctx = NULL;
    pk_status cs = pk_ctx_create(&ctx, PK_BACKEND_CPU, 0);
    if (cs != PK_OK) { /* a bad PK_CPU_ISA value is a usage error */
        fprintf(stderr, "pk info: %s\n", pk_last_create_error());
        rc = cs == PK_ERR_ARG ? PK_EXIT_USAGE : PK_EXIT_FAIL;
    }
    pk_ctx_destroy(ctx);
    in.isa = pk_cpu_isa();
    in.prefetch = pk_cpu_prefetch();
    in.threads = omp_get_max_threads();
    in.blas = pk_peer_blas_config();
    if (measure && pk_cpu_ceilings(PK_CEILING_BYTES, PK_CEILING_REPS, &in.read_gbps,
                                   &in.copy_gbps) != 0) {
        fprintf(stderr, "pk info: no memory for the %zu-byte bandwidth buffer\n",
                PK_CEILING_BYTES);
        rc = PK_EXIT_FAIL;
    }

    if (json) print_json(&in);
    else print_text(&in);
    pk_status s = pk_bench_gpu_info(stdout, json);
    print_env(json);
    if (json) puts("}");
    if (s != PK_OK) {
        fprintf(stderr, "pk info: CUDA devices: %s\n", pk_status_str(s));
        rc = PK_EXIT_FAIL;
    }
    return rc;
}
