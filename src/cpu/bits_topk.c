/* pk_hamming_topk on the CPU: distances are computed one small block at a
 * time (a tile row of queries x a chunk of database rows, kept in L1) and
 * fed to a bounded candidate list per query; the m x n matrix never exists.
 *
 * The candidate list keeps codes in database order. A code enters only if
 * its distance is below the threshold thr, so that the common case is one
 * vector compare per 16 distances. A later code at the topk-th smallest
 * distance T can never beat an earlier one (ties go to the lower index), so
 * once topk candidates are at or below T, the strict "< T" is exact.
 *
 *  - k <= HIST_MAX_K bits (distances in [0, k]): a histogram of the list's
 *    distances lowers thr after every push (amortized O(1): thr only
 *    falls); when the list is full (4 * topk) one pass drops what can no
 *    longer make the result; the result comes out by a counting sort
 *    (stable, so ties stay in index order), no comparison sort.
 *  - longer codes: when the list is full, thr becomes its topk-th smallest
 *    distance (three-way quickselect on a copy) and the list is cut to
 *    topk; the result is sorted by (distance, index).
 *
 * Threads: over blocks of queries; with fewer queries than threads can
 * share, over ranges of the database instead, the per-range lists then
 * merged in range order (the same exact pushes: deterministic). */
#include "bits.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* Database rows per distance chunk: MR x CHUNK int32 stay in L1. */
#define CHUNK 512
/* Bytes of candidate lists per thread (sets the queries per task). */
#define STATE_BYTES ((int64_t)4 << 20)
#define MAX_QUERIES_PER_TASK 64
/* A database of at most this many words (256 MiB) is packed into panels
 * once per call rather than once per task. */
#define PACK_ONCE_WORDS ((int64_t)32 << 20)

typedef struct cand {
    int64_t idx;
    int32_t d;
} cand;

/* Codes of at most this many bits keep a histogram per list. */
#define HIST_MAX_K 4096

typedef struct topk_list {
    cand *c;
    int64_t cnt;
    int64_t thr;   /* a code enters when its distance is < thr */
    int64_t *hist; /* histogram mode: candidates per distance, else NULL */
    int64_t lim;   /* histogram mode: candidates above lim are dead ... */
    int64_t nle;   /* ... and nle of them are at or below lim */
    int64_t top;   /* histogram mode: no candidate is above top */
} topk_list;

typedef struct topk_job {
    const pk__bits_kernels *kt;
    const pk__bits_args *a;
    pk__bits_geom g;
    int64_t topk, cap, nb;
    const uint64_t *panels; /* the whole database packed once, or NULL */
} topk_job;

/* The r-th smallest (0-based) of v[0..n): three-way quickselect, so that
 * runs of equal distances (common: they lie in [0, k]) cost nothing. */
static int32_t select_rth(int32_t *v, int64_t n, int64_t r)
{
    int64_t lo = 0, hi = n; /* the answer lies in v[lo..hi) */
    for (;;) {
        int32_t x = v[lo], y = v[lo + (hi - lo) / 2], z = v[hi - 1];
        int32_t p = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
        int64_t lt = lo, i = lo, gt = hi; /* [lo,lt) < p, [lt,i) == p, [gt,hi) > p */
        while (i < gt) {
            int32_t e = v[i];
            if (e < p) v[i++] = v[lt], v[lt++] = e;
            else if (e > p) v[i] = v[--gt], v[gt] = e;
            else i++;
        }
        if (r < lt) hi = lt;
        else if (r >= gt) lo = gt;
        else return p;
    }
}

/* Cut the list to its topk best (in database order) and lower thr. */
static void cut(topk_list *l, int64_t topk, int32_t *scratch)
{
    if (l->cnt <= topk) return;
    for (int64_t i = 0; i < l->cnt; i++) scratch[i] = l->c[i].d;
    int32_t t = select_rth(scratch, l->cnt, topk - 1);
    int64_t below = 0;
    for (int64_t i = 0; i < l->cnt; i++) below += l->c[i].d < t;
    int64_t equal = topk - below, n = 0;
    for (int64_t i = 0; i < l->cnt; i++)
        if (l->c[i].d < t || (l->c[i].d == t && equal-- > 0)) l->c[n++] = l->c[i];
    l->cnt = n;
    l->thr = t;
}

/* Histogram mode: drop the dead candidates (above lim, and at lim past the
 * first topk - count(< lim) in database order). */
