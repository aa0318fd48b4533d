/* The CUDA backend of a build without CUDA: it reports that no device
 * exists, so AUTO picks the CPU and an explicit request fails clearly. */
#include "internal.h"

int pk__cuda_device_count(void) { return 0; }

void *pk__cuda_stream(pk_ctx *ctx)
{
    (void)ctx;
    return NULL;
}

static pk_status stub_init(pk_ctx *ctx, int device)
{
    (void)device;
    return pk__fail(ctx, PK_ERR_NO_DEVICE,
                    "pk_ctx_create: this build of pk has no CUDA backend "
                    "(nvcc was not found when it was configured)");
}

static void stub_fini(pk_ctx *ctx) { (void)ctx; }

/* init always fails, so no other entry is ever reached. */
const pk__backend_ops pk__cuda_ops = {.init = stub_init, .fini = stub_fini};
