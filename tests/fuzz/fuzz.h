/* What the libFuzzer harnesses share: REQUIRE, a broken property of the
 * code under test, reported as a crash (abort) so that libFuzzer saves the
 * input. */
#ifndef PK_FUZZ_H
#define PK_FUZZ_H

#include <stdio.h>
#include <stdlib.h>

#define REQUIRE(cond)                                                          \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, #cond); \
            abort();                                                           \
        }                                                                      \
    } while (0)

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

#endif
