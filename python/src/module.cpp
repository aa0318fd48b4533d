// pk._pk: the compiled half of the pk Python package (pk/__init__.py
// re-exports it and registers its hooks).
#include "pk_py.h"

NB_MODULE(_pk, m) {
    m.doc() = "pk's compiled bindings; use the pk package.";
    pkpy::bind_reduce(m);
    pkpy::bind_reducer(m);
    pkpy::bind_blas(m);
    pkpy::bind_bits(m);
    pkpy::bind_info(m);
}
