# The GPU bench behind bench/gpu.h (target pk_bench_gpu), included from
# bench/CMakeLists.txt. With CUDA: bench/gpu_bench.cu, timing pk against CUB
# (always part of the toolkit) and cuBLAS (when found; only this target links
# it, never the library). Without CUDA: bench/gpu_stub.c.
if(PK_HAVE_CUDA)
  add_library(pk_bench_gpu STATIC ${CMAKE_CURRENT_LIST_DIR}/gpu_bench.cu
              ${CMAKE_CURRENT_LIST_DIR}/gpu_cub_float.cu ${CMAKE_CURRENT_LIST_DIR}/gpu_cub_int.cu
              ${CMAKE_CURRENT_LIST_DIR}/gpu_gemm.cu ${CMAKE_CURRENT_LIST_DIR}/gpu_bits.cu
              ${CMAKE_CURRENT_LIST_DIR}/gpu_custom.cu)
  target_include_directories(pk_bench_gpu PUBLIC ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(pk_bench_gpu PUBLIC pk_static CUDA::cudart_static)
  if(TARGET CUDA::cublas)
    target_link_libraries(pk_bench_gpu PUBLIC CUDA::cublas)
    target_compile_definitions(pk_bench_gpu PRIVATE PK_BENCH_HAVE_CUBLAS)
    message(STATUS "pk: GPU bench peers CUB and cuBLAS")
  else()
    message(STATUS "pk: GPU bench peer CUB (cuBLAS not found)")
  endif()
  target_compile_options(pk_bench_gpu PRIVATE
    $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings -Xcompiler=-Wall,-Wextra,-Werror>)
  set_target_properties(pk_bench_gpu PROPERTIES CUDA_RESOLVE_DEVICE_SYMBOLS ON
                                                POSITION_INDEPENDENT_CODE ON)
else()
  add_library(pk_bench_gpu STATIC ${CMAKE_CURRENT_LIST_DIR}/gpu_stub.c)
  target_include_directories(pk_bench_gpu PUBLIC ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(pk_bench_gpu PUBLIC pk_static)
endif()
