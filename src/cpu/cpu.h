/* The CPU backend's private declarations. */
#ifndef PK_CPU_H
#define PK_CPU_H

#include "../core/internal.h"
#include "kernels/kernels.h"

/* Inputs below this many elements run on the calling thread: waking a team
 * costs more than it saves (n <= 4096 never threads). Measured: a 2^16 f32
 * sum takes ~5 us on one core, a team wake-up 10 us idle and milliseconds when
 * the cores are busy; at 2^18 (1 MiB of f32) one core needs ~60 us. */
#define PK__PAR_MIN ((int64_t)1 << 18)
/* Whole arrays of at most this many elements take the serial row kernel:
 * the block kernel's lane set-up costs more than it saves there. */
#define PK__SERIAL_MAX 16

/* The table chosen for this process; on a bad PK_CPU_ISA, sets *status and
 * the message in ctx. */
const pk__cpu_kernels *pk__cpu_table(pk_ctx *ctx, pk_status *status);
/* The chosen table's user-defined-reduction loops (its udr member). */
const struct pk__udr_kernels *pk__cpu_udr_kernels(void);

/* Threads to use for work of this many elements split into tasks. */
int pk__cpu_team(const pk_ctx *ctx, int64_t elems, int64_t tasks);

pk_status pk__cpu_reduce(pk_ctx *ctx, pk_op op, pk_dtype t, const void *x,
                         int64_t n, void *out);
pk_status pk__cpu_reduce_axis(pk_ctx *ctx, pk_op op, pk_dtype t,
                              const void *x, int64_t rows, int64_t cols,
                              int64_t ld, int axis, void *out);
pk_status pk__cpu_reduce_partial(pk_ctx *ctx, pk_op op, pk_dtype t,
                                 const void *x, int64_t n, pk__acc *acc);
pk_status pk__cpu_dot(pk_ctx *ctx, pk_dtype t, int64_t n, const void *x,
                      const void *y, void *out);
pk_status pk__cpu_axpy(pk_ctx *ctx, pk_dtype t, int64_t n, const void *alpha,
                       const void *x, void *y);
/* pk_gemm (gemm.c). */
pk_status pk__cpu_gemm(pk_ctx *ctx, const pk__gemm_args *a);

/* User-defined reductions (udr.c). */
pk_status pk__cpu_reducer_init(pk_ctx *ctx, pk_reducer *red);
pk_status pk__cpu_reducer_reduce(pk_ctx *ctx, const pk_reducer *red,
                                 const void *x, int64_t n, int64_t ibase, void *out);
pk_status pk__cpu_reducer_axis(pk_ctx *ctx, const pk_reducer *red,
                               const void *x, int64_t rows, int64_t cols,
                               int64_t ld, int axis, void *out);

#endif
