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
