/* Parser, bytecode compiler and C emitter of the reducer expression
 * language (expr.h). */
#include "expr.h"

#include <ctype.h>
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Numbers are read in the "C" locale whatever the program's LC_NUMERIC is
 * (under de_DE strtod stops at the '.' of 2.5). (locale_t)0 if newlocale
 * failed: then the program's locale is used, and a number it reads
 * differently is refused (number() checks where strtod stopped). */
static locale_t c_locale;
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;
static void c_locale_init(void) { c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0); }
static double strtod_c(const char *s, char **end)
{
    pthread_once(&c_locale_once, c_locale_init);
    locale_t old = c_locale ? uselocale(c_locale) : (locale_t)0;
    double v = strtod(s, end);
    if (old) uselocale(old);
    return v;
}

/* How an operator is written in C: a function (fn_f for float, fn_d for
 * double) or an infix operator (infix), and its arity. */
typedef struct xop_info {
    const char *name;  /* the function name the parser accepts, or NULL */
    int arity;
    const char *fn_f, *fn_d, *infix;
} xop_info;

static const xop_info ops[PK__X_COUNT] = {
    [PK__X_NEG] = {NULL, 1, NULL, NULL, "-"},
    [PK__X_NOT] = {NULL, 1, NULL, NULL, "!"},
    [PK__X_FABS] = {"fabs", 1, "fabsf", "fabs", NULL},
    [PK__X_SQRT] = {"sqrt", 1, "sqrtf", "sqrt", NULL},
    [PK__X_EXP] = {"exp", 1, "expf", "exp", NULL},
    [PK__X_LOG] = {"log", 1, "logf", "log", NULL},
    [PK__X_SIN] = {"sin", 1, "sinf", "sin", NULL},
    [PK__X_COS] = {"cos", 1, "cosf", "cos", NULL},
    [PK__X_FLOOR] = {"floor", 1, "floorf", "floor", NULL},
    [PK__X_CEIL] = {"ceil", 1, "ceilf", "ceil", NULL},
    [PK__X_ISNAN] = {"isnan", 1, NULL, NULL, NULL},
    [PK__X_ISINF] = {"isinf", 1, NULL, NULL, NULL},
    [PK__X_ADD] = {NULL, 2, NULL, NULL, "+"},
    [PK__X_SUB] = {NULL, 2, NULL, NULL, "-"},
    [PK__X_MUL] = {NULL, 2, NULL, NULL, "*"},
    [PK__X_DIV] = {NULL, 2, NULL, NULL, "/"},
    [PK__X_MOD] = {NULL, 2, "fmodf", "fmod", NULL},
    [PK__X_LT] = {NULL, 2, NULL, NULL, "<"},
    [PK__X_LE] = {NULL, 2, NULL, NULL, "<="},
    [PK__X_GT] = {NULL, 2, NULL, NULL, ">"},
    [PK__X_GE] = {NULL, 2, NULL, NULL, ">="},
    [PK__X_EQ] = {NULL, 2, NULL, NULL, "=="},
    [PK__X_NE] = {NULL, 2, NULL, NULL, "!="},
    [PK__X_AND] = {NULL, 2, NULL, NULL, "&&"},
    [PK__X_OR] = {NULL, 2, NULL, NULL, "||"},
    [PK__X_FMIN] = {"fmin", 2, "fminf", "fmin", NULL},
    [PK__X_FMAX] = {"fmax", 2, "fmaxf", "fmax", NULL},
    [PK__X_POW] = {"pow", 2, "powf", "pow", NULL},
    [PK__X_MIN] = {"min", 2, NULL, NULL, NULL},
    [PK__X_MAX] = {"max", 2, NULL, NULL, NULL},
    [PK__X_SELECT] = {NULL, 3, NULL, NULL, NULL},
};

static const char *const var_names[PK__NVARS] = {"x", "i", "a", "b", "r"};

/* ---- Parser: recursive descent, C precedence ---------------------------- */

typedef struct parser {
    pk_ctx *ctx;
    const char *what, *src, *p;
    unsigned vars;
    int depth; /* open parentheses, calls, prefix operators, ?: branches */
    pk__expr *e;
    pk_status st;
} parser;

/* How much of a long expression a message quotes on each side of the
 * error, so that the position and the token always fit in PK__MSG_MAX. */
#define QUOTE_SIDE 60

