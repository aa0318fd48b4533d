/* User-defined reductions: the description is checked and the expressions
 * parsed here, once; the backends get a checked pk_reducer. */
#include "check.h"
#include "reducer.h"

#include <stdlib.h>
#include <string.h>

static const unsigned expr_vars[PK__R_NEXPR] = {
    [PK__R_MAP] = 1u << PK__V_X | 1u << PK__V_I,
    [PK__R_COMBINE] = 1u << PK__V_A | 1u << PK__V_B,
    [PK__R_FINAL] = 1u << PK__V_R,
};
static const char *const expr_names[PK__R_NEXPR] = {"map", "combine", "final"};
static const char *const expr_default[PK__R_NEXPR] = {"x", NULL, "r"};

void pk_reducer_destroy(pk_reducer *red)
{
    if (!red || !pk__handle_live(red, PK__MAGIC_REDUCER, "pk_reducer_destroy", "red")) return;
    pk_reducer_destroy(red->partial);
    if (red->impl && red->ops->reducer_fini) red->ops->reducer_fini(red);
    for (int j = 0; j < PK__R_NEXPR; j++) pk__free(red->text[j]);
    red->magic = PK__MAGIC_DEAD;
    pk__free(red);
}

static pk_status check_desc(pk_ctx *ctx, const pk_reducer_desc *d)
{
    static const char fn[] = "pk_reducer_create";
    CHECK((unsigned)d->input < PK_DTYPE_COUNT, "%s: unknown input dtype %d", fn,
          (int)d->input);
    CHECK(d->acc == PK_F32 || d->acc == PK_F64,
          "%s: accumulator dtype %s: only f32 and f64", fn, pk_dtype_name(d->acc));
    CHECK(d->kind == PK_REDUCER_VALUE || d->kind == PK_REDUCER_ARG,
          "%s: unknown kind %d", fn, (int)d->kind);
    CHECK(d->combine || d->combine_fn, "%s: no combine expression or function", fn);
    CHECK(!(d->map && d->map_fn) && !(d->combine && d->combine_fn) &&
              !(d->final && d->final_fn),
          "%s: an expression and a function are given for the same step", fn);
    CHECK(d->kind == PK_REDUCER_VALUE || (!d->final && !d->final_fn),
          "%s: an ARG reducer has no final step", fn);
    return PK_OK;
}

pk_status pk_reducer_create(pk_ctx *ctx, const pk_reducer_desc *desc,
                            pk_reducer **red)
{
    static const char fn[] = "pk_reducer_create";
    if (red) *red = NULL; /* on every failure, a NULL ctx's included */
    PK__CHECK_CTX(ctx, fn);
    CHECK(red, "%s: red is NULL", fn);
    CHECK(desc, "%s: desc is NULL", fn);
    pk_status s = check_desc(ctx, desc);
    if (s) return s;
    CHECK_SLOT(reducer_init, fn);
    pk_reducer *r = pk__calloc(1, sizeof *r);
    if (!r) return pk__fail(ctx, PK_ERR_NOMEM, "%s: no memory for the reducer", fn);
    r->magic = PK__MAGIC_REDUCER;
    r->d = *desc;
    r->backend = ctx->backend;
    r->ops = ctx->ops;
    r->has_fn = desc->map_fn || desc->combine_fn || desc->final_fn;
    const char *src[PK__R_NEXPR] = {desc->map, desc->combine, desc->final};
    const void *fnp[PK__R_NEXPR] = {(const void *)(uintptr_t)desc->map_fn,
                                    (const void *)(uintptr_t)desc->combine_fn,
                                    (const void *)(uintptr_t)desc->final_fn};
    for (int j = 0; j < PK__R_NEXPR && s == PK_OK; j++) {
        const char *e = src[j] ? src[j] : fnp[j] ? "0" : expr_default[j];
        if (!(r->text[j] = pk__strdup(e))) {
            s = pk__fail(ctx, PK_ERR_NOMEM, "%s: no memory for the %s expression's text",
                         fn, expr_names[j]);
            break;
        }
        if ((s = pk__expr_parse(ctx, expr_names[j], e, expr_vars[j], &r->expr[j])))
            break;
        pk__vm_compile(&r->expr[j], &r->vm[j]);
    }
    if (s == PK_OK) {
        r->d.map = r->text[PK__R_MAP];
        r->d.combine = r->text[PK__R_COMBINE];
        r->d.final = r->text[PK__R_FINAL];
        r->commutative = desc->combine_fn ? -1 : pk__expr_commutative(&r->expr[PK__R_COMBINE]);
        r->uses_i = !desc->map_fn && pk__expr_uses(&r->expr[PK__R_MAP], PK__V_I);
        s = ctx->ops->reducer_init(ctx, r);
    }
    if (s) {
        pk_reducer_destroy(r);
        return s;
    }
    *red = r;
    return PK_OK;
}

