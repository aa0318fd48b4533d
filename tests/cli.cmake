# Tests of the pk command (tools/pk). Included from tests/CMakeLists.txt.
# They check behaviour (exit codes, output shape, verified results), never
# timings: the bench's figures belong in docs/PERFORMANCE.md.
set(PK_CLI $<TARGET_FILE:pk_cli>)

add_test(NAME cli_help COMMAND sh -c
  "\"$1\" --help && \"$1\" info --help && \"$1\" bench --help && \"$1\" --version"
  sh ${PK_CLI})
add_test(NAME cli_info COMMAND ${PK_CLI} info)
add_test(NAME cli_bench_quick_cpu COMMAND ${PK_CLI} bench --quick --backend cpu)

# A bad argument: a one-line error on stderr and exit status 2.
set(PK_CLI_BAD_ARGS
  "frob" "--frob" "info --frob" "info extra" "bench --frob" "bench frob"
  "bench --backend gpu" "bench --backend" "bench --reps 0" "bench --reps x"
  "bench --dtype f16" "bench --seed -1")
# A --dtype list is parsed whole, however long: an unknown item anywhere is
# a usage error (it used to be cut at 127 characters and the rest dropped).
string(REPEAT "f32," 32 PK_CLI_LONG_DTYPES)
# "dist" selects `pk bench dist` only as a positional argument, never as an
# option's value; dist checks its arguments (and --help) even without MPI.
# (Each runs one quick kernel so that a regression fails in seconds.)
list(APPEND PK_CLI_BAD_ARGS
  "bench sum --quick --reps 1 --dtype ${PK_CLI_LONG_DTYPES}bogus"
  "bench sum --quick --reps 1 --dtype f32,,f64" "bench sum --quick --reps 1 --dtype f32,"
  "bench sum dist" "bench --json dist" "bench dist dist" "bench dist --bogus"
  "bench dist --backend" "bench dist --backend gpu" "bench dist --seed 1")

