/* The expression language of user-defined reductions (pk_reducer): a parser
 * to a small AST, checked once at create time, and the two things both
 * backends derive from it: a register bytecode for the CPU interpreter
 * (src/cpu/udr*.c) and CUDA C++ text for NVRTC (src/cuda/udr.cu). One
 * table of operators (expr.c) serves the parser, the bytecode and the
 * code generator, so the backends cannot disagree on what a name means. */
#ifndef PK_EXPR_H
#define PK_EXPR_H

#include "internal.h"

#include <stddef.h>

/* Variables, also the first bytecode slots. */
enum { PK__V_X = 0, PK__V_I, PK__V_A, PK__V_B, PK__V_R, PK__NVARS };

enum pk__xop {
    PK__X_CONST = 0, PK__X_VAR,
    /* unary */
    PK__X_NEG, PK__X_NOT, PK__X_FABS, PK__X_SQRT, PK__X_EXP, PK__X_LOG,
    PK__X_SIN, PK__X_COS, PK__X_FLOOR, PK__X_CEIL, PK__X_ISNAN, PK__X_ISINF,
    /* binary */
    PK__X_ADD, PK__X_SUB, PK__X_MUL, PK__X_DIV, PK__X_MOD, PK__X_LT, PK__X_LE,
    PK__X_GT, PK__X_GE, PK__X_EQ, PK__X_NE, PK__X_AND, PK__X_OR, PK__X_FMIN,
    PK__X_FMAX, PK__X_POW, PK__X_MIN, PK__X_MAX,
    /* ternary */
    PK__X_SELECT,
    PK__X_COUNT
};

#define PK__XMAX 128 /* nodes per expression */

typedef struct pk__xnode {
    unsigned char op, var;
    short k[3];
    double v; /* PK__X_CONST */
} pk__xnode;

typedef struct pk__expr {
    int n, root;
    pk__xnode node[PK__XMAX];
} pk__expr;

/* Parse src (what names it in messages: "map", "combine", "final"); only
 * the variables whose bit (1 << PK__V_*) is in vars may appear. Errors are
 * PK_ERR_COMPILE recorded in ctx with the position and the token. */
pk_status pk__expr_parse(pk_ctx *ctx, const char *what, const char *src,
                         unsigned vars, pk__expr *e);
/* Whether node k of e reads variable v. */
int pk__expr_uses(const pk__expr *e, int var);
/* The combine's commutative built-in, if it is exactly one of a+b, b+a,
 * a*b, b*a, fmin(a,b), fmax(a,b) (either order): PK__X_ADD, PK__X_MUL,
 * PK__X_FMIN, PK__X_FMAX; else -1. */
int pk__expr_commutative(const pk__expr *e);
/* Append e as a C expression of type float (f32) or double to buf (at
 * *len of cap bytes). Variables are written as their names. Returns 0, or
 * -1 when it does not fit. */
int pk__expr_emit(const pk__expr *e, int f32, char *buf, size_t cap, size_t *len);

/* Evaluate e for one set of variable values, as the CPU interpreter does:
 * each operation in double, its result rounded to float when f32 (so
 * f32 arithmetic gives the bits of C float arithmetic). For the few scalar
 * evaluations outside the kernels (the distributed layer's rank-order
 * combine). */
double pk__expr_eval(const pk__expr *e, const double vars[PK__NVARS], int f32);

/* Bytecode: every instruction applies one operator element-wise over a
 * block. Slots: the PK__NVARS variables, then the constants, then the
 * registers (a stack allocation: registers needed = expression depth). */
#define PK__VM_MAXINS PK__XMAX
typedef struct pk__vm_ins {
    short op, dst, s[3];
} pk__vm_ins;
typedef struct pk__vm {
    int nins, nconst, nregs, result; /* result: a slot */
    pk__vm_ins ins[PK__VM_MAXINS];
    double cval[PK__XMAX];
} pk__vm;
void pk__vm_compile(const pk__expr *e, pk__vm *vm);
static inline int pk__vm_slots(const pk__vm *vm) { return PK__NVARS + vm->nconst + vm->nregs; }

#endif
