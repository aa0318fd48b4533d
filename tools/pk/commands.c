/* The pk command's dispatch: `pk info`, `pk bench` and the file commands
 * (see `pk --help`), run or only checked (pk_cli, cli.h). main() is in
 * main.c, so that tests/fuzz/fuzz_cli.c links all of this without it. */
#include "cli.h"
#include "cpu_peers.h"
#include "files.h"

#include "pk.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cmd_bench(int argc, char **argv, pk_cli_mode mode)
{
    /* Give the OpenBLAS peer its best kernels (see cpu_peers.h): set
     * OPENBLAS_CORETYPE and run again; the bench header shows it. */
    const char *core = mode == PK_CLI_RUN ? pk_peer_blas_better_coretype() : NULL;
    if (core && setenv("OPENBLAS_CORETYPE", core, 1) == 0 &&
        setenv("PK_BENCH_SET_CORETYPE", core, 1) == 0)
        execv("/proc/self/exe", argv - 1); /* on failure, go on as we are */
    return pk_cmd_bench(argc, argv, mode);
}

static const struct command {
    const char *name;
    int (*run)(int argc, char **argv, pk_cli_mode mode); /* argv[0]: the command */
    const char *summary;
} commands[] = {
    {"info", pk_cmd_info, "describe the CPU and GPUs: caches, SIMD path, bandwidth"},
    {"bench", cmd_bench, "time pk's kernels, verify every result, compare with peers"},
    {"reduce", pk_cmd_reduce, "sum prod min max argmin argmax or --expr (user-defined)"},
    {"dot", pk_cmd_dot, "dot product of two 1-D arrays"},
    {"axpy", pk_cmd_axpy, "alpha*x + y"},
    {"gemm", pk_cmd_gemm, "matrix product (fp32, tf32, fp32_accurate), --check"},
    {"pack", pk_cmd_pack, "pack f32 signs or uint8/bool values into bits"},
    {"bgemm", pk_cmd_bgemm, "binary (+-1) matrix product of bit matrices"},
    {"hamming", pk_cmd_hamming, "all Hamming distances between two sets of codes"},
    {"knn", pk_cmd_knn, "k nearest binary codes per query (Hamming)"},
};
#define NCOMMANDS (int)(sizeof commands / sizeof *commands)

static void print_usage(void)
{
    fputs("usage: pk <command> [options]\n"
          "       pk help [<command>]\n"
          "\n"
          "pk runs parallel kernels (reductions, user-defined reductions, dot, axpy,\n"
          "GEMM, bit packing, binary GEMM, Hamming distance and search) on the CPU and\n"
          "on CUDA GPUs, on your .npy files, and measures them against the machine\n"
          "and against peer libraries.\n"
          "\n"
          "commands:\n", stdout);
    for (int i = 0; i < NCOMMANDS; i++) {
        if (i == 2) fputs("\ncommands on .npy files (docs/CLI.md):\n", stdout);
        printf("  %-9s%s\n", commands[i].name, commands[i].summary);
    }
    fputs("\n"
          "options:\n"
          "  -h, --help     this text ('pk <command> --help' or 'pk help <command>'\n"
          "                 for a command's)\n"
          "  --version      print pk's version and build\n"
          "\n"
          "The file commands read and write NumPy .npy files; each prints one\n"
          "summary line, or one JSON line with --json.\n"
          "\n"
          "exit status: 0 success, 1 failure (bad file, kernel error, failed check),\n"
          "2 usage error\n", stdout);
}

static const struct command *find(const char *name)
{
    for (int i = 0; i < NCOMMANDS; i++)
        if (strcmp(name, commands[i].name) == 0) return &commands[i];
    return NULL;
}

int pk_cli(int argc, char **argv, pk_cli_mode mode)
{
    /* A usage error is one line; the usage is for --help. */
    if (argc < 2) return pk_usage_error(NULL, "missing command ('pk help' lists them)");
    const char *cmd = argv[1];
    if (pk_is_help(cmd) || (strcmp(cmd, "help") == 0 && argc == 2)) {
        print_usage();
        return 0;
    }
    if (strcmp(cmd, "help") == 0) { /* pk help COMMAND = pk COMMAND --help */
        const struct command *c = find(argv[2]);
        if (argc > 3) return pk_usage_error(NULL, "help: unexpected argument '%s'", argv[3]);
        if (!c) return pk_usage_error(NULL, "help: unknown command '%s'", argv[2]);
        char *args[] = {argv[0], (char *)c->name, "--help", NULL}; /* bench may exec args */
        return c->run(2, args + 1, mode);
    }
    if (strcmp(cmd, "--version") == 0) {
        /* The first line is the version alone; then the build, key=value. */
        printf("pk %s\n%s", pk_version(), pk_build_config());
        return 0;
    }
    const struct command *c = find(cmd);
    if (c) return c->run(argc - 1, argv + 1, mode);
    if (cmd[0] == '-') return pk_usage_error(NULL, "unknown option '%s'", cmd);
    return pk_usage_error(NULL, "unknown command '%s'", cmd);
}
