/* The hot loops of the CPU interpreter of user-defined reductions
 * (src/cpu/udr.c), one table per ISA: udr_kernels.c is compiled once per
 * ISA (avx512, avx2, generic) and each CPU kernel table points to its own
 * (kernels.h), so PK_CPU_ISA picks these loops as it picks the built-ins. */
#ifndef PK_UDR_KERNELS_H
#define PK_UDR_KERNELS_H

#include <stdint.h>

struct pk__vm; /* a bytecode program (src/core/expr.h) */

/* Lanes of the lane loops (independent chains: the fmax selects are
 * latency-bound); element k of a task goes to lane k % PK__UDR_LANES. */
#define PK__UDR_LANES 32

/* Maps of the fused loops: x, x*x, fabs(x) (0: none). */
enum { UDR_MAP_X = 1, UDR_MAP_SQ, UDR_MAP_ABS };

/* For T = float (_f32) and double (_f64):
 * vm_run: one bytecode program over len elements of its slots s;
 * lanes: acc[l] = op(acc[l], v[k]) for k in lane l (op a commutative
 *   built-in combine: PK__X_ADD, MUL, FMIN, FMAX);
 * fused: the same of map(x[k]) read from f32 (f64in 0) or f64 input;
 * fused_cols / fused_lines: acc[c] = op(acc[c], map(element r of line c))
 *   for r in [r0, along), element r of line c at x[r * sa + c] / [r * sa +
 *   c * sl];
 * lanes_arg: ARG over fmin/fmax, an index per lane (base: v[0]'s). */
#define PK__UDR_FNS(T, SFX)                                                            \
    void (*vm_run_##SFX)(const struct pk__vm *vm, T *const *s, int64_t len);                 \
    void (*lanes_##SFX)(int op, T *accp, const T *v, int64_t len);                    \
    void (*fused_##SFX)(int map, int op, int f64in, T *accp, const void *x, int64_t len); \
    void (*fused_cols_##SFX)(int map, int op, int f64in, T *restrict acc, const void *x,  \
                             int64_t r0, int64_t along, int64_t nc, int64_t sa);          \
    void (*fused_lines_##SFX)(int map, int op, int f64in, T *restrict acc, const void *x, \
                              int64_t r0, int64_t along, int64_t nc, int64_t sa,          \
                              int64_t sl);                                                \
    void (*lanes_arg_##SFX)(int op, T *accp, int64_t *idxp, const T *v, int64_t len,      \
                            int64_t base);

typedef struct pk__udr_kernels {
    const char *name;
    PK__UDR_FNS(float, f32)
    PK__UDR_FNS(double, f64)
} pk__udr_kernels;

extern const pk__udr_kernels pk__udr_kernels_avx512;
extern const pk__udr_kernels pk__udr_kernels_avx2;
extern const pk__udr_kernels pk__udr_kernels_generic;

#endif
