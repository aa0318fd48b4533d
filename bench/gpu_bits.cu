// pk bench on CUDA: the bits rows (placeholder until the kernels land).
#include "gpu.h"

#include <stdio.h>
#include <string.h>

extern "C" pk_status pk_bench_gpu_bits(pk_ctx *, const pk_bench_case *c,
                                     pk_bench_result *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    snprintf(err, errlen, "%s: no GPU bench yet", c->kernel);
    return PK_ERR_UNSUPPORTED;
}
