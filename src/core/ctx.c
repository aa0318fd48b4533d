/* Contexts: creation with backend choice, error messages, settings. */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local char create_error[PK__MSG_MAX];

void pk__set_create_error(const char *msg)
{
    snprintf(create_error, sizeof create_error, "%s", msg);
}

const char *pk__handle_problem(const void *h, uint32_t magic)
{
    if (!h) return "is NULL";
    uint32_t m;
    memcpy(&m, h, sizeof m);
    if (m == magic) return NULL;
    /* One text for destroyed and foreign handles: a freed block's first
     * bytes are the allocator's (glibc's free lists), so the two look
     * alike. */
    return magic == PK__MAGIC_CTX       ? "is not a live pk_ctx (destroyed, or another object)"
           : magic == PK__MAGIC_REDUCER ? "is not a live pk_reducer (destroyed, or another object)"
                                        : "is not a live pk_dist (destroyed, or another object)";
}

bool pk__handle_live(const void *h, uint32_t magic, const char *fn, const char *what)
{
    const char *problem = pk__handle_problem(h, magic);
    if (!problem) return true;
    snprintf(create_error, sizeof create_error, "%s: %s %s", fn, what, problem);
    return false;
}

pk_status pk__fail(pk_ctx *ctx, pk_status s, const char *fmt, ...)
{
    if (ctx) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(ctx->msg, sizeof ctx->msg, fmt, ap);
        va_end(ap);
    }
    return s;
}

/* AUTO: PK_BACKEND from the environment when set, else CUDA when a device
 * exists, else the CPU. */
static pk_status resolve_backend(pk_ctx *tmp, pk_backend *backend)
{
    if (*backend != PK_BACKEND_AUTO) return PK_OK;
    const char *env = pk__env(PK__ENV_BACKEND);
    if (env && *env) {
        pk_backend b;
        if (pk_backend_parse(env, &b) != PK_OK)
            return pk__fail(tmp, PK_ERR_ARG,
                            "PK_BACKEND=%s: expected cpu, cuda or auto", env);
        *backend = b;
        if (b != PK_BACKEND_AUTO) return PK_OK;
    }
    *backend = pk__cuda_device_count() > 0 ? PK_BACKEND_CUDA : PK_BACKEND_CPU;
    return PK_OK;
}

pk_status pk_ctx_create(pk_ctx **out, pk_backend backend, int device)
{
    pk_ctx tmp;
    memset(&tmp, 0, sizeof tmp);
    pk_status s = PK_OK;
    create_error[0] = '\0';
    if (!out) {
        s = pk__fail(&tmp, PK_ERR_ARG, "pk_ctx_create: ctx is NULL");
        goto fail;
    }
    *out = NULL;
    if ((unsigned)backend > PK_BACKEND_CUDA) {
        s = pk__fail(&tmp, PK_ERR_ARG, "pk_ctx_create: unknown backend %d",
                     (int)backend);
        goto fail;
    }
    if (device < 0) {
        s = pk__fail(&tmp, PK_ERR_ARG, "pk_ctx_create: device %d < 0", device);
        goto fail;
    }
    if ((s = resolve_backend(&tmp, &backend)) != PK_OK) goto fail;

    pk_ctx *ctx = pk__calloc(1, sizeof *ctx);
    if (!ctx) {
        s = pk__fail(&tmp, PK_ERR_NOMEM, "pk_ctx_create: out of host memory");
        goto fail;
    }
    ctx->magic = PK__MAGIC_CTX;
    ctx->backend = backend;
    ctx->device = device;
    ctx->ops = backend == PK_BACKEND_CUDA ? &pk__cuda_ops : &pk__cpu_ops;
    if ((s = ctx->ops->init(ctx, device)) != PK_OK) {
        memcpy(tmp.msg, ctx->msg, sizeof tmp.msg);
        pk__free(ctx);
        goto fail;
    }
    *out = ctx;
    return PK_OK;
fail:
    memcpy(create_error, tmp.msg, sizeof create_error);
    return s;
}

void pk_ctx_destroy(pk_ctx *ctx)
{
    if (!ctx || !pk__handle_live(ctx, PK__MAGIC_CTX, "pk_ctx_destroy", "ctx")) return;
    ctx->ops->fini(ctx);
    ctx->magic = PK__MAGIC_DEAD;
    pk__free(ctx);
}

/* The queries below take NULL quietly: pk_ctx_error(NULL) after a failed
 * pk_ctx_create is the common way to print why, so NULL must not replace
 * that message. A non-NULL handle that is not live still sets one. */
const char *pk_ctx_error(const pk_ctx *ctx)
{
    if (!ctx) return create_error[0] ? create_error : "pk_ctx_error: ctx is NULL";
    if (!pk__handle_live(ctx, PK__MAGIC_CTX, "pk_ctx_error", "ctx"))
        return pk_last_create_error();
    return ctx->msg;
}

const char *pk_last_create_error(void) { return create_error; }

pk_backend pk_ctx_backend(const pk_ctx *ctx)
{
    return ctx && pk__handle_live(ctx, PK__MAGIC_CTX, "pk_ctx_backend", "ctx")
               ? ctx->backend
               : PK_BACKEND_AUTO;
}

const char *pk_ctx_describe(const pk_ctx *ctx)
{
    return ctx && pk__handle_live(ctx, PK__MAGIC_CTX, "pk_ctx_describe", "ctx") ? ctx->describe
                                                                               : "?";
}

pk_status pk_ctx_set_threads(pk_ctx *ctx, int n)
{
    PK__CHECK_CTX(ctx, "pk_ctx_set_threads");
    if (n < 0)
        return pk__fail(ctx, PK_ERR_ARG, "pk_ctx_set_threads: n = %d < 0", n);
    ctx->threads = n;
    return PK_OK;
}

pk_status pk_ctx_set_stream(pk_ctx *ctx, void *stream)
{
    PK__CHECK_CTX(ctx, "pk_ctx_set_stream");
    return ctx->ops->set_stream(ctx, stream);
}

pk_status pk_ctx_sync(pk_ctx *ctx)
{
    PK__CHECK_CTX(ctx, "pk_ctx_sync");
    return ctx->ops->sync(ctx);
}
