/* What the file commands do with bad input: every malformed .npy case (and
 * a few through every command) fails with status 1 and one line naming the
 * file and the reason, leaving no output and no temporary file; usage
 * errors are status 2 and one line; --help and `pk help`; outputs that
 * cannot be written; an interrupted command leaves nothing behind.
 * Usage: test_cli_errors PK [cpu|cuda]. */
#include "cli_util.h"
#include "files/npy_cases.h"

#include <sys/stat.h>

static void write_raw(const char *name, const void *bytes, size_t len)
{
    FILE *f = fopen(cli_path(name), "wb");
    if (!f || (len && fwrite(bytes, 1, len, f) != len) || fclose(f) != 0) {
        printf("FAIL: cannot write %s\n", name);
        exit(1);
    }
}

static void test_bad_files(void)
{
    for (int i = 0; i < NPY_NCASES + NPY_NRAW; i++) {
        const npy_case *c = i < NPY_NCASES ? &npy_cases[i] : NULL;
        const npy_raw_case *r = c ? NULL : &npy_raw_cases[i - NPY_NCASES];
        if (c && !c->expect) continue;
        size_t len = r ? r->len : 0;
        unsigned char *f = c ? npy_case_file(c, &len) : NULL;
        write_raw("bad.npy", c ? (const void *)f : r->bytes, len);
        free(f);
        int before = cli_entries();
        int rc = PK("reduce", "bad.npy", "--op", "sum", "-o", "out.npy");
        CHECK_FAILS(before, "pk reduce: bad.npy: ", rc, c ? c->name : r->name);
        PK_CHECK(strstr(cli_err, c ? c->expect : r->expect), "%s: %s", c ? c->name : r->name,
                 cli_err);
    }
    /* every command, with each argument bad in turn */
    const int64_t n3 = 3, s22[2] = {2, 2};
    cli_save("v.npy", PK_NPY_F32, 1, &n3, (float[]){1, 2, 3});
    cli_save("m.npy", PK_NPY_F32, 2, s22, (float[]){1, 2, 3, 4});
    cli_save("w.npy", PK_NPY_U64, 2, s22, (uint64_t[]){1, 2, 3, 4});
    static const char *const bad_cases[] = {"truncated_data", "fortran_2d", "big_endian_f4",
                                            "object", "shape_overflow", "version_4"};
    static const char *const commands[][12] = {
        {"dot", "BAD", "v.npy"},
        {"dot", "v.npy", "BAD"},
        {"axpy", "BAD", "v.npy", "-o", "out.npy"},
        {"axpy", "v.npy", "BAD", "-o", "out.npy"},
        {"gemm", "BAD", "m.npy", "-o", "out.npy"},
        {"gemm", "m.npy", "BAD", "-o", "out.npy"},
        {"gemm", "m.npy", "m.npy", "--c", "BAD", "-o", "out.npy", "--check"},
        {"pack", "BAD", "-o", "out.npy"},
        {"bgemm", "BAD", "w.npy", "--bits", "64", "-o", "out.npy"},
        {"hamming", "w.npy", "BAD", "-o", "out.npy"},
        {"knn", "--db", "BAD", "--queries", "w.npy", "-k", "1", "-o", "out.npy"},
        {"knn", "--db", "w.npy", "--queries", "BAD", "-k", "1", "-o", "out.npy", "--dist", "d.npy"},
        {"reduce", "BAD", "--expr", "x*x", "-o", "out.npy"},
    };
    for (size_t b = 0; b < sizeof bad_cases / sizeof *bad_cases; b++) {
        const npy_case *c = NULL;
        for (int i = 0; i < NPY_NCASES; i++)
            if (strcmp(npy_cases[i].name, bad_cases[b]) == 0) c = &npy_cases[i];
        size_t len;
        unsigned char *f = npy_case_file(c, &len);
        write_raw("bad.npy", f, len);
        free(f);
        for (size_t k = 0; k < sizeof commands / sizeof *commands; k++) {
            const char *args[13] = {0};
            for (int a = 0; commands[k][a]; a++)
                args[a] = strcmp(commands[k][a], "BAD") ? commands[k][a] : "bad.npy";
            int before = cli_entries();
            int rc = cli_run_args(args, 1);
            CHECK_FAILS(before, "bad.npy", rc, commands[k][0]);
            PK_CHECK(strstr(cli_err, c->expect), "%s %s: %s", commands[k][0], c->name, cli_err);
        }
    }
    /* files that are not there or not files */
    int before = cli_entries();
    int rc = PK("reduce", "absent.npy", "--op", "sum", "-o", "out.npy");
    CHECK_FAILS(before, "absent.npy: No such file or directory", rc, "missing file");
    mkdir(cli_path("sub"), 0755);
    before = cli_entries();
    rc = PK("dot", "sub", "v.npy");
    CHECK_FAILS(before, "sub: not a regular file", rc, "a directory");
    /* outputs that cannot be written: nothing is left anywhere */
    rc = PK("reduce", "v.npy", "--op", "sum", "-o", "nodir/out.npy");
    CHECK_FAILS(before, "nodir/out.npy: cannot create", rc, "output in a missing directory");
    rc = PK("reduce", "v.npy", "--op", "sum", "-o", "sub");
    CHECK_FAILS(before, "sub: is a directory", rc, "output onto a directory");
    /* the second output cannot be made: the first target stays as it was */
    cli_save("ids.npy", PK_NPY_F32, 1, &n3, (float[]){7, 8, 9});
    before = cli_entries();
    rc = PK("knn", "--db", "w.npy", "--queries", "w.npy", "-k", "1", "-o", "ids.npy", "--dist",
            "sub");
    CHECK_FAILS(before, "pk knn: sub: is a directory", rc, "the second output onto a directory");
    pk_npy_array a;
    const float *kept = cli_load(&a, "ids.npy", PK_NPY_F32, 1, &n3);
    PK_CHECK(kept && kept[0] == 7 && kept[2] == 9, "the first output's old file is kept");
    pk_npy_close(&a);
    unlink(cli_path("ids.npy"));
    rmdir(cli_path("sub"));
}