static void cut_hist(topk_list *l, int64_t topk)
{
    int32_t lim = (int32_t)l->lim;
    int64_t keep_eq = l->nle >= topk ? topk - (l->nle - l->hist[lim]) : l->hist[lim];
    int64_t n = 0, eq = 0;
    for (int64_t i = 0; i < l->cnt; i++) { /* branch-free: survivors are a coin toss */
        cand e = l->c[i];
        int at = e.d == lim, keep = e.d < lim || (at && eq < keep_eq);
        l->c[n] = e;
        n += keep, eq += at & keep;
    }
    /* Below lim every candidate stayed; at lim eq did; above, none. */
    l->hist[lim] = eq;
    int64_t above = l->top - lim;
    if (above > 0) memset(l->hist + lim + 1, 0, (size_t)above * sizeof *l->hist);
    l->top = lim;
    l->cnt = l->nle = n;
}

static inline void push(topk_list *l, int32_t d, int64_t idx, const topk_job *j,
                        int32_t *scratch)
{
    l->c[l->cnt++] = (cand){idx, d};
    if (l->hist) {
        /* lim falls while topk candidates remain below it. */
        l->hist[d]++, l->nle++;
        while (l->nle - l->hist[l->lim] >= j->topk) l->nle -= l->hist[l->lim--];
        l->thr = l->lim + (l->nle < j->topk);
        if (l->cnt == j->cap) cut_hist(l, j->topk);
        return;
    }
    if (l->cnt == j->cap) cut(l, j->topk, scratch);
}

/* Offer n <= CHUNK distances d (of database rows base, base + 1, ...). */
static void feed(const topk_job *j, topk_list *l, const int32_t *d, int64_t n,
                 int64_t base, int32_t *scratch, int32_t *sel)
{
    if (l->hist) {
        /* The chunk's survivors in one vector pass, then lim once: a bound
         * lowered late only lets in candidates that a cut drops. */
        if (l->cnt + n > j->cap) cut_hist(l, j->topk);
        int64_t c = j->kt->select_below(d, n, (int32_t)l->thr, sel);
        for (int64_t s = 0; s < c; s++) {
            int32_t e = d[sel[s]];
            l->c[l->cnt++] = (cand){base + sel[s], e};
            l->hist[e]++;
        }
        l->nle += c;
        while (l->nle - l->hist[l->lim] >= j->topk) l->nle -= l->hist[l->lim--];
        l->thr = l->lim + (l->nle < j->topk);
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        if (l->thr <= INT32_MAX) {
            i += j->kt->first_below(d + i, n - i, (int32_t)l->thr);
            if (i >= n) break;
        }
        push(l, d[i], base + i, j, scratch);
    }
}

/* Queries [q0, q1) against database rows [x0, x1) into lists[0..q1-q0).
 * P: room for one block's panels (panel paths without j->panels). x0 is a
 * multiple of the path's nr. */
static void scan(const topk_job *j, int64_t q0, int64_t q1, int64_t x0, int64_t x1,
                 topk_list *lists, uint64_t *P, int32_t *dbuf, int32_t *scratch,
                 int32_t *sel)
{
    const pk__bits_args *a = j->a;
    const pk__bits_kernels *kt = j->kt;
    for (int64_t xb = x0; xb < x1; xb += j->nb) {
        int64_t xe = xb + j->nb < x1 ? xb + j->nb : x1;
        const uint64_t *B = a->B + xb * a->ldb;
        const uint64_t *Pb = j->panels ? j->panels + xb * j->g.words : P;
        if (kt->panel && !j->panels) pk__bits_pack_panels(kt, B, a->ldb, xe - xb, j->g, P);
        for (int64_t q = q0; q < q1; q += kt->mr) {
            int mr = q1 - q < kt->mr ? (int)(q1 - q) : kt->mr;
            for (int64_t c = xb; c < xe; c += CHUNK) {
                int64_t ce = c + CHUNK < xe ? c + CHUNK : xe;
                for (int64_t x = c; x < ce; x += kt->nr) {
                    int nr = ce - x < kt->nr ? (int)(ce - x) : kt->nr;
                    kt->tile(a->A + q * a->lda, a->lda,
                             pk__bits_b_tile(kt, B, a->ldb, Pb, j->g.words, x - xb),
                             a->ldb, j->g.fw, j->g.tailmask, mr, nr, 0, 1,
                             dbuf + (x - c), CHUNK);
                }
                for (int r = 0; r < mr; r++)
                    feed(j, &lists[q - q0 + r], dbuf + r * CHUNK, ce - c, c, scratch, sel);
            }
        }
    }
}

static int by_dist_then_index(const void *p, const void *q)
{
    const cand *a = p, *b = q;
    if (a->d != b->d) return a->d < b->d ? -1 : 1;
    return (a->idx > b->idx) - (a->idx < b->idx);
}

