/* Allocation-failure injection (a PK_FAULT_INJECTION build only): the hooks
 * tests/fault_injection.h declares. Counting is atomic: allocations also
 * happen inside OpenMP parallel regions. */
#include "alloc.h"

#include "pk.h"

#include <stdatomic.h>

static atomic_int_fast64_t fault_nth;   /* 0: off */
static atomic_int_fast64_t fault_count; /* allocations since armed */
static atomic_int_fast64_t fault_device; /* of which device allocations */

bool pk__fault_hit(void)
{
    if (atomic_load_explicit(&fault_nth, memory_order_relaxed) == 0) return false;
    int_fast64_t k = atomic_fetch_add_explicit(&fault_count, 1, memory_order_relaxed) + 1;
    return k == atomic_load_explicit(&fault_nth, memory_order_relaxed);
}

bool pk__fault_hit_device(void)
{
    if (atomic_load_explicit(&fault_nth, memory_order_relaxed) == 0) return false;
    atomic_fetch_add_explicit(&fault_device, 1, memory_order_relaxed);
    return pk__fault_hit();
}

/* Exported (tests may link the shared library) but in no public header. */
PK_API void pk__fault_fail_nth(int64_t n)
{
    atomic_store(&fault_nth, 0);
    atomic_store(&fault_count, 0);
    atomic_store(&fault_device, 0);
    atomic_store(&fault_nth, n > 0 ? n : 0);
}

PK_API int64_t pk__fault_allocations(void) { return atomic_load(&fault_count); }

PK_API int64_t pk__fault_device_allocations(void) { return atomic_load(&fault_device); }
