/* The CPU interpreter of user-defined reductions for one accumulator type,
 * included by udr.c with T (float or double) and SFX defined. Each bytecode
 * instruction is one tight loop over a block of up to UDR_BLK elements, so
 * the compiler vectorizes every operator; registers live in a per-thread
 * workspace that stays in L1/L2. */
#define CAT_(a, b) a##_##b
#define CAT(a, b) CAT_(a, b)
#define F(name) CAT(name, SFX)

#include "kernels/udr_sel.h"
/* The hot loops: this ISA's (kernels/udr_loops.h, through isa.c's table). */
#define K_(name) (pk__cpu_udr_kernels()->F(name))

typedef struct F(ws) {
    T *slot[3][PK__NVARS + 2 * PK__XMAX]; /* per expression: its slots   */
    T *vals, *tmp, *A, *B;                 /* block values, tree halves   */
    int64_t *idx, *itmp;                   /* ARG: indices                */
    T *xs;                                 /* x converted to T            */
    T *ivals;                              /* i as T                      */
    T one[3][2];                           /* scalar a, b / r operands     */
    void *mem;
} F(ws);

static void *F(ws_new)(const pk_reducer *red)
{
    int64_t slots = 0;
    for (int e = 0; e < PK__R_NEXPR; e++) slots += red->vm[e].nconst + red->vm[e].nregs;
    int64_t nt = slots + 6; /* + vals tmp A B xs ivals */
    size_t bytes = (size_t)nt * UDR_BLK * sizeof(T) + 2 * UDR_BLK * sizeof(int64_t) + 64;
    F(ws) *w = pk__calloc(1, sizeof *w);
    char *m = w ? pk__aligned_alloc(64, (bytes + 63) & ~(size_t)63) : NULL;
    if (!m) {
        pk__free(w);
        return NULL;
    }
    w->mem = m;
    T *t = (T *)m;
    for (int e = 0; e < PK__R_NEXPR; e++) {
        const pk__vm *vm = &red->vm[e];
        for (int c = 0; c < vm->nconst; c++, t += UDR_BLK) {
            w->slot[e][PK__NVARS + c] = t;
            for (int k = 0; k < UDR_BLK; k++) t[k] = (T)vm->cval[c];
        }
        for (int r = 0; r < vm->nregs; r++, t += UDR_BLK)
            w->slot[e][PK__NVARS + vm->nconst + r] = t;
    }
    w->vals = t, t += UDR_BLK;
    w->tmp = t, t += UDR_BLK;
    w->A = t, t += UDR_BLK;
    w->B = t, t += UDR_BLK;
    w->xs = t, t += UDR_BLK;
    w->ivals = t, t += UDR_BLK;
    w->idx = (int64_t *)t;
    w->itmp = w->idx + UDR_BLK;
    return w;
}

static void F(ws_free)(void *p)
{
    F(ws) *w = p;
    if (w) pk__free(w->mem);
    pk__free(w);
}

/* One step on scalars: e = map (u = x, v = i), combine (a, b) or final (r). */
static T F(eval1)(const pk_reducer *red, F(ws) *w, int e, T u, T v)
{
    const pk_reducer_desc *d = &red->d;
    switch (e) {
    case PK__R_MAP: if (d->map_fn) return (T)d->map_fn(u, (int64_t)v, d->user); break;
    case PK__R_COMBINE: if (d->combine_fn) return (T)d->combine_fn(u, v, d->user); break;
    default: if (d->final_fn) return (T)d->final_fn(u, d->user); break;
    }
    T **s = w->slot[e];
    w->one[e][0] = u, w->one[e][1] = v;
    static const int first[PK__R_NEXPR] = {PK__V_X, PK__V_A, PK__V_R};
    s[first[e]] = &w->one[e][0];
    s[e == PK__R_MAP ? PK__V_I : PK__V_B] = &w->one[e][1];
    K_(vm_run)(&red->vm[e], s, 1);
    return s[red->vm[e].result][0];
}

/* Keep a's index where combine kept a's value (see pk.h). */
static inline int64_t F(pick)(T r, T a, int64_t ia, int64_t ib)
{
    return ia >= 0 && (r == a || (r != r && a != a)) ? ia : ib;
}

