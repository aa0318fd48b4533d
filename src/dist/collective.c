/* pk_dist_allreduce and pk_dist_gemm: argument agreement, then MPI on the
 * CPU backend and NCCL on the CUDA backend (src/dist/nccl.c). */
#include "dist.h"

#include "../core/check.h"

#include <stdlib.h>
#include <string.h>

/* MPI's type of each dtype. */
static MPI_Datatype mpi_type(pk_dtype t)
{
    static const MPI_Datatype types[PK_DTYPE_COUNT] = {
        [PK_F32] = MPI_FLOAT,   [PK_F64] = MPI_DOUBLE, [PK_I32] = MPI_INT32_T,
        [PK_I64] = MPI_INT64_T, [PK_U32] = MPI_UINT32_T, [PK_U64] = MPI_UINT64_T,
    };
    return types[t];
}

/* Elements per MPI call: MPI counts are int. */
#define PK__MPI_CHUNK ((int64_t)1 << 30)

static MPI_Op mpi_op(pk_op op)
{
    return op == PK_SUM ? MPI_SUM : op == PK_PROD ? MPI_PROD : op == PK_MIN ? MPI_MIN : MPI_MAX;
}

/* The arguments every rank must give alike, with this rank's status. f and
 * z are not compared: agree_args gives back f OR-ed over the ranks and z as
 * rank 0's. */
typedef struct same_args {
    int32_t status, a, b, c, d, e, f, pad;
    int64_t x, y, z;
} same_args;
_Static_assert(sizeof(same_args) <= PK__DIST_RECORD, "records fit the exchange area");

/* Exchange *mine; PK_OK when every rank is fine and all give rank 0's
 * values (status, f and z aside). what names the values for the message. */
static pk_status agree_args(pk_dist *dd, const char *fn, same_args *mine,
                            pk_status s, const char *what)
{
    mine->status = (int32_t)s;
    const same_args *all = pk__dist_gather(dd, fn, "MPI_Iallgather (the arguments)", mine,
                                           sizeof *mine, &s);
    if (!all) return s;
    int32_t f = 0;
    for (int r = 0; r < dd->size; r++) {
        same_args w = all[r], z = all[0];
        w.status = z.status = w.f = z.f = 0;
        w.z = z.z = 0;
        f |= all[r].f;
        pk_status rs = (pk_status)all[r].status;
        if (!rs && memcmp(&w, &z, sizeof w) != 0) rs = PK_ERR_ARG;
        if (!rs) continue;
        if (s) break; /* this rank failed: its own message stays */
        if (r != dd->rank)
            s = pk__fail(dd->ctx, rs, "%s: rank %d failed (%s)", fn, r, pk_status_str(rs));
        else
            s = pk__fail(dd->ctx, rs, "%s: this rank's %s differ from rank 0's", fn, what);
        break;
    }
    mine->f = f;
    mine->z = all[0].z;
    return s;
}

/* ---- allreduce ----------------------------------------------------------- */

static pk_status check_allreduce(pk_ctx *ctx, pk_op op, pk_dtype t,
                                 const void *send, const void *recv, int64_t n)
{
    static const char fn[] = "pk_dist_allreduce";
    pk_status s = check_op_dtype(ctx, fn, op, t);
    if (s) return s;
    CHECK(op == PK_SUM || op == PK_PROD || op == PK_MIN || op == PK_MAX,
          "%s: op %s: sum, prod, min or max only", fn, pk_op_name(op));
    CHECK(n >= 0, "%s: n = %lld < 0", fn, (long long)n);
    int64_t sb = 0, rb = 0;
    size_t size = pk__dtypes[t].size;
    if ((s = check_buffer(ctx, fn, "send", send, n, size, &sb))) return s;
    if ((s = check_buffer(ctx, fn, "recv", recv, n, size, &rb))) return s;
    CHECK(send == recv || !ranges_overlap(send, sb, recv, rb),
          "%s: send and recv overlap without being the same buffer", fn);
    return PK_OK;
}

