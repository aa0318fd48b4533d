/* The hot loops of the CPU interpreter of user-defined reductions for one
 * accumulator type T (float or double; bits TB; names suffixed by SFX
 * through F()), included twice by udr_kernels.c, which is compiled once per
 * ISA. Lane-wise operations without contraction (-ffp-contract=off) round
 * the same on every ISA, so the bits do not depend on the table. */
#include "udr_sel.h"

/* One bytecode program over len elements of its slots s. */
static void F(vm_run)(const pk__vm *vm, T *const *s, int64_t len)
{
    for (int j = 0; j < vm->nins; j++) {
        const pk__vm_ins *in = &vm->ins[j];
        T *d = s[in->dst];
        const T *p = s[in->s[0]], *q = s[in->s[1]], *c = s[in->s[2]];
        int64_t k;
#define LOOP(expr) for (k = 0; k < len; k++) d[k] = (expr); break
        switch (in->op) {
        case PK__X_NEG: LOOP(-p[k]);
        case PK__X_NOT: LOOP((T)(p[k] == 0));
        case PK__X_FABS: LOOP(fabs(p[k]));
        case PK__X_SQRT: LOOP(sqrt(p[k]));
        case PK__X_EXP: LOOP(exp(p[k]));
        case PK__X_LOG: LOOP(log(p[k]));
        case PK__X_SIN: LOOP(sin(p[k]));
        case PK__X_COS: LOOP(cos(p[k]));
        case PK__X_FLOOR: LOOP(floor(p[k]));
        case PK__X_CEIL: LOOP(ceil(p[k]));
        case PK__X_ISNAN: LOOP((T)(p[k] != p[k]));
        case PK__X_ISINF: LOOP((T)(fabs(p[k]) == (T)INFINITY));
        case PK__X_ADD: LOOP(p[k] + q[k]);
        case PK__X_SUB: LOOP(p[k] - q[k]);
        case PK__X_MUL: LOOP(p[k] * q[k]);
        case PK__X_DIV: LOOP(p[k] / q[k]);
        case PK__X_MOD: LOOP(fmod(p[k], q[k]));
        case PK__X_LT: LOOP((T)(p[k] < q[k]));
        case PK__X_LE: LOOP((T)(p[k] <= q[k]));
        case PK__X_GT: LOOP((T)(p[k] > q[k]));
        case PK__X_GE: LOOP((T)(p[k] >= q[k]));
        case PK__X_EQ: LOOP((T)(p[k] == q[k]));
        case PK__X_NE: LOOP((T)(p[k] != q[k]));
        case PK__X_AND: LOOP((T)(p[k] != 0 && q[k] != 0));
        case PK__X_OR: LOOP((T)(p[k] != 0 || q[k] != 0));
        case PK__X_FMIN: LOOP(UFMIN(p[k], q[k]));
        case PK__X_FMAX: LOOP(UFMAX(p[k], q[k]));
        case PK__X_POW: LOOP(pow(p[k], q[k]));
        case PK__X_MIN: LOOP(q[k] < p[k] ? q[k] : p[k]);
        case PK__X_MAX: LOOP(p[k] < q[k] ? q[k] : p[k]);
        case PK__X_SELECT: LOOP(p[k] != 0 ? q[k] : c[k]);
        default: break;
        }
#undef LOOP
    }
}

/* Commutative built-in combine (a+b, a*b, fmin, fmax): PK__UDR_LANES lanes, element
 * k of a task in lane k % PK__UDR_LANES (blocks start at multiples of PK__UDR_LANES), lanes
 * combined in order at the end. The tree is fixed by position. */
static void F(lanes)(int op, T *accp, const T *v, int64_t len)
{
    T acc[PK__UDR_LANES];
    for (int l = 0; l < PK__UDR_LANES; l++) acc[l] = accp[l];
    int64_t k = 0;
#define LANE_LOOP(OP)                                                    \
    for (; k + PK__UDR_LANES <= len; k += PK__UDR_LANES)                                 \
        for (int l = 0; l < PK__UDR_LANES; l++) acc[l] = OP(acc[l], v[k + l]);   \
    for (int l = 0; k + l < len; l++) acc[l] = OP(acc[l], v[k + l]);     \
    break
#define ADD(p, q) ((p) + (q))
#define MUL(p, q) ((p) * (q))
    switch (op) {
    case PK__X_ADD: LANE_LOOP(ADD);
    case PK__X_MUL: LANE_LOOP(MUL);
    case PK__X_FMIN: LANE_LOOP(UFMIN);
    default: LANE_LOOP(UFMAX);
    }
    for (int l = 0; l < PK__UDR_LANES; l++) accp[l] = acc[l];
#undef ADD
#undef MUL
#undef LANE_LOOP
}

/* The fused form of the commonest lane reductions (map x, x*x or fabs(x)
 * of f32/f64 input; combine a+b, a*b, fmin, fmax): one pass, no bytecode,
 * the same operations on the same lanes as the interpreted path, hence the
 * same bits. */
#define FUSE_LOOP(IT, MAPF, OP)                                               \
    do {                                                                      \
        const IT *xi = x;                                                     \
        int64_t k = 0;                                                        \
        for (; k + PK__UDR_LANES <= len; k += PK__UDR_LANES)                                  \
            for (int l = 0; l < PK__UDR_LANES; l++) {                                 \
                T v = (T)xi[k + l];                                           \
                acc[l] = OP(acc[l], MAPF(v));                                 \
            }                                                                 \
        for (int l = 0; k + l < len; l++) {                                   \
            T v = (T)xi[k + l];                                               \
            acc[l] = OP(acc[l], MAPF(v));                                     \
        }                                                                     \
    } while (0)