static void F(comb)(const pk_reducer *red, F(ws) *w, udr_part *acc, const udr_part *b)
{
    T a = (T)acc->v, r = F(eval1)(red, w, PK__R_COMBINE, a, (T)b->v);
    acc->i = F(pick)(r, a, acc->i, b->i);
    acc->v = r;
}

/* x[0], x[stride], ... (len <= UDR_BLK elements) as T; the user's array
 * itself when it is contiguous and has type T already. */
static const T *F(load)(const pk_reducer *red, F(ws) *w, const void *x, int64_t len,
                        int64_t stride)
{
    T *d = w->xs;
    int64_t k;
#define LOADS(S)                                                                                   \
    switch (red->d.input) {                                                                        \
    case PK_F32: if (sizeof(T) == 4 && (S) == 1) return x; for (k = 0; k < len; k++) d[k] = (T)((const float *)x)[k * (S)]; break; \
    case PK_F64: if (sizeof(T) == 8 && (S) == 1) return x; for (k = 0; k < len; k++) d[k] = (T)((const double *)x)[k * (S)]; break; \
    case PK_I32: for (k = 0; k < len; k++) d[k] = (T)((const int32_t *)x)[k * (S)]; break;      \
    case PK_I64: for (k = 0; k < len; k++) d[k] = (T)((const int64_t *)x)[k * (S)]; break;      \
    case PK_U32: for (k = 0; k < len; k++) d[k] = (T)((const uint32_t *)x)[k * (S)]; break;     \
    default: for (k = 0; k < len; k++) d[k] = (T)((const uint64_t *)x)[k * (S)]; break;        \
    }
    if (stride == 1) { LOADS(1) } /* contiguous: vectorized conversions */
    else { LOADS(stride) }
#undef LOADS
    return d;
}

/* The mapped values of one block: x[0], x[stride], ... (len elements),
 * indices base + k * step (step 1 along a line; 0 across lines, where
 * every element has the same index). */
static const T *F(map_block)(const pk_reducer *red, F(ws) *w, const void *x,
                             int64_t len, int64_t base, int64_t step, int64_t stride)
{
    T **s = w->slot[PK__R_MAP];
    s[PK__V_X] = (T *)F(load)(red, w, x, len, stride);
    if (red->uses_i) {
        for (int64_t k = 0; k < len; k++) w->ivals[k] = (T)(base + k * step);
        s[PK__V_I] = w->ivals;
    }
    if (red->d.map_fn) {
        for (int64_t k = 0; k < len; k++)
            w->vals[k] = (T)red->d.map_fn(s[PK__V_X][k], base + k * step, red->d.user);
        return w->vals;
    }
    K_(vm_run)(&red->vm[PK__R_MAP], s, len);
    return s[red->vm[PK__R_MAP].result];
}

/* A block's values (and indices, ARG) combined in a pairwise tree of
 * neighbours, element order kept: level by level, pairs (2k, 2k+1). Each
 * level reads its pairs into A and B first, so it can write in place. */
static udr_part F(tree)(const pk_reducer *red, F(ws) *w, const T *v, int64_t len,
                        int64_t base)
{
    const int arg = red->d.kind == PK_REDUCER_ARG;
    int64_t *iv = w->idx;
    if (red->d.combine_fn) { /* C function: a left fold */
        udr_part acc = {v[0], base};
        for (int64_t k = 1; k < len; k++) {
            udr_part b = {v[k], base + k};
            F(comb)(red, w, &acc, &b);
        }
        return acc;
    }
    if (arg)
        for (int64_t k = 0; k < len; k++) iv[k] = base + k;
    T **s = w->slot[PK__R_COMBINE];
    const pk__vm *vm = &red->vm[PK__R_COMBINE];
    while (len > 1) {
        int64_t h = len / 2;
        T last = v[len - 1];
        for (int64_t k = 0; k < h; k++) w->A[k] = v[2 * k], w->B[k] = v[2 * k + 1];
        s[PK__V_A] = w->A, s[PK__V_B] = w->B;
        K_(vm_run)(vm, s, h);
        const T *r = s[vm->result];
        if (arg) {
            for (int64_t k = 0; k < h; k++)
                iv[k] = F(pick)(r[k], w->A[k], iv[2 * k], iv[2 * k + 1]);
            if (len & 1) iv[h] = iv[len - 1];
        }
        for (int64_t k = 0; k < h; k++) w->tmp[k] = r[k];
        if (len & 1) w->tmp[h] = last;
        v = w->tmp;
        len = h + (len & 1);
    }
    udr_part p = {v[0], arg ? iv[0] : 0};
    return p;
}

