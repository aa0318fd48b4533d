/* What the file commands share (files.h): options, inputs, outputs (with
 * their temporary files removed on a signal), the backend and the summary. */
#include "files.h"

#include <limits.h>
#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Values printed at the most when a result array has no -o. */
#define FC_PRINT_MAX 1000

/* ---- Options -------------------------------------------------------------- */

int fc_usage(const fc_cmd *c, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return pk_usage_error(c->name, "%s", msg);
}

int fc_parse_double(const fc_cmd *c, const char *opt, const char *s, double *v)
{
    char *end;
    *v = strtod(s, &end);
    if (end == s || *end)
        return fc_usage(c, "%s: expected a number, got '%s'", opt, s);
    return 0;
}

/* A command's own option at argv[*i]: 1 when it was one (0 otherwise), -1
 * when it lacks its value. */
static int own_option(const fc_cmd *c, int argc, char **argv, int *i)
{
    for (const fc_opt *o = c->opts; o && o->name; o++) {
        if (o->flag) {
            if (strcmp(argv[*i], o->name) != 0) continue;
            *o->flag = 1;
            return 1;
        }
        int missing = 0;
        const char *v = pk_opt_value(o->name, argc, argv, i, &missing);
        if (missing) return -1;
        if (v) {
            *o->value = v;
            return 1;
        }
    }
    return 0;
}

/* What a path names: an existing file's device and inode, else the real
 * path of its directory and its own name (a file yet to be made; a
 * directory that does not resolve is left for the create to report). */
typedef struct where {
    const char *opt, *path; /* the option ("" for an input operand) */
    int updated;            /* an input -o may replace; an output that is -o */
    int exists;
    dev_t dev;
    ino_t ino;
    char real[PATH_MAX + 256];
} where;

static void locate(where *w, const char *opt, const char *path)
{
    struct stat st;
    w->opt = opt, w->path = path, w->updated = 0;
    w->exists = stat(path, &st) == 0;
    if (w->exists) {
        w->dev = st.st_dev, w->ino = st.st_ino;
        return;
    }
    const char *slash = strrchr(path, '/');
    char dir[PATH_MAX], real[PATH_MAX];
    if (!slash) snprintf(dir, sizeof dir, ".");
    else snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    if (realpath(dir, real))
        snprintf(w->real, sizeof w->real, "%s/%s", real, slash ? slash + 1 : path);
    else
        snprintf(w->real, sizeof w->real, "%s", path);
}

static int same_file(const where *a, const where *b)
{
    if (a->exists != b->exists) return 0;
    return a->exists ? a->dev == b->dev && a->ino == b->ino : strcmp(a->real, b->real) == 0;
}

/* No output may name another output or an input: the second rename would
 * replace the first output, and an input would be replaced by its result.
 * The one exception is asked for by name: -o replacing the input the
 * command updates (axpy's y, gemm's --c), safe since the result is renamed
 * into place only after the input was read. */
static int check_names(const fc_cmd *c)
{
    enum { MAX_IN = FC_MAX_IN + 4 }; /* the operands and input options (--c, --db) */
    where in[MAX_IN], out[FC_MAX_OUT];
    int nin = 0, nout = 0;
    for (int i = 0; i < c->nfiles; i++) {
        locate(&in[nin], "", c->files[i]);
        in[nin++].updated = i + 1 == c->updated_operand;
    }
    if (c->out) {
        locate(&out[nout], "-o/--output", c->out);
        out[nout++].updated = 1;
    }
    for (const fc_opt *o = c->opts; o && o->name; o++) {
        if (o->role == FC_ARG || !o->value || !*o->value || !**o->value) continue;
        if ((o->role == FC_IN || o->role == FC_IN_UPDATED) && nin < MAX_IN) {
            locate(&in[nin], o->name, *o->value);
            in[nin++].updated = o->role == FC_IN_UPDATED;
        }
        if (o->role == FC_OUT && nout < FC_MAX_OUT) locate(&out[nout++], o->name, *o->value);
    }
    for (int i = 0; i < nout; i++) {
        for (int j = 0; j < i; j++)
            if (same_file(&out[i], &out[j]))
                return fc_usage(c, "%s %s and %s %s name the same file: give each output its own",
                                out[j].opt, out[j].path, out[i].opt, out[i].path);
        for (int j = 0; j < nin; j++)
            if (same_file(&out[i], &in[j]) && !(out[i].updated && in[j].updated))
                return fc_usage(c, "%s %s names the input %s%s%s: write the result to another "
                                "file", out[i].opt, out[i].path, in[j].opt, *in[j].opt ? " " : "",
                                in[j].path);
    }
    return 0;
}

