/* `pk bench compare BASE.json NEW.json`: two `pk bench --json` runs, row by
 * row (rows match by id), each row FAST, SLOW or SAME with both rows' noise
 * taken into account; a summary; exit status 1 when a row got slower or
 * failed. An interrupted run's document is read up to its last whole row. */
#include "bench.h"
#include "cli.h"
#include "json_reader.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: pk bench compare BASE.json NEW.json [--threshold PCT]\n"
    "\n"
    "Compare two 'pk bench --json' runs row by row; rows match by their id\n"
    "(kernel, dtype and shape). NEW's median time against BASE's:\n"
    "  tolerance = the larger of the threshold and the two rows' noise added\n"
    "  FAST   NEW is faster: new time < base time / (1 + tolerance)\n"
    "  SLOW   NEW is slower: new time > base time * (1 + tolerance)\n"
    "  SAME   within the tolerance\n"
    "  NOISY  either row was flagged UNRELIABLE: no verdict\n"
    "  FAILED the row failed verification (or errored) in NEW\n"
    "  -      not timed in one of the runs (skipped, or failed in BASE)\n"
    "speedup = base time / new time (above 1: NEW is faster). Rows in one file\n"
    "only are counted; a different device, backend or schema is warned about\n"
    "on stderr. A run interrupted before its end is read up to its last whole\n"
    "row.\n"
    "\n"
    "options:\n"
    "  --threshold P  the smallest change that counts, in percent (default 5)\n"
    "  -h, --help     this text\n"
    "\n"
    "exit status: 0 no row SLOW or FAILED, 1 some row SLOW or FAILED, 2 usage\n"
    "error or a file that cannot be read as a pk bench JSON document\n";

typedef struct run_doc {
    const char *path;
    json *doc;
    const json *rows;
    int complete;
} run_doc;

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) break;
        char *grown = cap < ((size_t)1 << 32) ? realloc(buf, cap *= 2) : NULL;
        if (!grown) free(buf);
        buf = grown;
        errno = ENOMEM;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        errno = EIO;
        return NULL;
    }
    *len = n;
    return buf;
}

/* An interrupted run: the document up to its last whole row line, closed.
 * Row lines start with '{' or ',{' and end with '}'; the first line is the
 * head, which ends with "rows": [. */
static json *recover(char *text, size_t len)
{
    size_t end = 0, line = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && text[i] != '\n') continue;
        size_t e = i;
        while (e > line && (text[e - 1] == '\r' || text[e - 1] == ' ')) e--;
        int row = line > 0 && e > line + 1 && text[e - 1] == '}' &&
                  (text[line] == '{' || (text[line] == ',' && text[line + 1] == '{'));
        if (line == 0 && e >= 1 && text[e - 1] == '[') end = e;
        if (row) end = e;
        line = i + 1;
    }
    if (!end) return NULL;
    char *closed = malloc(end + 4);
    if (!closed) return NULL;
    memcpy(closed, text, end);
    memcpy(closed + end, "\n]}", 4);
    char err[8];
    json *doc = json_parse(closed, end + 3, err, sizeof err);
    free(closed);
    return doc;
}

static int load(run_doc *r, const char *path)
{
    size_t len = 0;
    char err[160];
    r->path = path;
    char *text = read_file(path, &len);
    if (!text) {
        fprintf(stderr, "pk bench compare: %s: %s\n", path, strerror(errno));
        return -1;
    }
    r->doc = json_parse(text, len, err, sizeof err);
    r->complete = r->doc != NULL;
    if (!r->doc && !strncmp(text, "{\"schema\": \"pk-bench\"", 21)) r->doc = recover(text, len);
    free(text);
    if (!r->doc) {
        fprintf(stderr, "pk bench compare: %s: not JSON (%s)\n", path, err);
        return -1;
    }
    const json *c = json_get(r->doc, "complete");
    if (r->complete && !(c && c->type == JSON_BOOL && c->boolean)) r->complete = 0;
    r->rows = json_get(r->doc, "rows");
    if (strcmp(json_str(json_get(r->doc, "schema")) ? json_str(json_get(r->doc, "schema")) : "",
               "pk-bench") != 0 ||
        !r->rows || r->rows->type != JSON_ARR) {
        fprintf(stderr, "pk bench compare: %s: not a pk bench JSON document (written by "
                        "'pk bench --json')\n", path);
        return -1;
    }
    return 0;
}

