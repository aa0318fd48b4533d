/* Fork-per-case harness of the CUDA case programs (test_cuda_hazards.c,
 * test_cuda_edges.c). cc_main runs each case in its own process (the
 * program re-runs itself as "PROGRAM case NAME", with the same seed), so
 * that a crash, a hang (alarm: 600 s, 3600 s under PK_TEST_QUICK) or a
 * sticky CUDA error stays inside its case; the parent prints each case's
 * outcome and fails when any case failed. "PROGRAM NAME" runs one case.
 * A first "probe" case makes a CUDA context: when it skips (77: no
 * device), the program skips. Also the helpers both programs' cases use.
 * Include first, after #define _GNU_SOURCE. */
#ifndef PK_TEST_CUDA_CASES_H
#define PK_TEST_CUDA_CASES_H

#include "cuda_util.h"

#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static inline bool quick(void) { return getenv("PK_TEST_QUICK") != NULL; }

/* A reducer; on CUDA without NVRTC: skip the case (required) or NULL. */
static inline pk_reducer *udr_make(pk_ctx *ctx, bool required, pk_dtype in, pk_dtype acc,
                                   pk_reducer_kind kind, const char *map, const char *comb,
                                   double identity, const char *fin)
{
    pk_reducer_desc d = {.input = in, .acc = acc, .kind = kind, .map = map,
                         .combine = comb, .identity = identity, .final = fin};
    pk_reducer *r = NULL;
    pk_status s = pk_reducer_create(ctx, &d, &r);
    if (s == PK_ERR_UNSUPPORTED && pk_ctx_backend(ctx) == PK_BACKEND_CUDA) {
        printf("note: pk_reducer_create on CUDA: %s\n", pk_ctx_error(ctx));
        if (required) {
            printf("skipped: no user-defined reductions on this machine\n");
            exit(PK_TEST_SKIP);
        }
        return NULL;
    }
    if (s != PK_OK) {
        printf("FAIL: pk_reducer_create(map %s, combine %s) on %s: %s: %s\n", map, comb,
               pk_backend_name(pk_ctx_backend(ctx)), pk_status_str(s), pk_ctx_error(ctx));
        exit(1);
    }
    return r;
}

typedef struct cc_case {
    const char *name;
    void (*run)(void);
} cc_case;

static inline void cc_probe(void)
{
    pk_ctx *ctx = cu_ctx();
    printf("device: %s\n", pk_ctx_describe(ctx));
    pk_ctx_destroy(ctx);
}

/* Exit status of the case's process, or 1000 + the signal that ended it. */
static inline int cc_run_case(const char *self, const char *name)
{
    char *argv[] = {(char *)self, "case", (char *)name, NULL};
    pid_t pid;
    int st = 0;
    fflush(stdout);
    if (posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv, environ)) return -1;
    if (waitpid(pid, &st, 0) != pid) return -1;
    if (WIFEXITED(st)) return WEXITSTATUS(st);
    if (WIFSIGNALED(st)) return 1000 + WTERMSIG(st);
    return -1;
}

/* main of a case program named prog, with its n cases. */
static inline int cc_main(int argc, char **argv, const char *prog, const cc_case *cases, int n)
{
    if (argc >= 3 && !strcmp(argv[1], "case")) {
        pk_test_init(argv[2]);
        void (*run)(void) = !strcmp(argv[2], "probe") ? cc_probe : NULL;
        for (int i = 0; !run && i < n; i++)
            if (!strcmp(cases[i].name, argv[2])) run = cases[i].run;
        if (!run) {
            printf("FAIL: no case %s\n", argv[2]);
            return 1;
        }
        alarm(quick() ? 3600 : 600); /* a hang ends the case, not the run */
        cu_note_no_rt();
        run();
        return pk_test_finish(argv[2]);
    }
    pk_test_init(prog);
    char seed[32];
    snprintf(seed, sizeof seed, "%" PRIu64, pk_test_seed);
    setenv("PK_TEST_SEED", seed, 1); /* the cases replay with the same seed */
    const char *only = argc >= 2 ? argv[1] : NULL;
    int rc = cc_run_case(argv[0], "probe");
    if (rc == PK_TEST_SKIP) {
        printf("skipped: no CUDA device\n");
        return PK_TEST_SKIP;
    }
    PK_CHECK(rc == 0, "probe: exit %d", rc);
    if (rc != 0) return pk_test_finish(prog);
    for (int i = 0; i < n; i++) {
        const char *name = cases[i].name;
        if (only && strcmp(only, name)) continue;
        printf("==== case %s\n", name);
        rc = cc_run_case(argv[0], name);
        if (rc == 0) printf("==== case %s: passed\n", name);
        else if (rc == PK_TEST_SKIP) printf("==== case %s: skipped\n", name);
        else if (rc >= 1000)
            PK_CHECK(0, "case %s: killed by signal %d (%s)%s", name, rc - 1000,
                     strsignal(rc - 1000), rc - 1000 == SIGALRM ? ": timed out" : "");
        else PK_CHECK(0, "case %s: failed (exit %d)", name, rc);
    }
    return pk_test_finish(prog);
}

#endif
