/* The frame of the many-threads tests (test_threads.c on the CPU,
 * test_cuda_threads.c on one GPU): workers that each make many calls on a
 * context of their own, what each saw, and the start, join and verdict.
 * The cases, the calls and the serial results are the tests' own. */
#ifndef PK_TEST_THREADS_UTIL_H
#define PK_TEST_THREADS_UTIL_H

#include "util.h"

#include <pthread.h>

typedef struct tw_worker {
    int id, threads; /* threads: the context's (pk_ctx_set_threads), CPU only */
    long calls, wrong, errors;
    char first[256]; /* the first error or difference */
} tw_worker;

/* One call's outcome: its status (err: the context's message), and when
 * PK_OK whether the result had the serial run's bits (which: the case). */
static inline void tw_record(tw_worker *w, pk_status s, const char *err, int same,
                             const char *which)
{
    w->calls++;
    if (s != PK_OK) {
        if (!w->errors++) snprintf(w->first, sizeof w->first, "%s", err);
    } else if (!same && !w->wrong++ && !w->errors) {
        snprintf(w->first, sizeof w->first, "%s differs from the serial result", which);
    }
}

/* The two reducers every context shares read-only: a value (with the
 * index in it) and an ARG kind (ties on PK_TEST_SMALL data). Built on ctx
 * (or the test fails at once); they outlive it. */
static inline void tw_make_reducers(pk_ctx *ctx, pk_reducer **value, pk_reducer **arg)
{
    const pk_reducer_desc dv = {.input = PK_F32, .acc = PK_F32, .map = "x*x + i*1e-6",
                                .combine = "a + b", .identity = 0, .final = "sqrt(r)"};
    const pk_reducer_desc da = {.input = PK_F32, .acc = PK_F64, .kind = PK_REDUCER_ARG,
                                .map = "fabs(x - 0.5)", .combine = "fmax(a, b)",
                                .identity = NAN};
    if (pk_reducer_create(ctx, &dv, value) != PK_OK || pk_reducer_create(ctx, &da, arg) != PK_OK) {
        printf("FAIL: pk_reducer_create: %s\n", pk_ctx_error(ctx));
        exit(1);
    }
}

/* An integer from the environment, def when unset or outside [lo, hi]. */
static inline long tw_env_long(const char *name, long def, long lo, long hi)
{
    const char *v = getenv(name);
    long n = v ? strtol(v, NULL, 10) : def;
    return n < lo || n > hi ? def : n;
}

/* Run fn on each of the n workers w (filled in by the caller) at once, join
 * them, check that each made `calls` calls, none wrong or failed; the total
 * number of calls. */
static inline long tw_run(int n, tw_worker *w, void *(*fn)(void *), long calls)
{
    pthread_t *tid = calloc((size_t)n, sizeof *tid);
    if (!tid) {
        printf("FAIL: no memory\n");
        exit(1);
    }
    for (int t = 0; t < n; t++)
        PK_CHECK(pthread_create(&tid[t], NULL, fn, &w[t]) == 0, "pthread_create %d", t);
    long total = 0;
    for (int t = 0; t < n; t++) {
        pthread_join(tid[t], NULL);
        total += w[t].calls;
        PK_CHECK(w[t].calls == calls, "thread %d made %ld calls", t, w[t].calls);
        PK_CHECK(w[t].wrong == 0 && w[t].errors == 0, "thread %d (%d threads): %ld wrong, %ld "
                 "errors; first: %s", t, w[t].threads, w[t].wrong, w[t].errors, w[t].first);
    }
    free(tid);
    return total;
}

#endif