/* A string field of an object of the document ("" when absent). */
static const char *field(const json *doc, const char *obj, const char *key)
{
    const char *s = json_str(json_get(json_get(doc, obj), key));
    return s ? s : "";
}

static void describe(const char *label, const run_doc *r)
{
    printf("%-5s %s: pk %s (git %s), %s %s, %s, %d rows%s\n", label, r->path,
           field(r->doc, "build", "version"), field(r->doc, "build", "git"),
           field(r->doc, "device", "backend"), field(r->doc, "device", "name"),
           field(r->doc, "run", "started_utc"), r->rows->n,
           r->complete ? "" : " (incomplete: the run was interrupted)");
}

/* Warn where the runs are not alike. */
static void warn_mismatch(const run_doc *a, const run_doc *b)
{
    double va = json_num(json_get(a->doc, "schema_version")),
           vb = json_num(json_get(b->doc, "schema_version"));
    if (va != vb)
        fprintf(stderr, "pk bench compare: warning: schema versions differ (%g, %g): fields "
                        "may not mean the same\n", va, vb);
    if (va > BENCH_JSON_SCHEMA_VERSION || vb > BENCH_JSON_SCHEMA_VERSION)
        fprintf(stderr, "pk bench compare: warning: schema version above %d: written by a "
                        "newer pk\n", BENCH_JSON_SCHEMA_VERSION);
    static const char *const keys[] = {"backend", "name", "index", "threads"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        const json *x = json_get(json_get(a->doc, "device"), keys[i]);
        const json *y = json_get(json_get(b->doc, "device"), keys[i]);
        const char *sx = json_str(x), *sy = json_str(y);
        int differ = sx || sy ? !sx || !sy || strcmp(sx, sy) : json_num(x) != json_num(y) &&
                                                                  (x || y);
        if (differ)
            fprintf(stderr, "pk bench compare: warning: the devices differ (%s: %s, %s): the "
                            "times compare machines, not builds\n", keys[i],
                    sx ? sx : x ? "(number)" : "(none)", sy ? sy : y ? "(number)" : "(none)");
    }
    for (int i = 0; i < 2; i++)
        if (!(i ? b : a)->complete)
            fprintf(stderr, "pk bench compare: warning: %s is incomplete (the run was "
                            "interrupted): its whole rows are compared\n", (i ? b : a)->path);
}

static const json *find_row(const json *rows, const char *id)
{
    for (int i = 0; i < rows->n; i++) {
        const char *s = json_str(json_get(&rows->items[i], "id"));
        if (s && !strcmp(s, id)) return &rows->items[i];
    }
    return NULL;
}

static int timed_ok(const json *row)
{
    const char *st = json_str(json_get(row, "status"));
    return st && !strcmp(st, "ok") && json_num(json_get(row, "time_s")) > 0;
}

static int unreliable(const json *row)
{
    const json *r = json_get(row, "reliable");
    return r && r->type == JSON_BOOL && !r->boolean;
}

static double noise(const json *row)
{
    double v = json_num(json_get(row, "noise"));
    return v >= 0 ? v : 0;
}

enum { V_FAST, V_SLOW, V_SAME, V_NOISY, V_FAILED, V_NONE, NVERDICTS };
static const char *const verdicts[NVERDICTS] = {"FAST", "SLOW", "SAME", "NOISY", "FAILED", "-"};

