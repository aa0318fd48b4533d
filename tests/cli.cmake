# Tests of the pk command (tools/pk). Included from tests/CMakeLists.txt.
# They check behaviour (exit codes, output shape, verified results), never
# timings: the bench's figures belong in docs/BENCHMARKS.md.
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
set(i 0)
foreach(args IN LISTS PK_CLI_BAD_ARGS)
  math(EXPR i "${i} + 1")
  add_test(NAME cli_bad_arg_${i} COMMAND sh -c
    "err=$(\"$1\" ${args} 2>&1 >/dev/null); rc=$?; echo \"$err\";
     [ $rc -eq 2 ] && [ $(printf '%s\\n' \"$err\" | wc -l) -eq 1 ]"
    sh ${PK_CLI})
endforeach()

# Without CUDA, --backend cuda is a clear failure (status 1), not a crash.
if(NOT PK_HAVE_CUDA)
  add_test(NAME cli_bench_no_device COMMAND sh -c
    "\"$1\" bench --quick --backend cuda; [ $? -eq 1 ]" sh ${PK_CLI})
endif()

find_program(PK_PYTHON3 python3)
if(PK_PYTHON3)
  # One JSON document with the documented keys, every result verified.
  set(PK_CLI_JSON_CHECK [=[
import json, sys
d = json.load(sys.stdin)
keys = {"kernel", "backend", "dtype", "n", "time_ms", "gbps", "ceiling_pct",
        "peer", "peer_time_ms", "ratio", "verified"}
assert isinstance(d["device"], dict) and d["results"], "empty document"
for r in d["results"]:
    assert keys <= r.keys(), "missing keys: %s" % (keys - r.keys())
    assert r["verified"] is not False, "not verified: %s" % r
]=])
  add_test(NAME cli_bench_quick_json COMMAND sh -c
    "out=$(\"$1\" bench --quick --json) || exit 1
     printf '%s' \"$out\" | \"$2\" -m json.tool >/dev/null || exit 1
     printf '%s' \"$out\" | \"$2\" -c \"$3\""
    sh ${PK_CLI} ${PK_PYTHON3} "${PK_CLI_JSON_CHECK}")
  add_test(NAME cli_info_json COMMAND sh -c
    "out=$(\"$1\" info --json) || exit 1
     printf '%s' \"$out\" | \"$2\" -m json.tool >/dev/null"
    sh ${PK_CLI} ${PK_PYTHON3})
endif()
set_tests_properties(cli_bench_quick_cpu PROPERTIES TIMEOUT 300)
