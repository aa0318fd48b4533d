# The CUDA tests (tests/test_cuda_*.c) allocate device memory through the
# CUDA runtime's C API when the build has CUDA: PK_TEST_CUDA turns that on.
# Without this file's inclusion they still build and run their host-pointer
# cases. Included from tests/CMakeLists.txt after the test_*.c loop.
if(PK_HAVE_CUDA)
  file(GLOB PK_CUDA_TEST_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/test_cuda_*.c)
  foreach(src ${PK_CUDA_TEST_SOURCES})
    get_filename_component(name ${src} NAME_WE)
    if(TARGET ${name})
      target_compile_definitions(${name} PRIVATE PK_TEST_CUDA)
      target_link_libraries(${name} PRIVATE CUDA::cudart_static)
      set_tests_properties(${name} PROPERTIES LABELS cuda)
    endif()
  endforeach()
  # test_leaks: its CPU part runs everywhere, its CUDA part (device
  # pointers too) where a GPU is.
  if(TARGET test_leaks)
    target_compile_definitions(test_leaks PRIVATE PK_TEST_CUDA)
    target_link_libraries(test_leaks PRIVATE CUDA::cudart_static)
  endif()
  # test_cuda_context, test_leaks and test_cuda_oom (a PK_FAULT_INJECTION
  # build's) check that the device's free memory does not move: other tests
  # allocating on the GPU at the same time (ctest -jN, as the README's test
  # command runs) would fail them, so they run alone; so does
  # test_cuda_threads (8 contexts busy at once).
  foreach(name test_cuda_context test_cuda_oom test_leaks test_cuda_threads)
    if(TEST ${name})
      set_tests_properties(${name} PROPERTIES RUN_SERIAL ON)
    endif()
  endforeach()
  # test_cuda_edges allocates 8.6 GB of device memory (big_stride) and
  # test_cuda_hazards races a DMA (pinned_reuse): they run alone.
  foreach(name test_cuda_edges test_cuda_hazards)
    if(TEST ${name})
      set_tests_properties(${name} PROPERTIES RUN_SERIAL ON)
    endif()
  endforeach()
  # The runtime's launch and pointer-query path (src/cuda/launch.cuh: the
  # fallback when the driver's entry points are missing or refuse) on the
  # tests of the calls that use it.
  foreach(name test_cuda_reduce test_cuda_blas1 test_cuda_context)
    if(TARGET ${name})
      add_test(NAME ${name}_runtime_launch COMMAND ${name})
      set_tests_properties(${name}_runtime_launch PROPERTIES LABELS cuda
                           ENVIRONMENT "PK_CUDA_LAUNCH=runtime;PK_TEST_QUICK=1"
                           SKIP_RETURN_CODE 77)
    endif()
  endforeach()
  # Long codes on the mma.sync kernel of 256-bit slabs, the path of GPUs
  # with less than 192 KiB of shared memory a block (A100, RTX): on a
  # Hopper it runs only when forced.
  if(TARGET test_cuda_bits)
    add_test(NAME test_cuda_bits_slab256 COMMAND test_cuda_bits)
    set_tests_properties(test_cuda_bits_slab256 PROPERTIES LABELS cuda
                         ENVIRONMENT "PK_BITS_WGMMA=0;PK_BITS_SLAB=256;PK_TEST_QUICK=1"
                         SKIP_RETURN_CODE 77)
  endif()
  # The FP32 SIMT GEMM with every k-contiguous operand copied row-contiguous
  # first (src/cuda/gemm_simt.cu; by itself it does so only on large shapes,
  # and the copy-engine kernel reads NN's A and TT's B in place).
  if(TARGET test_cuda_gemm)
    add_test(NAME test_cuda_gemm_row_copy COMMAND test_cuda_gemm)
    set_tests_properties(test_cuda_gemm_row_copy PROPERTIES LABELS cuda
                         ENVIRONMENT "PK_GEMM_ROW_COPY=always;PK_GEMM_SIMT_RAW=never;PK_TEST_QUICK=1"
                         SKIP_RETURN_CODE 77)
  endif()
  # FP32 on the copy-engine SIMT kernel (src/cuda/gemm_simt_tma.cu) on every
  # shape, every layout turned into TN first by copies; where the kernel is
  # not usable (no sm_90a code, another GPU) this is test_cuda_gemm once more.
  if(TARGET test_cuda_gemm)
    add_test(NAME test_cuda_gemm_simt_tma COMMAND test_cuda_gemm)
    set_tests_properties(test_cuda_gemm_simt_tma PROPERTIES LABELS cuda
                         ENVIRONMENT "PK_GEMM_SIMT_TMA=always;PK_GEMM_ROW_COPY=always;PK_GEMM_SIMT_RAW=never;PK_TEST_QUICK=1"
                         SKIP_RETURN_CODE 77)
    # Its 128 x 128 tile reading one k-contiguous operand as it lies: NN's
    # A, TT's B, NT's B after a copy of A (unaligned operands: copies).
    add_test(NAME test_cuda_gemm_simt_raw COMMAND test_cuda_gemm)
    set_tests_properties(test_cuda_gemm_simt_raw PROPERTIES LABELS cuda
                         ENVIRONMENT "PK_GEMM_SIMT_TMA=always;PK_GEMM_ROW_COPY=always;PK_TEST_QUICK=1"
                         SKIP_RETURN_CODE 77)
    # Its 256 x 128 tile on every shape it can take: B copied with its column
    # groups rotated, from row-contiguous B (TN; NN with B unfit for the copy
    # engine) and by a transpose (NT, TT); NN as C^T (A copied rotated).
    add_test(NAME test_cuda_gemm_simt_big COMMAND test_cuda_gemm)
    set_tests_properties(test_cuda_gemm_simt_big PROPERTIES LABELS cuda
                         ENVIRONMENT "PK_GEMM_SIMT_TMA=big;PK_TEST_QUICK=1"
                         SKIP_RETURN_CODE 77)
  endif()
  # TF32 with its row-contiguous operand (op(B) in NN and TN, op(A) in TT)
  # packed first, as for an unaligned one (src/cuda/gemm_wgmma.cu; by
  # itself it reads such an operand in place).
  if(TARGET test_cuda_gemm)
    add_test(NAME test_cuda_gemm_tf32_pack COMMAND test_cuda_gemm)
    set_tests_properties(test_cuda_gemm_tf32_pack PROPERTIES LABELS cuda
                         ENVIRONMENT "PK_GEMM_TF32_PACK=always;PK_TEST_QUICK=1"
                         SKIP_RETURN_CODE 77)
  endif()
  if(TEST test_cuda_context_runtime_launch)
    set_tests_properties(test_cuda_context_runtime_launch PROPERTIES RUN_SERIAL ON)
  endif()
endif()