int pk_cmd_bench_compare(int argc, char **argv, pk_cli_mode mode)
{
    const char *paths[2] = {NULL, NULL};
    double threshold = 0.05;
    int npaths = 0, seen = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        int missing = 0;
        if (!seen && !strcmp(a, "compare")) {
            seen = 1;
        } else if (pk_is_help(a)) {
            fputs(usage, stdout);
            return 0;
        } else if ((v = pk_opt_value("--threshold", argc, argv, &i, &missing))) {
            char *end;
            threshold = strtod(v, &end) / 100;
            if (end == v || *end || !(threshold >= 0 && threshold <= 10))
                return pk_usage_error("bench compare", "--threshold: expected a percent from "
                                      "0 to 1000, got '%s'", v);
        } else if (missing) {
            return pk_usage_error("bench compare", "%s needs a value", a);
        } else if (a[0] == '-' && a[1]) {
            return pk_usage_error("bench compare", "unknown option '%s'", a);
        } else if (!seen || npaths == 2) {
            return pk_usage_error("bench compare", "takes two files and --threshold, got '%s'",
                                  a);
        } else {
            paths[npaths++] = a;
        }
    }
    if (npaths < 2)
        return pk_usage_error("bench compare", "needs two files: BASE.json NEW.json");
    if (mode == PK_CLI_CHECK) return 0; /* the files are read by the run */

    run_doc runs[2] = {{0}, {0}};
    if (load(&runs[0], paths[0]) || load(&runs[1], paths[1])) {
        json_free(runs[0].doc), json_free(runs[1].doc);
        return PK_EXIT_USAGE;
    }
    const run_doc *base = &runs[0], *cur = &runs[1];
    describe("base", base);
    describe("new", cur);
    fflush(stdout);
    warn_mismatch(base, cur);
    printf("\n%-44s %10s %10s %8s %9s  %s\n", "case", "base time", "new time", "speedup",
           "tolerance", "verdict");
    int count[NVERDICTS] = {0}, only_base = 0, only_new = 0;
    for (int i = 0; i < base->rows->n; i++) {
        const json *b = &base->rows->items[i];
        const char *id = json_str(json_get(b, "id"));
        const json *n = id ? find_row(cur->rows, id) : NULL;
        if (!n || find_row(base->rows, id) != b) { /* unmatched, or a repeated id */
            only_base += n == NULL;
            continue;
        }
        double tb = json_num(json_get(b, "time_s")), tn = json_num(json_get(n, "time_s"));
        double tol = fmax(threshold, noise(b) + noise(n)), speedup = tb / tn;
        const char *st = json_str(json_get(n, "status"));
        int v = st && !strcmp(st, "failed")       ? V_FAILED
                : !timed_ok(b) || !timed_ok(n)    ? V_NONE
                : unreliable(b) || unreliable(n) ? V_NOISY
                : tn < tb / (1 + tol)             ? V_FAST
                : tn > tb * (1 + tol)             ? V_SLOW
                                                  : V_SAME;
        count[v]++;
        char t1[24] = "-", t2[24] = "-", sp[24] = "-", tl[24] = "-";
        if (tb > 0) pk_fmt_time(t1, sizeof t1, tb);
        if (tn > 0) pk_fmt_time(t2, sizeof t2, tn);
        if (v <= V_NOISY) snprintf(sp, sizeof sp, "%.3gx", speedup);
        if (v <= V_SAME) snprintf(tl, sizeof tl, "+-%.0f%%", 100 * tol);
        printf("%-44s %10s %10s %8s %9s  %s\n", id, t1, t2, sp, tl, verdicts[v]);
    }
    for (int i = 0; i < cur->rows->n; i++) {
        const char *id = json_str(json_get(&cur->rows->items[i], "id"));
        only_new += !id || !find_row(base->rows, id);
    }
    int matched = 0;
    for (int v = 0; v < NVERDICTS; v++) matched += count[v];
    printf("\n%d row%s compared: %d FAST, %d SLOW, %d SAME, %d NOISY, %d FAILED, %d not timed; "
           "%d only in %s, %d only in %s\n", matched, matched == 1 ? "" : "s", count[V_FAST],
           count[V_SLOW], count[V_SAME], count[V_NOISY], count[V_FAILED], count[V_NONE],
           only_base, base->path, only_new, cur->path);
    printf("speedup = base time / new time (above 1: new is faster); tolerance = the larger "
           "of --threshold %.0f%% and the rows' noise added\n", 100 * threshold);
    json_free(runs[0].doc), json_free(runs[1].doc);
    return count[V_SLOW] || count[V_FAILED] ? PK_EXIT_FAIL : 0;
}
