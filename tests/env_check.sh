#!/usr/bin/env bash
# Every environment variable the library reads is a row of src/core/env.c's
# table (issue 52: one table, shown by `pk info`): no getenv("PK_...") in
# src/ outside env.c, and every PK__ENV_ id used has its row.
set -euo pipefail
src=${1:?usage: env_check.sh SOURCE_DIR}/src
bad=$(grep -rn 'getenv("PK_' "$src" --include='*.c' --include='*.h' --include='*.cu' \
    --include='*.cuh' | grep -v '^'"$src"'/core/env.c:' || true)
if [ -n "$bad" ]; then
    echo "env_check: PK_ variables read outside src/core/env.c (add a row, use pk__env):"
    echo "$bad"
    exit 1
fi
for id in $(grep -o 'PK__ENV_[A-Z0-9_]*' "$src/core/env.h" | grep -v PK__ENV_COUNT | sort -u); do
    grep -q "\[$id\]" "$src/core/env.c" || { echo "env_check: $id has no row in env.c"; exit 1; }
done
echo "env_check: every PK_ variable the library reads is in src/core/env.c"