static udr_part F(merge_arg)(int op, const T *acc, const int64_t *idx)
{
    udr_part run = {acc[0], idx[0]};
    for (int l = 1; l < PK__UDR_LANES; l++) {
        T a = (T)run.v, b = acc[l];
        T r = op == PK__X_FMIN ? UFMIN(a, b) : UFMAX(a, b);
        int tie = (a == b) || (a != a && b != b);
        if (tie && run.i >= 0 && idx[l] >= 0) run.i = run.i < idx[l] ? run.i : idx[l];
        else run.i = F(pick)(r, a, run.i, idx[l]);
        run.v = r;
    }
    return run;
}

/* One task: x[0], x[stride], ... (n >= 1 elements), indices from base. */
static void F(task)(const pk_reducer *red, void *wp, const void *x, int64_t n,
                    int64_t base, int64_t stride, udr_part *out)
{
    F(ws) *w = wp;
    const size_t size = pk__dtypes[red->d.input].size;
    const int lanes = udr_value_lanes(red), fuse = udr_fused(red), arg_lanes = udr_arg_lanes(red);
    int64_t aidx[PK__UDR_LANES];
    for (int l = 0; l < PK__UDR_LANES; l++) aidx[l] = -1;
    T acc[PK__UDR_LANES];
    for (int l = 0; l < PK__UDR_LANES; l++) acc[l] = (T)red->d.identity;
    udr_part run = {0, -1};
    for (int64_t at = 0; at < n; at += UDR_BLK) {
        int64_t len = n - at < UDR_BLK ? n - at : UDR_BLK;
        const char *xb = (const char *)x + at * stride * (int64_t)size;
        if (fuse && stride == 1) {
            udr_prefetch(xb, len * (int64_t)size);
            K_(fused)(fuse, red->commutative, red->d.input == PK_F64, acc, xb, len);
            continue;
        }
        if (fuse) { /* gathered as T first: the same values, the same lanes */
            K_(fused)(fuse, red->commutative, sizeof(T) == 8, acc, F(load)(red, w, xb, len, stride),
                     len);
            continue;
        }
        if (stride == 1) udr_prefetch(xb, len * (int64_t)size);
        const T *v = F(map_block)(red, w, xb, len, base + at, 1, stride);
        if (lanes) {
            K_(lanes)(red->commutative, acc, v, len);
            continue;
        }
        if (arg_lanes) {
            K_(lanes_arg)(red->commutative, acc, aidx, v, len, base + at);
            continue;
        }
        udr_part p = F(tree)(red, w, v, len, base + at);
        if (at == 0) run = p;
        else F(comb)(red, w, &run, &p);
    }
    if (arg_lanes) run = F(merge_arg)(red->commutative, acc, aidx);
    if (lanes) { /* in order, with the operator itself (not 31 interpreter calls) */
        T r = acc[0];
        const int op = red->commutative;
        for (int l = 1; l < PK__UDR_LANES; l++)
            r = op == PK__X_ADD   ? r + acc[l]
                : op == PK__X_MUL  ? r * acc[l]
                : op == PK__X_FMIN ? UFMIN(r, acc[l])
                                   : UFMAX(r, acc[l]);
        run.v = r;
    }
    *out = run;
}

static void F(finish)(const pk_reducer *red, void *wp, const udr_part *acc, void *out)
{
    if (red->d.kind == PK_REDUCER_ARG) {
        *(int64_t *)out = acc->i;
        return;
    }
    *(T *)out = F(eval1)(red, wp, PK__R_FINAL, (T)acc->v, 0);
}