/* The second output's target turns into a directory while knn runs: the
 * outputs are all finished before any is renamed, so the first target is
 * left whole (its old file, or the new one), never removed. */
static void test_late_commit_failure(void)
{
    const int64_t q = 2000, n = 100000, words = 4, sq[2] = {q, words}, sx[2] = {n, words};
    uint64_t *x = pk_test_alloc((size_t)(n * words) * 8);
    for (int64_t i = 0; i < n * words; i++) x[i] = pk_test_next();
    cli_save("q.npy", PK_NPY_U64, 2, sq, x);
    cli_save("x.npy", PK_NPY_U64, 2, sx, x);
    free(x);
    const int64_t n3 = 3;
    cli_save("ids.npy", PK_NPY_F32, 1, &n3, (float[]){7, 8, 9});
    int before = cli_entries();
    pid_t pid = cli_start((const char *const[]){"knn", "--db", "x.npy", "--queries", "q.npy", "-k",
                                                "1", "-o", "ids.npy", "--dist", "d.npy", NULL}, 1);
    int seen = cli_await_file(pid, ".d.npy.", 2000);
    if (seen) mkdir(cli_path("d.npy"), 0755);
    int rc = cli_wait(pid);
    pk_npy_array a;
    if (!seen || rc == 0) { /* a fast machine: the command ended first */
        printf("note: the late commit failure was not reached (status %d)\n", rc);
    } else {
        PK_CHECK(rc == 1 && strstr(cli_err, "d.npy") && cli_lines(cli_err) == 1 &&
                     cli_entries() == before + 1, "late failure: status %d, %d entries (want %d), "
                     "stderr: %s", rc, cli_entries(), before + 1, cli_err);
        int ok = pk_npy_open(&a, cli_path("ids.npy"), 0) == PK_OK;
        int old = ok && a.h.type == PK_NPY_F32 && a.h.count == 3 &&
                  ((const float *)a.data)[0] == 7;
        int fresh = ok && a.h.type == PK_NPY_I64 && a.h.ndim == 2 && a.h.shape[0] == q;
        PK_CHECK(old || fresh, "ids.npy after the late failure: %s", ok ? "neither" : a.error);
        pk_npy_close(&a);
    }
    rmdir(cli_path("d.npy"));
    unlink(cli_path("d.npy"));
    unlink(cli_path("ids.npy"));
    unlink(cli_path("q.npy"));
    unlink(cli_path("x.npy"));
}