#define M_X(v) (v)
#define M_SQ(v) ((v) * (v))
#define M_ABS(v) fabs(v)
#define ADD(p, q) ((p) + (q))
#define MUL(p, q) ((p) * (q))
#define FUSE_OPS(IT, MAPF)                                                    \
    switch (op) {                                                             \
    case PK__X_ADD: FUSE_LOOP(IT, MAPF, ADD); break;                          \
    case PK__X_MUL: FUSE_LOOP(IT, MAPF, MUL); break;                          \
    case PK__X_FMIN: FUSE_LOOP(IT, MAPF, UFMIN); break;                       \
    default: FUSE_LOOP(IT, MAPF, UFMAX); break;                               \
    }
#define FUSE_MAPS(IT)                                                         \
    switch (map) {                                                            \
    case UDR_MAP_X: FUSE_OPS(IT, M_X) break;                                  \
    case UDR_MAP_SQ: FUSE_OPS(IT, M_SQ) break;                                \
    default: FUSE_OPS(IT, M_ABS) break;                                       \
    }
static void F(fused)(int map, int op, int f64in, T *accp, const void *x, int64_t len)
{
    T acc[PK__UDR_LANES]; /* local: no aliasing with x, kept in registers */
    for (int l = 0; l < PK__UDR_LANES; l++) acc[l] = accp[l];
    if (f64in) FUSE_MAPS(double)
    else FUSE_MAPS(float)
    for (int l = 0; l < PK__UDR_LANES; l++) accp[l] = acc[l];
}
/* The fused form along lines (F(lines)): acc[c] = OP(acc[c], MAP(element r
 * of line c)) for r in [r0, along), element r of line c at x[r * sa + c *
 * sl]; lines step by step, as the interpreted F(lines). */
#undef FUSE_LOOP
#define FUSE_LOOP(IT, MAPF, OP)                                               \
    do {                                                                      \
        const IT *xi = x;                                                     \
        for (int64_t r = r0; r < along; r++) {                                \
            const IT *row = xi + r * sa;                                      \
            for (int64_t c = 0; c < nc; c++) {                                \
                T v = (T)row[c * LINE_STEP];                                  \
                acc[c] = OP(acc[c], MAPF(v));                                 \
            }                                                                 \
        }                                                                     \
    } while (0)
#define LINE_STEP 1
static void F(fused_cols)(int map, int op, int f64in, T *restrict acc, const void *x,
                                     int64_t r0, int64_t along, int64_t nc, int64_t sa)
{
    if (f64in) FUSE_MAPS(double)
    else FUSE_MAPS(float)
}
#undef LINE_STEP
#define LINE_STEP sl
static void F(fused_lines)(int map, int op, int f64in, T *restrict acc,
                                      const void *x, int64_t r0, int64_t along, int64_t nc,
                                      int64_t sa, int64_t sl)
{
    if (f64in) FUSE_MAPS(double)
    else FUSE_MAPS(float)
}
#undef LINE_STEP
#undef FUSE_MAPS
#undef FUSE_OPS
#undef FUSE_LOOP
#undef M_X
#undef M_SQ
#undef M_ABS
#undef ADD
#undef MUL

/* ARG over fmin/fmax (commutative and selective): the same lanes with
 * an index each; within a lane elements come in order, so the lane keeps
 * the first of equal values; lanes are merged keeping the lower index on a
 * tie, which is the first occurrence overall, as the ordered tree gives.
 * Only the index leaves an ARG reduction, and pick() looks at values only
 * through == and NaN-ness (-0 == +0, NaNs alike), so a lane's running value
 * is a plain select: x replaces a where x > a (fmin: x < a), or a is NaN and
 * x is not; that is fmax(a, x) (fmin) up to the sign of a zero and the bits
 * of a NaN, and x's index is taken exactly where pick(fmax(a, x), a, ...)
 * takes it (or where the lane has no index yet). Cheaper than UFMAX + pick
 * in this loop; merge_arg and the partials use UFMAX and pick. */
static void F(lanes_arg)(int op, T *accp, int64_t *idxp, const T *v, int64_t len,
                                    int64_t base)
{
    T acc[PK__UDR_LANES];
    int64_t idx[PK__UDR_LANES];
    for (int l = 0; l < PK__UDR_LANES; l++) acc[l] = accp[l], idx[l] = idxp[l];
    int64_t k = 0;
#define ARG_STEP(CMP)                                                             \
    {                                                                             \
        const T a = acc[l], x = v[k + l];                                         \
        const int take = (x CMP a) | ((a != a) & (x == x));                       \
        idx[l] = (take | (idx[l] < 0)) ? base + k + l : idx[l];                   \
        acc[l] = take ? x : a;                                                    \
    }
    if (op == PK__X_FMIN) {
        for (; k + PK__UDR_LANES <= len; k += PK__UDR_LANES)
            for (int l = 0; l < PK__UDR_LANES; l++) ARG_STEP(<)
        for (int l = 0; k + l < len; l++) ARG_STEP(<)
    } else {
        for (; k + PK__UDR_LANES <= len; k += PK__UDR_LANES)
            for (int l = 0; l < PK__UDR_LANES; l++) ARG_STEP(>)
        for (int l = 0; k + l < len; l++) ARG_STEP(>)
    }
#undef ARG_STEP
    for (int l = 0; l < PK__UDR_LANES; l++) accp[l] = acc[l], idxp[l] = idx[l];
}

