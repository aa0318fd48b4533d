/* pk_dist_reducer_reduce: a user-defined reduction over the ranks' shards.
 * Each rank reduces its shard with the reducer stopped before `final` (and,
 * for ARG reducers, also its index); the partials are all-gathered and
 * combined in rank order on every rank with the reducer's own combine
 * (expression, evaluated as the CPU interpreter does, or C function), then
 * `final` is applied. Element order is kept, so non-commutative combines
 * work; the bits never depend on timing. */
#include "dist.h"

#include "../core/check.h"
#include "../core/reducer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* FNV-1a of the description, so that ranks can check they hold the same
 * reducer (expressions, identity, dtypes, kind; function pointers can only
 * be compared by their presence). */
static uint64_t desc_hash(const pk_reducer *red)
{
    uint64_t h = 1469598103934665603ull;
    const char *parts[3] = {red->d.map, red->d.combine, red->d.final};
    for (int p = 0; p < 3; p++) {
        for (const char *c = parts[p] ? parts[p] : ""; *c; c++)
            h = (h ^ (unsigned char)*c) * 1099511628211ull;
        h = (h ^ 0xff) * 1099511628211ull;
    }
    uint64_t id;
    memcpy(&id, &red->d.identity, sizeof id);
    uint64_t more[3] = {id, (uint64_t)red->d.input << 8 | (uint64_t)red->d.acc << 4 |
                                (uint64_t)red->d.kind,
                        (uint64_t)(!!red->d.map_fn) | (uint64_t)(!!red->d.combine_fn) << 1 |
                            (uint64_t)(!!red->d.final_fn) << 2};
    for (int i = 0; i < 3; i++) h = (h ^ more[i]) * 1099511628211ull;
    return h;
}

typedef struct intent {
    int32_t status, pad;
    uint64_t hash;
    int64_t n;
} intent;

typedef struct share {
    int32_t status, has;
    double v;    /* the combined value, in the accumulator's precision */
    int64_t idx; /* ARG: global index of the kept element */
} share;
_Static_assert(sizeof(intent) <= PK__DIST_RECORD && sizeof(share) <= PK__DIST_RECORD,
               "records fit the exchange area");

static int is_f32(const pk_reducer *red) { return red->d.acc == PK_F32; }

static double round_acc(const pk_reducer *red, double v)
{
    return is_f32(red) ? (double)(float)v : v;
}

static double combine(const pk_reducer *red, double a, double b)
{
    if (red->d.combine_fn) return round_acc(red, red->d.combine_fn(a, b, red->d.user));
    double vars[PK__NVARS] = {0};
    vars[PK__V_A] = a, vars[PK__V_B] = b;
    return pk__expr_eval(&red->expr[PK__R_COMBINE], vars, is_f32(red));
}

static double finish(const pk_reducer *red, double r)
{
    if (red->d.final_fn) return round_acc(red, red->d.final_fn(r, red->d.user));
    if (!red->d.final) return r;
    double vars[PK__NVARS] = {0};
    vars[PK__V_R] = r;
    return pk__expr_eval(&red->expr[PK__R_FINAL], vars, is_f32(red));
}

/* red's partial reducer: red as VALUE, without final (the same for every
 * shard: the shard's offset is an index base of the call, not part of the
 * reducer, so the GPU compiles it once). Made on the first call and kept on
 * red: one build per reducer, not one per call (on CUDA every build loaded
 * and unloaded a module). Several threads may race here: the first stored
 * wins, the others free theirs. The slot is a cache, so red stays logically
 * const. */
static pk_status partial_of(pk_ctx *ctx, const pk_reducer *red, const pk_reducer **out)
{
    pk_reducer **slot = &((pk_reducer *)red)->partial;
    pk_reducer *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (!p) {
        pk_reducer_desc desc = red->d;
        desc.kind = PK_REDUCER_VALUE;
        desc.final = NULL;
        desc.final_fn = NULL;
        if (desc.map_fn) desc.map = NULL; /* the stored copy may name a default */
        if (desc.combine_fn) desc.combine = NULL;
        pk_status s = pk_reducer_create(ctx, &desc, &p);
        if (s) return s;
        pk_reducer *none = NULL;
        if (!__atomic_compare_exchange_n(slot, &none, p, 0, __ATOMIC_ACQ_REL,
                                         __ATOMIC_ACQUIRE)) {
            pk_reducer_destroy(p);
            p = none;
        }
    }
    *out = p;
    return PK_OK;
}

/* This rank's partial of n >= 1 elements starting at global index offset:
 * the combined value (the reducer without final, as VALUE) and, for ARG,
 * the global index. The map's i counts from offset too (an index base of
 * the call, as if the shard sat at its place in the whole array). */
