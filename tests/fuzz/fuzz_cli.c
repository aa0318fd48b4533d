/* libFuzzer harness of the pk command's argument parsing: the input, split
 * at each newline or NUL, is the command line after "pk" (at most
 * MAX_ARGS arguments), checked by pk_cli in PK_CLI_CHECK mode (cli.h): the
 * dispatch, every command's options and values (the file commands' fc_parse
 * and their own checks, pk bench's --sizes, --dtype, outputs, pk bench
 * compare and dist), with no file opened and no kernel run. The status must
 * be 0 (the command would go on) or 2 (a usage error), and checking the same
 * line again must give the same status (no state is kept between calls).
 * Each argument is its own allocation, so that AddressSanitizer sees a read
 * past its end. Built with -DPK_BUILD_FUZZERS=ON by Clang
 * (tests/files/files.cmake); run (-close_fd_mask=3: the usage texts and
 * errors are not shown; sanitizer and libFuzzer reports still are):
 *   fuzz_cli NEW_CORPUS_DIR tests/fuzz/corpus_cli -close_fd_mask=3 -max_total_time=60 */
#include "cli.h"
#include "fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ARGS 64

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    char *argv[MAX_ARGS + 2];
    int argc = 0;
    argv[argc++] = strdup("pk");
    REQUIRE(argv[0]);
    for (size_t at = 0; at < size && argc <= MAX_ARGS;) {
        size_t len = 0;
        while (at + len < size && data[at + len] != '\n' && data[at + len] != '\0') len++;
        char *a = malloc(len + 1);
        REQUIRE(a);
        memcpy(a, data + at, len);
        a[len] = 0;
        argv[argc++] = a;
        at += len + 1;
    }
    argv[argc] = NULL;
    int rc = pk_cli(argc, argv, PK_CLI_CHECK);
    REQUIRE(rc == 0 || rc == PK_EXIT_USAGE);
    REQUIRE(pk_cli(argc, argv, PK_CLI_CHECK) == rc);
    for (int i = 0; i < argc; i++) free(argv[i]);
    return 0;
}
