/* fmin/fmax of user-defined reductions for one accumulator type T (bits
 * TB), names suffixed by SFX through F(): included by the CPU interpreter
 * (src/cpu/udr_tmpl.h) and its per-ISA loops (udr_loops.h). */
/* fmin/fmax as IEEE 754-2019 maximumNumber/minimumNumber (pk.h): a NaN
 * operand is ignored, two NaNs give the default NaN (+, quiet, payload 0),
 * -0 < +0. So they are commutative and associative bit for bit and every
 * tree (the ordered one, the lanes, the GPU's) gives the same bits; equal to
 * the scalar sel_fmax/sel_fmin of src/core/expr.c and pk_fmax/pk_fmin of
 * src/cuda/udr_source.h. Written as compares, selects and bit operations,
 * which vectorize (libm's do not): a NaN q becomes -INFINITY (INFINITY for
 * fmin), which both max(p, q) and max(q, p) ignore; these two agree unless
 * p == q, where the AND of the bits keeps +0 of +0 and -0 (fmin: the OR,
 * -0); a NaN p takes q, or the default NaN if q is NaN too. In the lane loops
 * q is the element: only the two maxes, the AND and the last select wait for
 * the running value p (docs/ARCHITECTURE.md has the cost). */
static inline T F(bits_and_or)(T p, T q, int use_or)
{
    TB a, b;
    memcpy(&a, &p, sizeof a), memcpy(&b, &q, sizeof b);
    a = use_or ? a | b : a & b;
    memcpy(&p, &a, sizeof p);
    return p;
}
static inline T F(fmax_sel)(T p, T q)
{
    const T qs = q != q ? -(T)INFINITY : q, qn = q != q ? (T)NAN : q;
    const T r = F(bits_and_or)(qs > p ? qs : p, p > qs ? p : qs, 0);
    return p != p ? qn : r;
}
static inline T F(fmin_sel)(T p, T q)
{
    const T qs = q != q ? (T)INFINITY : q, qn = q != q ? (T)NAN : q;
    const T r = F(bits_and_or)(qs < p ? qs : p, p < qs ? p : qs, 1);
    return p != p ? qn : r;
}
#define UFMAX(p, q) F(fmax_sel)(p, q)
#define UFMIN(p, q) F(fmin_sel)(p, q)