/* MPI_Iallreduce in pieces whose counts fit an int, each waited for under
 * d's timeout (after a timeout MPI may still read send and write recv: the
 * caller's memory, which pk cannot keep; docs/API.md says so). MPI wants
 * MPI_IN_PLACE on every rank or on none: when some rank works in place
 * (any_in_place), the others copy send to recv and do too. */
static pk_status mpi_allreduce(pk_dist *d, pk_op op, pk_dtype t, const void *send,
                               void *recv, int64_t n, int any_in_place)
{
    size_t size = pk__dtypes[t].size;
    if (any_in_place && send != recv) memcpy(recv, send, (size_t)n * size);
    for (int64_t at = 0; at < n; at += PK__MPI_CHUNK) {
        int count = (int)(n - at < PK__MPI_CHUNK ? n - at : PK__MPI_CHUNK);
        const void *in = any_in_place ? MPI_IN_PLACE : (const char *)send + at * size;
        MPI_Request req;
        int e = MPI_Iallreduce(in, (char *)recv + at * size, count, mpi_type(t), mpi_op(op),
                               d->comm, &req);
        pk_status s = e != MPI_SUCCESS
                          ? pk__dist_mpi_fail(d, e, "pk_dist_allreduce", "MPI_Iallreduce")
                          : pk__dist_wait(d, "pk_dist_allreduce", "MPI_Iallreduce", &req, 1);
        if (s) return s;
    }
    return PK_OK;
}

pk_status pk_dist_allreduce(pk_dist *d, pk_op op, pk_dtype t, const void *send,
                            void *recv, int64_t n)
{
    static const char fn[] = "pk_dist_allreduce";
    pk_status s = pk__dist_enter(d, fn, 0);
    if (s) return s;
    s = check_allreduce(d->ctx, op, t, send, recv, n);
    same_args mine = {.a = op, .b = t, .f = send == recv, .x = n};
#ifdef PK_HAVE_NCCL /* without NCCL no CUDA pk_dist exists */
    /* Host data is staged before the agreement: a rank that could not get
     * the device memory must not leave the others in ncclAllReduce. */
    int nccl = pk_ctx_backend(d->ctx) == PK_BACKEND_CUDA;
    void *staged = NULL;
    if (nccl && !s && n > 0) s = pk__dist_nccl_stage(d, t, send, recv, n, &staged);
    if ((s = agree_args(d, fn, &mine, s, "op, dtype or n"))) {
        pk__dist_nccl_unstage(d, staged);
        return s;
    }
    if (nccl) return n == 0 ? PK_OK : pk__dist_allreduce_nccl(d, op, t, send, recv, n, staged);
#else
    if ((s = agree_args(d, fn, &mine, s, "op, dtype or n"))) return s;
#endif
    if (n == 0) return PK_OK;
    return mpi_allreduce(d, op, t, send, recv, n, mine.f);
}

/* ---- gemm ---------------------------------------------------------------- */

static pk_status check_gemm(pk_dist *d, const pk__gemm_args *g, int b_root)
{
    static const char fn[] = "pk_dist_gemm";
    pk_ctx *ctx = d->ctx;
    CHECK(g->t == PK_F32 || g->t == PK_F64, "%s: dtype %s: only f32 and f64", fn,
          pk_dtype_name(g->t));
    CHECK((unsigned)g->mode < PK_GEMM_MODE_COUNT, "%s: unknown mode %d", fn, (int)g->mode);
    CHECK(g->ta == PK_NO_TRANS || g->ta == PK_TRANS, "%s: ta = %d", fn, (int)g->ta);
    CHECK(g->tb == PK_NO_TRANS || g->tb == PK_TRANS, "%s: tb = %d", fn, (int)g->tb);
    CHECK(g->m >= 0 && g->n >= 0 && g->k >= 0, "%s: m_local, n or k negative", fn);
    CHECK(b_root < d->size, "%s: b_root = %d but there are %d ranks", fn, b_root, d->size);
    CHECK(b_root < 0 || g->tb == PK_NO_TRANS,
          "%s: B broadcast from a root needs tb = PK_NO_TRANS", fn);
    CHECK(g->alpha && g->beta, "%s: alpha or beta is NULL", fn);
    size_t size = pk__dtypes[g->t].size;
    int64_t ab = 0, bb = 0, cb = 0;
    pk_status s;
    if ((s = check_matrix(ctx, fn, "A", g->A, g->ta ? g->k : g->m, g->ta ? g->m : g->k,
                          g->lda, size, &ab)))
        return s;
    if ((s = check_matrix(ctx, fn, "C", g->C, g->m, g->n, g->ldc, size, &cb))) return s;
    if (b_root < 0 || b_root == d->rank) {
        if ((s = check_matrix(ctx, fn, "B", g->B, g->tb ? g->n : g->k,
                              g->tb ? g->k : g->n, g->ldb, size, &bb)))
            return s;
    }
    CHECK(!ranges_overlap(g->A, ab, g->C, cb) && !ranges_overlap(g->B, bb, g->C, cb),
          "%s: C overlaps A or B", fn);
    return PK_OK;
}

