/* `pk bench`: the run. Opens the backend and its device, measures the
 * ceilings, then runs each case, measures again a row whose timings other
 * processes disturbed (a bounded number of times), flags what stays
 * doubtful, and hands every row to the outputs as it is done. */
#include "bench.h"
#include "cli.h"
#include "cpu_peers.h"
#include "sysinfo.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Tries of a row whose timings look disturbed, the first one included. */
#define BENCH_TRIES 3
/* More than this share of a contender's samples disturbed (bench_times):
 * its median may be one of them. */
#define BENCH_MAX_LOST 0.25
/* A figure above this percent of its ceiling cannot be right. */
#define BENCH_MAX_CEILING_PCT 150

/* Open the context of want (from pk_backend_choice, which already applied
 * PK_BACKEND): auto is CUDA when a device exists and this build's GPU bench
 * can use it. from names the choice in messages. Returns NULL after printing
 * why, with *rc the exit status: a bad value (PK_CPU_ISA=bogus) is a usage
 * error, a backend that cannot run here a failure. */
static pk_ctx *open_backend(pk_backend want, const char *from, int device, int *rc)
{
    pk_ctx *ctx = NULL;
    const char *resolved = "";
    if (want == PK_BACKEND_AUTO && !pk_bench_gpu_available())
        want = PK_BACKEND_CPU, resolved = " (cpu)";
    *rc = PK_EXIT_FAIL;
    pk_status s = pk_ctx_create(&ctx, want, device);
    if (s != PK_OK) {
        fprintf(stderr, "pk bench: %s%s: %s\n", from, resolved, pk_last_create_error());
        if (s == PK_ERR_ARG) *rc = PK_EXIT_USAGE;
        return NULL;
    }
    if (pk_ctx_backend(ctx) == PK_BACKEND_CUDA &&
        (!pk_bench_gpu_available() || pk_bench_gpu_select(device) != PK_OK)) {
        fprintf(stderr, "pk bench: %s: this build's GPU bench has no "
                        "CUDA (bench/gpu.cmake was not built)\n", from);
        pk_ctx_destroy(ctx);
        return NULL;
    }
    return ctx;
}

/* The largest cache level's total size: its size times its instances. */
static int64_t llc_bytes(const pk_sysinfo *si)
{
    const pk_cache_info *best = NULL;
    for (int i = 0; i < si->ncaches; i++)
        if (strcmp(si->caches[i].type, "Instruction") &&
            (!best || si->caches[i].level > best->level))
            best = &si->caches[i];
    if (!best) return 0;
    int share = best->shared_cpus > 0 ? best->shared_cpus : si->logical_cpus;
    int instances = share > 0 ? (si->logical_cpus + share - 1) / share : 1;
    return best->size * (instances > 0 ? instances : 1);
}

