/* The reducer object shared by the core and the backends (pk_reducer in
 * pk.h): the checked description, its parsed expressions and bytecode. */
#ifndef PK_REDUCER_H
#define PK_REDUCER_H

#include "expr.h"

enum { PK__R_MAP = 0, PK__R_COMBINE, PK__R_FINAL, PK__R_NEXPR };

struct pk_reducer {
    uint32_t magic;                 /* PK__MAGIC_REDUCER while alive       */
    pk_reducer_desc d;              /* strings point into text[]          */
    pk_backend backend;
    const pk__backend_ops *ops;
    int has_fn;                     /* CPU: a C function replaces an expr  */
    int commutative;                /* pk__expr_commutative of combine     */
    int uses_i;                     /* map reads i                         */
    pk__expr expr[PK__R_NEXPR];
    pk__vm vm[PK__R_NEXPR];
    void *impl;                     /* backend-private                     */
    pk_reducer_info info;
    char *text[PK__R_NEXPR];        /* owned copies of the expressions     */
    /* pk_dist_reducer_reduce's partial reducer (VALUE, no final): made on
     * first use, stored once (atomic compare-exchange), freed with this one. */
    struct pk_reducer *partial;
};

/* pk_reducer_reduce of x[0..n) seen as the elements ibase.. of a larger
 * array: the map's i and the ARG index count from ibase, the tree is that of
 * n elements (src/dist/reducer.c: a rank's shard). */
pk_status pk__reducer_reduce_at(pk_ctx *ctx, const pk_reducer *red, const void *x,
                                int64_t n, int64_t ibase, void *out);

#endif
