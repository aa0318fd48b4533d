/* Distributed contexts over MPI, agreement on errors, and the distributed
 * whole-array reduction. Every entry point is collective: a rank with bad
 * arguments still takes part in each collective step, carrying its status,
 * so that all ranks return together (nobody waits for a rank that left). */
#include "dist.h"

#include "../core/check.h"
#include "../core/op_rules.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

pk_status pk__dist_gathered_status(pk_dist *d, const char *fn, pk_status mine,
                                   const void *records, size_t size)
{
    for (int r = 0; r < d->size; r++) {
        int32_t rs;
        memcpy(&rs, (const char *)records + (size_t)r * size, sizeof rs);
        if (!rs) continue;
        if (mine) return mine; /* a failed rank keeps its own message */
        return pk__fail(d->ctx, (pk_status)rs, "%s: rank %d failed (%s)", fn, r,
                        pk_status_str((pk_status)rs));
    }
    return PK_OK;
}

pk_status pk__dist_copy(pk_dist *d, void *dst, const void *src, size_t bytes)
{
    if (pk_ctx_backend(d->ctx) != PK_BACKEND_CUDA) {
        memcpy(dst, src, bytes);
        return PK_OK;
    }
#ifdef PK_HAVE_NCCL
    return pk__dist_cuda_copy(d, dst, src, bytes);
#else
    return pk__fail(d->ctx, PK_ERR_UNSUPPORTED,
                    "pk_dist: this build has no NCCL for the CUDA backend");
#endif
}

/* ---- Contexts ------------------------------------------------------------ */

/* Creation's failure on this rank: the message goes to the thread's create
 * error (there is no context to keep it). When a collective of creation
 * timed out (d->failed) MPI may still write d: it is orphaned, not freed. */
static void create_fail(pk_dist *d, const char *msg)
{
    pk__set_create_error(msg);
    if (!d) return;
    if (d->ctx) pk_ctx_destroy(d->ctx);
    d->ctx = NULL;
    if (d->comm != MPI_COMM_NULL) MPI_Comm_free(&d->comm);
    if (d->failed) pk__dist_orphan(d);
    else pk__free(d);
}

/* What each rank tells the others during creation. */
typedef struct create_rec {
    int32_t status, backend;
} create_rec;

/* All-gather this rank's record (the first `bytes` of the exchange area)
 * into every rank's, during creation, under the timeout: 0, or PK_ERR_COMM
 * with d failed and the message in msg. */
static int create_gather(pk_dist *d, size_t bytes, const char *what, char *msg, size_t len)
{
    MPI_Request req;
    double waited = 0;
    int e = MPI_Iallgather(d->xbuf, (int)bytes, MPI_BYTE, d->xbuf + PK__DIST_RECORD, (int)bytes,
                           MPI_BYTE, d->comm, &req);
    if (e == MPI_SUCCESS) e = pk__dist_poll(&req, 1, d->timeout, &waited);
    if (e == MPI_SUCCESS) return 0;
    d->failed = PK_ERR_COMM;
    if (e == PK__DIST_TIMED_OUT)
        snprintf(msg, len, "pk_dist_create: %s timed out after %.3g s (PK_DIST_TIMEOUT): "
                 "some rank did not take part", what, waited);
    else
        snprintf(msg, len, "pk_dist_create: %s failed", what);
    return PK_ERR_COMM;
}

/* The collective verdict during creation, when some rank may lack a
 * context: 0 when all ranks are fine; else the highest failing status (its
 * lowest rank's), with a message naming that rank for the ranks that were
 * fine. *mixed: whether the ranks resolved different backends. A timeout
 * or an MPI error makes d failed. */
static int create_agree(pk_dist *d, pk_status s, int backend, int *mixed, char *msg,
                        size_t len)
{
    create_rec *mine = (create_rec *)(void *)d->xbuf;
    create_rec *all = (create_rec *)(void *)(d->xbuf + PK__DIST_RECORD);
    *mine = (create_rec){(int32_t)s, backend};
    if (create_gather(d, sizeof *mine, "MPI_Iallgather", msg, len)) return PK_ERR_COMM;
    int worst = 0, at = 0;
    *mixed = 0;
    for (int r = 0; r < d->size; r++) {
        if (all[r].status > worst) worst = all[r].status, at = r;
        *mixed |= all[r].backend != all[0].backend;
    }
    if (worst == PK_OK) return 0;
    if (s == PK_OK)
        snprintf(msg, len, "pk_dist_create: rank %d failed (%s)", at,
                 pk_status_str((pk_status)worst));
    return s == PK_OK ? worst : (int)s;
}

