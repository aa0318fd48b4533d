/* Scalar semantics of every reduction for the CPU kernels: the rules of
 * src/core/op_rules.h (combine, finish, empty of each (op, dtype), the
 * ordering predicates, the default NaN, the double-double steps), which the
 * fast and the reference kernels share with the CUDA backend and the
 * distributed layer, plus the SIMD and pair-sum forms that only the CPU
 * kernels need. src/cpu/kernels/table.h builds a table from them. */
#ifndef PK_CPU_ACC_H
#define PK_CPU_ACC_H

#include "../../core/op_rules.h"
#include "dd.h"
#include "kernels.h"
#include "vec.h"

/* The default NaN (op_rules.h: pk__canon_float) on a vector V of float or
 * double lanes. */
#define PK__CANON_BITS_V(V, UT, r, ABS, INF, QNAN)                           \
    do {                                                                    \
        typedef UT u_ __attribute__((vector_size(sizeof(V))));              \
        u_ b_;                                                              \
        memcpy(&b_, &(r), sizeof b_);                                       \
        const u_ m_ = (u_)((b_ & (ABS)) > (INF));                           \
        b_ = (b_ & ~m_) | (m_ & (QNAN));                                    \
        memcpy(&(r), &b_, sizeof b_);                                       \
    } while (0)
#define PK__CANON_V(V, r)                                                   \
    do {                                                                    \
        if (sizeof((r)[0]) == 4)                                            \
            PK__CANON_BITS_V(V, uint32_t, r, PK__F32_ABS, PK__F32_INF, PK__F32_QNAN); \
        else                                                                \
            PK__CANON_BITS_V(V, uint64_t, r, PK__F64_ABS, PK__F64_INF, PK__F64_QNAN); \
    } while (0)

/* ---- sums of two elements (see pk__cpu_kernels.sum_pair) ---------------
 * Floats add in their own precision (one rounding: the closest result);
 * + 0 makes -0 + -0 the +0 that every other sum path gives (they start from
 * +0); integers in 64 bits, wrapping as the other integer sums do. */
#define PK__PAIR_ADD_F(RT, a, b) PK__CANON(RT, (RT)((a) + (b)) + (RT)0)
#define PK__PAIR_ADD_I(RT, a, b) ((RT)pk__wrap_add((uint64_t)(a), (uint64_t)(b)))
#define PK__PAIR_ADD_U PK__PAIR_ADD_I

#endif