static int fail_at(parser *ps, const char *at, const char *why)
{
    if (ps->st == PK_OK) {
        while (isspace((unsigned char)*at)) at++; /* point at the token */
        int len = 0, pos = (int)(at - ps->src);
        while (at[len] && !isspace((unsigned char)at[len]) && len < 16) len++;
        int total = (int)strlen(ps->src);
        int q0 = pos > QUOTE_SIDE ? pos - QUOTE_SIDE : 0;
        int q1 = total - pos > QUOTE_SIDE ? pos + QUOTE_SIDE : total;
        if (total <= 4 * QUOTE_SIDE) q0 = 0, q1 = total; /* short: all of it */
        ps->st = pk__fail(ps->ctx, PK_ERR_COMPILE,
                          "pk_reducer_create: %s expression \"%s%.*s%s\": %s at "
                          "position %d ('%.*s')",
                          ps->what, q0 ? "..." : "", q1 - q0, ps->src + q0,
                          q1 < total ? "..." : "", why, pos + 1, len ? len : 11,
                          len ? at : "end of text");
    }
    return -1;
}

/* Every recursion of the parser passes here: a bound on its stack. Deeper
 * than the node limit cannot be a useful expression (only parentheses and
 * unary '+' nest without adding a node). */
#define PK__XDEPTH PK__XMAX
#define STR_(v) #v
#define STR(v) STR_(v)
static int enter(parser *ps, const char *at)
{
    if (++ps->depth <= PK__XDEPTH) return 0;
    return fail_at(ps, at, "nesting deeper than " STR(PK__XDEPTH));
}

static void skip(parser *ps)
{
    while (isspace((unsigned char)*ps->p)) ps->p++;
}

static int accept(parser *ps, const char *tok)
{
    skip(ps);
    size_t l = strlen(tok);
    if (strncmp(ps->p, tok, l)) return 0;
    /* "<" must not take the first char of "<=", "!" of "!=" */
    if (l == 1 && strchr("<>!=", tok[0]) && ps->p[1] == '=') return 0;
    if (l == 1 && (tok[0] == '&' || tok[0] == '|')) return 0;
    ps->p += l;
    return 1;
}

static int node(parser *ps, int op, int k0, int k1, int k2, double v)
{
    if (k0 < 0 || k1 < -1 || k2 < -1 || ps->st) return -1;
    if (ps->e->n >= PK__XMAX) return fail_at(ps, ps->p, "expression too long");
    pk__xnode *x = &ps->e->node[ps->e->n];
    memset(x, 0, sizeof *x);
    x->op = (unsigned char)op;
    x->k[0] = (short)k0, x->k[1] = (short)k1, x->k[2] = (short)k2;
    x->v = v;
    return ps->e->n++;
}

static int leaf(parser *ps, int op, int var, double v)
{
    if (ps->st) return -1;
    if (ps->e->n >= PK__XMAX) return fail_at(ps, ps->p, "expression too long");
    pk__xnode *x = &ps->e->node[ps->e->n];
    memset(x, 0, sizeof *x);
    x->op = (unsigned char)op, x->var = (unsigned char)var, x->v = v;
    x->k[0] = x->k[1] = x->k[2] = -1;
    return ps->e->n++;
}

static int ternary(parser *ps);

/* ternary() one level deeper: for parentheses and calls. */
static int nested(parser *ps, const char *at)
{
    if (enter(ps, at)) return -1;
    int k = ternary(ps);
    ps->depth--;
    return k;
}

static int is_dig(int c, int hex) { return hex ? isxdigit(c) : isdigit(c); }

/* A number as C writes its constants: decimal or hexadecimal (2, .5, 1e-3,
 * 0x1F, 0x1p-3), an f/F suffix on floating ones (ignored: the accumulator
 * dtype decides). What C would read differently or not at all is refused,
 * not misread: octal (010 is 8 in C), integer suffixes (1u, 1L), 1f. */
