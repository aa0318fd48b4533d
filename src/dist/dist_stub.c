/* The distributed API of a build without MPI: every entry point says so. */
#include "../core/internal.h"

#include <stddef.h>

static const char no_mpi[] =
    "the distributed API needs MPI, which this build of pk was configured without";

pk_status pk_dist_create(pk_dist **d, pk_backend backend, const void *mpi_comm)
{
    (void)backend, (void)mpi_comm;
    if (d) *d = NULL;
    pk__set_create_error(no_mpi);
    return PK_ERR_UNSUPPORTED;
}

void pk_dist_destroy(pk_dist *d) { (void)d; }
pk_ctx *pk_dist_ctx(const pk_dist *d) { (void)d; return NULL; }
int pk_dist_rank(const pk_dist *d) { (void)d; return -1; }
int pk_dist_size(const pk_dist *d) { (void)d; return 0; }
pk_status pk_dist_set_timeout(pk_dist *d, double seconds)
{
    (void)d, (void)seconds;
    return PK_ERR_UNSUPPORTED;
}

/* No pk_dist can exist in this build: d is always NULL here. */
pk_status pk_dist_reduce(pk_dist *d, pk_op op, pk_dtype t, const void *x,
                         int64_t n_local, void *out)
{
    (void)d, (void)op, (void)t, (void)x, (void)n_local, (void)out;
    return PK_ERR_UNSUPPORTED;
}

pk_status pk_dist_allreduce(pk_dist *d, pk_op op, pk_dtype t, const void *send,
                            void *recv, int64_t n)
{
    (void)d, (void)op, (void)t, (void)send, (void)recv, (void)n;
    return PK_ERR_UNSUPPORTED;
}

pk_status pk_dist_gemm(pk_dist *d, pk_dtype t, pk_gemm_mode mode, pk_trans ta,
                       pk_trans tb, int64_t m_local, int64_t n, int64_t k,
                       const void *alpha, const void *A, int64_t lda,
                       const void *B, int64_t ldb, int b_root, const void *beta,
                       void *C, int64_t ldc)
{
    (void)d, (void)t, (void)mode, (void)ta, (void)tb, (void)m_local, (void)n;
    (void)k, (void)alpha, (void)A, (void)lda, (void)B, (void)ldb, (void)b_root;
    (void)beta, (void)C, (void)ldc;
    return PK_ERR_UNSUPPORTED;
}

pk_status pk_dist_reducer_reduce(pk_dist *d, const pk_reducer *red, const void *x,
                                 int64_t n_local, void *out)
{
    (void)d, (void)red, (void)x, (void)n_local, (void)out;
    return PK_ERR_UNSUPPORTED;
}