static size_t out_size(const pk_reducer *red)
{
    return red->d.kind == PK_REDUCER_ARG ? sizeof(int64_t) : pk__dtypes[red->d.acc].size;
}

static pk_status check_red(pk_ctx *ctx, const char *fn, const pk_reducer *red)
{
    const char *problem = pk__handle_problem(red, PK__MAGIC_REDUCER);
    CHECK(!problem, "%s: red %s", fn, problem);
    CHECK(red->backend == ctx->backend,
          "%s: the reducer was built for the %s backend, the context is %s", fn,
          pk_backend_name(red->backend), pk_backend_name(ctx->backend));
    return PK_OK;
}

pk_status pk_reducer_reduce(pk_ctx *ctx, const pk_reducer *red, const void *x,
                            int64_t n, void *out)
{
    return pk__reducer_reduce_at(ctx, red, x, n, 0, out);
}

pk_status pk__reducer_reduce_at(pk_ctx *ctx, const pk_reducer *red, const void *x,
                                int64_t n, int64_t ibase, void *out)
{
    static const char fn[] = "pk_reducer_reduce";
    PK__CHECK_CTX(ctx, fn);
    pk_status s = check_red(ctx, fn, red);
    if (s) return s;
    CHECK(n >= 0, "%s: n = %lld is negative", fn, (long long)n);
    int64_t xb, ob;
    if ((s = check_buffer(ctx, fn, "x", x, n, pk__dtypes[red->d.input].size, &xb)) ||
        (s = check_buffer(ctx, fn, "out", out, 1, out_size(red), &ob)))
        return s;
    CHECK(!ranges_overlap(x, xb, out, ob), "%s: out overlaps x", fn);
    CHECK(n > 0 || red->d.kind == PK_REDUCER_VALUE,
          "%s: an ARG reduction of nothing has no index", fn);
    CHECK(ibase >= 0 && ibase <= INT64_MAX - n, "%s: index base %lld out of range", fn,
          (long long)ibase);
    CHECK_SLOT(reducer_reduce, fn);
    return ctx->ops->reducer_reduce(ctx, red, x, n, ibase, out);
}

pk_status pk_reducer_reduce_axis(pk_ctx *ctx, const pk_reducer *red,
                                 const void *x, int64_t rows, int64_t cols,
                                 int64_t ld, int axis, void *out)
{
    static const char fn[] = "pk_reducer_reduce_axis";
    PK__CHECK_CTX(ctx, fn);
    pk_status s = check_red(ctx, fn, red);
    if (s) return s;
    CHECK(axis == 0 || axis == 1, "%s: axis = %d must be 0 or 1", fn, axis);
    int64_t xb, ob;
    if ((s = check_matrix(ctx, fn, "x", x, rows, cols, ld,
                          pk__dtypes[red->d.input].size, &xb)))
        return s;
    int64_t nout = axis == 0 ? cols : rows, along = axis == 0 ? rows : cols;
    if ((s = check_buffer(ctx, fn, "out", out, nout, out_size(red), &ob))) return s;
    CHECK(!ranges_overlap(x, xb, out, ob), "%s: out overlaps x", fn);
    CHECK(along > 0 || nout == 0 || red->d.kind == PK_REDUCER_VALUE,
          "%s: an ARG reduction along an empty axis has no index", fn);
    if (nout == 0) return PK_OK;
    CHECK_SLOT(reducer_reduce_axis, fn);
    return ctx->ops->reducer_reduce_axis(ctx, red, x, rows, cols, ld, axis, out);
}

pk_status pk_reducer_get_info(const pk_reducer *red, pk_reducer_info *info)
{
    if (!pk__handle_live(red, PK__MAGIC_REDUCER, "pk_reducer_get_info", "red")) return PK_ERR_ARG;
    if (!info) {
        pk__set_create_error("pk_reducer_get_info: info is NULL");
        return PK_ERR_ARG;
    }
    *info = red->info;
    return PK_OK;
}
