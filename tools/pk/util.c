/* Usage errors, option values, JSON and number formatting for the pk
 * command (cli.h). */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int pk_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "pk%s%s: ", cmd ? " " : "", cmd ? cmd : "");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (try 'pk%s%s --help')\n", cmd ? " " : "", cmd ? cmd : "");
    va_end(ap);
    return PK_EXIT_USAGE;
}

int pk_is_help(const char *arg)
{
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

const char *pk_opt_value(const char *opt, int argc, char **argv, int *i,
                         int *missing)
{
    size_t len = strlen(opt);
    const char *a = argv[*i];
    if (strncmp(a, opt, len) != 0) return NULL;
    if (a[len] == '=') return a + len + 1;
    if (a[len] != '\0') return NULL;
    if (*i + 1 >= argc) {
        *missing = 1;
        return NULL;
    }
    return argv[++*i];
}

int pk_backend_choice(const char *cmd, pk_backend *backend, int given,
                      const char **from)
{
    *from = given ? (*backend == PK_BACKEND_CPU    ? "--backend cpu"
                     : *backend == PK_BACKEND_CUDA ? "--backend cuda"
                                                   : "--backend auto")
                  : "auto backend";
    if (*backend != PK_BACKEND_AUTO) return 0; /* an explicit backend wins */
    const char *env = getenv("PK_BACKEND");
    if (!env || !*env) return 0;
    if (pk_backend_parse(env, backend) != PK_OK)
        return pk_usage_error(cmd, "PK_BACKEND=%s: expected cpu, cuda or auto", env);
    *from = *backend == PK_BACKEND_CPU    ? "PK_BACKEND=cpu"
            : *backend == PK_BACKEND_CUDA ? "PK_BACKEND=cuda"
                                          : "PK_BACKEND=auto";
    return 0;
}

int pk_parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

void pk_json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c == '\n') fputs("\\n", f);
        else if (c == '\t') fputs("\\t", f);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

/* The shortest of %.15g, %.16g and %.17g that reads back as the same double:
 * exact, and 0.1 stays "0.1". Integral values up to 2^53 print without an
 * exponent, as integers. */
void pk_json_num(FILE *f, double v)
{
    if (!isfinite(v)) {
        fputs("null", f);
        return;
    }
    char buf[40];
    if (v == nearbyint(v) && fabs(v) <= 0x1p53) {
        snprintf(buf, sizeof buf, "%.0f", v);
    } else {
        for (int digits = 15; digits <= 17; digits++) {
            snprintf(buf, sizeof buf, "%.*g", digits, v);
            if (strtod(buf, NULL) == v) break;
        }
    }
    fputs(buf, f);
}

void pk_json_int(FILE *f, int64_t v)
{
    fprintf(f, "%lld", (long long)v);
}

void pk_fmt_count(char *buf, size_t len, int64_t n)
{
    if (n >= 1024 && (n & (n - 1)) == 0) {
        int k = 0;
        while (((int64_t)1 << k) < n) k++;
        snprintf(buf, len, "2^%d", k);
    } else {
        snprintf(buf, len, "%lld", (long long)n);
    }
}

void pk_fmt_time(char *buf, size_t len, double s)
{
    if (s < 1e-6) snprintf(buf, len, "%.0f ns", s * 1e9);
    else if (s < 1e-3) snprintf(buf, len, "%.3g us", s * 1e6);
    else if (s < 1) snprintf(buf, len, "%.3g ms", s * 1e3);
    else snprintf(buf, len, "%.3g s", s);
}