/* nc (<= UDR_BLK) lines of `along` elements, element k of line c at
 * x[k * sa + c * sl] (axis 0: columns, sa = ld, sl = 1; axis 1: short rows,
 * sa = 1, sl = ld): a left fold along each line, all lines a step at a
 * time, written as final values. It starts from the first element, or with
 * from_identity from the identity (as the lanes of F(task) do, so that rows
 * of up to PK__UDR_LANES elements keep their bits). */
static void F(lines)(const pk_reducer *red, void *wp, const void *x, int64_t along,
                     int64_t nc, int64_t sa, int64_t sl, int from_identity, void *out)
{
    F(ws) *w = wp;
    const size_t size = pk__dtypes[red->d.input].size;
    const int arg = red->d.kind == PK_REDUCER_ARG;
    T *acc = w->tmp; /* the lines' running values */
    int64_t *ia = w->itmp;
    T **s = w->slot[PK__R_COMBINE];
    const pk__vm *vm = &red->vm[PK__R_COMBINE];
    if (from_identity)
        for (int64_t c = 0; c < nc; c++) acc[c] = (T)red->d.identity, ia[c] = -1;
    const int fuse = udr_fused(red);
    if (fuse && along > 0) { /* the same operations in one pass */
        int64_t r0 = 0;
        if (!from_identity) {
            const T *v = F(map_block)(red, w, x, nc, 0, 0, sl);
            for (int64_t c = 0; c < nc; c++) acc[c] = v[c];
            r0 = 1;
        }
        if (sl == 1)
            K_(fused_cols)(fuse, red->commutative, red->d.input == PK_F64, acc, x, r0, along, nc, sa);
        else
            K_(fused_lines)(fuse, red->commutative, red->d.input == PK_F64, acc, x, r0, along, nc,
                           sa, sl);
    }
    for (int64_t r = 0; r < along && !fuse; r++) {
        const T *v = F(map_block)(red, w, (const char *)x + r * sa * (int64_t)size, nc, r, 0, sl);
        if (r == 0 && !from_identity) {
            for (int64_t c = 0; c < nc; c++) acc[c] = v[c], ia[c] = 0;
            continue;
        }
        if (red->d.combine_fn) {
            for (int64_t c = 0; c < nc; c++) {
                udr_part p = {acc[c], ia[c]}, b = {v[c], r};
                F(comb)(red, w, &p, &b);
                acc[c] = (T)p.v, ia[c] = p.i;
            }
            continue;
        }
        for (int64_t c = 0; c < nc; c++) w->A[c] = acc[c];
        s[PK__V_A] = w->A, s[PK__V_B] = (T *)v;
        K_(vm_run)(vm, s, nc);
        const T *res = s[vm->result];
        if (arg)
            for (int64_t c = 0; c < nc; c++) ia[c] = F(pick)(res[c], w->A[c], ia[c], r);
        for (int64_t c = 0; c < nc; c++) acc[c] = res[c];
    }
    /* final over all lines in one pass (one F(finish) each was ~20 ns, the
     * whole cost of a row of two) */
    if (arg) {
        memcpy(out, ia, (size_t)nc * sizeof *ia);
    } else if (red->d.final_fn) {
        for (int64_t c = 0; c < nc; c++)
            ((T *)out)[c] = (T)red->d.final_fn(acc[c], red->d.user);
    } else {
        T **f = w->slot[PK__R_FINAL];
        f[PK__V_R] = acc;
        K_(vm_run)(&red->vm[PK__R_FINAL], f, nc);
        memcpy(out, f[red->vm[PK__R_FINAL].result], (size_t)nc * sizeof(T));
    }
}

static void F(comb_any)(const pk_reducer *red, void *w, udr_part *acc, const udr_part *b)
{
    F(comb)(red, w, acc, b);
}

static const udr_fns F(fns) = {F(ws_new), F(ws_free), F(task), F(comb_any), F(finish), F(lines)};

#undef K_
#undef UFMAX
#undef UFMIN
#undef F
#undef CAT
#undef CAT_
