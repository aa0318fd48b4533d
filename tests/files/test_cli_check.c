/* pk_cli in PK_CLI_CHECK mode (tools/pk/cli.h), the entry point that
 * tests/fuzz/fuzz_cli.c fuzzes: a good command line gives 0 and touches no
 * file (the outputs it names are not created, the inputs it names need not
 * exist), a bad one gives 2 as the run does, and no state is kept between
 * checks (pk bench's outputs are forgotten: the same line checks the same
 * way twice). Run from a scratch directory (its first argument). */
#include "cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int failures;

/* Check `pk ARGS...` (NULL-terminated); the status. */
static int check(const char *first, ...)
{
    char *argv[32] = {"pk", (char *)first};
    int argc = 2;
    va_list ap;
    va_start(ap, first);
    for (char *a; (a = va_arg(ap, char *)) != NULL && argc < 31;) argv[argc++] = a;
    va_end(ap);
    argv[argc] = NULL;
    return pk_cli(argc, argv, PK_CLI_CHECK);
}

#define EXPECT(cond)                                                    \
    do {                                                                \
        if (!(cond)) {                                                  \
            printf("FAIL line %d: %s\n", __LINE__, #cond);              \
            failures++;                                                 \
        }                                                               \
    } while (0)

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

int main(int argc, char **argv)
{
    if (argc != 2 || chdir(argv[1]) != 0) {
        printf("usage: test_cli_check SCRATCH_DIR\n");
        return 1;
    }
    setvbuf(stdout, NULL, _IONBF, 0);
    /* Good lines: 0, and no file appears (the inputs do not exist). */
    EXPECT(check("reduce", "in.npy", "--op", "sum", "-o", "out.npy", NULL) == 0);
    EXPECT(check("reduce", "in.npy", "--expr", "x*x", "--final", "sqrt(r)", NULL) == 0);
    EXPECT(check("gemm", "a.npy", "b.npy", "-o", "c.npy", "--mode", "tf32", NULL) == 0);
    EXPECT(check("knn", "--db", "d.npy", "--queries", "q.npy", "-k", "3", "-o", "i.npy",
                 "--dist", "dd.npy", NULL) == 0);
    EXPECT(check("bench", "compare", "base.json", "new.json", NULL) == 0);
    EXPECT(check("info", "--json", NULL) == 0);
    EXPECT(check("help", "bench", NULL) == 0);
    for (int i = 0; i < 2; i++) /* outputs are added while parsing: forgotten after */
        EXPECT(check("bench", "sum", "--json", "b.json", "--csv=b.csv", "--sizes", "1e3,2^12",
                     NULL) == 0);
    EXPECT(!exists("out.npy") && !exists("c.npy") && !exists("i.npy") && !exists("dd.npy") &&
           !exists("b.json") && !exists("b.csv"));
    /* Bad lines: 2, as the run gives. */
    EXPECT(check("reduce", "in.npy", NULL) == 2);                       /* no --op or --expr */
    EXPECT(check("reduce", "in.npy", "--op", "sum", "--expr", "x", NULL) == 2);
    EXPECT(check("reduce", "in.npy", "--expr", "x", "--combine", "a", NULL) == 2);
    EXPECT(check("gemm", "a.npy", "b.npy", NULL) == 2);                 /* no -o */
    EXPECT(check("knn", "--db", "d.npy", "--queries", "q.npy", "-k", "0", "-o", "i", NULL) == 2);
    EXPECT(check("bench", "--json", "x", "--json", "y", NULL) == 2);    /* twice */
    EXPECT(check("bench", "--sizes", "0", NULL) == 2);
    EXPECT(check("bench", "--quick", "--all", NULL) == 2);
    EXPECT(check("bench", "compare", "one.json", NULL) == 2);
    EXPECT(check("bench", "dist", "--json", NULL) == 2);
    EXPECT(check("info", "extra", NULL) == 2);
    EXPECT(check("nonsense", NULL) == 2);
    char *none[] = {"pk", NULL};
    EXPECT(pk_cli(1, none, PK_CLI_CHECK) == 2);
    printf("test_cli_check: %s\n", failures ? "FAILED" : "all checks passed");
    return failures ? 1 : 0;
}
