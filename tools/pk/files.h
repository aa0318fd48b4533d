/* The file commands (pk reduce, dot, axpy, gemm, pack, bgemm, hamming,
 * knn): what they share. Options, .npy inputs and outputs, the backend,
 * timing, and the summary (one human line, or one JSON line with --json).
 *
 * Exit status: 0 success; 1 a failure: a bad or unsuitable file (its name
 * and the reason on stderr), a kernel error, a failed --check; 2 a usage
 * error (one line on stderr). Outputs are written to temporary files, all
 * finished (on disk) before any is renamed into place: a failed or
 * interrupted command leaves no output file and never removes a file that
 * was there. */
#ifndef PK_FILES_H
#define PK_FILES_H

#include "cli.h"
#include "npy.h"

int pk_cmd_reduce(int argc, char **argv, pk_cli_mode mode);
int pk_cmd_dot(int argc, char **argv, pk_cli_mode mode);
int pk_cmd_axpy(int argc, char **argv, pk_cli_mode mode);
int pk_cmd_gemm(int argc, char **argv, pk_cli_mode mode);
int pk_cmd_pack(int argc, char **argv, pk_cli_mode mode);
int pk_cmd_bgemm(int argc, char **argv, pk_cli_mode mode);
int pk_cmd_hamming(int argc, char **argv, pk_cli_mode mode);
int pk_cmd_knn(int argc, char **argv, pk_cli_mode mode);

/* A command's own option: a value option sets *value, a flag sets *flag.
 * role: FC_IN or FC_OUT for an option naming an input or an output file
 * (checked, with the others, for two names of one file); FC_IN_UPDATED for
 * an input that -o may name, the result replacing it (gemm's --c, as BLAS
 * updates C). */
enum { FC_ARG, FC_IN, FC_OUT, FC_IN_UPDATED };
typedef struct fc_opt {
    const char *name;
    const char **value;
    int *flag;
    int role;
} fc_opt;

#define FC_MAX_IN 3
#define FC_MAX_OUT 2

typedef struct fc_cmd {
    const char *name;      /* "reduce" */
    const char *usage;     /* the --help text */
    const fc_opt *opts;    /* ended by {NULL} */
    int min_files, max_files;
    int updated_operand;   /* 1-based: the operand -o may name (axpy's y); 0: none */
    /* filled by fc_parse */
    const char *files[FC_MAX_IN];
    int nfiles;
    const char *out;       /* -o FILE, NULL when absent */
    int json;
    pk_backend backend;
    int backend_given;
} fc_cmd;

/* Parse the command's options and the common ones (-o FILE, --json,
 * --backend B, -h/--help). Returns 0 to go on, FC_HELP after printing the
 * usage (exit 0), or 2 after a usage error; two outputs naming one file, or
 * an output naming an input (however spelled: ./a.npy, a link, a hard
 * link), are usage errors. */
#define FC_HELP (-1)
int fc_parse(fc_cmd *c, int argc, char **argv);
/* A usage error of the command: one line, status 2. */
int fc_usage(const fc_cmd *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Parse a number (strtod: decimal, hex, inf, nan) for option opt. */
int fc_parse_double(const fc_cmd *c, const char *opt, const char *s, double *v);

typedef struct fc_run {
    fc_cmd *cmd;
    pk_ctx *ctx;
    pk_npy_array in[FC_MAX_IN];
    const char *in_files[FC_MAX_IN];
    int nin;
    pk_npy_writer out[FC_MAX_OUT];
    const char *out_files[FC_MAX_OUT];
    int nout;
    double t_start;
} fc_run;

void fc_init(fc_run *r, fc_cmd *c);
/* Open and map a .npy input; NULL after printing why (status 1). */
const pk_npy_header *fc_load(fc_run *r, const char *path, const void **data);
/* "pk CMD: PATH: message" on stderr; returns 1. */
int fc_file_error(const fc_run *r, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Check that an input has a type in the list (ended by -1) and ndim in
 * [lo, hi]; prints why not and returns 1. */
int fc_expect(const fc_run *r, const char *path, const pk_npy_header *h, const int *types,
              int lo, int hi);
/* "(3, 4)" */
void fc_fmt_shape(char *buf, size_t len, const pk_npy_header *h);
/* Open the backend (after the inputs loaded: a bad file fails fast). */
int fc_open_backend(fc_run *r);
/* Create an output; *data is where its elements go. Returns 0 or 1. */
int fc_create(fc_run *r, const char *path, pk_npy_type t, int ndim, const int64_t *shape,
              void **data);
/* A failed kernel call: the context's message; returns 1 (2 for usage). */
int fc_kernel_error(const fc_run *r, pk_status s);
/* Seconds on the monotonic clock. */
double fc_now(void);
/* Discard outputs, unmap inputs, free the context; returns rc. */
int fc_cleanup(fc_run *r, int rc);

/* The summary of a run. */
typedef struct fc_report {
    char what[160];        /* "sum", "sum along axis 0", "gemm fp32" */
    char value[48];        /* a scalar result as JSON text ("" if none) */
    const void *values;    /* a result array printed when there is no -o */
    pk_npy_type values_type;
    int64_t nvalues;
    double seconds;        /* the kernel call */
    double bytes;          /* inputs read + outputs written by the kernel */
    double ops;            /* compute kernels: FLOPs or bit operations */
    const char *ops_unit;  /* NULL (memory-bound: GB/s), "gflops" or "tops" */
    int failed;            /* a failed check: summary, no output, status 1 */
    char note[200];        /* more for the human line ("" if none) */
    char json[400];        /* more JSON members: ", \"bits\": 100" */
} fc_report;

/* Format one element as the shortest text that reads back the same; JSON
 * gets null for NaN and infinities, human text nan, inf, -inf. */
void fc_fmt_value(char *buf, size_t len, pk_npy_type t, const void *p, int json);
/* A double as JSON: %.17g, null when not finite. */
void fc_fmt_json_num(char *buf, size_t len, double v);
/* Commit the outputs, print the summary, clean up. Returns the status. */
int fc_finish(fc_run *r, const fc_report *rep, int rc);

#endif
