/* Where `pk bench` writes: the human table on stdout, and --csv, --markdown
 * and --json, each to a file or to stdout ("-"). Every row goes to every
 * output as soon as it is measured, flushed, with SIGINT, SIGTERM and SIGHUP
 * held off meanwhile: an interrupted run leaves whole rows, and its JSON
 * documents get their closing line from the signal handler ("complete":
 * false) before the signal takes its usual course.
 *
 * Files are opened (not truncated) when the run starts, so that a path that
 * cannot be written fails at once; they are truncated when the headers are
 * written (once the device is measured, before the first row). A run that
 * fails or is interrupted before then removes the files it created and
 * leaves existing ones untouched; from then on every output holds at least
 * its header (the JSON document its "rows": [] and closing line). */
#include "bench.h"
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

typedef struct sink {
    int fmt;
    const char *opt, *path; /* path "-": stdout */
    FILE *f;
    int fd, created;
} sink;

static sink sinks[BENCH_NFMT];
static int nsinks;
static volatile sig_atomic_t begun, nrows;
static sigset_t held; /* the signals held off while writing */

static const char *const fmt_opts[BENCH_NFMT] = {"table", "--csv", "--markdown", "--json"};

static void catch_signals(void);
static void release_signals(void);
static void hold(int on);

int bench_out_add(int fmt, const char *path)
{
    for (int i = 0; i < nsinks; i++) {
        if (sinks[i].fmt == fmt)
            return pk_usage_error("bench", "%s given twice", fmt_opts[fmt]);
        if (!strcmp(path, "-") && !strcmp(sinks[i].path, "-"))
            return pk_usage_error("bench", "%s -: only one output can go to stdout (%s - does)",
                                  fmt_opts[fmt], sinks[i].opt);
        if (strcmp(path, "-") && !strcmp(path, sinks[i].path))
            return pk_usage_error("bench", "%s %s: %s writes that file already", fmt_opts[fmt],
                                  path, sinks[i].opt);
    }
    if (!*path) return pk_usage_error("bench", "%s: empty file name", fmt_opts[fmt]);
    sinks[nsinks++] = (sink){fmt, fmt_opts[fmt], path, NULL, -1, 0};
    return 0;
}

int bench_out_stdout_taken(void)
{
    for (int i = 0; i < nsinks; i++)
        if (!strcmp(sinks[i].path, "-")) return 1;
    return 0;
}

void bench_out_forget(void)
{
    nsinks = 0;
}