static pk_status local_partial(pk_dist *d, const pk_reducer *red, const void *x,
                               int64_t n, int64_t offset, share *my)
{
    pk_ctx *ctx = d->ctx;
    pk_status s;
    if (red->d.kind == PK_REDUCER_ARG &&
        (s = pk__reducer_reduce_at(ctx, red, x, n, offset, &my->idx)) != PK_OK)
        return s;
    const pk_reducer *value = NULL;
    if ((s = partial_of(ctx, red, &value)) != PK_OK) return s;
    union {
        float f;
        double d;
    } out;
    s = pk__reducer_reduce_at(ctx, value, x, n, offset, &out);
    my->v = is_f32(red) ? (double)out.f : out.d;
    return s;
}

pk_status pk_dist_reducer_reduce(pk_dist *d, const pk_reducer *red, const void *x,
                                 int64_t n_local, void *out)
{
    static const char fn[] = "pk_dist_reducer_reduce";
    pk_status s = pk__dist_enter(d, fn, 1);
    if (s) return s;
    pk_ctx *ctx = d->ctx;
    int64_t xb = 0, ob = 0;
    size_t osize = 8;
    const char *problem = pk__handle_problem(red, PK__MAGIC_REDUCER);
    if (problem) s = pk__fail(ctx, PK_ERR_ARG, "%s: red %s", fn, problem);
    else if (red->backend != pk_ctx_backend(ctx))
        s = pk__fail(ctx, PK_ERR_ARG, "%s: the reducer was built for the %s backend, the "
                     "context runs on %s", fn, pk_backend_name(red->backend),
                     pk_backend_name(pk_ctx_backend(ctx)));
    else if (n_local < 0)
        s = pk__fail(ctx, PK_ERR_ARG, "%s: n_local = %lld < 0", fn, (long long)n_local);
    else {
        osize = red->d.kind == PK_REDUCER_ARG ? 8 : pk__dtypes[red->d.acc].size;
        if (!(s = check_buffer(ctx, fn, "x", x, n_local, pk__dtypes[red->d.input].size, &xb)) &&
            !(s = check_buffer(ctx, fn, "out", out, 1, osize, &ob)) &&
            ranges_overlap(x, xb, out, ob))
            s = pk__fail(ctx, PK_ERR_ARG, "%s: out overlaps x", fn);
    }
    intent mine = {(int32_t)s, 0, red && !s ? desc_hash(red) : 0, n_local};
    const intent *all = pk__dist_gather(d, fn, "MPI_Iallgather (the arguments)", &mine,
                                        sizeof mine, &s);
    if (!all) return s;
    int64_t total = 0, offset = 0;
    for (int r = 0; r < d->size; r++) {
        pk_status rs = (pk_status)all[r].status;
        if (!rs && all[r].hash != all[0].hash) rs = PK_ERR_ARG;
        if (rs) {
            if (s) return s; /* this rank failed: its own message stays */
            if (r != d->rank)
                return pk__fail(ctx, rs, "%s: rank %d failed (%s)", fn, r, pk_status_str(rs));
            return pk__fail(ctx, rs, "%s: this rank's reducer differs from rank 0's", fn);
        }
        if (r < d->rank) offset += all[r].n;
        total += all[r].n;
    }
    if (total == 0 && red->d.kind == PK_REDUCER_ARG)
        return pk__fail(ctx, PK_ERR_ARG, "%s: an ARG reduction of nothing has no index", fn);
    share my = {PK_OK, n_local > 0, 0, 0};
    if (n_local > 0) {
        my.status = local_partial(d, red, x, n_local, offset, &my);
    }
    const share *parts = pk__dist_gather(d, fn, "MPI_Iallgather (the partials)", &my,
                                         sizeof my, &s);
    if (!parts) return s;
    if ((s = pk__dist_gathered_status(d, fn, (pk_status)my.status, parts, sizeof *parts)))
        return s;
    /* Rank order; ARG keeps the earlier index where the combine keeps a. */
    double acc = round_acc(red, red->d.identity);
    int64_t idx = 0;
    int started = 0;
    for (int r = 0; r < d->size; r++) {
        if (!parts[r].has) continue;
        if (!started) {
            acc = parts[r].v, idx = parts[r].idx, started = 1;
            continue;
        }
        double c = combine(red, acc, parts[r].v);
        int keeps_a = c == acc || (c != c && acc != acc);
        if (!keeps_a) idx = parts[r].idx;
        acc = c;
    }
    unsigned char result[8];
    if (red->d.kind == PK_REDUCER_ARG) {
        memcpy(result, &idx, 8);
    } else if (is_f32(red)) {
        float f = (float)finish(red, acc);
        memcpy(result, &f, 4);
    } else {
        double v = finish(red, acc);
        memcpy(result, &v, 8);
    }
    return pk__dist_copy(d, out, result, osize);
}