/* B broadcast from b_root in panels of `panel` rows on the CPU backend: the
 * broadcast of panel p + 1 runs while panel p is multiplied. A panel goes in
 * pieces of at most PK__MPI_CHUNK elements (MPI counts are int; n alone may
 * pass 2^31). */
static pk_status gemm_bcast_mpi(pk_dist *d, const pk__gemm_args *g, int b_root,
                                int64_t panel)
{
    static const char fn[] = "pk_dist_gemm";
    size_t size = pk__dtypes[g->t].size;
    int64_t most = panel * g->n, nreq = (most + PK__MPI_CHUNK - 1) / PK__MPI_CHUNK, nr = 0;
    char *buf[2] = {pk__malloc((size_t)most * size), pk__malloc((size_t)most * size)};
    MPI_Request *req = pk__malloc((size_t)nreq * sizeof *req);
    pk_status s = PK_OK, late = PK_OK;
    if (!buf[0] || !buf[1] || !req)
        s = pk__fail(d->ctx, PK_ERR_NOMEM, "%s: out of memory for the panel buffers", fn);
    if ((s = pk__dist_agree(d, fn, s))) goto out;
    int64_t np = (g->k + panel - 1) / panel;
    /* The root packs panel p's rows into buf[p % 2] (its B may have ldb > n). */
    for (int64_t p = 0; p <= np && !s; p++) {
        if (p < np) {
            int64_t k0 = p * panel, kp = g->k - k0 < panel ? g->k - k0 : panel;
            char *dst = buf[p % 2];
            if (d->rank == b_root)
                for (int64_t r = 0; r < kp; r++)
                    memcpy(dst + (size_t)(r * g->n) * size,
                           (const char *)g->B + (size_t)((k0 + r) * g->ldb) * size,
                           (size_t)g->n * size);
            int64_t elems = kp * g->n;
            nr = 0;
            for (int64_t at = 0; at < elems && !s; at += PK__MPI_CHUNK, nr++) {
                int count = (int)(elems - at < PK__MPI_CHUNK ? elems - at : PK__MPI_CHUNK);
                int e = MPI_Ibcast(dst + (size_t)at * size, count, mpi_type(g->t), b_root,
                                   d->comm, &req[nr]);
                if (e != MPI_SUCCESS) s = pk__dist_mpi_fail(d, e, fn, "MPI_Ibcast");
            }
        }
        if (p > 0 && !late && g->m > 0) { /* multiply panel p - 1 */
            int64_t k0 = (p - 1) * panel, kp = g->k - k0 < panel ? g->k - k0 : panel;
            static const float onef = 1;
            static const double oned = 1;
            const void *one = g->t == PK_F32 ? (const void *)&onef : (const void *)&oned;
            const char *A = (const char *)g->A +
                            (size_t)(g->ta ? k0 * g->lda : k0) * size;
            late = pk_gemm(d->ctx, g->t, g->mode, g->ta, PK_NO_TRANS, g->m, g->n, kp,
                           g->alpha, A, g->lda, buf[(p - 1) % 2], g->n,
                           p == 1 ? g->beta : one, g->C, g->ldc);
        }
        if (p < np && !s) s = pk__dist_wait(d, fn, "MPI_Ibcast (a panel of B)", req, (int)nr);
    }
    if (!s) s = pk__dist_agree(d, fn, late);
out:
    for (int i = 0; i < 2; i++) {
        if (d->failed) pk__dist_orphan(buf[i]); /* a broadcast may still write it */
        else pk__free(buf[i]);
    }
    pk__free(req);
    return s;
}

