/* The GPU bench of a build without CUDA: nothing is available. */
#include "gpu.h"

int pk_bench_gpu_available(void) { return 0; }

pk_status pk_bench_gpu_run(pk_ctx *ctx, const pk_bench_case *c,
                           pk_bench_result *r, char *err, size_t errlen)
{
    (void)ctx, (void)c, (void)r;
    snprintf(err, errlen, "this build of pk has no CUDA backend");
    return PK_ERR_NO_DEVICE;
}

pk_status pk_bench_gpu_ceilings(int device, double *d2d_gbps, double *read_gbps)
{
    (void)device;
    *d2d_gbps = *read_gbps = 0;
    return PK_ERR_NO_DEVICE;
}

pk_status pk_bench_gpu_info(FILE *out, int json)
{
    fputs(json ? "[]" : "CUDA: not built (nvcc was not found at configure time)\n", out);
    return PK_OK;
}