static void test_usage(void)
{
    static const char *const usage_errors[][12] = {
        {"reduce"}, {"reduce", "v.npy"}, {"reduce", "v.npy", "--op", "mean"},
        {"reduce", "v.npy", "--op"}, {"reduce", "v.npy", "--op", "sum", "--axis", "2"},
        {"reduce", "v.npy", "--op", "sum", "--expr", "x"}, {"reduce", "v.npy", "--combine", "a+b"},
        {"reduce", "v.npy", "--expr", "x", "--arg", "--final", "r"},
        {"reduce", "v.npy", "--expr", "x", "--acc", "i32"},
        {"reduce", "v.npy", "--op", "sum", "--identity", "0"},
        {"reduce", "v.npy", "--expr", "x", "--combine", "a*b", "--identity", "one"},
        {"reduce", "v.npy", "v.npy", "--op", "sum"}, {"reduce", "v.npy", "--op", "sum", "--frob"},
        {"reduce", "v.npy", "--op", "sum", "-o"}, {"reduce", "v.npy", "--op", "sum", "-o", ""},
        {"reduce", "v.npy", "--op", "sum", "--backend", "gpu"},
        {"dot", "v.npy"}, {"dot"}, {"axpy", "v.npy", "v.npy"},
        {"axpy", "--alpha", "two", "v.npy", "v.npy", "-o", "o.npy"},
        {"gemm", "m.npy", "m.npy"}, {"gemm", "m.npy", "m.npy", "-o", "c.npy", "--mode", "fp16"},
        {"gemm", "m.npy", "m.npy", "-o", "c.npy", "--beta", "2"}, {"pack", "v.npy"},
        {"bgemm", "w.npy", "w.npy", "--bits", "64"}, {"hamming", "w.npy", "w.npy", "-o", "d.npy",
                                                      "--dtype", "i8"},
        {"hamming", "w.npy", "w.npy", "-o", "d.npy", "--bits", "-1"}, {"knn"},
        {"knn", "--db", "w.npy", "--queries", "w.npy", "-o", "i.npy"},
        {"knn", "--db", "w.npy", "--queries", "w.npy", "-k", "0", "-o", "i.npy"},
        {"knn", "--db", "w.npy", "--queries", "w.npy", "-k", "1", "-o", "i.npy", "--dist", "i.npy"},
        {"knn", "--db", "w.npy", "--queries", "w.npy", "-k", "1", "-o", "i.npy", "--dist", "./i.npy"},
        {"knn", "--db", "w.npy", "--queries", "w.npy", "-k", "1", "-o", "i.npy", "--dist", "w.npy"},
        {"knn", "--db", "w.npy", "--queries", "v.npy", "-k", "1", "-o", "sub/../lv.npy"},
        {"reduce", "v.npy", "--op", "sum", "-o", "v.npy"},
        {"reduce", "v.npy", "--op", "sum", "-o", "lv.npy"},
        {"reduce", "v.npy", "--op", "sum", "-o", "hv.npy"},
        {"axpy", "v.npy", "v.npy", "-o", "./v.npy"},
        {"gemm", "m.npy", "m.npy", "--c", "m.npy", "-o", "m.npy"},
        {"knn", "--db", "w.npy", "--queries", "w.npy", "-k", "1", "-o", "new.npy", "--dist",
         "sub/../new.npy"},
        {"pack", "v.npy", "-o", "lv.npy"},
        {"knn", "--db", "w.npy", "-k", "1", "-o", "i.npy"}, {"help", "bogus"},
        {"help", "reduce", "extra"}, {"frobnicate"},
    };
    /* other names of v.npy: a symbolic and a hard link; a directory */
    if (symlink("v.npy", cli_path("lv.npy")) != 0 ||
        link(cli_path("v.npy"), cli_path("hv.npy")) != 0 || mkdir(cli_path("sub"), 0755) != 0) {
        printf("FAIL: cannot make links\n");
        exit(1);
    }
    for (size_t i = 0; i < sizeof usage_errors / sizeof *usage_errors; i++) {
        int before = cli_entries();
        int rc = cli_run_args(usage_errors[i], 0);
        char want[64];
        snprintf(want, sizeof want, "pk %s: ", usage_errors[i][0]);
        const int named = strcmp(usage_errors[i][0], "help") == 0 ||
                          strcmp(usage_errors[i][0], "frobnicate") == 0;
        PK_CHECK(rc == 2 && cli_lines(cli_err) == 1 && cli_entries() == before &&
                     (named ? STARTS(cli_err, "pk: ") : strncmp(cli_err, want, strlen(want)) == 0) &&
                     strstr(cli_err, "--help')\n"), "usage error #%zu (%s %s): status %d: %s", i,
                 usage_errors[i][0], usage_errors[i][1] ? usage_errors[i][1] : "", rc, cli_err);
    }
    unlink(cli_path("lv.npy"));
    unlink(cli_path("hv.npy"));
    rmdir(cli_path("sub"));
    /* the message names both */
    int rc = PK_RAW("knn", "--db", "w.npy", "--queries", "w.npy", "-k", "1", "-o", "i.npy",
                    "--dist", "./i.npy");
    PK_CHECK(rc == 2 && STARTS(cli_err, "pk knn: -o/--output i.npy and --dist ./i.npy name the same file"),
             "%s", cli_err);
    rc = PK_RAW("gemm", "m.npy", "v.npy", "--c", "w.npy", "-o", "./m.npy");
    PK_CHECK(rc == 2 && STARTS(cli_err, "pk gemm: -o/--output ./m.npy names the input m.npy: "), "%s",
             cli_err);
    /* help: each command's, the same through `pk help`, and the list */
    static const char *const names[] = {"reduce", "dot", "axpy", "gemm", "pack", "bgemm",
                                        "hamming", "knn", "info", "bench"};
    rc = PK_RAW("--help");
    static char list[sizeof cli_out];
    snprintf(list, sizeof list, "%s", cli_out);
    rc |= PK_RAW("help");
    PK_CHECK(rc == 0 && strcmp(list, cli_out) == 0, "pk help is pk --help");
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char item[32], usage[32];
        snprintf(item, sizeof item, "\n  %-9s", names[i]);
        snprintf(usage, sizeof usage, "usage: pk %s", names[i]);
        PK_CHECK(strstr(list, item), "pk --help lists %s", names[i]);
        rc = PK_RAW(names[i], "--help");
        static char own[sizeof cli_out];
        snprintf(own, sizeof own, "%s", cli_out);
        PK_CHECK(rc == 0 && strncmp(own, usage, strlen(usage)) == 0, "pk %s --help", names[i]);
        rc = PK_RAW("help", names[i]);
        PK_CHECK(rc == 0 && strcmp(own, cli_out) == 0, "pk help %s", names[i]);
    }
}

