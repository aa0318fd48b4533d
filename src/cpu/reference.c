/* Reference kernels: plain serial loops, one element at a time, kept as the
 * readable definition of every op (BLIS-style). Selected with
 * PK_CPU_ISA=reference; tests compare the fast paths against them. They
 * round differently from the fast paths (one accumulator, not 32 lanes). */
#include "kernels/acc.h"
#include "kernels/table.h"

/* Sums, whose pk__acc.idx is a flag (src/core/acc_type.h), not an index;
 * their f64 rows are rescued from overflow (sum_rescue.c). */
#define PK__REF_RESCUE_sum 1
#define PK__REF_RESCUE_prod 0
#define PK__REF_RESCUE_min 0
#define PK__REF_RESCUE_max 0
#define PK__REF_RESCUE_argmin 0
#define PK__REF_RESCUE_argmax 0

/* The reduction of n elements at x, stride apart; index i reports as
 * base + i. Sums of floats are compensated, as in the fast kernels. */
#define PK__REF_REDUCE(D, E, T, C, FLD, RT)                                 \
    static pk__acc ref_sum_##D(const T *x, int64_t n, int64_t stride)       \
    {                                                                       \
        if ((T)0.5 != 0) { /* floats: three parts (dd.h, pk__td_add) */     \
            pk__td t = {0, 0, 0};                                           \
            for (int64_t i = 0; i < n; i++) pk__td_add(&t, (double)x[i * stride]); \
            return pk__td_acc(&t);                                          \
        }                                                                   \
        pk__acc a;                                                          \
        pk__sum_##D##_empty(&a);                                            \
        for (int64_t i = 0; i < n; i++) {                                   \
            pk__acc e = {.v.FLD = x[i * stride]};                           \
            pk__sum_##D##_combine(&a, &e);                                  \
        }                                                                   \
        return a;                                                           \
    }                                                                       \
    static pk__acc ref_prod_##D(const T *x, int64_t n, int64_t stride)      \
    {                                                                       \
        pk__acc a;                                                          \
        pk__prod_##D##_empty(&a);                                           \
        for (int64_t i = 0; i < n; i++) {                                   \
            pk__acc e = {.v.FLD = x[i * stride]};                           \
            pk__prod_##D##_combine(&a, &e);                                 \
        }                                                                   \
        return a;                                                           \
    }                                                                       \
    PK__REF_ORDER(min, D, T, FLD)                                           \
    PK__REF_ORDER(max, D, T, FLD)                                           \
    PK__REF_ORDER(argmin, D, T, FLD)                                        \
    PK__REF_ORDER(argmax, D, T, FLD)                                        \
    PK__REF_PARTS(sum, D, T, RT)                                            \
    PK__REF_PARTS(prod, D, T, RT)                                           \
    PK__REF_PARTS(min, D, T, T)                                             \
    PK__REF_PARTS(max, D, T, T)                                             \
    PK__REF_PARTS(argmin, D, T, int64_t)                                    \
    PK__REF_PARTS(argmax, D, T, int64_t)

#define PK__REF_ORDER(op, D, T, FLD)                                        \
    static pk__acc ref_##op##_##D(const T *x, int64_t n, int64_t stride)    \
    {                                                                       \
        pk__acc a = {.v.FLD = x[0], .idx = 0};                              \
        for (int64_t i = 1; i < n; i++) {                                   \
            pk__acc e = {.v.FLD = x[i * stride], .idx = i};                 \
            pk__##op##_##D##_combine(&a, &e);                               \
        }                                                                   \
        return a;                                                           \
    }