int fc_parse(fc_cmd *c, int argc, char **argv)
{
    c->nfiles = 0, c->out = NULL, c->json = 0;
    c->backend = PK_BACKEND_AUTO, c->backend_given = 0;
    int options = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        int missing = 0, own;
        if (!options || a[0] != '-' || a[1] == '\0') {
            if (c->nfiles == c->max_files)
                return fc_usage(c, "unexpected argument '%s'", a);
            c->files[c->nfiles++] = a;
        } else if (strcmp(a, "--") == 0) {
            options = 0;
        } else if (pk_is_help(a)) {
            fputs(c->usage, stdout);
            return FC_HELP;
        } else if (strcmp(a, "--json") == 0) {
            c->json = 1;
        } else if ((v = pk_opt_value("-o", argc, argv, &i, &missing)) ||
                   (v = pk_opt_value("--output", argc, argv, &i, &missing))) {
            if (!*v) return fc_usage(c, "%s needs a file name", a);
            c->out = v;
        } else if ((v = pk_opt_value("--backend", argc, argv, &i, &missing))) {
            if (pk_backend_parse(v, &c->backend) != PK_OK)
                return fc_usage(c, "--backend: expected cpu, cuda or auto, got '%s'", v);
            c->backend_given = 1;
        } else if (!missing && (own = own_option(c, argc, argv, &i)) != 0) {
            if (own < 0) return fc_usage(c, "%s needs a value", a);
        } else if (missing) {
            return fc_usage(c, "%s needs a value", a);
        } else {
            return fc_usage(c, "unknown option '%s'", a);
        }
    }
    if (c->nfiles < c->min_files)
        return fc_usage(c, "missing input file%s", c->min_files - c->nfiles > 1 ? "s" : "");
    return check_names(c);
}

/* ---- Temporary outputs removed on a signal ---------------------------- */

static char temp_paths[FC_MAX_OUT][4096];
static volatile sig_atomic_t temp_live[FC_MAX_OUT];
static const int cleanup_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE};

static pthread_t main_thread; /* the one that holds the signals off */

