# Tests of `pk bench`'s outputs (--csv, --markdown, --json, streamed),
# --sizes, --device, --max-noise, --list, `pk bench compare` and the roofline
# script (tools/roofline/pk-roofline). Included from cli.cmake (PK_CLI,
# pk_cli_expect and PK_PYTHON3 come from there). Behaviour only, never
# timings: --max-noise 1000 keeps the rows from being measured again.
set(PK_BENCH_DATA ${CMAKE_CURRENT_LIST_DIR}/data/bench)
set(PK_BENCH_OUT ${CMAKE_CURRENT_BINARY_DIR}/bench_cli)
file(MAKE_DIRECTORY ${PK_BENCH_OUT})

# ---- Usage errors: one line naming the problem, exit status 2 -------------
foreach(case IN ITEMS
    "sizes_zero|--sizes: .0.: sizes go from 1|bench --sizes 0"
    "sizes_big|--sizes: .2.41.: sizes go from 1 to 2.40|bench --sizes 2^41"
    "sizes_word|--sizes: .abc. is not a size|bench --sizes abc"
    "sizes_down|ranges upwards|bench --sizes 10:5"
    "sizes_step|the step must grow|bench --sizes 1:100:x1"
    "sizes_step_star|the step must grow|bench --sizes 1:1e6:*1"
    "sizes_step_zero|.1:100:.0.: the step must grow|bench --sizes 1:100:+0"
    "sizes_pow_huge|--sizes: .2.70.: sizes go from 1 to 2.40|bench --sizes 2^70"
    "sizes_pow_digits|--sizes: .2.99999999999999999999.: sizes go from 1 to 2.40|bench --sizes 2^99999999999999999999"
    "sizes_exp_huge|--sizes: .1e30.: sizes go from 1 to 2.40|bench --sizes 1e30"
    "sizes_digits|--sizes: .99999999999999999999.: sizes go from 1 to 2.40|bench --sizes 99999999999999999999"
    "sizes_range_huge|--sizes: .1e18:1e19.: sizes go from 1 to 2.40|bench --sizes 1e18:1e19"
    "sizes_negative|--sizes: .-5. is not a size|bench --sizes=-5"
    "sizes_step_huge|.1:8:x1e30.: the step must grow the size .* within 2.40|bench --sizes 1:8:x1e30"
    "sizes_step_plus_huge|.1:10:.2.70.: the step .* within 2.40|bench --sizes 1:10:+2^70"
    "sizes_step_kind|is not a size|bench --sizes 1:8:y2"
    "sizes_empty_item|.. is not a size|bench --sizes 1,,2"
    "sizes_empty|.. is not a size|bench --sizes="
    "sizes_many|more than 256 sizes|bench --sizes 1:2^40:+1"
    "sizes_axis|reduce_axis has shapes of its own|bench reduce_axis --sizes 1000"
    "sizes_topk|hamming_topk has shapes of its own|bench hamming_topk --sizes 1000"
    "device_word|--device: expected a CUDA device index|bench --device x"
    "device_negative|--device: expected a CUDA device index|bench --device -1"
    "device_cpu|--device 0: the CPU backend has no devices|bench --device 0 --backend cpu"
    "max_noise_word|--max-noise: expected a percent|bench --max-noise x"
    "max_noise_negative|--max-noise: expected a percent|bench --max-noise -5"
    "all_quick|--all and --quick: choose one|bench --all --quick"
    "two_stdout|only one output can go to stdout|bench --csv - --json -"
    "format_twice|--csv given twice|bench --csv a.csv --csv b.csv"
    "same_file|--json same.csv: --csv writes that file already|bench --csv same.csv --json same.csv"
    "empty_name|--csv: empty file name|bench --csv="
    "compare_none|compare: needs two files|bench compare"
    "compare_one|compare: needs two files|bench compare a.json"
    "compare_three|compare: takes two files|bench compare a b c"
    "compare_threshold|--threshold: expected a percent|bench compare a b --threshold x"
    "compare_option|compare: unknown option|bench compare a b --frob")
  string(REPLACE "|" ";" case "${case}")
  list(GET case 0 name)
  list(GET case 1 regex)
  list(GET case 2 args)
  pk_cli_expect(cli_bench_bad_${name} 2 "^pk bench.*${regex}" "" "${args}")
endforeach()
# Files that are not a pk bench run: exit status 2, the file and the reason.
pk_cli_expect(cli_bench_compare_missing 2 "nonexistent.json: No such file" ""
  "bench compare ${PK_BENCH_DATA}/nonexistent.json ${PK_BENCH_DATA}/compare_base.json")