#define PK__REF_PARTS(op, D, T, RT)                                         \
    static void op##_##D##_block(const void *x, int64_t n, int64_t base,   \
                                 pk__acc *acc)                              \
    {                                                                       \
        *acc = ref_##op##_##D((const T *)x, n, 1);                          \
        if (!PK__REF_RESCUE_##op) acc->idx += base; /* sums: a flag */     \
    }                                                                       \
    static void op##_##D##_cols(const void *x, int64_t rows, int64_t cols,  \
                                int64_t ld, int64_t row0, pk__acc *acc,     \
                                void *out, void *work)                      \
    {                                                                       \
        (void)work;                                                         \
        for (int64_t c = 0; c < cols; c++) {                                \
            pk__acc a = ref_##op##_##D((const T *)x + c, rows, ld);         \
            if (!PK__REF_RESCUE_##op) a.idx += row0;                        \
            if (out) pk__##op##_##D##_finish(&a, (RT *)out + c);            \
            else acc[c] = a;                                                \
            if (out && PK__REF_RESCUE_##op && sizeof(T) == 8 && (T)0.5 != 0) \
                pk__cpu_rescue_strided_f64((const double *)x + c, rows, ld, 0, \
                                           (double *)out + c);              \
        }                                                                   \
    }                                                                       \
    static void op##_##D##_rows(const void *x, int64_t rows, int64_t cols,  \
                                int64_t ld, void *out)                      \
    {                                                                       \
        for (int64_t r = 0; r < rows; r++) {                                \
            pk__acc a = ref_##op##_##D((const T *)x + r * ld, cols, 1);     \
            pk__##op##_##D##_finish(&a, (RT *)out + r);                     \
        }                                                                   \
        /* f64 sums that overflowed: as the fast rows kernels do. */       \
        if (PK__REF_RESCUE_##op && sizeof(T) == 8 && (T)0.5 != 0)           \
            pk__cpu_rescue_sums_f64(x, NULL, rows, ld, cols, out);          \
    }

PK__FOR_DTYPES(PK__REF_REDUCE)

static void dot_f32_block(const void *xv, const void *yv, int64_t n,
                          pk__acc *acc)
{
    const float *x = xv, *y = yv;
    pk__td t = {0, 0, 0};
    for (int64_t i = 0; i < n; i++) pk__td_add(&t, (double)x[i] * y[i]);
    *acc = pk__td_acc(&t);
}

static void dot_f64_block(const void *xv, const void *yv, int64_t n,
                          pk__acc *acc)
{
    const double *x = xv, *y = yv;
    /* The exact sum of the exact products, rounded once; with Inf, NaN or
     * an overflow, the compensated loop. */
    if (pk__cpu_exact_sum(PK_F64, x, y, n, acc)) return;
    *acc = (pk__acc){.v.f = 0.0};
    for (int64_t i = 0; i < n; i++) {
        double p = x[i] * y[i], e = fma(x[i], y[i], -p);
        if (!isfinite(e)) e = 0.0;
        pk__dd_add(acc, p, e);
    }
}

#define PK__REF_AXPY(D, T)                                                  \
    static void axpy_##D(int64_t n, const void *alpha, const void *xv,     \
                         void *yv)                                          \
    {                                                                       \
        const T a = *(const T *)alpha, *x = xv;                             \
        T *y = yv;                                                          \
        for (int64_t i = 0; i < n; i++) {                                   \
            T p = a * x[i];                                                 \
            y[i] = p + y[i];                                                \
        }                                                                   \
    }
PK__REF_AXPY(f32, float)
PK__REF_AXPY(f64, double)

#define PK__REF_PAIR(D, E, T, C, FLD, RT)                                   \
    static void sum_pair_##D(const void *av, const void *bv, int64_t stride, \
                             int64_t n, int stream, void *outv)             \
    {                                                                       \
        (void)stream;                                                       \
        const T *a = av, *b = bv;                                           \
        RT *out = outv;                                                     \
        for (int64_t i = 0; i < n; i++)                                     \
            out[i] = PK__PAIR_ADD_##C(RT, a[i * stride], b[i * stride]);    \
    }
PK__FOR_DTYPES(PK__REF_PAIR)

/* User-defined reductions: the generic loops (the interpreter is the
 * readable definition already). */
PK__DEFINE_TABLE(pk__cpu_kernels_reference, "reference", NULL, NULL, &pk__udr_kernels_generic)
