/* The per-ISA hot loops of user-defined reductions (udr_kernels.h): this
 * file is compiled once per ISA into the table PK_UDR_SYMBOL. */
#include "udr_kernels.h"

#include "../../core/expr.h"

#include <math.h>
#include <string.h>
#include <tgmath.h> /* fabs, exp, ... of T's own precision */

#define CAT_(a, b) a##_##b
#define CAT(a, b) CAT_(a, b)
#define F(name) CAT(name, SFX)

#define T float
#define TB uint32_t
#define SFX f32
#include "udr_loops.h"
#undef T
#undef TB
#undef SFX
#undef UFMAX
#undef UFMIN
#define T double
#define TB uint64_t
#define SFX f64
#include "udr_loops.h"
#undef T
#undef TB
#undef SFX

#define PK__UDR_ENTRIES(SFX)                                                            \
    .vm_run_##SFX = vm_run_##SFX, .lanes_##SFX = lanes_##SFX, .fused_##SFX = fused_##SFX, \
    .fused_cols_##SFX = fused_cols_##SFX, .fused_lines_##SFX = fused_lines_##SFX,         \
    .lanes_arg_##SFX = lanes_arg_##SFX,

const pk__udr_kernels PK_UDR_SYMBOL = {.name = PK_ISA_NAME, PK__UDR_ENTRIES(f32)
                                                                PK__UDR_ENTRIES(f64)};
