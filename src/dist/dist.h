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
    double timeout;        /* seconds one collective step may wait; 0: for ever */
    pk_status failed;      /* set once a collective failed or timed out, for good */
    char why[PK__MSG_MAX]; /* that failure's message */
    /* The exchange area of the agreements and gathers: this rank's record,
     * then every rank's, PK__DIST_RECORD bytes each. Allocated once: no
     * allocation per call, and a collective that timed out may still write
     * it (then it is orphaned at destroy, not freed). */
    char *xbuf;
#ifdef PK_HAVE_NCCL
    ncclComm_t nccl;   /* CUDA backend only; NULL once aborted */
    void *comm_stream; /* cudaStream_t of the panel broadcasts */
    void *async_done;  /* cudaEvent_t after the last all-reduce left running */
    int async_pending; /* that all-reduce has not been seen complete yet */
#endif
};

/* Bytes of one rank's record in the exchange area (a multiple of 16). */
#define PK__DIST_RECORD 64
/* The default timeout of a collective step, in seconds (docs/API.md). */
#define PK__DIST_DEFAULT_TIMEOUT 600.0
/* pk__dist_poll's result when the timeout passed (MPI's codes are >= 0). */
#define PK__DIST_TIMED_OUT (-1)

/* PK_DIST_TIMEOUT's value (NULL or empty: the default) into *seconds;
 * PK_ERR_ARG when it is not a finite number >= 0. */
pk_status pk__dist_parse_timeout(const char *env, double *seconds);
/* Wait for n requests of one collective step for at most `timeout` seconds
 * (0: MPI_Waitall): MPI_SUCCESS, MPI's error or PK__DIST_TIMED_OUT;
 * *waited: the seconds it took. The requests stay active on a timeout. */
int pk__dist_poll(MPI_Request *req, int n, double timeout, double *waited);
/* The pause between two polls after waiting `waited` seconds. */
void pk__dist_backoff(double waited);
/* pk__dist_poll under d's timeout, naming `what` in the message; a timeout
 * or an MPI error makes d failed (pk__dist_poison): PK_ERR_COMM. */
pk_status pk__dist_wait(pk_dist *d, const char *fn, const char *what, MPI_Request *req, int n);
/* The failure of step `what` that waited `waited` seconds in vain; d
 * becomes failed. */
pk_status pk__dist_timed_out(pk_dist *d, const char *fn, const char *what, double waited);
/* Record an MPI failure of call `what` in d's context; d becomes failed. */
pk_status pk__dist_mpi_fail(pk_dist *d, int err, const char *fn, const char *what);
/* Make d failed with status s and the context's current message; returns s. */
pk_status pk__dist_poison(pk_dist *d, pk_status s);
/* The start of every collective entry point: PK_ERR_ARG for a handle that is
 * not live, the recorded failure for a failed one. On CUDA, an all-reduce a
 * previous call left running is waited for (bounded) when
 * wait_left_running, else only looked at (another one may queue behind it
 * on the stream: consecutive device all-reduces stay asynchronous). */
pk_status pk__dist_enter(pk_dist *d, const char *fn, int wait_left_running);
/* Keep p allocated until the process exits: an unfinished collective may
 * still write it. */
void pk__dist_orphan(void *p);
/* All-gather this rank's record `mine` (bytes <= PK__DIST_RECORD) through
 * the exchange area: every rank's record in rank order, valid until the
 * next exchange on d. NULL when the exchange failed (*s: its failure);
 * else *s stays this rank's own status. `what` names the step. */
void *pk__dist_gather(pk_dist *d, const char *fn, const char *what, const void *mine,
                      size_t bytes, pk_status *s);

/* The collective verdict on each rank's local status s: PK_OK when every
 * rank's is PK_OK; else this rank's own status (its message kept), or, for
 * a rank that was fine, the failing rank's status with a message naming it.
 * Every rank must call it at the same point. */
pk_status pk__dist_agree(pk_dist *d, const char *fn, pk_status s);

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
/* NCCL's end: finalized when flush (waits at most d's timeout), else or
 * when that fails aborted (at once). */
void pk__dist_nccl_fini(pk_dist *d, int flush);
/* The all-reduce a previous call left running: waited for (bounded) when
 * `block`, else looked at once. PK_OK when there is none, it completed or
 * (not block) it is still running; else d becomes failed, NCCL aborted. */
pk_status pk__dist_nccl_settle(pk_dist *d, const char *fn, int block);
/* The CUDA backend's panel loop of pk_dist_gemm with B broadcast from
 * b_root (arguments checked and agreed). */
pk_status pk__dist_gemm_bcast_nccl(pk_dist *d, const pk__gemm_args *g,
                                   int b_root, int64_t panel);

#endif