/* Write the final topk of one query, nearest first. */
static void emit(const topk_job *j, topk_list *l, int32_t *scratch, int32_t *dist,
                 int64_t *idx)
{
    if (l->hist) { /* counting sort: stable, ties stay in index order */
        cut_hist(l, j->topk);
        int64_t pos = 0; /* the histogram becomes the first rank of each distance */
        for (int64_t v = 0; v <= l->lim; v++) {
            int64_t c = l->hist[v];
            l->hist[v] = pos, pos += c;
        }
        for (int64_t i = 0; i < l->cnt; i++) {
            int64_t r = l->hist[l->c[i].d]++;
            dist[r] = l->c[i].d, idx[r] = l->c[i].idx;
        }
        return;
    }
    cut(l, j->topk, scratch);
    qsort(l->c, (size_t)l->cnt, sizeof *l->c, by_dist_then_index);
    for (int64_t r = 0; r < l->cnt; r++) dist[r] = l->c[r].d, idx[r] = l->c[r].idx;
}

/* One thread's buffers: nq lists, the distance chunk and the select
 * scratch. NULL when memory is short. */
typedef struct work {
    topk_list *lists;
    cand *pool;
    int64_t *hists;
    uint64_t *panels;
    int32_t *dbuf, *scratch, *sel;
} work;

/* malloc of a * b elements of `size` bytes; NULL when the count overflows. */
static void *alloc_array(int64_t a, int64_t b, size_t size)
{
    size_t n;
    if (a < 0 || b < 0 || __builtin_mul_overflow((size_t)a, (size_t)b, &n) ||
        __builtin_mul_overflow(n, size, &n))
        return NULL;
    return pk__malloc(n ? n : 1);
}

static int work_alloc(work *w, const topk_job *j, int64_t nq)
{
    int64_t pw = j->kt->panel && !j->panels ? j->nb * (j->g.words ? j->g.words : 1) : 1;
    w->lists = pk__malloc((size_t)nq * sizeof *w->lists);
    w->pool = alloc_array(nq, j->cap, sizeof *w->pool);
    w->panels = pk__bits_alloc_words(pw);
    w->dbuf = (int32_t *)(void *)pk__bits_alloc_words(PK__BITS_MR_MAX * CHUNK / 2);
    w->sel = pk__malloc((size_t)(CHUNK + 16) * sizeof *w->sel);
    w->scratch = pk__malloc((size_t)j->cap * sizeof *w->scratch);
    w->hists = j->a->k <= HIST_MAX_K ? alloc_array(nq, j->a->k + 1, sizeof *w->hists) : NULL;
    return w->lists && w->pool && w->panels && w->dbuf && w->scratch && w->sel &&
           (w->hists || j->a->k > HIST_MAX_K);
}

static void work_free(work *w)
{
    pk__free(w->lists), pk__free(w->pool), pk__free(w->panels), pk__free(w->dbuf);
    pk__free(w->scratch), pk__free(w->hists), pk__free(w->sel);
}

static void lists_reset(work *w, const topk_job *j, int64_t nq)
{
    int64_t k = j->a->k;
    for (int64_t q = 0; q < nq; q++) {
        topk_list *l = &w->lists[q];
        *l = (topk_list){w->pool + q * j->cap, 0, (int64_t)INT32_MAX + 1, NULL, k, 0, k};
        if (w->hists) {
            l->hist = w->hists + q * (k + 1);
            memset(l->hist, 0, (size_t)(k + 1) * sizeof *l->hist);
            l->thr = k + 1;
        }
    }
}

/* Threads over blocks of queries. Returns 0, or -1 when out of memory. */
static int by_queries(const topk_job *j, int nt, int32_t *dist, int64_t *idx)
{
    const pk__bits_args *a = j->a;
    int64_t qb = STATE_BYTES / (j->cap * (int64_t)sizeof(cand));
    qb = qb > MAX_QUERIES_PER_TASK ? MAX_QUERIES_PER_TASK : qb;
    int mr = j->kt->mr;
    qb = qb < mr ? mr : qb / mr * mr;
    int64_t tasks = (a->m + qb - 1) / qb;
    if (nt > tasks) nt = (int)tasks;
    int failed = 0;
#pragma omp parallel num_threads(nt) reduction(| : failed)
    {
        work w;
        if (!work_alloc(&w, j, qb)) failed = 1;
#pragma omp for schedule(dynamic)
        for (int64_t t = 0; t < tasks; t++) {
            if (failed) continue;
            int64_t q0 = t * qb, q1 = q0 + qb < a->m ? q0 + qb : a->m;
            lists_reset(&w, j, q1 - q0);
            scan(j, q0, q1, 0, a->n, w.lists, w.panels, w.dbuf, w.scratch, w.sel);
            for (int64_t q = q0; q < q1; q++)
                emit(j, &w.lists[q - q0], w.scratch, dist + q * j->topk,
                     idx + q * j->topk);
        }
        work_free(&w);
    }
    return failed ? -1 : 0;
}