static int number(parser *ps, const char *at)
{
    const char *p = at;
    int hex = p[0] == '0' && (p[1] == 'x' || p[1] == 'X'), nd = 0, fl = 0;
    if (hex) p += 2;
    for (; is_dig((unsigned char)*p, hex); p++) nd++;
    if (*p == '.')
        for (fl = 1, p++; is_dig((unsigned char)*p, hex); p++) nd++;
    int ex = nd && (hex ? *p == 'p' || *p == 'P' : *p == 'e' || *p == 'E');
    if (ex) {
        p += p[1] == '+' || p[1] == '-' ? 2 : 1;
        if (!isdigit((unsigned char)*p)) return fail_at(ps, at, "bad number");
        while (isdigit((unsigned char)*p)) p++;
    }
    if (!nd || (hex && fl && !ex)) return fail_at(ps, at, "bad number");
    /* C's preprocessing numbers run on through e+ and e-: 0x1e+5 is one
     * (invalid) token there, not 0x1e + 5. */
    if (hex && !ex && (p[-1] == 'e' || p[-1] == 'E') && (*p == '+' || *p == '-'))
        return fail_at(ps, at, "bad number");
    if (!hex && !fl && !ex && at[0] == '0' && p - at > 1)
        return fail_at(ps, at, "bad number (a leading 0: octal in C)");
    char *end;
    errno = 0;
    double v = strtod_c(at, &end); /* the syntax is checked: only the value */
    if (end != p) return fail_at(ps, at, "bad number");
    /* C requires a constant to be in range (C11 6.4.4p2; compilers warn). */
    if (isinf(v) || (v == 0 && errno == ERANGE))
        return fail_at(ps, at, "number out of the range of double");
    if ((fl || ex) && (*p == 'f' || *p == 'F')) p++;
    if (isalnum((unsigned char)*p) || *p == '_' || *p == '.')
        return fail_at(ps, at, "bad number");
    ps->p = p;
    return leaf(ps, PK__X_CONST, 0, v);
}

static int primary(parser *ps)
{
    skip(ps);
    const char *at = ps->p;
    if (accept(ps, "(")) {
        int k = nested(ps, at);
        if (k >= 0 && !accept(ps, ")")) return fail_at(ps, ps->p, "expected ')'");
        return k;
    }
    if (isdigit((unsigned char)*at) || (*at == '.' && isdigit((unsigned char)at[1])))
        return number(ps, at);
    if (!isalpha((unsigned char)*at) && *at != '_')
        return fail_at(ps, at, *at ? "unexpected token" : "unexpected end");
    const char *s = at;
    while (isalnum((unsigned char)*ps->p) || *ps->p == '_') ps->p++;
    size_t len = (size_t)(ps->p - s);
    char name[32] = "";
    if (len >= sizeof name) return fail_at(ps, at, "unknown name");
    memcpy(name, s, len);
    if (!strcmp(name, "INFINITY")) return leaf(ps, PK__X_CONST, 0, INFINITY);
    if (!strcmp(name, "NAN")) return leaf(ps, PK__X_CONST, 0, NAN);
    for (int v = 0; v < PK__NVARS; v++)
        if (!strcmp(name, var_names[v])) {
            if (!(ps->vars & (1u << v)))
                return fail_at(ps, at, "variable not allowed in this expression");
            return leaf(ps, PK__X_VAR, v, 0);
        }
    int op = -1;
    if (!strcmp(name, "abs")) op = PK__X_FABS;
    for (int o = 0; o < PK__X_COUNT && op < 0; o++)
        if (ops[o].name && !strcmp(ops[o].name, name)) op = o;
    if (op < 0) return fail_at(ps, at, "unknown name");
    if (!accept(ps, "(")) return fail_at(ps, ps->p, "expected '(' after a function");
    int k[2] = {-1, -1};
    for (int j = 0; j < ops[op].arity; j++) {
        if (j && !accept(ps, ",")) return fail_at(ps, ps->p, "expected ','");
        if ((k[j] = nested(ps, at)) < 0) return -1;
    }
    if (!accept(ps, ")")) return fail_at(ps, ps->p, "expected ')'");
    return node(ps, op, k[0], k[1], -1, 0);
}

static int unary(parser *ps)
{
    skip(ps);
    const char *at = ps->p;
    int op = accept(ps, "-") ? PK__X_NEG : accept(ps, "!") ? PK__X_NOT : -1;
    if (op < 0 && !accept(ps, "+")) return primary(ps);
    if (enter(ps, at)) return -1;
    int k = unary(ps);
    ps->depth--;
    return op < 0 ? k : node(ps, op, k, -1, -1, 0); /* unary + adds no node */
}

/* One binary precedence level: operators toks[j] -> opcodes[j]. */
static int level(parser *ps, int (*next)(parser *), const char *const *toks,
                 const int *opcodes, int ntok)
{
    int k = next(ps);
    for (;;) {
        if (k < 0) return -1;
        int j = 0;
        while (j < ntok && !accept(ps, toks[j])) j++;
        if (j == ntok) return k;
        k = node(ps, opcodes[j], k, next(ps), -1, 0);
    }
}