static int measure_device(pk_ctx *ctx, bench_device *d, const bench_opts *o, int device)
{
    d->backend = pk_ctx_backend(ctx);
    d->seed = o->seed;
    double load[1];
    d->load1 = getloadavg(load, 1) == 1 ? load[0] : -1;
    snprintf(d->describe, sizeof d->describe, "%s", pk_ctx_describe(ctx));
    if (d->backend == PK_BACKEND_CUDA) {
        snprintf(d->name, sizeof d->name, "%s", pk_ctx_describe(ctx));
        d->cuda_device = device;
        pk_bench_gpu_versions(&d->cuda_runtime, &d->cuda_driver);
        d->ceil_names[0] = "read", d->ceil_names[1] = "d2d";
        pk_status s = pk_bench_gpu_ceilings(device, &d->ceil_gbps[1], &d->ceil_gbps[0]);
        if (s != PK_OK) {
            fprintf(stderr, "pk bench: measuring the GPU ceilings: %s\n", pk_status_str(s));
            return -1;
        }
        return 0;
    }
    pk_sysinfo si;
    pk_sysinfo_read(&si);
    snprintf(d->name, sizeof d->name, "%s", si.model);
    d->llc_bytes = llc_bytes(&si);
    d->mem_bytes = si.mem_bytes;
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

/* ---- Judging a row ---------------------------------------------------- */

/* How disturbed one contender's timings are: 1 or more is too much. Its
 * noise against the limit; its median against twice its fastest sample
 * (most samples slowed down alike); the share of its samples that lost the
 * CPU to another process, against a quarter (then the median may be one of
 * them: an OpenMP peer at a steady 8 ms for a 1 us call, noise 0). */
static double disturbance(const char *who, const bench_times *t, double max_noise, int gpu,
                          char *why, size_t len, double worst)
{
    if (t->samples < 2 || !(t->min > 0)) return worst;
    /* CUDA times each call between events: below 20 us (the CPU's shortest
     * batch) their spread is the events' resolution, not disturbance. */
    double by_noise = gpu && t->median < 20e-6 ? 0
                      : max_noise > 0          ? t->noise / max_noise
                                               : INFINITY;
    double by_skew = t->median / (2 * t->min);
    double by_lost = (double)t->disturbed / t->samples / BENCH_MAX_LOST;
    if (by_lost >= 1 && by_lost >= worst && by_lost >= by_noise) {
        snprintf(why, len, "%s lost its CPU to other processes in %d of %d samples", who,
                 t->disturbed, t->samples);
        return by_lost;
    }
    if (by_noise >= worst && by_noise >= by_skew) {
        snprintf(why, len, "%s's samples vary +-%.0f%% (--max-noise %.0f%%)", who,
                 100 * t->noise, 100 * max_noise);
        return by_noise;
    }
    if (by_skew > worst) {
        snprintf(why, len, "%s's median is %.3gx its fastest sample", who, t->median / t->min);
        return by_skew;
    }
    return worst;
}

static double row_disturbance(const bench_row *r, double max_noise, char *why, size_t len)
{
    int gpu = r->backend == PK_BACKEND_CUDA;
    double worst = disturbance("pk", &r->t, max_noise, gpu, why, len, 0);
    for (int i = 0; i < r->npeers; i++)
        worst = disturbance(r->peers[i].name, &r->peers[i].t, max_noise, gpu, why, len, worst);
    return worst;
}

/* A figure far above its ceiling: the ceiling (measured at the start) or
 * the time is off. Memory-bound rows only: on the CPU those far past the
 * caches, on CUDA all (inputs rotate through copies larger than L2). */
static void check_ceiling(bench_row *r, const bench_device *d)
{
    double pct = NAN;
    if (bench_is_compute(r->bc.c.id)) pct = report_ops_pct(r);
    else if (d->backend == PK_BACKEND_CUDA || (d->llc_bytes > 0 && r->bytes > 2.0 * (double)d->llc_bytes))
        pct = report_ceiling_pct(r);
    if (pct > BENCH_MAX_CEILING_PCT && !r->unreliable[0])
        snprintf(r->unreliable, sizeof r->unreliable, "%.0f%% of its ceiling: the ceiling "
                 "(measured at the start) or this time is off", pct);
}

/* ---- The run ----------------------------------------------------------- */

static void progress(int quiet, int i, int n, const bench_case *c, int attempt, int done)
{
    static int tty = -1;
    if (tty < 0) tty = isatty(STDERR_FILENO);
    char size[64];
    report_size(size, sizeof size, c);
    if (tty) {
        fputs("\r\033[K", stderr);
        if (!done)
            fprintf(stderr, "[%d/%d] %s %s %s%s ...", i + 1, n, c->c.kernel,
                    pk_dtype_name(c->c.dtype), size, attempt ? " (again: timings disturbed)" : "");
    } else if (!done && !quiet) {
        fprintf(stderr, "pk bench: [%d/%d] %s %s %s%s\n", i + 1, n, c->c.kernel,
                pk_dtype_name(c->c.dtype), size, attempt ? " (again: timings disturbed)" : "");
    }
    fflush(stderr);
}

/* One try of a case. On the CPU a case that would not fit in memory is
 * skipped rather than run into the OOM killer (the GPU runner reports its
 * own allocation failures). */
static void run_case(pk_ctx *ctx, bench_cpu *cpu, const bench_case *c, const bench_device *dev,
                     bench_row *row)
{
    if (dev->backend == PK_BACKEND_CUDA) {
        bench_gpu_run(ctx, c, dev, row);
        return;
    }
    double need = bench_case_bytes(c);
    if (dev->mem_bytes > 0 && need > 0.8 * (double)dev->mem_bytes) {
        memset(row, 0, sizeof *row);
        row->bc = *c;
        row->backend = dev->backend;
        row->status = BENCH_SKIPPED;
        snprintf(row->note, sizeof row->note, "needs %.1f GiB of memory; this machine has %.1f GiB",
                 need / (1 << 30), (double)dev->mem_bytes / (1 << 30));
        return;
    }
    bench_cpu_run(cpu, ctx, c, dev, row);
}

static void elapsed_text(char *buf, size_t len, double s)
{
    if (s < 60) snprintf(buf, len, "%.0f s", s);
    else snprintf(buf, len, "%d min %02d s", (int)(s / 60), (int)fmod(s, 60));
}

int bench_main(const bench_opts *o, pk_backend backend, int backend_given, int device,
               const int *want, unsigned dtypes, const int64_t *sizes, int nsizes, int all,
               bench_run *run)
{
    const char *from;
    char from_device[32];
    int rc = pk_backend_choice("bench", &backend, backend_given, &from);
    if (rc) return rc;
    if (device >= 0) { /* --device N chose CUDA: messages name it */
        snprintf(from_device, sizeof from_device, "--device %d", device);
        from = from_device;
    } else {
        device = 0;
    }
    if ((rc = bench_out_open()) != 0) return rc;
    pk_ctx *ctx = open_backend(backend, from, device, &rc);
    if (!ctx) return bench_out_discard(), rc;
    rc = 0;
    int gpu = pk_ctx_backend(ctx) == PK_BACKEND_CUDA;
    bench_set set = o->quick ? BENCH_SET_QUICK : all ? BENCH_SET_ALL : BENCH_SET_HEADLINE;
    bench_plan p = {0}, full = {0};
    bench_plan_opts po = {set, want, dtypes, gpu, sizes, nsizes};
    bench_plan_opts pall = {BENCH_SET_ALL, NULL, 0, gpu, NULL, 0};
    if (bench_plan_make(&p, &po) != 0 || bench_plan_make(&full, &pall) != 0) {
        fputs("pk bench: out of memory\n", stderr);
        rc = PK_EXIT_FAIL;
    } else if (p.n == 0) {
        rc = pk_usage_error("bench", "no cases: dot, axpy and gemm take only f32 and f64, "
                            "custom f32, gemm_tf32 and gemm_fp32_accurate run on CUDA only");
    }
    run->ncases = p.n, run->all_cases = full.n;
    free(full.cases);
    if (!rc && o->list) { /* the cases, without running them */
        for (int i = 0; i < p.n; i++) {
            char id[160];
            report_case_id(id, sizeof id, &p.cases[i]);
            puts(id);
        }
        pk_ctx_destroy(ctx);
        free(p.cases);
        bench_out_discard();
        return 0;
    }
    bench_device dev = {0};
    if (rc || measure_device(ctx, &dev, o, device) != 0) {
        pk_ctx_destroy(ctx);
        free(p.cases);
        bench_out_discard();
        return rc ? rc : PK_EXIT_FAIL;
    }
    bench_cpu *cpu = gpu ? NULL : bench_cpu_new(o);
    if (!gpu && !cpu) {
        fputs("pk bench: out of memory\n", stderr);
        pk_ctx_destroy(ctx);
        free(p.cases);
        bench_out_discard();
        return PK_EXIT_FAIL;
    }
    bench_out_begin(&dev, run);
    double start = pk_bench_now();
    int failed = 0, skipped = 0, unreliable = 0, quiet = o->quick || bench_out_table() != NULL;
    int max_tries = o->quick ? 1 : BENCH_TRIES;
    for (int i = 0; i < p.n; i++) {
        bench_row row, best;
        double best_d = INFINITY, first_d = 0;
        char why[sizeof row.unreliable] = "", best_why[sizeof why] = "";
        int tries = 0;
        /* Measured again while disturbed, up to BENCH_TRIES in all (--quick:
         * once); not a third time when the second fared no better (a
         * steady load). */
        for (;;) {
            progress(quiet, i, p.n, &p.cases[i], tries, 0);
            run_case(ctx, cpu, &p.cases[i], &dev, &row);
            double d = row.status == BENCH_OK ? row_disturbance(&row, o->max_noise, why, sizeof why)
                                              : 0;
            if (++tries == 1) first_d = d;
            if (d < best_d || tries == 1) best = row, best_d = d, memcpy(best_why, why, sizeof why);
            if (best_d < 1 || tries >= max_tries || (tries == 2 && d >= first_d)) break;
        }
        progress(quiet, i, p.n, &p.cases[i], 0, 1);
        best.attempts = tries;
        if (best_d >= 1)
            snprintf(best.unreliable, sizeof best.unreliable, "%s (%d tr%s)", best_why, tries,
                     tries == 1 ? "y" : "ies");
        if (best.status == BENCH_OK) check_ceiling(&best, &dev);
        failed += best.status == BENCH_FAILED;
        skipped += best.status == BENCH_SKIPPED;
        unreliable += best.unreliable[0] != 0;
        bench_out_row(&dev, &best);
    }
    double elapsed = pk_bench_now() - start;
    rc = bench_out_end(failed, skipped, unreliable, elapsed);

    /* The summary: under the table, else on stderr. */
    FILE *sum = bench_out_table() ? stdout : stderr;
    char took[32];
    elapsed_text(took, sizeof took, elapsed);
    fprintf(sum, "\n%d row%s in %s: %d verified", p.n, p.n == 1 ? "" : "s", took,
            p.n - failed - skipped);
    if (failed) fprintf(sum, ", %d FAILED", failed);
    if (skipped) fprintf(sum, ", %d skipped", skipped);
    if (unreliable)
        fprintf(sum, ", %d UNRELIABLE (timings disturbed by other processes? load average "
                     "%.2f at the start)", unreliable, dev.load1);
    fprintf(sum, "\n");
    if (!strcmp(run->set, "headline"))
        fprintf(sum, "These are the headline rows: each kernel once, at the size that shows its "
                     "ceiling.\nEvery kernel at every size: pk bench --all (%d cases); one "
                     "kernel at every size: pk bench KERNEL.\n", run->all_cases);
    fflush(sum);
    bench_cpu_free(cpu);
    free(p.cases);
    pk_ctx_destroy(ctx);
    if (failed) fputs("pk bench: some results FAILED verification or errored\n", stderr);
    return failed ? PK_EXIT_FAIL : rc;
}
