/* What the distributed tests share: the backend from PK_BACKEND and the
 * handle over MPI_COMM_WORLD. */
#ifndef PK_TEST_DIST_UTIL_H
#define PK_TEST_DIST_UTIL_H

#include "util.h"

#include <mpi.h>

/* PK_BACKEND (cpu or cuda; anything else: cpu). */
static inline pk_backend dist_test_backend(void)
{
    pk_backend b = PK_BACKEND_CPU;
    const char *env = getenv("PK_BACKEND");
    if (env && pk_backend_parse(env, &b) != PK_OK) b = PK_BACKEND_CPU;
    return b;
}

/* *d over MPI_COMM_WORLD: -1 when made; else the test's exit status (MPI
 * finalized): skipped without a device, 1 on another failure. */
static inline int dist_test_open(const char *name, int rank, pk_backend b, pk_dist **d)
{
    pk_status s = pk_dist_create(d, b, NULL);
    if (s == PK_ERR_NO_DEVICE) {
        if (rank == 0) printf("%s: skipped: %s\n", name, pk_last_create_error());
        MPI_Finalize();
        return PK_TEST_SKIP;
    }
    PK_CHECK(s == PK_OK, "pk_dist_create: %s", pk_last_create_error());
    if (s == PK_OK) return -1;
    MPI_Finalize();
    return 1;
}

#endif
