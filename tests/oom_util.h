/* The allocation-failure scenario runner shared by test_oom.c (the CPU
 * backend's host allocations) and test_cuda_oom.c (the CUDA backend's host
 * and device allocations): a scenario of calls runs once with no failure
 * (the golden run, which keeps every call's result), then again for k = 1,
 * 2, ... with only the library's k-th allocation failing, until a run makes
 * fewer than k allocations. Each call must give the golden run's bits, or
 * fail with PK_ERR_NOMEM and a message and then, repeated on the same
 * context (nothing fails any more), give them. Built with PK_FAULT_INJECTION
 * only (tests/CMakeLists.txt). */
#ifndef PK_TEST_OOM_UTIL_H
#define PK_TEST_OOM_UTIL_H

#include "fault_injection.h"
#include "util.h"

#define OOM_MAX_CALLS 160

typedef struct oom_run {
    int64_t k;      /* the allocation that fails; 0: none (the golden run) */
    pk_ctx *ctx;
    int call;       /* the current call's index in the scenario */
    int nomem;      /* calls that failed with PK_ERR_NOMEM */
    int64_t allocs; /* allocations the run made (k > 0) */
    int64_t device_allocs; /* of which device ones */
} oom_run;

/* A reduction along an axis: a row of the scenarios' tables. */
typedef struct oom_axis {
    pk_op op;
    pk_dtype t;
    int64_t rows, cols, ld;
    int axis;
} oom_axis;

static struct {
    void *p;
    size_t bytes;
} oom_golden[OOM_MAX_CALLS];

/* A call failed with PK_ERR_NOMEM: that must be the injected failure, the
 * only one of the run, with a message. */
static void oom_saw_nomem(oom_run *r, const char *what, const char *msg)
{
    r->nomem++;
    PK_CHECK(r->k > 0 && pk__fault_allocations() >= r->k,
             "%s: PK_ERR_NOMEM with no failure injected (k = %lld): %s", what,
             (long long)r->k, msg);
    PK_CHECK(r->nomem == 1, "%s: a second PK_ERR_NOMEM in run k = %lld", what, (long long)r->k);
    PK_CHECK(msg && *msg, "%s: PK_ERR_NOMEM without a message (k = %lld)", what,
             (long long)r->k);
}

/* The call's final status and outputs: PK_OK and the golden run's bits. */
static void oom_settle(oom_run *r, const char *what, pk_status s, const void *out, size_t bytes)
{
    int c = r->call++;
    PK_CHECK(c < OOM_MAX_CALLS, "raise OOM_MAX_CALLS");
    PK_CHECK(s == PK_OK, "%s (k = %lld): %s: %s", what, (long long)r->k, pk_status_str(s),
             pk_ctx_error(r->ctx));
    if (s != PK_OK || c >= OOM_MAX_CALLS) return;
    if (r->k == 0) {
        oom_golden[c].p = pk_test_alloc(bytes ? bytes : 1);
        memcpy(oom_golden[c].p, out, bytes);
        oom_golden[c].bytes = bytes;
        return;
    }
    PK_CHECK(oom_golden[c].bytes == bytes && !memcmp(oom_golden[c].p, out, bytes),
             "%s (k = %lld): the result differs from the run without failures", what,
             (long long)r->k);
}

/* Run expr after prep (which restores what a failed attempt may have
 * written); on PK_ERR_NOMEM, once more on the same context; then `then`
 * (e.g. fetch a device result into out) and the check. */
#define OOM_CALL_THEN(r, what, out, bytes, prep, expr, then)           \
    do {                                                               \
        prep;                                                          \
        pk_status s_ = (expr);                                         \
        if (s_ == PK_ERR_NOMEM) {                                      \
            oom_saw_nomem((r), (what), pk_ctx_error((r)->ctx));        \
            prep;                                                      \
            s_ = (expr);                                               \
        }                                                              \
        then;                                                          \
        oom_settle((r), (what), s_, (out), (bytes));                   \
    } while (0)
#define OOM_NOTHING ((void)0)
#define OOM_CALL(r, what, out, bytes, prep, expr) \
    OOM_CALL_THEN(r, what, out, bytes, prep, expr, OOM_NOTHING)

/* pk_ctx_create on r, retried once after the injected PK_ERR_NOMEM; the
 * status (checked). */
static pk_status oom_ctx_create(oom_run *r, pk_backend b)
{
    pk_status s = pk_ctx_create(&r->ctx, b, 0);
    if (s == PK_ERR_NOMEM) {
        oom_saw_nomem(r, "pk_ctx_create", pk_last_create_error());
        s = pk_ctx_create(&r->ctx, b, 0);
    }
    PK_CHECK(s == PK_OK, "pk_ctx_create (k = %lld): %s: %s", (long long)r->k, pk_status_str(s),
             pk_last_create_error());
    return s;
}

/* Arm the run's failure, run the scenario, record what it allocated. */
static void oom_run_scenario(oom_run *r, void (*scenario)(oom_run *))
{
    pk__fault_fail_nth(r->k);
    scenario(r);
    r->allocs = pk__fault_allocations();
    r->device_allocs = pk__fault_device_allocations();
    pk__fault_fail_nth(0);
}

/* The golden run, then one run per allocation with it failing. run executes
 * one run (oom_run_scenario, maybe on a thread of its own); after, when not
 * NULL, checks what a whole run must leave behind (called after the golden
 * run too). Prints the counts; the number of runs with a failure. The golden
 * results stay until oom_free_golden(). */
static int64_t oom_each_allocation(const char *name, void (*run)(oom_run *),
                                   void (*after)(oom_run *))
{
    oom_run golden_run = {0};
    run(&golden_run);
    if (after) after(&golden_run);
    const int calls = golden_run.call;
    int64_t k, nomem = 0, device = 0;
    for (k = 1; k <= 100000; k++) {
        oom_run r = {.k = k};
        run(&r);
        PK_CHECK(r.call == calls, "k = %lld: %d calls, the golden run %d", (long long)k, r.call,
                 calls);
        if (r.allocs < k) break; /* nothing failed: every allocation has had its turn */
        if (after) after(&r);
        nomem += r.nomem;
        device = r.device_allocs;
        if (pk_test_failures > 20) break; /* enough to go on */
    }
    int64_t injected = k - 1;
    PK_CHECK(injected > 0 && nomem > 0, "no allocation was seen or none failed a call");
    printf("%s: %d calls making %lld allocations (%lld of them device or page-locked); %lld "
           "runs with one failing: %lld ended in PK_ERR_NOMEM (then the call succeeded), %lld "
           "were absorbed (same result)\n",
           name, calls, (long long)injected, (long long)device, (long long)injected,
           (long long)nomem, (long long)(injected - nomem));
    return injected;
}

static void oom_free_golden(void)
{
    for (int c = 0; c < OOM_MAX_CALLS; c++) free(oom_golden[c].p), oom_golden[c].p = NULL;
}

#endif
