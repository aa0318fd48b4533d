/* `pk bench` on the CPU: the bits rows (placeholder until the kernels land). */
#include "bench.h"

#include <stdio.h>
#include <string.h>

void bench_cpu_run_bits(pk_ctx *ctx, const bench_case *bc, const bench_device *dev,
                      const bench_opts *o, bench_row *row)
{
    (void)ctx, (void)dev, (void)o;
    memset(row, 0, sizeof *row);
    row->bc = *bc;
    row->backend = PK_BACKEND_CPU;
    row->status = BENCH_SKIPPED;
    snprintf(row->note, sizeof row->note, "%s: no CPU bench yet", bc->c.kernel);
}
