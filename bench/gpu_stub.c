/* The GPU bench of a build without CUDA: nothing is available. */
#include "gpu.h"

int pk_bench_gpu_available(void) { return 0; }

int pk_bench_gpu_device_count(void) { return 0; }

pk_status pk_bench_gpu_select(int device)
{
    (void)device;
    return PK_ERR_NO_DEVICE;
}

pk_status pk_bench_gpu_versions(int *runtime, int *driver)
{
    *runtime = *driver = 0;
    return PK_ERR_NO_DEVICE;
}

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
    fputs(json ? "[]"
               : "CUDA: not in this build (configured with -DPK_WITH_CUDA=OFF, or nvcc was not "
                 "found)\n",
          out);
    return PK_OK;
}