set(i 0)
foreach(args IN LISTS PK_CLI_BAD_ARGS)
  math(EXPR i "${i} + 1")
  add_test(NAME cli_bad_arg_${i} COMMAND sh -c
    "err=$(\"$1\" ${args} 2>&1 >/dev/null); rc=$?; echo \"$err\";
     [ $rc -eq 2 ] && [ $(printf '%s\\n' \"$err\" | wc -l) -eq 1 ]"
    sh ${PK_CLI})
endforeach()

# pk_cli_expect(NAME RC REGEX ENV ARGS): `env ENV pk ARGS` exits with RC and
# prints one line on stderr that matches REGEX (grep -E; no single quotes).
# ENV clears PK_BACKEND first, so that the caller's environment cannot
# change the outcome.
function(pk_cli_expect name rc regex env args)
  add_test(NAME ${name} COMMAND sh -c
    "err=$(env PK_BACKEND= ${env} \"$1\" ${args} 2>&1 >/dev/null); rc=$?; echo \"$err\";
     [ $rc -eq ${rc} ] && [ $(printf '%s\\n' \"$err\" | wc -l) -eq 1 ] &&
     printf '%s\\n' \"$err\" | grep -Eq -- '${regex}'"
    sh ${PK_CLI})
endfunction()

# An option's value "dist" gets that option's own error, not dist's.
foreach(opt IN ITEMS seed dtype backend reps)
  pk_cli_expect(cli_bench_${opt}_dist 2 "^pk bench: --${opt}: .*got .dist." ""
    "bench --${opt} dist")
endforeach()

# No command is a usage error like any other: one line, not the whole usage.
pk_cli_expect(cli_no_command 2 "^pk: missing command" "" "")

# `pk bench dist --help` prints its usage and succeeds, with or without MPI.
add_test(NAME cli_bench_dist_help COMMAND sh -c
  "\"$1\" bench dist --help | grep -q '^usage: mpirun -np N pk bench dist'" sh ${PK_CLI})
if(NOT PK_HAVE_MPI)
  # Only a valid run reports the missing MPI (status 1).
  pk_cli_expect(cli_bench_dist_no_mpi 1 "^pk bench dist: .*no MPI" "" "bench dist --quick")
endif()

# Without --backend (or with auto), PK_BACKEND chooses as in pk_ctx_create's
# AUTO; a bad value is a usage error naming it, for bench and dist alike.
pk_cli_expect(cli_bench_env_backend_bad 2 "^pk bench: PK_BACKEND=bogus: "
  "PK_BACKEND=bogus" "bench --quick sum")
pk_cli_expect(cli_bench_env_backend_bad_auto 2 "^pk bench: PK_BACKEND=bogus: "
  "PK_BACKEND=bogus" "bench --quick sum --backend auto")
pk_cli_expect(cli_bench_dist_env_backend_bad 2 "^pk bench dist: PK_BACKEND=bogus: "
  "PK_BACKEND=bogus" "bench dist --quick")
# A failure to open the backend names where the choice came from; a bad
# PK_CPU_ISA value is a usage error (2), as a bad PK_BACKEND is.
pk_cli_expect(cli_bench_env_backend_isa 2 "^pk bench: PK_BACKEND=cpu: PK_CPU_ISA=bogus"
  "PK_BACKEND=cpu PK_CPU_ISA=bogus" "bench --quick sum")
pk_cli_expect(cli_info_isa_bad 2 "^pk info: PK_CPU_ISA=bogus" "PK_CPU_ISA=bogus" "info")
pk_cli_expect(cli_bench_backend_isa 2 "^pk bench: --backend cpu: PK_CPU_ISA=bogus"
  "PK_BACKEND=cuda PK_CPU_ISA=bogus" "bench --quick sum --backend cpu")

# Without CUDA, --backend cuda is a clear failure (status 1), not a crash.
if(NOT PK_HAVE_CUDA)
  add_test(NAME cli_bench_no_device COMMAND sh -c
    "\"$1\" bench --quick --backend cuda; [ $? -eq 1 ]" sh ${PK_CLI})
  pk_cli_expect(cli_bench_env_backend_no_device 1 "^pk bench: PK_BACKEND=cuda: "
    "PK_BACKEND=cuda" "bench --quick sum --reps 1")
  pk_cli_expect(cli_bench_auto_isa 2 "^pk bench: auto backend \\(cpu\\): PK_CPU_ISA=bogus"
    "PK_CPU_ISA=bogus" "bench --quick sum")
endif()

find_program(PK_PYTHON3 python3)
if(PK_PYTHON3)
  # One JSON document with the documented keys, every result verified.
  set(PK_CLI_JSON_CHECK [=[
import json, sys
d = json.load(sys.stdin)
keys = {"id", "kernel", "backend", "dtype", "n", "time_s", "gbps", "ceiling_pct",
        "peer", "peer_time_s", "ratio", "verified"}
assert d["schema"] == "pk-bench" and d["complete"] is True, "not a whole pk-bench document"
assert isinstance(d["device"], dict) and d["rows"], "empty document"
for r in d["rows"]:
    assert keys <= r.keys(), "missing keys: %s" % (keys - r.keys())
    assert r["verified"] is not False, "not verified: %s" % r
]=])
  add_test(NAME cli_bench_quick_json COMMAND sh -c
    "out=$(\"$1\" bench --quick --json) || exit 1
     printf '%s' \"$out\" | \"$2\" -m json.tool >/dev/null || exit 1
     printf '%s' \"$out\" | \"$2\" -c \"$3\""
    sh ${PK_CLI} ${PK_PYTHON3} "${PK_CLI_JSON_CHECK}")
  # A --dtype list past the old 127-character cut keeps its last item.
  add_test(NAME cli_bench_long_dtype COMMAND sh -c
    "\"$1\" bench sum --quick --reps 1 --backend cpu --json --dtype ${PK_CLI_LONG_DTYPES}f64 |
     \"$2\" -c 'import json, sys
assert {r[\"dtype\"] for r in json.load(sys.stdin)[\"rows\"]} == {\"f32\", \"f64\"}'"
    sh ${PK_CLI} ${PK_PYTHON3})
  add_test(NAME cli_info_json COMMAND sh -c
    "out=$(\"$1\" info --json) || exit 1
     printf '%s' \"$out\" | \"$2\" -m json.tool >/dev/null"
    sh ${PK_CLI} ${PK_PYTHON3})
endif()
set_tests_properties(cli_bench_quick_cpu PROPERTIES TIMEOUT 300)

# pk bench's outputs, --sizes, --device, compare and the roofline script.
include(${CMAKE_CURRENT_LIST_DIR}/bench_cli.cmake)
