# The libFuzzer harnesses (Clang; the whole build is instrumented, see
# PK_BUILD_FUZZERS in the top CMakeLists.txt): the .npy reader, the reducer
# expression compiler and the pk command's argument parsing. ctest replays
# each committed corpus (tests/fuzz/corpus*); .ci/run fuzzes each for a
# bounded time.
set(PK_FUZZ_DIR ${CMAKE_CURRENT_SOURCE_DIR}/fuzz)
add_executable(fuzz_npy ${PK_FUZZ_DIR}/fuzz_npy.c ${PROJECT_SOURCE_DIR}/tools/pk/npy_parse.c)
target_include_directories(fuzz_npy PRIVATE ${PROJECT_SOURCE_DIR}/tools/pk
                           ${PROJECT_SOURCE_DIR}/include)
add_executable(fuzz_expr ${PK_FUZZ_DIR}/fuzz_expr.c)
target_link_libraries(fuzz_expr PRIVATE pk_static m)
add_executable(fuzz_cli ${PK_FUZZ_DIR}/fuzz_cli.c)
target_link_libraries(fuzz_cli PRIVATE pk_cli_lib)
foreach(name npy expr cli)
  target_link_options(fuzz_${name} PRIVATE -fsanitize=fuzzer)
endforeach()
add_test(NAME fuzz_npy_corpus COMMAND fuzz_npy -runs=0 ${PK_FUZZ_DIR}/corpus/npy)
add_test(NAME fuzz_expr_corpus COMMAND fuzz_expr -runs=0 ${PK_FUZZ_DIR}/corpus_expr)
add_test(NAME fuzz_cli_corpus COMMAND fuzz_cli -runs=0 -close_fd_mask=3 ${PK_FUZZ_DIR}/corpus_cli)