static void on_signal(int sig)
{
    /* A process-directed signal goes to any thread that does not block it:
     * while the main thread holds it off, a worker thread (OpenMP's, the CUDA
     * runtime's) would take it mid-rename or before a temporary is recorded.
     * Sent on to the main thread, it waits there until it is let in. */
    if (!pthread_equal(pthread_self(), main_thread)) {
        pthread_kill(main_thread, sig);
        return;
    }
    for (int i = 0; i < FC_MAX_OUT; i++)
        if (temp_live[i]) unlink(temp_paths[i]);
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Hold the signals off (on) or let them in: while a temporary file is made
 * and recorded (else one could be left behind), and while the outputs are
 * renamed (all of them, or none). */
static void hold_signals(int on)
{
    static int installed;
    if (!installed) {
        installed = 1;
        main_thread = pthread_self();
        for (size_t i = 0; i < sizeof cleanup_signals / sizeof *cleanup_signals; i++) {
            struct sigaction sa = {.sa_handler = on_signal}, old;
            sigemptyset(&sa.sa_mask);
            /* leave a signal ignored by the caller (nohup) ignored */
            if (sigaction(cleanup_signals[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
                sigaction(cleanup_signals[i], &sa, NULL);
        }
    }
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < sizeof cleanup_signals / sizeof *cleanup_signals; i++)
        sigaddset(&set, cleanup_signals[i]);
    pthread_sigmask(on ? SIG_BLOCK : SIG_UNBLOCK, &set, NULL);
}

static void track_temp(int slot, const char *path)
{
    temp_live[slot] = 0;
    if (!path || strlen(path) >= sizeof temp_paths[slot]) return;
    strcpy(temp_paths[slot], path);
    temp_live[slot] = 1;
}

/* ---- Inputs, backend, outputs ----------------------------------------- */

void fc_init(fc_run *r, fc_cmd *c)
{
    memset(r, 0, sizeof *r);
    r->cmd = c;
    r->t_start = fc_now();
}

double fc_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int fc_file_error(const fc_run *r, const char *path, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "pk %s: %s: ", r->cmd->name, path);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return PK_EXIT_FAIL;
}

const pk_npy_header *fc_load(fc_run *r, const char *path, const void **data)
{
    pk_npy_array *a = &r->in[r->nin];
    pk_status s = pk_npy_open(a, path, PK_NPY_PREFAULT);
    if (s != PK_OK) {
        fprintf(stderr, "pk %s: %s\n", r->cmd->name, a->error);
        pk_npy_close(a);
        return NULL;
    }
    r->in_files[r->nin++] = path;
    *data = a->data;
    return &a->h;
}

void fc_fmt_shape(char *buf, size_t len, const pk_npy_header *h)
{
    size_t n = (size_t)snprintf(buf, len, "(");
    for (int i = 0; i < h->ndim && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s%lld", i ? ", " : "", (long long)h->shape[i]);
    if (n < len) snprintf(buf + n, len - n, "%s)", h->ndim == 1 ? "," : "");
}

int fc_expect(const fc_run *r, const char *path, const pk_npy_header *h, const int *types,
              int lo, int hi)
{
    char list[128] = "", shape[64], dims[32];
    int ok = 0;
    for (const int *t = types; *t >= 0; t++) {
        ok |= h->type == (pk_npy_type)*t;
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", t == types ? "" : " ",
                 pk_npy_type_name((pk_npy_type)*t));
    }
    if (!ok)
        return fc_file_error(r, path, "dtype %s: pk %s takes %s", pk_npy_type_name(h->type),
                             r->cmd->name, list);
    if (h->ndim < lo || h->ndim > hi) {
        fc_fmt_shape(shape, sizeof shape, h);
        if (hi == lo) snprintf(dims, sizeof dims, "%d-D", lo);
        else snprintf(dims, sizeof dims, "%d-D %s %d-D", lo, hi == lo + 1 ? "or" : "to", hi);
        return fc_file_error(r, path, "a %d-D array %s: pk %s takes %s arrays", h->ndim, shape,
                             r->cmd->name, dims);
    }
    return 0;
}

int fc_open_backend(fc_run *r)
{
    const char *from;
    int rc = pk_backend_choice(r->cmd->name, &r->cmd->backend, r->cmd->backend_given, &from);
    if (rc) return rc;
    pk_status s = pk_ctx_create(&r->ctx, r->cmd->backend, 0);
    if (s == PK_OK) {
        /* An untimed call that starts what any first call would (the CPU's
         * thread pool, the GPU runtime's staging): kept out of the time. */
        static const double zeros[1 << 16];
        double sum;
        pk_reduce(r->ctx, PK_SUM, PK_F64, zeros, 1 << 16, &sum);
        return 0;
    }
    fprintf(stderr, "pk %s: %s: %s\n", r->cmd->name, from, pk_last_create_error());
    return s == PK_ERR_ARG ? PK_EXIT_USAGE : PK_EXIT_FAIL;
}

int fc_create(fc_run *r, const char *path, pk_npy_type t, int ndim, const int64_t *shape,
              void **data)
{
    const int k = r->nout;
    hold_signals(1);
    pk_status s = pk_npy_create(&r->out[k], path, t, ndim, shape);
    track_temp(k, pk_npy_writer_temp(&r->out[k]));
    hold_signals(0);
    r->out_files[r->nout++] = path;
    if (s != PK_OK) {
        fprintf(stderr, "pk %s: %s\n", r->cmd->name, r->out[k].error);
        return PK_EXIT_FAIL;
    }
    *data = r->out[k].data;
    return 0;
}

int fc_kernel_error(const fc_run *r, pk_status s)
{
    /* one line: a GPU compiler's log has several */
    const char *m = pk_ctx_error(r->ctx);
    fprintf(stderr, "pk %s: ", r->cmd->name);
    for (; *m; m++)
        if (*m != '\n') fputc(*m, stderr);
        else if (m[1]) fputs(" | ", stderr);
    fputc('\n', stderr);
    return s == PK_ERR_COMPILE ? PK_EXIT_USAGE : PK_EXIT_FAIL;
}

int fc_cleanup(fc_run *r, int rc)
{
    for (int i = 0; i < r->nout; i++) {
        track_temp(i, NULL);
        pk_npy_discard(&r->out[i]);
    }
    for (int i = 0; i < r->nin; i++) pk_npy_close(&r->in[i]);
    pk_ctx_destroy(r->ctx);
    r->nout = r->nin = 0;
    r->ctx = NULL;
    return rc;
}

/* ---- The summary ------------------------------------------------------ */

void fc_fmt_value(char *buf, size_t len, pk_npy_type t, const void *p, int json)
{
    double d;
    int single = t == PK_NPY_F32;
    switch (t) {
    case PK_NPY_F32: d = *(const float *)p; break;
    case PK_NPY_F64: d = *(const double *)p; break;
    case PK_NPY_I32: snprintf(buf, len, "%d", *(const int32_t *)p); return;
    case PK_NPY_I64: snprintf(buf, len, "%lld", (long long)*(const int64_t *)p); return;
    case PK_NPY_U32: snprintf(buf, len, "%u", *(const uint32_t *)p); return;
    case PK_NPY_U64: snprintf(buf, len, "%llu", (unsigned long long)*(const uint64_t *)p); return;
    case PK_NPY_U8: case PK_NPY_BOOL: snprintf(buf, len, "%u", *(const uint8_t *)p); return;
    case PK_NPY_U16: snprintf(buf, len, "%u", *(const uint16_t *)p); return;
    default: snprintf(buf, len, "?"); return;
    }
    if (!isfinite(d)) {
        snprintf(buf, len, "%s", json ? "null" : isnan(d) ? "nan" : d > 0 ? "inf" : "-inf");
        return;
    }
    for (int prec = 1; prec <= 17; prec++) { /* the shortest that reads back */
        snprintf(buf, len, "%.*g", prec, d);
        if (single ? strtof(buf, NULL) == (float)d : strtod(buf, NULL) == d) return;
    }
}

void fc_fmt_json_num(char *buf, size_t len, double v)
{
    if (isfinite(v)) snprintf(buf, len, "%.17g", v);
    else snprintf(buf, len, "null");
}

static void json_num(double v)
{
    char buf[40];
    fc_fmt_json_num(buf, sizeof buf, v);
    fputs(buf, stdout);
}

static void json_arrays(const char *key, const char *const *files, const pk_npy_array *in,
                        const pk_npy_writer *out, int n)
{
    printf(", \"%s\": [", key);
    for (int i = 0; i < n; i++) {
        const pk_npy_header *h = in ? &in[i].h : &out[i].h;
        printf("%s{\"file\": ", i ? ", " : "");
        pk_json_str(stdout, files[i]);
        printf(", \"dtype\": \"%s\", \"shape\": [", pk_npy_type_name(h->type));
        for (int d = 0; d < h->ndim; d++) printf("%s%lld", d ? ", " : "", (long long)h->shape[d]);
        printf("]}");
    }
    printf("]");
}

/* GFLOP/s or TOP/s (bit operations) */
static double ops_scale(const fc_report *rep)
{
    return strcmp(rep->ops_unit, "tops") == 0 ? 1e12 : 1e9;
}

static int64_t values_shown(const fc_report *rep)
{
    return rep->nvalues < FC_PRINT_MAX ? rep->nvalues : FC_PRINT_MAX;
}

static void print_json(const fc_run *r, const fc_report *rep, double total)
{
    const pk_backend b = pk_ctx_backend(r->ctx);
    char v[48];
    printf("{\"command\": \"%s\", \"what\": ", r->cmd->name);
    pk_json_str(stdout, rep->what);
    json_arrays("inputs", r->in_files, r->in, NULL, r->nin);
    json_arrays("outputs", r->out_files, NULL, r->out, r->nout);
    if (rep->value[0]) printf(", \"value\": %s", rep->value);
    if (rep->values && !r->nout) {
        printf(", \"values\": [");
        const size_t size = pk_npy_type_size(rep->values_type);
        for (int64_t i = 0; i < values_shown(rep); i++) {
            fc_fmt_value(v, sizeof v, rep->values_type, (const char *)rep->values + i * size, 1);
            printf("%s%s", i ? ", " : "", v);
        }
        printf("], \"values_total\": %lld", (long long)rep->nvalues);
    }
    printf(", \"backend\": \"%s\", \"device\": ", pk_backend_name(b));
    pk_json_str(stdout, pk_ctx_describe(r->ctx));
    if (b == PK_BACKEND_CPU) printf(", \"threads\": %d", omp_get_max_threads());
    printf(", \"time_s\": ");
    json_num(rep->seconds);
    printf(", \"total_s\": ");
    json_num(total);
    printf(", \"bytes\": %.0f, \"gbps\": ", rep->bytes);
    json_num(rep->seconds > 0 ? rep->bytes / rep->seconds / 1e9 : NAN);
    if (rep->ops_unit) {
        printf(", \"ops\": %.0f, \"%s\": ", rep->ops, rep->ops_unit);
        json_num(rep->seconds > 0 ? rep->ops / rep->seconds / ops_scale(rep) : NAN);
    }
    printf("%s}\n", rep->json);
}

static void print_array(const char *file, const pk_npy_header *h)
{
    char shape[64];
    fc_fmt_shape(shape, sizeof shape, h);
    printf("%s %s %s", file, pk_npy_type_name(h->type), shape);
}

static void print_human(const fc_run *r, const fc_report *rep)
{
    printf("%s %s: ", r->cmd->name, rep->what);
    for (int i = 0; i < r->nin; i++) {
        printf("%s", i ? ", " : "");
        print_array(r->in_files[i], &r->in[i].h);
    }
    for (int i = 0; i < r->nout; i++) {
        printf("%s", i ? ", " : " -> ");
        print_array(r->out_files[i], &r->out[i].h);
    }
    if (rep->value[0]) printf(" = %s", rep->value);
    else if (rep->values && !r->nout)
        printf(" -> %lld %s value%s%s", (long long)rep->nvalues,
               pk_npy_type_name(rep->values_type), rep->nvalues == 1 ? "" : "s",
               rep->nvalues ? " (below)" : "");
    /* "cpu (avx512 path, ...)" or "cuda (NVIDIA H200 (sm_90, 132 SMs))" */
    if (pk_ctx_backend(r->ctx) == PK_BACKEND_CPU) printf(" | %s", pk_ctx_describe(r->ctx));
    else printf(" | cuda (%s)", pk_ctx_describe(r->ctx));
    char t[32];
    pk_fmt_time(t, sizeof t, rep->seconds);
    printf(" | %s", t);
    if (rep->seconds > 0 && rep->ops_unit)
        printf(", %.3g %s", rep->ops / rep->seconds / ops_scale(rep),
               ops_scale(rep) == 1e12 ? "TOP/s" : "GFLOP/s");
    else if (rep->seconds > 0)
        printf(", %.3g GB/s", rep->bytes / rep->seconds / 1e9);
    printf("%s%s\n", rep->note[0] ? " | " : "", rep->note);
    if (!rep->values || r->nout) return;
    char v[48];
    const size_t size = pk_npy_type_size(rep->values_type);
    for (int64_t i = 0; i < values_shown(rep); i++) {
        fc_fmt_value(v, sizeof v, rep->values_type, (const char *)rep->values + i * size, 0);
        puts(v);
    }
    if (rep->nvalues > FC_PRINT_MAX)
        printf("... %d of %lld values printed; -o FILE writes them all\n", FC_PRINT_MAX,
               (long long)rep->nvalues);
}

int fc_finish(fc_run *r, const fc_report *rep, int rc)
{
    if (rc == 0 && rep->failed) { /* the summary says why; no output */
        if (r->cmd->json) print_json(r, rep, fc_now() - r->t_start);
        else print_human(r, rep);
        fflush(stdout);
        fprintf(stderr, "pk %s: %s; no output written\n", r->cmd->name, rep->note);
        return fc_cleanup(r, PK_EXIT_FAIL);
    }
    /* Every output finished (on disk, its target checked) before any is
     * renamed: a failure here leaves every target as it was. */
    for (int i = 0; i < r->nout && rc == 0; i++)
        if (pk_npy_finish(&r->out[i]) != PK_OK) {
            fprintf(stderr, "pk %s: %s\n", r->cmd->name, r->out[i].error);
            rc = PK_EXIT_FAIL;
        }
    /* Signals are held off while renaming: all outputs, or none. A rename
     * can still fail after another succeeded (its target became a directory
     * meanwhile): the published file is whole, and the one it replaced is
     * gone either way, so it stays and the message names it. */
    if (r->nout) hold_signals(1);
    for (int i = 0; i < r->nout && rc == 0; i++) {
        pk_status s = pk_npy_publish(&r->out[i]);
        track_temp(i, NULL);
        if (s == PK_OK) continue;
        fprintf(stderr, "pk %s: %s", r->cmd->name, r->out[i].error);
        for (int j = 0; j < i; j++)
            fprintf(stderr, "%s%s", j ? ", " : " (written: ", r->out_files[j]);
        fputs(i ? ")\n" : "\n", stderr);
        rc = PK_EXIT_FAIL;
    }
    if (r->nout) hold_signals(0);
    if (rc == 0) {
        if (r->cmd->json) print_json(r, rep, fc_now() - r->t_start);
        else print_human(r, rep);
        if (fflush(stdout) != 0) rc = PK_EXIT_FAIL;
    }
    return fc_cleanup(r, rc);
}