/* A command killed while its output is being made leaves no file. */
static void test_interrupt(void)
{
    const int64_t m = 300, k = 20000, sa[2] = {m, k}, sb[2] = {k, m};
    float *a = pk_test_alloc((size_t)(m * k) * 4);
    for (int64_t i = 0; i < m * k; i++) a[i] = (float)pk_test_uniform(-1, 1);
    cli_save("a.npy", PK_NPY_F32, 2, sa, a);
    cli_save("b.npy", PK_NPY_F32, 2, sb, a);
    free(a);
    int before = cli_entries();
    /* --check's reference takes seconds: the temporary output exists then */
    pid_t pid = cli_start((const char *const[]){"gemm", "a.npy", "b.npy", "-o", "c.npy", "--check",
                                                NULL}, 1);
    int seen = cli_await_file(pid, ".c.npy.", 10000);
    if (seen) kill(pid, SIGTERM);
    int rc = cli_wait(pid);
    if (!seen || rc == 0) { /* a fast machine: the command ended first */
        printf("note: the interrupt case was not reached (the command ended first: %d)\n", rc);
        unlink(cli_path("c.npy"));
        return;
    }
    /* A signal that lands while the outputs are renamed into place waits for
     * the renames (all outputs or none): then c.npy is complete and no
     * temporary is left, and the command dies of the signal after. */
    if (rc == 128 + SIGTERM && cli_entries() == before + 1 && access(cli_path("c.npy"), F_OK) == 0) {
        pk_npy_array c;
        PK_CHECK(cli_load(&c, "c.npy", PK_NPY_F32, 2, (int64_t[]){m, m}) != NULL,
                 "killed during the commit: c.npy incomplete");
        pk_npy_close(&c);
        printf("note: the signal landed during the commit: c.npy complete\n");
        unlink(cli_path("c.npy"));
        return;
    }
    PK_CHECK(rc == 128 + SIGTERM && cli_entries() == before,
             "killed: status %d, %d entries (want %d)", rc, cli_entries(), before);
    if (cli_entries() != before) { /* which file was left, for the replay */
        DIR *d = opendir(cli_dir);
        for (struct dirent *e; d && (e = readdir(d));) printf("  entry: %s\n", e->d_name);
        if (d) closedir(d);
    }
}

static void test(void)
{
    test_bad_files();
    test_late_commit_failure();
    test_usage();
    test_interrupt();
}

int main(int argc, char **argv) { return cli_main(argc, argv, "test_cli_errors", test); }
