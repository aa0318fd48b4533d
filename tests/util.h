/* Shared test helpers: a seeded RNG (fresh seed each run, printed on
 * failure, PK_TEST_SEED to replay), checks that count failures, and the
 * skip convention (exit 77, which ctest reports as skipped). */
#ifndef PK_TEST_UTIL_H
#define PK_TEST_UTIL_H

#include "pk.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PK_TEST_SKIP 77

static uint64_t pk_test_seed;
static uint64_t pk_test_state;
static int pk_test_failures;

static inline uint64_t pk_test_next(void)
{
    /* splitmix64 */
    uint64_t z = (pk_test_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [lo, hi). */
static inline double pk_test_uniform(double lo, double hi)
{
    return lo + (hi - lo) * (double)(pk_test_next() >> 11) * 0x1.0p-53;
}

static inline void pk_test_init(const char *name)
{
    const char *env = getenv("PK_TEST_SEED");
    pk_test_seed = env ? strtoull(env, NULL, 0)
                       : (uint64_t)time(NULL) ^ ((uint64_t)clock() << 32);
    pk_test_state = pk_test_seed;
    setvbuf(stdout, NULL, _IONBF, 0);
    printf("%s: seed %" PRIu64 " (replay with PK_TEST_SEED=%" PRIu64 ")\n", name,
           pk_test_seed, pk_test_seed);
}

#define PK_CHECK(cond, ...)                                                   \
    do {                                                                      \
        if (!(cond)) {                                                        \
            pk_test_failures++;                                               \
            printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);            \
            printf(__VA_ARGS__);                                              \
            printf(" [seed %" PRIu64 "]\n", pk_test_seed);                    \
        }                                                                     \
    } while (0)

/* Returns the process exit code: 0 when every check passed. */
static inline int pk_test_finish(const char *name)
{
    if (pk_test_failures)
        printf("%s: %d check(s) failed; replay with PK_TEST_SEED=%" PRIu64 "\n",
               name, pk_test_failures, pk_test_seed);
    else
        printf("%s: all checks passed\n", name);
    return pk_test_failures ? 1 : 0;
}

#endif