#define LEVEL(name, next, ...)                                                  \
    static int name(parser *ps)                                                 \
    {                                                                           \
        static const struct { const char *t; int op; } L[] = {__VA_ARGS__};     \
        enum { N = sizeof L / sizeof L[0] };                                    \
        const char *toks[N];                                                    \
        int opc[N];                                                             \
        for (int j = 0; j < N; j++) toks[j] = L[j].t, opc[j] = L[j].op;         \
        return level(ps, next, toks, opc, N);                                   \
    }
LEVEL(mul, unary, {"*", PK__X_MUL}, {"/", PK__X_DIV}, {"%", PK__X_MOD})
LEVEL(add, mul, {"+", PK__X_ADD}, {"-", PK__X_SUB})
LEVEL(rel, add, {"<=", PK__X_LE}, {">=", PK__X_GE}, {"<", PK__X_LT}, {">", PK__X_GT})
LEVEL(eq, rel, {"==", PK__X_EQ}, {"!=", PK__X_NE})
LEVEL(land, eq, {"&&", PK__X_AND})
LEVEL(lor, land, {"||", PK__X_OR})

static int ternary(parser *ps)
{
    int c = lor(ps);
    skip(ps);
    const char *at = ps->p;
    if (c < 0 || !accept(ps, "?")) return c;
    if (enter(ps, at)) return -1; /* a chain a ? b : c ? ... nests */
    int t = ternary(ps);
    if (t >= 0 && !accept(ps, ":")) return fail_at(ps, ps->p, "expected ':'");
    int k = node(ps, PK__X_SELECT, c, t, ternary(ps), 0);
    ps->depth--;
    return k;
}

pk_status pk__expr_parse(pk_ctx *ctx, const char *what, const char *src,
                         unsigned vars, pk__expr *e)
{
    parser ps = {ctx, what, src, src, vars, 0, e, PK_OK};
    e->n = 0;
    /* C reads ++ and -- as increment and decrement (x--x is no expression
     * there, --x decrements): refused rather than read as - -x. Nothing
     * valid holds them: numbers take a sign only once, after e or p. */
    for (const char *c = src; c[0] && c[1]; c++)
        if ((c[0] == '-' || c[0] == '+') && c[1] == c[0]) {
            char why[64];
            snprintf(why, sizeof why, "'%c%c' (C's %s) is not an operator here", c[0], c[0],
                     c[0] == '-' ? "decrement" : "increment");
            return fail_at(&ps, c, why), ps.st;
        }
    e->root = ternary(&ps);
    skip(&ps);
    if (e->root >= 0 && *ps.p) fail_at(&ps, ps.p, "unexpected token");
    if (ps.st == PK_OK && e->root < 0) fail_at(&ps, ps.p, "syntax error");
    return ps.st;
}

int pk__expr_uses(const pk__expr *e, int var)
{
    for (int k = 0; k < e->n; k++)
        if (e->node[k].op == PK__X_VAR && e->node[k].var == var) return 1;
    return 0;
}

static int is_var(const pk__expr *e, int k, int v)
{
    return k >= 0 && e->node[k].op == PK__X_VAR && e->node[k].var == v;
}

int pk__expr_commutative(const pk__expr *e)
{
    const pk__xnode *r = &e->node[e->root];
    if (r->op != PK__X_ADD && r->op != PK__X_MUL && r->op != PK__X_FMIN &&
        r->op != PK__X_FMAX)
        return -1;
    if ((is_var(e, r->k[0], PK__V_A) && is_var(e, r->k[1], PK__V_B)) ||
        (is_var(e, r->k[0], PK__V_B) && is_var(e, r->k[1], PK__V_A)))
        return r->op;
    return -1;
}

/* ---- C emitter ------------------------------------------------------------- */

