/* The core's op table: combine, finish and empty of every (op, dtype) over
 * pk__acc, from the rules of op_rules.h (the CPU kernel tables take the same
 * functions through src/cpu/kernels/table.h). */
#include "op_rules.h"

#define PK__RULE_ENTRIES(D, E, T, C, FLD, RT)                               \
    [PK_SUM][PK_##E] = {PK__RULE_FNS(sum, D)},                              \
    [PK_PROD][PK_##E] = {PK__RULE_FNS(prod, D)},                            \
    [PK_MIN][PK_##E] = {PK__RULE_FNS(min, D)},                              \
    [PK_MAX][PK_##E] = {PK__RULE_FNS(max, D)},                              \
    [PK_ARGMIN][PK_##E] = {PK__RULE_FNS(argmin, D)},                        \
    [PK_ARGMAX][PK_##E] = {PK__RULE_FNS(argmax, D)},

const pk__op_rule pk__op_rules[PK_OP_COUNT][PK_DTYPE_COUNT] = {PK__FOR_DTYPES(PK__RULE_ENTRIES)};
