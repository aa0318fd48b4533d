/* Shared pieces of the pk command: subcommands, usage errors, JSON and
 * number formatting. Exit codes: 0 success, 1 a failure (a kernel error, a
 * failed verification, no device), 2 a usage error. */
#ifndef PK_CLI_H
#define PK_CLI_H

#include "pk.h"

#include <stdint.h>
#include <stdio.h>

#define PK_EXIT_FAIL 1
#define PK_EXIT_USAGE 2

/* The CPU ceilings (read and copy bandwidth) are measured on this many bytes,
 * far past the last-level cache, best of PK_CEILING_REPS passes. */
#define PK_CEILING_BYTES ((size_t)1 << 30)
#define PK_CEILING_REPS 5

/* How a command line is taken: run, or only checked. A check parses and
 * checks every argument as the run does before its first file, device or
 * kernel (an option's value, a missing input, two options that exclude each
 * other), prints what the run would (a usage error, --help's text) and
 * returns what the run would at that point: 2 for a usage error, else 0. It
 * opens, writes and execs nothing and keeps no state: tests/fuzz/fuzz_cli.c
 * calls it millions of times. */
typedef enum pk_cli_mode { PK_CLI_RUN, PK_CLI_CHECK } pk_cli_mode;

/* `pk ARGS...` (commands.c); argv[0] is the program. The exit status. */
int pk_cli(int argc, char **argv, pk_cli_mode mode);

/* The commands: argv[0] is the command's name. */
int pk_cmd_info(int argc, char **argv, pk_cli_mode mode);
int pk_cmd_bench(int argc, char **argv, pk_cli_mode mode);
/* `pk bench dist`, under mpirun (tools/pk/bench_dist.c). */
int pk_cmd_bench_dist(int argc, char **argv, pk_cli_mode mode);

/* Print "pk CMD: MESSAGE (try 'pk CMD --help')" on stderr; returns 2. */
int pk_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* 1 when arg is --help or -h. */
int pk_is_help(const char *arg);
/* An option's value: "--opt=V" or "--opt V" (advancing *i). Returns NULL
 * when arg is not this option, or is it without a value: then it sets
 * *missing to 1 (and otherwise leaves *missing alone). */
const char *pk_opt_value(const char *opt, int argc, char **argv, int *i,
                         int *missing);
/* The backend a command runs on when --backend is absent or auto: AUTO
 * semantics, so PK_BACKEND (cpu|cuda|auto) overrides it as in
 * pk_ctx_create. *backend is the --backend value (AUTO when absent); given:
 * whether --backend was on the command line. Sets *from to where the choice
 * came from, for messages ("--backend cpu", "PK_BACKEND=cuda", "auto
 * backend"); returns 0, or prints a usage error for a bad PK_BACKEND and
 * returns 2. */
int pk_backend_choice(const char *cmd, pk_backend *backend, int given,
                      const char **from);
/* Parse a whole decimal integer in [lo, hi]; 0 on success. */
int pk_parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out);

/* JSON: a quoted, escaped string; a number (null when not finite; the
 * shortest text that reads back as the same double); an exact integer. */
void pk_json_str(FILE *f, const char *s);
void pk_json_num(FILE *f, double v);
void pk_json_int(FILE *f, int64_t v);

/* "2^26" for powers of two from 2^10 up, else the decimal number. */
void pk_fmt_count(char *buf, size_t len, int64_t n);
/* "812 ns", "12.3 us", "4.56 ms", "1.23 s". */
void pk_fmt_time(char *buf, size_t len, double seconds);

#endif
