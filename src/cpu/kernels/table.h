/* Builds a pk__cpu_kernels table from functions named <op>_<dtype>_<part>
 * (block, cols, rows from the including file), the core's rules (combine,
 * finish, empty: src/core/op_rules.h, as in its op table), dot_<dtype>_block,
 * axpy_<dtype> and the GEMM kernels (NULL: the driver's reference loops). */
#ifndef PK_CPU_TABLE_H
#define PK_CPU_TABLE_H

#include "../../core/op_rules.h"
#include "udr_kernels.h"

#define PK__FNS(op, D) {op##_##D##_block, op##_##D##_cols, op##_##D##_rows, PK__RULE_FNS(op, D)}

#define PK__TABLE_ENTRIES(D, E, T, C, FLD, RT)                              \
    .reduce[PK_SUM][PK_##E] = PK__FNS(sum, D),                              \
    .reduce[PK_PROD][PK_##E] = PK__FNS(prod, D),                            \
    .reduce[PK_MIN][PK_##E] = PK__FNS(min, D),                              \
    .reduce[PK_MAX][PK_##E] = PK__FNS(max, D),                              \
    .reduce[PK_ARGMIN][PK_##E] = PK__FNS(argmin, D),                        \
    .reduce[PK_ARGMAX][PK_##E] = PK__FNS(argmax, D),

#define PK__PAIR_ENTRY(D, E, T, C, FLD, RT) [PK_##E] = sum_pair_##D,

#define PK__DEFINE_TABLE(symbol, label, gemm_kernels, lanes_f32, udr_kernels) \
    const pk__cpu_kernels symbol = {                                        \
        .name = label,                                                      \
        PK__FOR_DTYPES(PK__TABLE_ENTRIES)                                   \
        .dot_block = {dot_f32_block, dot_f64_block},                        \
        .axpy = {axpy_f32, axpy_f64},                                       \
        .sum_pair = {PK__FOR_DTYPES(PK__PAIR_ENTRY)},                       \
        .sum_lanes_f32 = lanes_f32,                                         \
        .gemm = gemm_kernels,                                               \
        .udr = udr_kernels,                                                 \
    };

#endif