/* This rank's index among the ranks on its node (those with the same
 * processor name), from an all-gather of the names' 64-bit FNV-1a hashes
 * under the handle's timeout. MPI_Comm_split_type would say the same but
 * blocks with no bound; two nodes whose names collide in 64 bits would only
 * share out their GPUs as one node. 0 or PK_ERR_COMM, as create_gather. */
static int node_rank(pk_dist *d, int *local, char *msg, size_t len)
{
    char name[MPI_MAX_PROCESSOR_NAME + 1] = "";
    int n = 0;
    if (MPI_Get_processor_name(name, &n) != MPI_SUCCESS) n = 0;
    uint64_t h = 0xcbf29ce484222325u;
    for (int i = 0; i < n; i++) h = (h ^ (unsigned char)name[i]) * 0x100000001b3u;
    memcpy(d->xbuf, &h, sizeof h);
    if (create_gather(d, sizeof h, "MPI_Iallgather (the node names)", msg, len))
        return PK_ERR_COMM;
    const uint64_t *all = (const uint64_t *)(void *)(d->xbuf + PK__DIST_RECORD);
    *local = 0;
    for (int r = 0; r < d->rank; r++) *local += all[r] == h;
    return 0;
}

pk_status pk_dist_create(pk_dist **out, pk_backend backend, const void *mpi_comm)
{
    char msg[PK__MSG_MAX] = "";
    int inited = 0, finalized = 0, inter = 0, size = 0;
    if (out) *out = NULL; /* on every failure, as documented */
    if (MPI_Initialized(&inited) != MPI_SUCCESS || !inited ||
        MPI_Finalized(&finalized) != MPI_SUCCESS || finalized) {
        create_fail(NULL, "pk_dist_create: MPI is not initialized (call MPI_Init first)");
        return PK_ERR_ARG;
    }
    MPI_Comm base = mpi_comm ? *(const MPI_Comm *)mpi_comm : MPI_COMM_WORLD;
    /* Refused before any collective: MPI_Comm_dup(MPI_COMM_NULL) calls the
     * fatal error handler (a rank left out by MPI_Comm_split holds it), and
     * an intercommunicator crashed MPI_Comm_split_type (the all-gathers
     * would also read the remote group). Every member sees the same. */
    if (base == MPI_COMM_NULL) {
        create_fail(NULL, "pk_dist_create: the communicator is MPI_COMM_NULL");
        return PK_ERR_ARG;
    }
    if (MPI_Comm_test_inter(base, &inter) != MPI_SUCCESS || inter) {
        create_fail(NULL, "pk_dist_create: intercommunicators are not supported "
                          "(MPI_Intercomm_merge gives an intracommunicator)");
        return PK_ERR_ARG;
    }
    /* The exchange area follows the struct (one allocation). */
    pk_dist *d = NULL;
    if (MPI_Comm_size(base, &size) == MPI_SUCCESS)
        d = pk__calloc(1, sizeof *d + (size_t)(size + 1) * PK__DIST_RECORD);
    if (!d) {
        create_fail(NULL, "pk_dist_create: out of memory for the pk_dist");
        return PK_ERR_NOMEM; /* cannot take part: MPI itself is in trouble */
    }
    d->xbuf = (char *)(d + 1);
    d->comm = MPI_COMM_NULL;
    /* A bad PK_DIST_TIMEOUT on one rank still takes part (agreed below). */
    const char *env = pk__env(PK__ENV_DIST_TIMEOUT);
    pk_status s = pk__dist_parse_timeout(env, &d->timeout);
    if (s) snprintf(msg, sizeof msg, "pk_dist_create: PK_DIST_TIMEOUT=%s: seconds >= 0 "
                    "expected (0: wait for ever)", env);
    /* Nonblocking, so that a rank that never comes cannot hold the others. */
    MPI_Request req;
    double waited = 0;
    int e = MPI_Comm_idup(base, &d->comm, &req);
    if (e == MPI_SUCCESS) e = pk__dist_poll(&req, 1, d->timeout, &waited);
    if (e == PK__DIST_TIMED_OUT) {
        snprintf(msg, sizeof msg, "pk_dist_create: MPI_Comm_idup timed out after %.3g s "
                 "(PK_DIST_TIMEOUT): some rank did not take part", waited);
        pk__set_create_error(msg);
        pk__dist_orphan(d); /* MPI writes d->comm when the dup completes */
        return PK_ERR_COMM;
    }
    if (e != MPI_SUCCESS) {
        d->comm = MPI_COMM_NULL;
        create_fail(d, "pk_dist_create: MPI_Comm_idup failed");
        return PK_ERR_COMM;
    }
    MPI_Comm_set_errhandler(d->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(d->comm, &d->rank);
    MPI_Comm_size(d->comm, &d->size);

    /* The rank within the node picks the GPU. */
    int local = 0;
    if (node_rank(d, &local, msg, sizeof msg)) {
        create_fail(d, msg);
        return PK_ERR_COMM;
    }
    if (!out) {
        if (!s) s = PK_ERR_ARG, snprintf(msg, sizeof msg, "pk_dist_create: d is NULL");
    } else if (!s) {
        int ndev = pk__cuda_device_count();
        s = pk_ctx_create(&d->ctx, backend, ndev > 0 ? local % ndev : 0);
        if (s) snprintf(msg, sizeof msg, "%s", pk_last_create_error());
    }
    /* All ranks on one backend (AUTO could differ between nodes). */
    int mixed = 0;
    int rc = create_agree(d, s, d->ctx ? (int)pk_ctx_backend(d->ctx) : -1, &mixed, msg,
                          sizeof msg);
    if (!rc && mixed) {
        snprintf(msg, sizeof msg, "pk_dist_create: the ranks resolved different "
                                  "backends (name one instead of AUTO)");
        rc = PK_ERR_ARG;
    }
    if (!rc && pk_ctx_backend(d->ctx) == PK_BACKEND_CUDA) {
#ifdef PK_HAVE_NCCL
        s = pk__dist_nccl_init(d);
        if (s) snprintf(msg, sizeof msg, "%s", pk_ctx_error(d->ctx));
        /* A failed communicator (a timeout, which failed every rank's wait,
         * or an NCCL error on this rank) takes no part in more agreement:
         * the other ranks then learn of it when their own wait times out. */
        rc = d->failed ? (int)s : create_agree(d, s, 0, &mixed, msg, sizeof msg);
#else
        snprintf(msg, sizeof msg, "pk_dist_create: the CUDA backend needs NCCL, "
                                  "which this build was configured without");
        rc = PK_ERR_UNSUPPORTED;
#endif
    }
    if (rc) {
#ifdef PK_HAVE_NCCL
        pk__dist_nccl_fini(d, 0);
#endif
        create_fail(d, msg);
        return (pk_status)rc;
    }
    d->magic = PK__MAGIC_DIST;
    *out = d;
    return PK_OK;
}

/* A failed handle never blocks here: NCCL is aborted, MPI_Comm_free leaves
 * pending operations to complete on their own (MPI's rule), and the memory
 * they may still write is orphaned. */
void pk_dist_destroy(pk_dist *d)
{
    if (!d || !pk__handle_live(d, PK__MAGIC_DIST, "pk_dist_destroy", "d")) return;
#ifdef PK_HAVE_NCCL
    pk__dist_nccl_fini(d, 1);
#endif
    pk_ctx_destroy(d->ctx);
    d->ctx = NULL;
    MPI_Comm_free(&d->comm);
    d->magic = PK__MAGIC_DEAD;
    if (d->failed) pk__dist_orphan(d);
    else pk__free(d);
}

/* NULL quietly (as pk_ctx_error's queries: the create error stays). */
static bool dist_live(const pk_dist *d, const char *fn)
{
    return d && pk__handle_live(d, PK__MAGIC_DIST, fn, "d");
}
pk_ctx *pk_dist_ctx(const pk_dist *d) { return dist_live(d, "pk_dist_ctx") ? d->ctx : NULL; }
int pk_dist_rank(const pk_dist *d) { return dist_live(d, "pk_dist_rank") ? d->rank : -1; }
int pk_dist_size(const pk_dist *d) { return dist_live(d, "pk_dist_size") ? d->size : 0; }

/* ---- Whole-array reduction --------------------------------------------- */

/* What every rank tells the others before any work. */
typedef struct intent {
    int32_t status, op, dtype, pad;
    int64_t n;
} intent;

/* Each rank's partial after its work. */
typedef struct share {
    int32_t status, has;
    pk__acc acc;
} share;
_Static_assert(sizeof(intent) <= PK__DIST_RECORD && sizeof(share) <= PK__DIST_RECORD,
               "records fit the exchange area");

static pk_status check_reduce(pk_ctx *ctx, pk_op op, pk_dtype t, const void *x,
                              int64_t n, const void *out)
{
    static const char fn[] = "pk_dist_reduce";
    pk_status s = check_op_dtype(ctx, fn, op, t);
    if (s) return s;
    CHECK(n >= 0, "%s: n_local = %lld < 0", fn, (long long)n);
    int64_t xb = 0, ob = 0;
    if ((s = check_buffer(ctx, fn, "x", x, n, pk__dtypes[t].size, &xb))) return s;
    if ((s = check_buffer(ctx, fn, "out", out, 1,
                          pk__dtypes[pk_reduce_result_dtype(op, t)].size, &ob)))
        return s;
    CHECK(!ranges_overlap(x, xb, out, ob), "%s: out overlaps x", fn);
    return PK_OK;
}

/* The first rank whose intent failed or differs from rank 0's op/dtype;
 * sets *s for this rank. -1 when all agree. */
static int first_bad(pk_dist *d, const char *fn, const intent *all, pk_status *s)
{
    for (int r = 0; r < d->size; r++) {
        const intent *w = &all[r];
        pk_status rs = (pk_status)w->status;
        if (!rs && (w->op != all[0].op || w->dtype != all[0].dtype)) rs = PK_ERR_ARG;
        if (!rs) continue;
        if (*s != PK_OK) return r; /* this rank failed: its own message stays */
        if (r == d->rank)
            *s = pk__fail(d->ctx, PK_ERR_ARG, "%s: rank %d passes op %s, dtype "
                          "%s; rank 0 passes %s, %s", fn, r, pk_op_name(w->op),
                          pk_dtype_name(w->dtype), pk_op_name(all[0].op),
                          pk_dtype_name(all[0].dtype));
        else
            *s = pk__fail(d->ctx, rs, "%s: rank %d failed (%s)", fn, r,
                          pk_status_str(rs));
        return r;
    }
    return -1;
}

pk_status pk_dist_reduce(pk_dist *d, pk_op op, pk_dtype t, const void *x,
                         int64_t n_local, void *out)
{
    static const char fn[] = "pk_dist_reduce";
    pk_status s = pk__dist_enter(d, fn, 1);
    if (s) return s;
    s = check_reduce(d->ctx, op, t, x, n_local, out);
    intent mine = {(int32_t)s, (int32_t)op, (int32_t)t, 0, n_local};
    const intent *all = pk__dist_gather(d, fn, "MPI_Iallgather (the arguments)", &mine,
                                        sizeof mine, &s);
    if (!all || first_bad(d, fn, all, &s) >= 0) return s;
    int64_t total = 0, offset = 0;
    for (int r = 0; r < d->size; r++) {
        if (r < d->rank) offset += all[r].n;
        total += all[r].n;
    }
    if (total == 0 && op != PK_SUM && op != PK_PROD)
        return pk__fail(d->ctx, PK_ERR_ARG, "%s: %s of an empty array has no value",
                        fn, pk_op_name(op));
    share my = {PK_OK, n_local > 0, {{0}, 0, 0}};
    if (n_local > 0) {
        if (!d->ctx->ops->reduce_partial)
            my.status = pk__fail(d->ctx, PK_ERR_UNSUPPORTED, "%s: not available "
                                 "on the %s backend", fn,
                                 pk_backend_name(d->ctx->backend));
        else
            my.status = d->ctx->ops->reduce_partial(d->ctx, op, t, x, n_local, &my.acc);
        my.acc.idx += offset;
    }
    const share *parts = pk__dist_gather(d, fn, "MPI_Iallgather (the partials)", &my,
                                         sizeof my, &s);
    if (!parts) return s;
    if ((s = pk__dist_gathered_status(d, fn, (pk_status)my.status, parts, sizeof *parts)))
        return s;
    /* Rank order, with the core's rules for every backend's partials. */
    const pk__op_rule *f = &pk__op_rules[op][t];
    pk__acc acc;
    int started = 0;
    for (int r = 0; r < d->size; r++) {
        if (!parts[r].has) continue;
        if (!started) acc = parts[r].acc, started = 1;
        else f->combine(&acc, &parts[r].acc);
    }
    if (!started) f->empty(&acc);
    unsigned char result[8];
    f->finish(&acc, result);
    return pk__dist_copy(d, out, result, pk__dtypes[pk_reduce_result_dtype(op, t)].size);
}