int bench_out_open(void)
{
    if (!bench_out_stdout_taken()) sinks[nsinks++] = (sink){BENCH_FMT_TABLE, "table", "-", NULL, -1, 0};
    catch_signals();
    hold(1); /* a file created is one marked created */
    for (int i = 0; i < nsinks; i++) {
        sink *s = &sinks[i];
        if (!strcmp(s->path, "-")) {
            s->f = stdout, s->fd = STDOUT_FILENO;
            continue;
        }
        s->fd = open(s->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        s->created = s->fd >= 0;
        if (s->fd < 0 && errno == EEXIST) s->fd = open(s->path, O_WRONLY | O_CLOEXEC);
        if (s->fd < 0 || !(s->f = fdopen(s->fd, "w"))) {
            fprintf(stderr, "pk bench: %s %s: %s\n", s->opt, s->path, strerror(errno));
            if (s->fd >= 0) close(s->fd);
            s->fd = -1;
            bench_out_discard();
            return PK_EXIT_FAIL;
        }
    }
    hold(0);
    return 0;
}

void bench_out_discard(void)
{
    hold(1);
    for (int i = 0; i < nsinks; i++) {
        sink *s = &sinks[i];
        if (s->f && s->f != stdout) fclose(s->f);
        if (s->created) unlink(s->path);
        s->f = NULL, s->created = 0;
    }
    release_signals();
    hold(0);
}

FILE *bench_out_table(void)
{
    for (int i = 0; i < nsinks; i++)
        if (sinks[i].fmt == BENCH_FMT_TABLE) return sinks[i].f;
    return NULL;
}

/* ---- Interruption ----------------------------------------------------- */

static void put(int fd, const char *s)
{
    for (size_t len = strlen(s); len > 0;) {
        ssize_t w = write(fd, s, len);
        if (w <= 0 && errno != EINTR) return;
        if (w > 0) s += w, len -= (size_t)w;
    }
}

/* Async-signal-safe: write(2) on the outputs' descriptors only (their
 * buffers are empty: rows are flushed with the signals held off). */
static void on_signal(int sig)
{
    const char *name = sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "SIGHUP";
    if (!begun) { /* no header yet: as a failure, the files made are removed */
        for (int i = 0; i < nsinks; i++)
            if (sinks[i].created) unlink(sinks[i].path);
        put(STDERR_FILENO, "\npk bench: interrupted by ");
        put(STDERR_FILENO, name);
        put(STDERR_FILENO, " before the first row; no output written\n");
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    for (int i = 0; i < nsinks; i++)
        if (sinks[i].fmt == BENCH_FMT_JSON && sinks[i].fd >= 0 && begun) {
            put(sinks[i].fd, "], \"complete\": false, \"interrupted_by\": \"");
            put(sinks[i].fd, name);
            put(sinks[i].fd, "\"}\n");
        }
    char n[24], *p = n + sizeof n - 1;
    *p = 0;
    unsigned v = (unsigned)nrows;
    do *--p = (char)('0' + v % 10), v /= 10;
    while (v);
    put(STDERR_FILENO, "\npk bench: interrupted by ");
    put(STDERR_FILENO, name);
    put(STDERR_FILENO, " after ");
    put(STDERR_FILENO, p);
    put(STDERR_FILENO, " rows; the outputs hold them\n");
    signal(sig, SIG_DFL);
    raise(sig);
}

static void hold(int on)
{
    sigprocmask(on ? SIG_BLOCK : SIG_UNBLOCK, &held, NULL);
}

static const int signals[] = {SIGINT, SIGTERM, SIGHUP};

/* From the opening of the files on: an interruption at any point leaves
 * whole outputs or none. */
static void catch_signals(void)
{
    sigemptyset(&held);
    for (int i = 0; i < 3; i++) sigaddset(&held, signals[i]);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_mask = held;
    /* A signal ignored when pk started (nohup, a background job of a
     * script) stays ignored. */
    for (int i = 0; i < 3; i++) {
        struct sigaction old;
        if (sigaction(signals[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
            sigaction(signals[i], &sa, NULL);
    }
}

static void release_signals(void)
{
    for (int i = 0; i < 3; i++) {
        struct sigaction cur;
        if (sigaction(signals[i], NULL, &cur) == 0 && cur.sa_handler == on_signal)
            signal(signals[i], SIG_DFL);
    }
}

/* ---- Writing ---------------------------------------------------------- */

void bench_out_begin(const bench_device *d, const bench_run *run)
{
    hold(1);
    for (int i = 0; i < nsinks; i++) {
        sink *s = &sinks[i];
        if (s->f != stdout && ftruncate(s->fd, 0) != 0) {
            /* a pipe or a device: nothing to truncate */
        }
        switch (s->fmt) {
        case BENCH_FMT_TABLE: report_header(s->f, d); break;
        case BENCH_FMT_CSV: report_csv_header(s->f); break;
        case BENCH_FMT_MD: report_md_header(s->f, d, run); break;
        default: report_json_head(s->f, d, run); break;
        }
        fflush(s->f);
    }
    begun = 1;
    hold(0);
}

void bench_out_row(const bench_device *d, const bench_row *r)
{
    hold(1);
    for (int i = 0; i < nsinks; i++) {
        sink *s = &sinks[i];
        switch (s->fmt) {
        case BENCH_FMT_TABLE: report_row(s->f, r); break;
        case BENCH_FMT_CSV: report_csv_row(s->f, d, r); break;
        case BENCH_FMT_MD: report_md_row(s->f, r); break;
        default: report_json_row(s->f, r, nrows == 0); break;
        }
        fflush(s->f);
    }
    nrows++;
    hold(0);
}

int bench_out_end(int failed, int skipped, int unreliable, double elapsed_s)
{
    int rc = 0;
    hold(1);
    for (int i = 0; i < nsinks; i++) {
        sink *s = &sinks[i];
        if (s->fmt == BENCH_FMT_JSON)
            report_json_tail(s->f, (int)nrows, failed, skipped, unreliable, elapsed_s);
        int bad = fflush(s->f) != 0 || ferror(s->f);
        if (s->f != stdout) bad |= fclose(s->f) != 0;
        if (bad) {
            fprintf(stderr, "pk bench: writing %s: %s\n",
                    strcmp(s->path, "-") ? s->path : "stdout", strerror(errno));
            rc = PK_EXIT_FAIL;
        }
        s->f = NULL, s->fd = -1;
    }
    begun = 0;
    release_signals();
    hold(0);
    return rc;
}
