/* Helpers of test_cli_files: run the pk command on files in a temporary
 * directory (stdout and stderr captured), write inputs and read outputs
 * (.npy), and check what a failed command leaves behind. */
#ifndef PK_TEST_CLI_UTIL_H
#define PK_TEST_CLI_UTIL_H

#include "npy.h"
#include "util.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *cli_pk;        /* the pk executable */
static const char *cli_backend;   /* --backend for the file commands */
static char cli_dir[512];         /* where the files go */
static char cli_out[1 << 16];     /* the last command's stdout */
static char cli_err[1 << 14];     /* and stderr */
static long long cli_vm_limit;    /* > 0: the commands' address space (RLIMIT_AS) */

static inline const char *cli_path(const char *name)
{
    static char buf[4][1024];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", cli_dir, name);
    return buf[k];
}

static inline void cli_slurp(const char *name, char *buf, size_t len)
{
    FILE *f = fopen(cli_path(name), "rb");
    size_t n = f ? fread(buf, 1, len - 1, f) : 0;
    buf[n] = 0;
    if (f) fclose(f);
}

/* Start pk with args (NULL-ended), in cli_dir, output to files; returns the
 * child's pid. with_backend: add --backend cli_backend. */
static inline pid_t cli_start(const char *const *args, int with_backend)
{
    const char *argv[64];
    int n = 0;
    argv[n++] = cli_pk;
    for (; *args && n < 60; args++) argv[n++] = *args;
    if (with_backend) argv[n++] = "--backend", argv[n++] = cli_backend;
    argv[n] = NULL;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        int o = open(cli_path("stdout.txt"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(cli_path("stderr.txt"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (o < 0 || e < 0 || chdir(cli_dir) != 0) _exit(126);
        dup2(o, 1), dup2(e, 2);
        unsetenv("PK_BACKEND");
        struct rlimit lim = {(rlim_t)cli_vm_limit, (rlim_t)cli_vm_limit};
        if (cli_vm_limit > 0 && setrlimit(RLIMIT_AS, &lim) != 0) _exit(126);
        execv(cli_pk, (char *const *)argv);
        fprintf(stderr, "cannot run %s\n", cli_pk);
        _exit(127);
    }
    return pid;
}

/* Wait for pid; its exit status (128 + signal when killed). */
static inline int cli_wait(pid_t pid)
{
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid) return -1;
    cli_slurp("stdout.txt", cli_out, sizeof cli_out);
    cli_slurp("stderr.txt", cli_err, sizeof cli_err);
    unlink(cli_path("stdout.txt"));
    unlink(cli_path("stderr.txt"));
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static inline int cli_run_args(const char *const *args, int with_backend)
{
    return cli_wait(cli_start(args, with_backend));
}
/* Wait (polling every us microseconds, 60 s at most) until a file whose
 * name starts with prefix appears in cli_dir while pid runs: 1 when it did,
 * 0 when pid ended first (not reaped: cli_wait does that). */
static inline int cli_await_file(pid_t pid, const char *prefix, int us)
{
    int seen = 0;
    for (long waited = 0; waited < 60000000L && !seen; waited += us) {
        usleep((useconds_t)us);
        DIR *d = opendir(cli_dir);
        for (struct dirent *e; d && (e = readdir(d));)
            seen |= strncmp(e->d_name, prefix, strlen(prefix)) == 0;
        if (d) closedir(d);
        siginfo_t si = {0};
        if (!seen && waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
            si.si_pid == pid)
            break;
    }
    return seen;
}

/* A file command (with --backend), or any command as written. */
#define PK(...) cli_run_args((const char *const[]){__VA_ARGS__, NULL}, 1)
#define PK_RAW(...) cli_run_args((const char *const[]){__VA_ARGS__, NULL}, 0)

/* s starts with the literal lit */
#define STARTS(s, lit) (strncmp((s), (lit), sizeof(lit) - 1) == 0)

static inline int cli_lines(const char *s)
{
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

/* Entries of cli_dir. */
static inline int cli_entries(void)
{
    DIR *d = opendir(cli_dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    if (d) closedir(d);
    return n;
}

static inline void cli_save(const char *name, pk_npy_type t, int ndim, const int64_t *shape,
                     const void *data)
{
    char err[PK_NPY_ERR_LEN];
    if (pk_npy_save(cli_path(name), t, ndim, shape, data, err, sizeof err) != PK_OK) {
        printf("FAIL: writing an input: %s\n", err);
        exit(1);
    }
}

/* Open an output; NULL (a failed check) when it is missing or not (t,
 * ndim, shape). */
static inline const void *cli_load(pk_npy_array *a, const char *name, pk_npy_type t, int ndim,
                            const int64_t *shape)
{
    int ok = pk_npy_open(a, cli_path(name), 0) == PK_OK && a->h.type == t && a->h.ndim == ndim;
    for (int d = 0; ok && d < ndim; d++) ok = a->h.shape[d] == shape[d];
    PK_CHECK(ok, "output %s: %s (type %s, ndim %d; want %s, %d)", name, a->error,
             pk_npy_type_name(a->h.type), a->h.ndim, pk_npy_type_name(t), ndim);
    return ok ? a->data : NULL;
}

/* "key": NUMBER in the last JSON output, as a double (NaN if absent). */
static inline double cli_json_num(const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *p = strstr(cli_out, pat);
    return p ? strtod(p + strlen(pat), NULL) : NAN;
}

/* A failure: status 1, one line on stderr naming file, nothing new in the
 * directory (no output, no temporary). */
#define CHECK_FAILS(entries_before, file, rc, what)                                       \
    PK_CHECK((rc) == 1 && cli_lines(cli_err) == 1 && strstr(cli_err, file) &&             \
                 cli_entries() == (entries_before),                                       \
             "%s: status %d, %d entries (want %d), stderr: %s", what, rc, cli_entries(),  \
             entries_before, cli_err)

#endif

/* The usual main: pk's path and the backend from the command line (the
 * backend's absence here skips: status 77), a fresh directory, the test,
 * the directory removed. */
static inline int cli_main(int argc, char **argv, const char *name, void (*test)(void))
{
    pk_test_init(name);
    if (argc < 2) {
        printf("usage: %s PK [cpu|cuda]\n", argv[0]);
        return 2;
    }
    static char pk_path[4096]; /* absolute: the commands run in cli_dir */
    if (!realpath(argv[1], pk_path)) {
        printf("FAIL: %s: no such program\n", argv[1]);
        return 1;
    }
    cli_pk = pk_path;
    cli_backend = argc > 2 ? argv[2] : "cpu";
    const char *tmp = getenv("TMPDIR");
    snprintf(cli_dir, sizeof cli_dir, "%s/pk_cli_files.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(cli_dir)) {
        printf("FAIL: mkdtemp %s\n", cli_dir);
        return 1;
    }
    /* Can this backend run here? */
    const int64_t one = 1;
    cli_save("probe.npy", PK_NPY_F64, 1, &one, (double[]){1});
    int rc = PK("reduce", "probe.npy", "--op", "sum");
    unlink(cli_path("probe.npy"));
    if (rc != 0) {
        printf("skipped: backend %s: %s", cli_backend, cli_err);
        rmdir(cli_dir);
        return PK_TEST_SKIP;
    }
    test();
    DIR *d = opendir(cli_dir);
    for (struct dirent *e; d && (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) unlink(cli_path(e->d_name));
    if (d) closedir(d);
    rmdir(cli_dir);
    return pk_test_finish(name);
}