/* Rows of B per broadcast panel: about 8 panels, so that the broadcast of
 * one hides behind the multiply of the previous one and each multiply keeps
 * a deep k (>= 256 rows where k allows; 8 MiB panels of 64 rows made
 * 32768^3 run at 0.6x of the replicated case on 2 H200s); at most 256 MiB a
 * panel. PK_DIST_PANEL=<rows> overrides (tuning, tests). n, k >= 1. */
static int64_t panel_rows(int64_t n, int64_t k, size_t size)
{
    int64_t row_bytes = n * (int64_t)size;
    int64_t panel = (k + 7) / 8;
    if (panel < 256) panel = 256;
    if (panel > ((int64_t)256 << 20) / row_bytes) panel = ((int64_t)256 << 20) / row_bytes;
    if (panel < 64) panel = 64;
    const char *env = pk__env(PK__ENV_DIST_PANEL);
    if (env && atoll(env) > 0) panel = atoll(env);
    return panel > k ? k : panel;
}

pk_status pk_dist_gemm(pk_dist *d, pk_dtype t, pk_gemm_mode mode, pk_trans ta,
                       pk_trans tb, int64_t m_local, int64_t n, int64_t k,
                       const void *alpha, const void *A, int64_t lda,
                       const void *B, int64_t ldb, int b_root, const void *beta,
                       void *C, int64_t ldc)
{
    static const char fn[] = "pk_dist_gemm";
    pk_status s = pk__dist_enter(d, fn, 1);
    if (s) return s;
    pk__gemm_args g = {.t = t, .mode = mode, .ta = ta, .tb = tb, .m = m_local,
                       .n = n, .k = k, .alpha = alpha, .beta = beta, .A = A,
                       .B = B, .C = C, .lda = lda, .ldb = ldb, .ldc = ldc};
    s = check_gemm(d, &g, b_root);
    /* alpha and beta may point into C (as for pk_gemm): read once, before
     * the first panel writes C. */
    union {
        float f;
        double d;
    } al, be;
    int64_t panel = 0;
    if (!s) {
        memcpy(&al, alpha, pk__dtypes[t].size);
        memcpy(&be, beta, pk__dtypes[t].size);
        g.alpha = &al, g.beta = &be;
        if (n > 0 && k > 0) panel = panel_rows(n, k, pk__dtypes[t].size);
    }
    if (b_root < 0) b_root = -1;
    /* z: the panel height; rank 0's is taken (PK_DIST_PANEL may differ
     * between ranks, the broadcasts may not). */
    same_args mine = {.a = t, .b = mode, .c = ta, .d = tb, .e = b_root, .x = n, .y = k,
                      .z = panel};
    if ((s = agree_args(d, fn, &mine, s, "dtype, mode, transposes, b_root, n or k")))
        return s;
    if (b_root < 0 || k == 0 || n == 0) {
        /* Every rank has what it needs: one local multiply (pk_gemm checks
         * the local shapes; its verdict is shared). With B broadcast, no
         * rank reads B here (k or n is 0), whose ldb may be unset. */
        s = pk_gemm(d->ctx, t, mode, ta, tb, m_local, n, k, g.alpha, A, lda,
                    b_root < 0 ? B : NULL, b_root < 0 ? ldb : n > 0 ? n : 1, g.beta, C,
                    ldc);
        return pk__dist_agree(d, fn, s);
    }
#ifdef PK_HAVE_NCCL
    if (pk_ctx_backend(d->ctx) == PK_BACKEND_CUDA)
        return pk__dist_gemm_bcast_nccl(d, &g, b_root, mine.z);
#endif
    return gemm_bcast_mpi(d, &g, b_root, mine.z);
}