/* Few queries: each thread scans a range of the database for all of them;
 * the ranges' lists are merged in range order. */
static int by_database(const topk_job *j, int nt, int32_t *dist, int64_t *idx)
{
    const pk__bits_args *a = j->a;
    work *ws = pk__calloc((size_t)nt, sizeof *ws);
    if (!ws) return -1;
    int failed = 0, used = 1;
#pragma omp parallel num_threads(nt) reduction(| : failed)
    {
        int t = omp_get_thread_num(), n = omp_get_num_threads();
        if (t == 0) used = n; /* OpenMP may give fewer threads than asked */
        if (!work_alloc(&ws[t], j, a->m)) {
            failed = 1;
        } else {
            /* Range bounds on panel boundaries (multiples of nr). */
            int64_t units = (a->n + j->kt->nr - 1) / j->kt->nr;
            int64_t x0 = units * t / n * j->kt->nr, x1 = units * (t + 1) / n * j->kt->nr;
            x1 = x1 < a->n ? x1 : a->n;
            lists_reset(&ws[t], j, a->m);
            scan(j, 0, a->m, x0, x1, ws[t].lists, ws[t].panels, ws[t].dbuf,
                 ws[t].scratch, ws[t].sel);
        }
    }
    if (!failed) {
        work *w0 = &ws[0];
        for (int64_t q = 0; q < a->m; q++) {
            topk_list *l = &w0->lists[q];
            for (int t = 1; t < used; t++) {
                const topk_list *o = &ws[t].lists[q];
                for (int64_t i = 0; i < o->cnt; i++)
                    if (o->c[i].d < l->thr) push(l, o->c[i].d, o->c[i].idx, j, w0->scratch);
            }
            emit(j, l, w0->scratch, dist + q * j->topk, idx + q * j->topk);
        }
    }
    for (int t = 0; t < nt; t++) work_free(&ws[t]);
    pk__free(ws);
    return failed ? -1 : 0;
}

pk_status pk__cpu_hamming_topk(pk_ctx *ctx, const pk__bits_args *a,
                               int64_t topk, int32_t *dist, int64_t *idx)
{
    if (a->k == 0) {
        /* All distances tie at 0: the first topk rows, in order. Nothing
         * is scanned: Q and X may be NULL, and n is bounded by no buffer
         * (n + nr would overflow near INT64_MAX). */
        for (int64_t q = 0; q < a->m; q++)
            for (int64_t r = 0; r < topk; r++)
                dist[q * topk + r] = 0, idx[q * topk + r] = r;
        return PK_OK;
    }
    topk_job j = {.kt = pk__bits_table(), .a = a, .g = pk__bits_geometry(a->k),
                  .topk = topk};
    /* Room for topk, three times as many more (a cut per 3 * topk pushes)
     * and, histogram mode, a whole chunk. */
    j.cap = 4 * topk + (a->k <= HIST_MAX_K ? CHUNK : 64);
    if (j.cap > a->n) j.cap = a->n;
    j.nb = pk__bits_block_rows(j.g.words, a->n, j.kt->nr);
    double work = (double)a->m * (double)a->n * (double)(j.g.words ? j.g.words : 1);
    int nt = pk__cpu_team(ctx, work > 1e18 ? INT64_MAX : (int64_t)work,
                          a->m > a->n ? a->m : a->n);
    /* The panel paths pack the database once when that copy is small;
     * otherwise each task packs the blocks it scans. */
    uint64_t *all = NULL;
    int64_t panels = (a->n + j.kt->nr - 1) / j.kt->nr, pwords = panels * j.kt->nr * j.g.words;
    if (j.kt->panel && j.g.words > 0 && pwords <= PACK_ONCE_WORDS &&
        (all = pk__bits_alloc_words(pwords))) {
#pragma omp parallel for num_threads(nt) schedule(static)
        for (int64_t p = 0; p < panels; p++) {
            int64_t r0 = p * j.kt->nr, rows = a->n - r0 < j.kt->nr ? a->n - r0 : j.kt->nr;
            pk__bits_pack_panels(j.kt, a->B + r0 * a->ldb, a->ldb, rows, j.g,
                                 all + r0 * j.g.words);
        }
        j.panels = all;
    }
    int64_t qtiles = (a->m + j.kt->mr - 1) / j.kt->mr;
    int rc = nt > 1 && qtiles < 2 * (int64_t)nt ? by_database(&j, nt, dist, idx)
                                                : by_queries(&j, nt, dist, idx);
    pk__free(all);
    if (rc)
        return pk__fail(ctx, PK_ERR_NOMEM,
                        "pk_hamming_topk: out of memory for the candidate lists "
                        "(topk = %lld)", (long long)topk);
    return PK_OK;
}
