# pk's install rules (included from CMakeLists.txt when PK_INSTALL is on):
#   include/pk.h, lib/libpk.so* and lib/libpk.a,
#   lib/cmake/pk/: pkConfig.cmake, pkConfigVersion.cmake and the exported
#     targets pk::pk (shared) and pk::pk_static,
#   lib/pkgconfig/pk.pc (shared; `pkg-config --static` adds what libpk.a
#     needs) and pk-static.pc (the archive itself, with everything it needs),
#   share/doc/pk: README, LICENSE, CHANGELOG and the docs.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(FILES include/pk.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS pk EXPORT pkTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS pk_static EXPORT pkStaticTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
set(PK_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/pk)
install(EXPORT pkTargets NAMESPACE pk:: DESTINATION ${PK_CMAKE_DIR})
install(EXPORT pkStaticTargets NAMESPACE pk:: DESTINATION ${PK_CMAKE_DIR})
set(PK_CONFIG_FEATURES)
foreach(feature cuda nvrtc mpi nccl)
  string(TOUPPER ${feature} FEATURE)
  if(PK_BUILD_HAS_${FEATURE} OR (feature STREQUAL "nvrtc" AND PK_BUILD_HAS_CUDA))
    list(APPEND PK_CONFIG_FEATURES ${feature})
  endif()
endforeach()
configure_package_config_file(cmake/pkConfig.cmake.in
  "${CMAKE_CURRENT_BINARY_DIR}/pkConfig.cmake" INSTALL_DESTINATION ${PK_CMAKE_DIR})
# 0.x: a minor version may change the API, so only the same minor matches.
write_basic_package_version_file("${CMAKE_CURRENT_BINARY_DIR}/pkConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion)
install(FILES "${CMAKE_CURRENT_BINARY_DIR}/pkConfig.cmake"
              "${CMAKE_CURRENT_BINARY_DIR}/pkConfigVersion.cmake"
        DESTINATION ${PK_CMAKE_DIR})

# pkg-config: what a program linking libpk.a must link too, as -L/-l flags
# (each library by its directory and name, so that any C compiler can use
# them; a library that is not lib<name>.so/.a goes by its path).
set(pk_pc_libs)
macro(pk_pc_add)
  foreach(item ${ARGN})
    if(item MATCHES "^-")
      list(APPEND pk_pc_libs "${item}")
    elseif(item MATCHES "^(.*)/lib([^/]+)\\.(so|a)$")
      list(APPEND pk_pc_libs "-L${CMAKE_MATCH_1}" "-l${CMAKE_MATCH_2}")
    elseif(IS_ABSOLUTE "${item}")
      list(APPEND pk_pc_libs "${item}")
    else()
      list(APPEND pk_pc_libs "-l${item}")
    endif()
  endforeach()
endmacro()
if(PK_HAVE_NCCL)
  pk_pc_add(${PK_NCCL_LIBRARY})
endif()
if(PK_HAVE_MPI)
  pk_pc_add(${MPI_C_LIBRARIES})
  separate_arguments(pk_mpi_flags UNIX_COMMAND "${MPI_C_LINK_FLAGS}")
  pk_pc_add(${pk_mpi_flags})
endif()
if(PK_HAVE_CUDA)
  pk_pc_add("-L${CUDAToolkit_LIBRARY_DIR}" -lcudart_static -lrt -lstdc++)
endif()
pk_pc_add(${OpenMP_C_LIBRARIES})
pk_pc_add(-lpthread -ldl -lm)
list(REMOVE_DUPLICATES pk_pc_libs)
string(JOIN " " PK_PC_LIBS_PRIVATE ${pk_pc_libs})
# The .pc files find the prefix from their own place (cmake --install
# --prefix P chooses it after configuring).
file(RELATIVE_PATH PK_PC_TO_PREFIX "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
string(REGEX REPLACE "/$" "" PK_PC_TO_PREFIX "${PK_PC_TO_PREFIX}")
foreach(pc pk pk-static)
  configure_file(cmake/${pc}.pc.in "${CMAKE_CURRENT_BINARY_DIR}/${pc}.pc" @ONLY)
  install(FILES "${CMAKE_CURRENT_BINARY_DIR}/${pc}.pc"
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()

install(FILES README.md LICENSE CHANGELOG.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})
