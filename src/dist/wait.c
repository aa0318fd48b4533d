/* Bounded waits: every collective step of a pk_dist is started nonblocking
 * and polled until it completes, MPI reports an error, or the handle's
 * timeout passes. A step that fails or times out leaves the ranks out of
 * step for good, so the handle becomes failed: every later call returns
 * PK_ERR_COMM at once with the first failure's message. MPI forbids
 * freeing or cancelling an active nonblocking collective, and it may still
 * write the memory it was given: such memory stays allocated until the
 * process exits (pk__dist_orphan), never reused. */
#include "dist.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

pk_status pk__dist_parse_timeout(const char *env, double *seconds)
{
    *seconds = PK__DIST_DEFAULT_TIMEOUT;
    if (!env || !*env) return PK_OK;
    char *end = NULL;
    errno = 0;
    double v = strtod(env, &end);
    if (errno || end == env || *end || !(v >= 0) || isinf(v)) return PK_ERR_ARG;
    *seconds = v;
    return PK_OK;
}

pk_status pk_dist_set_timeout(pk_dist *d, double seconds)
{
    static const char fn[] = "pk_dist_set_timeout";
    if (!pk__handle_live(d, PK__MAGIC_DIST, fn, "d")) return PK_ERR_ARG;
    if (!(seconds >= 0) || isinf(seconds))
        return pk__fail(d->ctx, PK_ERR_ARG, "%s: seconds = %g: finite and >= 0 expected "
                        "(0: wait for ever)", fn, seconds);
    d->timeout = seconds;
    return PK_OK;
}

/* Memory that an unfinished collective may still write: kept reachable from
 * here until exit (also for leak checkers: it is not lost by mistake). */
typedef struct orphan {
    struct orphan *next;
    void *p;
} orphan;
static orphan *orphans;
static pthread_mutex_t orphans_lock = PTHREAD_MUTEX_INITIALIZER;

void pk__dist_orphan(void *p)
{
    if (!p) return;
    orphan *o = malloc(sizeof *o); /* not pk__malloc: no failure to inject here */
    if (!o) return;                /* then plainly leaked, as intended */
    o->p = p;
    pthread_mutex_lock(&orphans_lock);
    o->next = orphans;
    orphans = o;
    pthread_mutex_unlock(&orphans_lock);
}

/* Between polls: nothing for the first millisecond (as MPI_Wait, which
 * spins: small collectives keep their latency), then a sleep of 1/16 of the
 * time waited so far, at most 200 us (each round of a nonblocking
 * collective advances only when polled: long sleeps would stall big ones). */
void pk__dist_backoff(double waited)
{
    if (waited < 1e-3) return;
    double s = waited / 16 < 2e-4 ? waited / 16 : 2e-4;
    struct timespec ts = {0, (long)(s * 1e9)};
    nanosleep(&ts, NULL);
}

pk_status pk__dist_poison(pk_dist *d, pk_status s)
{
    if (!d->failed) {
        d->failed = s;
        snprintf(d->why, sizeof d->why, "%s", pk_ctx_error(d->ctx));
    }
    return s;
}

pk_status pk__dist_mpi_fail(pk_dist *d, int err, const char *fn, const char *what)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(err, text, &len) != MPI_SUCCESS) len = 0;
    text[len] = '\0';
    pk__fail(d->ctx, PK_ERR_COMM, "%s: %s failed: %s; this pk_dist is unusable now "
             "(destroy it)", fn, what, text);
    return pk__dist_poison(d, PK_ERR_COMM);
}

int pk__dist_poll(MPI_Request *req, int n, double timeout, double *waited)
{
    double t0 = MPI_Wtime();
    *waited = 0;
    if (timeout <= 0) return MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
    for (;;) {
        int done = 0;
        int e = MPI_Testall(n, req, &done, MPI_STATUSES_IGNORE);
        *waited = MPI_Wtime() - t0;
        if (e != MPI_SUCCESS) return e;
        if (done) return MPI_SUCCESS;
        if (*waited >= timeout) return PK__DIST_TIMED_OUT;
        pk__dist_backoff(*waited);
    }
}

pk_status pk__dist_timed_out(pk_dist *d, const char *fn, const char *what, double waited)
{
    pk__fail(d->ctx, PK_ERR_COMM, "%s: %s timed out after %.3g s (pk_dist_set_timeout, "
             "PK_DIST_TIMEOUT): some rank did not take part (it failed, exited, or is "
             "elsewhere); this pk_dist is unusable now (destroy it)", fn, what, waited);
    return pk__dist_poison(d, PK_ERR_COMM);
}

pk_status pk__dist_wait(pk_dist *d, const char *fn, const char *what, MPI_Request *req, int n)
{
    double waited = 0;
    int e = pk__dist_poll(req, n, d->timeout, &waited);
    if (e == MPI_SUCCESS) return PK_OK;
    if (e == PK__DIST_TIMED_OUT) return pk__dist_timed_out(d, fn, what, waited);
    return pk__dist_mpi_fail(d, e, fn, what);
}

pk_status pk__dist_enter(pk_dist *d, const char *fn, int wait_left_running)
{
    if (!pk__handle_live(d, PK__MAGIC_DIST, fn, "d")) return PK_ERR_ARG;
    if (d->failed)
        return pk__fail(d->ctx, d->failed, "%s: this pk_dist failed before and is "
                        "unusable (destroy it): %s", fn, d->why);
#ifdef PK_HAVE_NCCL
    return pk__dist_nccl_settle(d, fn, wait_left_running);
#else
    (void)wait_left_running;
    return PK_OK;
#endif
}

void *pk__dist_gather(pk_dist *d, const char *fn, const char *what, const void *mine,
                      size_t bytes, pk_status *s)
{
    MPI_Request req;
    char *send = d->xbuf, *recv = d->xbuf + PK__DIST_RECORD;
    memcpy(send, mine, bytes);
    int e = MPI_Iallgather(send, (int)bytes, MPI_BYTE, recv, (int)bytes, MPI_BYTE, d->comm,
                           &req);
    pk_status w = e != MPI_SUCCESS ? pk__dist_mpi_fail(d, e, fn, what)
                                   : pk__dist_wait(d, fn, what, &req, 1);
    if (w) *s = w; /* else this rank's own status stays */
    return w ? NULL : recv;
}

pk_status pk__dist_agree(pk_dist *d, const char *fn, pk_status s)
{
    typedef struct {
        int status, rank;
    } pair;
    pair *mine = (pair *)(void *)d->xbuf, *worst = mine + 1;
    *mine = (pair){(int)s, d->rank};
    MPI_Request req;
    int e = MPI_Iallreduce(mine, worst, 1, MPI_2INT, MPI_MAXLOC, d->comm, &req);
    pk_status w = e != MPI_SUCCESS ? pk__dist_mpi_fail(d, e, fn, "MPI_Iallreduce (the verdict)")
                                   : pk__dist_wait(d, fn, "MPI_Iallreduce (the verdict)", &req, 1);
    if (w) return w;
    if (worst->status == PK_OK) return PK_OK;
    if (s != PK_OK) return s;
    return pk__fail(d->ctx, (pk_status)worst->status,
                    "%s: rank %d failed (%s); see its message", fn, worst->rank,
                    pk_status_str((pk_status)worst->status));
}