static int put(char *buf, size_t cap, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
#include <stdarg.h>
static int put(char *buf, size_t cap, size_t *len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(buf + *len, *len < cap ? cap - *len : 0, fmt, ap);
    va_end(ap);
    if (w < 0 || *len + (size_t)w >= cap) return -1;
    *len += (size_t)w;
    return 0;
}

static int emit(const pk__expr *e, int k, int f32, char *b, size_t cap, size_t *len)
{
    const pk__xnode *x = &e->node[k];
    const char *T = f32 ? "float" : "double";
    const xop_info *o = &ops[x->op];
#define E(j) emit(e, x->k[j], f32, b, cap, len)
#define P(...) put(b, cap, len, __VA_ARGS__)
    switch (x->op) {
    case PK__X_CONST:
        { /* by its bits, NAN and INFINITY too ("%a" follows LC_NUMERIC:
           * 0x1,8p+1 under de_DE) */
            unsigned long long bits;
            memcpy(&bits, &x->v, sizeof bits);
            return P("((%s)__longlong_as_double(0x%016llxLL))", T, bits);
        }
    case PK__X_VAR: return P("%s", var_names[x->var]);
    case PK__X_NOT: return P("((%s)(", T) || E(0) || P(" == 0))");
    case PK__X_ISNAN: return P("pk_isnan(") || E(0) || P(")");
    case PK__X_ISINF: return P("pk_isinf(") || E(0) || P(")");
    case PK__X_FMIN: return P("pk_fmin(") || E(0) || P(", ") || E(1) || P(")");
    case PK__X_FMAX: return P("pk_fmax(") || E(0) || P(", ") || E(1) || P(")");
    case PK__X_AND: case PK__X_OR:
        return P("((%s)((", T) || E(0) || P(" != 0) %s (", o->infix) || E(1) ||
               P(" != 0)))");
    case PK__X_LT: case PK__X_LE: case PK__X_GT: case PK__X_GE: case PK__X_EQ:
    case PK__X_NE:
        return P("((%s)(", T) || E(0) || P(" %s ", o->infix) || E(1) || P("))");
    /* these as the CPU interpreter computes them: helpers of the prelude */
    case PK__X_MIN:
        return P("pk_min(") || E(0) || P(", ") || E(1) || P(")");
    case PK__X_MAX:
        return P("pk_max(") || E(0) || P(", ") || E(1) || P(")");
    case PK__X_SELECT:
        return P("(") || E(0) || P(" != 0 ? ") || E(1) || P(" : ") || E(2) || P(")");
    default: break;
    }
    if (o->infix && o->arity == 1) return P("(%s", o->infix) || E(0) || P(")");
    if (o->infix) return P("(") || E(0) || P(" %s ", o->infix) || E(1) || P(")");
    if (P("%s(", f32 ? o->fn_f : o->fn_d) || E(0)) return -1;
    if (o->arity == 2 && (P(", ") || E(1))) return -1;
    return P(")");
#undef E
#undef P
}

int pk__expr_emit(const pk__expr *e, int f32, char *buf, size_t cap, size_t *len)
{
    return emit(e, e->root, f32, buf, cap, len);
}

/* ---- Bytecode ---------------------------------------------------------------- */

/* Node k into a slot; registers from depth upwards are free. */
static int gen(const pk__expr *e, int k, int depth, pk__vm *vm)
{
    const pk__xnode *x = &e->node[k];
    if (x->op == PK__X_VAR) return x->var;
    if (x->op == PK__X_CONST) {
        for (int c = 0; c < vm->nconst; c++) /* same bits: share the slot */
            if (!memcmp(&vm->cval[c], &x->v, sizeof x->v)) return -1 - c;
        vm->cval[vm->nconst] = x->v;
        return -1 - vm->nconst++;
    }
    int s[3] = {0, 0, 0}, used = 0;
    for (int j = 0; j < 3 && x->k[j] >= 0; j++) {
        s[j] = gen(e, x->k[j], depth + used, vm);
        if (s[j] >= 1000) used++; /* a register: keep it */
    }
    pk__vm_ins *in = &vm->ins[vm->nins++];
    in->op = x->op;
    int dst = 1000 + depth;
    if (depth + 1 > vm->nregs) vm->nregs = depth + 1;
    /* raw slots: variables as they are, constants -1-c, registers 1000+r;
     * renumbered by pk__vm_compile once nconst is known */
    in->dst = (short)dst;
    for (int j = 0; j < 3; j++) in->s[j] = (short)s[j];
    return dst;
}

void pk__vm_compile(const pk__expr *e, pk__vm *vm)
{
    memset(vm, 0, sizeof *vm);
    int r = gen(e, e->root, 0, vm);
    int reg0 = PK__NVARS + vm->nconst;
    for (int j = 0; j < vm->nins; j++) {
        pk__vm_ins *in = &vm->ins[j];
        in->dst = (short)(reg0 + in->dst - 1000);
        for (int q = 0; q < 3; q++) {
            int v = in->s[q];
            in->s[q] = (short)(v >= 1000 ? reg0 + v - 1000 : v < 0 ? PK__NVARS + (-1 - v) : v);
        }
    }
    vm->result = r >= 1000 ? reg0 + r - 1000 : r < 0 ? PK__NVARS + (-1 - r) : r;
}

/* ---- Scalar evaluation -------------------------------------------------- */

/* fmax/fmin as IEEE 754-2019 maximumNumber/minimumNumber (pk.h): a NaN
 * operand is ignored, two NaNs give the default NaN (+, quiet, payload 0:
 * NAN), -0 < +0; commutative and associative bit for bit. The same
 * operations as the CPU interpreter's selects (fmax_sel/fmin_sel in
 * src/cpu/udr_tmpl.h; pk_fmax/pk_fmin in src/cuda/udr_source.h): a NaN q
 * becomes -INFINITY (fmin: INFINITY); max(q, p) and max(p, q) differ only
 * when p == q, where the AND of their bits keeps +0 of +0 and -0 (fmin: the
 * OR, -0); a NaN p takes q, or NAN if q is NaN too. On f32 the result is one
 * of the operands or NAN, so rounding it to float is exact. */
static double bits_and_or(double p, double q, int use_or)
{
    uint64_t a, b;
    memcpy(&a, &p, sizeof a), memcpy(&b, &q, sizeof b);
    a = use_or ? a | b : a & b;
    memcpy(&p, &a, sizeof p);
    return p;
}

static double sel_fmax(double p, double q)
{
    double qs = q != q ? -INFINITY : q, qn = q != q ? NAN : q;
    double r = bits_and_or(qs > p ? qs : p, p > qs ? p : qs, 0);
    return p != p ? qn : r;
}

static double sel_fmin(double p, double q)
{
    double qs = q != q ? INFINITY : q, qn = q != q ? NAN : q;
    double r = bits_and_or(qs < p ? qs : p, p < qs ? p : qs, 1);
    return p != p ? qn : r;
}

static double eval_node(const pk__expr *e, int k, const double *vars, int f32)
{
    const pk__xnode *x = &e->node[k];
    if (x->op == PK__X_CONST) return f32 ? (double)(float)x->v : x->v;
    if (x->op == PK__X_VAR) return vars[x->var];
    int arity = ops[x->op].arity;
    double p = eval_node(e, x->k[0], vars, f32);
    double q = arity > 1 ? eval_node(e, x->k[1], vars, f32) : 0;
    double c = arity > 2 ? eval_node(e, x->k[2], vars, f32) : 0;
    double r = 0;
    switch ((enum pk__xop)x->op) {
    case PK__X_NEG: r = -p; break;
    case PK__X_NOT: r = p == 0; break;
    case PK__X_FABS: r = fabs(p); break;
    case PK__X_SQRT: r = sqrt(p); break;
    /* f32: the float functions, as the CPU interpreter calls them */
    case PK__X_EXP: r = f32 ? expf((float)p) : exp(p); break;
    case PK__X_LOG: r = f32 ? logf((float)p) : log(p); break;
    case PK__X_SIN: r = f32 ? sinf((float)p) : sin(p); break;
    case PK__X_COS: r = f32 ? cosf((float)p) : cos(p); break;
    case PK__X_FLOOR: r = floor(p); break;
    case PK__X_CEIL: r = ceil(p); break;
    case PK__X_ISNAN: r = p != p; break;
    case PK__X_ISINF: r = fabs(p) == INFINITY; break;
    case PK__X_ADD: r = p + q; break;
    case PK__X_SUB: r = p - q; break;
    case PK__X_MUL: r = p * q; break;
    case PK__X_DIV: r = p / q; break;
    case PK__X_MOD: r = fmod(p, q); break;
    case PK__X_LT: r = p < q; break;
    case PK__X_LE: r = p <= q; break;
    case PK__X_GT: r = p > q; break;
    case PK__X_GE: r = p >= q; break;
    case PK__X_EQ: r = p == q; break;
    case PK__X_NE: r = p != q; break;
    case PK__X_AND: r = p != 0 && q != 0; break;
    case PK__X_OR: r = p != 0 || q != 0; break;
    case PK__X_FMIN: r = sel_fmin(p, q); break;
    case PK__X_FMAX: r = sel_fmax(p, q); break;
    case PK__X_POW: r = f32 ? powf((float)p, (float)q) : pow(p, q); break;
    case PK__X_MIN: r = q < p ? q : p; break;
    case PK__X_MAX: r = p < q ? q : p; break;
    case PK__X_SELECT: r = p != 0 ? q : c; break;
    default: break;
    }
    return f32 ? (double)(float)r : r;
}

double pk__expr_eval(const pk__expr *e, const double vars[PK__NVARS], int f32)
{
    return eval_node(e, e->root, vars, f32);
}
