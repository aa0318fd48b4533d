/* The allocation-failure hooks of a PK_FAULT_INJECTION build (defined in
 * src/core/alloc.c, exported, in no public header). Only tests use them. */
#ifndef PK_TEST_FAULT_INJECTION_H
#define PK_TEST_FAULT_INJECTION_H

#include <stdint.h>

/* Make the n-th allocation of the library from now fail (return NULL, or
 * for the CUDA backend's device and page-locked allocations report
 * cudaErrorMemoryAllocation / CUDA_ERROR_OUT_OF_MEMORY), and only that one;
 * every thread's allocations count, host and device in one sequence. 0
 * disarms. */
void pk__fault_fail_nth(int64_t n);
/* Allocations (host and device) counted since the last pk__fault_fail_nth(n > 0). */
int64_t pk__fault_allocations(void);
/* Of those, the device (and page-locked host) allocations. */
int64_t pk__fault_device_allocations(void);

#endif
