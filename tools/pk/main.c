/* The pk command: `pk info` and `pk bench` (see `pk --help`). */
#include "cli.h"
#include "cpu_peers.h"

#include "pk.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
    "usage: pk <command> [options]\n"
    "\n"
    "pk runs parallel kernels (reductions, dot, axpy) on the CPU and on CUDA\n"
    "GPUs and measures them against the machine and against peer libraries.\n"
    "\n"
    "commands:\n"
    "  info     describe the CPU and GPUs: caches, SIMD path, measured bandwidth\n"
    "  bench    time pk's kernels, verify every result, compare with peers\n"
    "\n"
    "options:\n"
    "  -h, --help     this text ('pk <command> --help' for a command's)\n"
    "  --version      print pk's version\n"
    "\n"
    "exit status: 0 success, 1 failure (kernel error, failed check), 2 usage error\n";

int main(int argc, char **argv)
{
    /* A usage error is one line; the usage is for --help. */
    if (argc < 2) return pk_usage_error(NULL, "missing command (info or bench)");
    const char *cmd = argv[1];
    if (pk_is_help(cmd)) {
        fputs(usage, stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0) {
        /* The first line is the version alone; then the build, key=value. */
        printf("pk %s\n%s", pk_version(), pk_build_config());
        return 0;
    }
    if (strcmp(cmd, "info") == 0) return pk_cmd_info(argc - 1, argv + 1);
    if (strcmp(cmd, "bench") == 0) {
        /* Give the OpenBLAS peer its best kernels (see cpu_peers.h): set
         * OPENBLAS_CORETYPE and run again; the bench header shows it. */
        const char *core = pk_peer_blas_better_coretype();
        if (core && setenv("OPENBLAS_CORETYPE", core, 1) == 0 &&
            setenv("PK_BENCH_SET_CORETYPE", core, 1) == 0)
            execv("/proc/self/exe", argv); /* on failure, go on as we are */
        return pk_cmd_bench(argc - 1, argv + 1);
    }
    if (cmd[0] == '-') return pk_usage_error(NULL, "unknown option '%s'", cmd);
    return pk_usage_error(NULL, "unknown command '%s'", cmd);
}