pk_cli_expect(cli_bench_compare_not_json 2 "cli.cmake: not JSON .line 1" ""
  "bench compare ${CMAKE_CURRENT_LIST_DIR}/cli.cmake ${PK_BENCH_DATA}/compare_base.json")
pk_cli_expect(cli_bench_compare_not_bench 2 "info_cpu.json: not a pk bench JSON document" ""
  "bench compare ${PK_BENCH_DATA}/compare_base.json ${PK_BENCH_DATA}/info_cpu.json")
# An output that cannot be written: exit status 1 before anything is run.
pk_cli_expect(cli_bench_output_unwritable 1
  "^pk bench: --csv /nonexistent-dir/x.csv: No such file or directory$" ""
  "bench sum --sizes 1000 --backend cpu --csv /nonexistent-dir/x.csv")
if(NOT PK_HAVE_CUDA)
  # --device means CUDA; without it, the failure names --device (status 1).
  pk_cli_expect(cli_bench_device_no_cuda 1 "^pk bench: --device 0: " "" "bench --device 0")
endif()

# ---- --help and pk info's CUDA section ------------------------------------
# The axpy byte count sits under GB/s; the CUDA-only kernels say so.
add_test(NAME cli_bench_help_columns COMMAND sh -c
  "h=$(\"$1\" bench --help) || exit 1
   printf '%s\\n' \"$h\" | grep -A1 '^  GB/s ' | grep -q '(axpy f32: 12 bytes' &&
   printf '%s\\n' \"$h\" | grep -Eq '^  gemm_tf32 .*[[]CUDA only[]]$' &&
   printf '%s\\n' \"$h\" | grep -Eq '^  gemm_fp32_accurate .*[[]CUDA only[]]$' &&
   printf '%s\\n' \"$h\" | grep -q -- '--all  ' &&
   \"$1\" bench compare --help | grep -q '^usage: pk bench compare'" sh ${PK_CLI})
# One CUDA section: device blocks or one "CUDA: why not" line, no bare title.
add_test(NAME cli_info_cuda_section COMMAND sh -c
  "out=$(\"$1\" info --no-measure) || exit 1
   printf '%s\\n' \"$out\" | grep -qx 'CUDA' && exit 1
   printf '%s\\n' \"$out\" | grep -Eq '^CUDA( device [0-9]+:|: )'" sh ${PK_CLI})

