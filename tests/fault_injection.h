/* The allocation-failure hooks of a PK_FAULT_INJECTION build (defined in
 * src/core/alloc.c, exported, in no public header). Only tests use them. */
#ifndef PK_TEST_FAULT_INJECTION_H
#define PK_TEST_FAULT_INJECTION_H

#include <stdint.h>

/* Make the n-th host allocation of the library from now fail (return NULL),
 * and only that one; every thread's allocations count. 0 disarms. */
void pk__fault_fail_nth(int64_t n);
/* Host allocations counted since the last pk__fault_fail_nth(n > 0). */
int64_t pk__fault_allocations(void);

#endif
