# Tests of the .npy reader and writer and of the file commands (pk reduce,
# dot, axpy, gemm, pack, bgemm, hamming, knn). Included from
# tests/CMakeLists.txt when the pk command is built.
set(PK_FILES_TESTS ${CMAKE_CURRENT_SOURCE_DIR}/files)
set(PK_NPY_SOURCES ${PROJECT_SOURCE_DIR}/tools/pk/npy_parse.c ${PROJECT_SOURCE_DIR}/tools/pk/npy_file.c)

# The reader and writer alone.
add_executable(test_npy ${PK_FILES_TESTS}/test_npy.c ${PK_NPY_SOURCES})
target_include_directories(test_npy PRIVATE ${CMAKE_CURRENT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/tools/pk)
target_link_libraries(test_npy PRIVATE pk_static m)
add_test(NAME test_npy COMMAND test_npy)
set_tests_properties(test_npy PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
# pk gemm --check's error measure and bound.
add_executable(test_gemm_check ${PK_FILES_TESTS}/test_gemm_check.c
               ${PROJECT_SOURCE_DIR}/tools/pk/gemm_check.c)
target_include_directories(test_gemm_check PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}
                           ${PROJECT_SOURCE_DIR}/tools/pk)
target_link_libraries(test_gemm_check PRIVATE pk_static m)
target_compile_options(test_gemm_check PRIVATE -ffp-contract=off)
add_test(NAME test_gemm_check COMMAND test_gemm_check)

# The file commands run as a user would, on files, their results checked
# against plain loops (tests/files/test_cli_*.c), on the CPU and, in a CUDA
# build, on the GPU (skipped, status 77, without a device).
set(PK_CLI_FILE_BACKENDS cpu)
if(PK_HAVE_CUDA)
  list(APPEND PK_CLI_FILE_BACKENDS cuda)
endif()
foreach(group reduce blas bits errors)
  add_executable(test_cli_${group} ${PK_FILES_TESTS}/test_cli_${group}.c ${PK_NPY_SOURCES})
  target_include_directories(test_cli_${group} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}
                             ${PROJECT_SOURCE_DIR}/tools/pk)
  target_link_libraries(test_cli_${group} PRIVATE pk_static m)
  target_compile_options(test_cli_${group} PRIVATE -ffp-contract=off)
  add_dependencies(test_cli_${group} pk_cli)
  foreach(backend ${PK_CLI_FILE_BACKENDS})
    add_test(NAME cli_files_${group}_${backend}
             COMMAND test_cli_${group} $<TARGET_FILE:pk_cli> ${backend})
    set_tests_properties(cli_files_${group}_${backend} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
  endforeach()
endforeach()

# Round trips with NumPy: files NumPy writes, pk's outputs checked by NumPy
# (skipped, status 77, where python3 cannot import numpy; CI installs it).
find_program(PK_PYTHON3 python3)
if(PK_PYTHON3)
  foreach(backend ${PK_CLI_FILE_BACKENDS})
    add_test(NAME npy_numpy_${backend}
             COMMAND ${PK_PYTHON3} ${PK_FILES_TESTS}/numpy_files.py $<TARGET_FILE:pk_cli> ${backend})
    set_tests_properties(npy_numpy_${backend} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
  endforeach()
endif()

# The command line checked without running it (pk_cli's PK_CLI_CHECK mode,
# which tests/fuzz/fuzz_cli.c fuzzes): statuses, and no file written.
add_executable(test_cli_check ${PK_FILES_TESTS}/test_cli_check.c)
target_link_libraries(test_cli_check PRIVATE pk_cli_lib)
set(pk_check_dir ${CMAKE_CURRENT_BINARY_DIR}/cli_check)
file(MAKE_DIRECTORY ${pk_check_dir})
add_test(NAME cli_check COMMAND test_cli_check ${pk_check_dir})