# ---- Which cases: the headline set, --all, --quick, --sizes ---------------
function(pk_bench_list name expect args)
  add_test(NAME cli_bench_list_${name} COMMAND sh -c
    "out=$(\"$1\" ${args}) || exit 1; printf '%s\\n' \"$out\"
     [ \"$(printf '%s\\n' \"$out\" | tr '\\n' ' ')\" = '${expect} ' ]" sh ${PK_CLI})
endfunction()
pk_bench_list(headline_cpu "sum/f32/n=67108864 prod/f32/n=67108864 min/f32/n=67108864 max/f32/n=67108864 argmin/f32/n=67108864 argmax/f32/n=67108864 dot/f32/n=67108864 axpy/f32/n=67108864 reduce_axis/f32/8192x8192/axis=0 reduce_axis/f32/8192x8192/axis=1 gemm/f32/m=2048,n=2048,k=2048 bgemm/b1/m=1024,n=1024,k=1024 hamming_topk/b1/q=100,n=100000,k=256,topk=10 custom/f32/sumsq/n=67108864"
  "bench --list --backend cpu")
pk_bench_list(sizes_list "sum/f32/n=1000 sum/f32/n=4096 sum/f32/n=10000"
  "bench sum --list --backend cpu --sizes 1000,2^12,1e4")
pk_bench_list(sizes_range "dot/f32/n=1024 dot/f32/n=4096 dot/f32/n=16384 dot/f64/n=1024 dot/f64/n=4096 dot/f64/n=16384"
  "bench dot --list --backend cpu --sizes 2^10:2^14:x4 --dtype f32,f64")
pk_bench_list(sizes_step "axpy/f32/n=1000 axpy/f32/n=2000 axpy/f32/n=3000"
  "bench axpy --list --backend cpu --sizes 1000:3000:+1000")
# A step whose next product passes 2^40 ends the range (no overflow).
pk_bench_list(sizes_huge_step "sum/f32/n=1 sum/f32/n=549755813888"
  "bench sum --list --backend cpu --sizes 1:2^40:x2^39")
pk_bench_list(sizes_repeat "max/f32/n=8" "bench max --list --backend cpu --sizes 8,2^3,8:8")
pk_bench_list(sizes_gemm "gemm/f32/m=64,n=64,k=64 bgemm/b1/m=64,n=64,k=64 custom/f32/sumsq/n=64 custom/f32/sumsq64/n=64 custom/f32/linf/n=64 custom/f32/argmaxabs/n=64 custom/f32/lastvalid/n=64"
  "bench gemm bgemm custom --list --backend cpu --sizes 64")
pk_bench_list(sizes_default "sum/f32/n=99 prod/f32/n=99 min/f32/n=99 max/f32/n=99 argmin/f32/n=99 argmax/f32/n=99 dot/f32/n=99 axpy/f32/n=99"
  "bench --list --backend cpu --sizes 99")
add_test(NAME cli_bench_list_sets COMMAND sh -c
  "[ $(\"$1\" bench --list --backend cpu --all | wc -l) -eq 99 ] &&
   [ $(\"$1\" bench --list --backend cpu --quick | wc -l) -eq 45 ] &&
   [ $(\"$1\" bench sum --list --backend cpu | wc -l) -eq 9 ]" sh ${PK_CLI})

# ---- Running: the formats, the streaming, the flags -----------------------
# Every output is written, first a failure to start leaves no file behind
# (and an existing one as it was).
add_test(NAME cli_bench_output_early_failure COMMAND sh -c
  "d=$2/early; rm -rf $d; mkdir -p $d; echo keep > $d/old.csv
   env PK_BACKEND= PK_CPU_ISA=bogus \"$1\" bench sum --backend cpu --json $d/new.json --csv $d/old.csv
   [ $? -eq 2 ] && [ ! -e $d/new.json ] && [ \"$(cat $d/old.csv)\" = keep ]"
  sh ${PK_CLI} ${PK_BENCH_OUT})

if(PK_PYTHON3)
  # The three files of one run agree; numbers exact; the table has its legend.
  add_test(NAME cli_bench_outputs COMMAND sh -c
    "d=$3/outputs; rm -rf $d; mkdir -p $d
     \"$1\" bench sum dot gemm --sizes 300,1000 --reps 3 --backend cpu --max-noise 1000 \
       --csv $d/o.csv --markdown $d/o.md --json $d/o.json >$d/table.txt || exit 1
     grep -q 'ratio: peer time / pk time (above 1: pk is faster)' $d/table.txt || exit 1
     \"$2\" $4 $d \"$(\"$1\" --version | head -1)\""
    sh ${PK_CLI} ${PK_PYTHON3} ${PK_BENCH_OUT} ${CMAKE_CURRENT_LIST_DIR}/bench_outputs_check.py)
  # '-' (or no value) is stdout, and then stdout holds that format alone.
  add_test(NAME cli_bench_stdout_formats COMMAND sh -c
    "\"$1\" bench sum --sizes 1000 --reps 3 --backend cpu --json | \"$2\" -c '
import json, sys; d = json.load(sys.stdin); assert d[\"rows\"][0][\"n\"] == 1000' &&
     \"$1\" bench sum --sizes 1000 --reps 3 --backend cpu --json - --markdown $3/stdout.md |
       \"$2\" -c 'import json, sys; json.load(sys.stdin)' &&
     \"$1\" bench sum --sizes 1000 --reps 3 --backend cpu --csv | \"$2\" -c '
import csv, sys; t = list(csv.reader(sys.stdin)); assert t[0][0] == \"id\" and len(t) == 2, t'"
    sh ${PK_CLI} ${PK_PYTHON3} ${PK_BENCH_OUT})
  # --sizes runs: the sizes asked, exact, every result verified.
  add_test(NAME cli_bench_sizes_run COMMAND sh -c
    "\"$1\" bench sum gemm custom --sizes 100,1000 --reps 2 --backend cpu --max-noise 1000 --json |
     \"$2\" -c 'import json, sys
rows = json.load(sys.stdin)[\"rows\"]
assert [r[\"n\"] for r in rows if r[\"kernel\"] == \"sum\"] == [100, 1000], rows
assert [(r[\"m\"], r[\"n\"], r[\"k\"]) for r in rows if r[\"kernel\"] == \"gemm\"] == [(100,) * 3, (1000,) * 3]
assert len([r for r in rows if r[\"kernel\"] == \"custom\"]) == 10
assert all(r[\"verified\"] for r in rows), [r for r in rows if not r[\"verified\"]]'"
    sh ${PK_CLI} ${PK_PYTHON3})
  # --max-noise 0: every timed row is measured again, then flagged; the
  # table shows ? for its figures. --quick measures once.
  add_test(NAME cli_bench_unreliable COMMAND sh -c
    "d=$3/unreliable; rm -rf $d; mkdir -p $d
     \"$1\" bench sum --sizes 1000,2000 --reps 5 --backend cpu --max-noise 0 --json $d/u.json >$d/t.txt || exit 1
     grep -c 'UNRELIABLE: ' $d/t.txt | grep -qx 2 || exit 1
     \"$1\" bench sum --quick --reps 5 --backend cpu --max-noise 0 --json $d/q.json >/dev/null || exit 1
     \"$2\" -c 'import json, sys
for path, tries in ((sys.argv[1], (2, 3)), (sys.argv[2], (1,))):
    for r in json.load(open(path))[\"rows\"]:
        assert r[\"reliable\"] is False and r[\"unreliable_reason\"], r
        assert r[\"attempts\"] in tries, (path, r[\"attempts\"])' $d/u.json $d/q.json"
    sh ${PK_CLI} ${PK_PYTHON3} ${PK_BENCH_OUT})
  # Rows are written as they are measured: an interrupted run keeps them.
  add_test(NAME cli_bench_stream COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/bench_stream.sh
    ${PK_CLI} ${PK_PYTHON3})
  set_tests_properties(cli_bench_stream PROPERTIES TIMEOUT 600)
endif()

# ---- pk bench compare on crafted runs ---------------------------------------
# compare_base.json -> compare_new.json holds one row of each verdict.
add_test(NAME cli_bench_compare_verdicts COMMAND sh -c
  "out=$(\"$1\" bench compare $2/compare_base.json $2/compare_new.json); rc=$?
   printf '%s\\n' \"$out\"; [ $rc -eq 1 ] || exit 1
   for v in 'sum/f32/n=1000 .* 1.25x .* FAST' 'dot/f32/n=1000 .* SLOW' 'axpy/f32/n=1000 .* SAME' \\
            'min/f32/n=1000 .* [+]-20% .* SAME' 'max/f32/n=1000 .* NOISY' 'argmax/f32/n=1000 .* FAILED' \\
            'prod/f32/n=1000 .* -' '^7 rows compared: 1 FAST, 1 SLOW, 2 SAME, 1 NOISY, 1 FAILED, 1 not timed; 1 only in .*, 1 only in'; do
     printf '%s\\n' \"$out\" | grep -Eq \"$v\" || { echo \"missing: $v\"; exit 1; }
   done" sh ${PK_CLI} ${PK_BENCH_DATA})
# The same run twice: SAME throughout, exit status 0; a larger threshold
# turns the slower row SAME (the failed row still fails).
add_test(NAME cli_bench_compare_same COMMAND sh -c
  "\"$1\" bench compare $2/compare_base.json $2/compare_base.json | grep -q '0 FAST, 0 SLOW, 7 SAME' &&
   out=$(\"$1\" bench compare --threshold 30 $2/compare_base.json $2/compare_new.json)
   [ $? -eq 1 ] && printf '%s\\n' \"$out\" | grep -Eq 'dot/f32/n=1000 .* SAME$'"
  sh ${PK_CLI} ${PK_BENCH_DATA})
# Different devices, schemas and an interrupted run are warned about.
add_test(NAME cli_bench_compare_warnings COMMAND sh -c
  "err=$(\"$1\" bench compare $2/compare_base.json $2/compare_other_device.json 2>&1 >/dev/null)
   [ $? -eq 0 ] && printf '%s\\n' \"$err\" | grep -q 'warning: the devices differ (backend: cpu, cuda)' || exit 1
   out=$(\"$1\" bench compare $2/compare_schema2.json $2/compare_truncated.json 2>$3/warn.txt)
   [ $? -eq 0 ] && grep -q 'schema versions differ' $3/warn.txt &&
   grep -q 'compare_truncated.json is incomplete' $3/warn.txt &&
   printf '%s\\n' \"$out\" | grep -q '^3 rows compared: 0 FAST, 0 SLOW, 3 SAME'"
  sh ${PK_CLI} ${PK_BENCH_DATA} ${PK_BENCH_OUT})

# ---- The roofline picture (needs python3 and matplotlib; else skipped) ------
add_test(NAME roofline COMMAND sh -c
  "command -v python3 >/dev/null || { echo 'no python3: skipped'; exit 77; }
   python3 \"$1\" \"$2\" \"$3\" \"$4\""
  sh ${CMAKE_CURRENT_LIST_DIR}/roofline_check.py ${PROJECT_SOURCE_DIR}/tools/roofline/pk-roofline
  ${PK_BENCH_DATA} ${PK_BENCH_OUT}/roofline)
set_tests_properties(roofline PROPERTIES SKIP_RETURN_CODE 77)
