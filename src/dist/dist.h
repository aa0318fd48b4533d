/* The distributed layer's private declarations (src/dist/). */
#ifndef PK_DIST_H
#define PK_DIST_H

#include "../core/internal.h"

#include <mpi.h>

#ifdef PK_HAVE_NCCL
#include <nccl.h>
#endif

struct pk_dist {
    uint32_t magic; /* PK__MAGIC_DIST while alive */
    pk_ctx *ctx;
    MPI_Comm comm; /* our duplicate, errors returned */
    int rank, size;
#ifdef PK_HAVE_NCCL
    ncclComm_t nccl; /* CUDA backend only */
    void *comm_stream; /* cudaStream_t of the panel broadcasts */
#endif
};

/* Record an MPI failure of call `what` in d's context. */
pk_status pk__dist_mpi_fail(pk_dist *d, int err, const char *fn,
                            const char *what);
#define PK_MPI(d, fn, call)                                              \
    do {                                                                 \
        int pk__e = (call);                                              \
        if (pk__e != MPI_SUCCESS) return pk__dist_mpi_fail(d, pk__e, fn, #call); \
    } while (0)

/* The collective verdict on each rank's local status s: PK_OK when every
 * rank's is PK_OK; else this rank's own status (its message kept), or, for
 * a rank that was fine, the failing rank's status with a message naming it.
 * Every rank must call it at the same point. */
pk_status pk__dist_agree(pk_dist *d, const char *fn, pk_status s);

/* Room for a call's per-rank records, per_rank bytes each: `stack`
 * (stack_bytes) when d->size of them fit, else the heap. Past the stack the
 * allocation is agreed on together with the rank's status *s so far (a rank
 * out of memory must not leave the others waiting in the next collective):
 * NULL, with the verdict in *s, when some rank failed. Every rank calls it at
 * the same point. Free with pk__dist_scratch_free. */
void *pk__dist_scratch(pk_dist *d, const char *fn, void *stack, size_t stack_bytes,
                       size_t per_rank, pk_status *s);
void pk__dist_scratch_free(void *p, const void *stack);
/* Ranks whose records fit the callers' stack buffers (a build may lower it
 * to test the heap path with few ranks). */
#ifndef PK__DIST_STACK_RANKS
#define PK__DIST_STACK_RANKS 64
#endif

/* After an all-gather of d->size records of `size` bytes whose first field
 * is an int32_t status: PK_OK when none failed; else, for the first rank that
 * failed, this rank's own status `mine` (its message kept) or that rank's
 * status with a message naming it. */
pk_status pk__dist_gathered_status(pk_dist *d, const char *fn, pk_status mine,
                                   const void *records, size_t size);

/* Copy bytes between any host/device pointers of d's context (the CUDA
 * backend's stream, waited for, when either is device memory); plain memcpy
 * otherwise. */
pk_status pk__dist_copy(pk_dist *d, void *dst, const void *src, size_t bytes);

pk_status pk__dist_cuda_copy(pk_dist *d, void *dst, const void *src,
                             size_t bytes);
/* ncclAllReduce in two steps. _stage, before the ranks agree (n > 0): the
 * device, and for host memory on either side a device buffer holding send
 * (*buf; NULL when both are device memory). _unstage frees *buf when the
 * agreement failed. _allreduce_nccl, on every rank after it succeeded: the
 * collective (in place in buf when staged, then copied to recv). */
pk_status pk__dist_nccl_stage(pk_dist *d, pk_dtype t, const void *send,
                              const void *recv, int64_t n, void **buf);
void pk__dist_nccl_unstage(pk_dist *d, void *buf);
pk_status pk__dist_allreduce_nccl(pk_dist *d, pk_op op, pk_dtype t,
                                  const void *send, void *recv, int64_t n, void *buf);
pk_status pk__dist_nccl_init(pk_dist *d);
void pk__dist_nccl_fini(pk_dist *d);
/* The CUDA backend's panel loop of pk_dist_gemm with B broadcast from
 * b_root (arguments checked and agreed). */
pk_status pk__dist_gemm_bcast_nccl(pk_dist *d, const pk__gemm_args *g,
                                   int b_root, int64_t panel);

#endif
