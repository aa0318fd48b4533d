/* `pk bench` on CUDA: each case goes through pk_bench_gpu_run (bench/gpu.h),
 * which times pk and its peer (CUB, cuBLAS) with CUDA events on
 * device-resident random inputs and verifies pk's result. */
#include "bench.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Milliseconds to seconds; samples 0: the runner knew only the median. */
static bench_times gpu_times(double median_ms, double min_ms, double max_ms, double noise,
                             int samples)
{
    if (samples <= 0) return (bench_times){median_ms * 1e-3, NAN, NAN, NAN, 0, 0};
    return (bench_times){median_ms * 1e-3, min_ms * 1e-3, max_ms * 1e-3, noise, samples, 0};
}

void bench_gpu_run(pk_ctx *ctx, const bench_case *bc, const bench_device *dev,
                   bench_row *row)
{
    memset(row, 0, sizeof *row);
    row->bc = *bc;
    row->backend = PK_BACKEND_CUDA;
    int is_axpy = bc->c.id == PK_BENCH_AXPY;
    row->ceiling = dev->ceil_names[is_axpy];
    row->ceiling_gbps = dev->ceil_gbps[is_axpy];

    pk_bench_result r;
    memset(&r, 0, sizeof r);
    char err[256] = "";
    pk_status s = pk_bench_gpu_run(ctx, &bc->c, &r, err, sizeof err);
    if (s != PK_OK) {
        row->status = s == PK_ERR_UNSUPPORTED ? BENCH_SKIPPED : BENCH_FAILED;
        /* A long message is cut to the note's size: it is a summary. */
        int len = snprintf(row->note, sizeof row->note, "%s: %s", pk_status_str(s),
                           err[0] ? err : pk_ctx_error(ctx));
        (void)len;
        return;
    }
    row->status = r.verified ? BENCH_OK : BENCH_FAILED;
    row->t = gpu_times(r.time_ms, r.time_min_ms, r.time_max_ms, r.noise, r.samples);
    row->bytes = bench_case_moved(bc, PK_BACKEND_CUDA);
    if (bench_is_compute(bc->c.id)) row->ops = bench_case_ops(bc);
    row->ceiling_ops = r.ceiling_ops;
    snprintf(row->ceiling_ops_name, sizeof row->ceiling_ops_name, "%s", r.ceiling);
    snprintf(row->note, sizeof row->note, "%s", r.note);
    if (r.peer[0] && r.peer_time_ms > 0) {
        row->npeers = 1;
        snprintf(row->peers[0].name, sizeof row->peers[0].name, "%s", r.peer);
        row->peers[0].t = gpu_times(r.peer_time_ms, r.peer_time_min_ms, r.peer_time_max_ms,
                                    r.peer_noise, r.peer_samples);
    }
}
