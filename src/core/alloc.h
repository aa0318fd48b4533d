/* The one host allocator of the library (core, CPU backend, distributed
 * layer; not the pk command, not device memory). Each function is the libc
 * one, so memory from any of them may go to free() and vice versa. In a
 * PK_FAULT_INJECTION build each first asks pk__fault_hit(), so that a test
 * can make any single allocation fail (tests/fault_injection.h); otherwise
 * they compile to the plain libc calls.
 *
 * The CUDA backend's device and page-locked allocations (its wrappers in
 * src/cuda/cuda_internal.cuh) ask pk__fault_hit_device(): the same counter,
 * so that one sequence numbers every allocation of a scenario, host or
 * device, in the order made, and a test fails each in turn without knowing
 * which kind a call makes; the device ones are also tallied apart. */
#ifndef PK_ALLOC_H
#define PK_ALLOC_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifdef PK_FAULT_INJECTION
/* Whether this allocation is the one armed to fail (src/core/alloc.c). */
bool pk__fault_hit(void);
/* The test hooks, exported but in no public header: arm the n-th host
 * allocation from now to fail, alone (0 disarms); allocations counted since
 * armed (fewer than n: nothing failed). */
void pk__fault_fail_nth(int64_t n);
int64_t pk__fault_allocations(void);
/* pk__fault_hit() for a device (or page-locked host) allocation: counted in
 * the one sequence, and apart (pk__fault_device_allocations). */
bool pk__fault_hit_device(void);
int64_t pk__fault_device_allocations(void);
#else
static inline bool pk__fault_hit(void) { return false; }
static inline bool pk__fault_hit_device(void) { return false; }
#endif

static inline void *pk__malloc(size_t n) { return pk__fault_hit() ? NULL : malloc(n); }
static inline void *pk__calloc(size_t n, size_t size)
{
    return pk__fault_hit() ? NULL : calloc(n, size);
}
static inline void *pk__realloc(void *p, size_t n)
{
    return pk__fault_hit() ? NULL : realloc(p, n);
}
/* bytes must be a multiple of align (C11). */
static inline void *pk__aligned_alloc(size_t align, size_t bytes)
{
    return pk__fault_hit() ? NULL : aligned_alloc(align, bytes);
}
static inline char *pk__strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = (char *)pk__malloc(n);
    return p ? (char *)memcpy(p, s, n) : NULL;
}
static inline void pk__free(void *p) { free(p); }

#ifdef __cplusplus
}
#endif
#endif
