/* The CPU backend: its ops table and context life cycle. */
#include "bits.h"
#include "cpu.h"

#include <omp.h>
#include <stdio.h>

static pk_status cpu_init(pk_ctx *ctx, int device)
{
    (void)device;
    pk_status s;
    const pk__cpu_kernels *k = pk__cpu_table(ctx, &s);
    if (s != PK_OK) return s;
    ctx->impl = (void *)k;
    snprintf(ctx->describe, sizeof ctx->describe, "cpu (%s path, %s prefetch, %d threads)",
             k->name, pk_cpu_prefetch(), omp_get_max_threads());
    return PK_OK;
}

static void cpu_fini(pk_ctx *ctx) { (void)ctx; }

static pk_status cpu_set_stream(pk_ctx *ctx, void *stream)
{
    (void)stream;
    return pk__fail(ctx, PK_ERR_UNSUPPORTED,
                    "pk_ctx_set_stream: the CPU backend has no streams");
}

static pk_status cpu_sync(pk_ctx *ctx)
{
    (void)ctx;
    return PK_OK;
}

int pk__cpu_team(const pk_ctx *ctx, int64_t elems, int64_t tasks)
{
    if (elems < PK__PAR_MIN || tasks < 2) return 1;
    int t = ctx->threads > 0 ? ctx->threads : omp_get_max_threads();
    return t > tasks ? (int)tasks : t;
}

const pk__backend_ops pk__cpu_ops = {
    .init = cpu_init,
    .fini = cpu_fini,
    .set_stream = cpu_set_stream,
    .sync = cpu_sync,
    .reduce = pk__cpu_reduce,
    .reduce_axis = pk__cpu_reduce_axis,
    .dot = pk__cpu_dot,
    .axpy = pk__cpu_axpy,
    .reduce_partial = pk__cpu_reduce_partial,
    .bits_pack = pk__cpu_bits_pack,
    .bits_unpack = pk__cpu_bits_unpack,
    .bgemm = pk__cpu_bgemm,
    .hamming = pk__cpu_hamming,
    .hamming_topk = pk__cpu_hamming_topk,
    .reducer_init = pk__cpu_reducer_init,
    .reducer_reduce = pk__cpu_reducer_reduce,
    .reducer_reduce_axis = pk__cpu_reducer_axis,
    .gemm = pk__cpu_gemm,
};
