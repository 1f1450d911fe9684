# What `cmake --install` puts under the prefix, and the CMake package that lets other projects
# use it with `find_package(Attnc)` (see cmake/AttncConfig.cmake.in, cmake/AttncAddKernel.cmake):
#   bin/attnc, bin/attnc-opt, bin/attnc-run, bin/attnc-tune
#   lib/libattnc_runtime.a                  exported as Attnc::runtime
#   lib/attnc/halide-runtime-<version>/     Halide's runtime per --backend=halide target
#   include/attnc/Runtime/attnc_runtime.h   the runtime's public C header
#   lib/cmake/Attnc/                        AttncConfig, AttncConfigVersion, AttncTargets,
#                                           AttncAddKernel
# The paths are `bin` and `lib` literally, not GNUInstallDirs' (lib64, lib/<multiarch>):
# attnc finds the runtime for --emit=so at <dir of attnc>/../lib.
include(CMakePackageConfigHelpers)

set(ATTNC_INSTALL_CMAKEDIR lib/cmake/Attnc)

# The tools link the shared libMLIR/libLLVM in /usr/lib/llvm-22/lib, which is not on the loader's
# path: keep it in the installed binaries' RPATH.
set_target_properties(attnc attnc-opt attnc-run attnc-tune PROPERTIES INSTALL_RPATH_USE_LINK_PATH TRUE)
# Likewise the Halide wheel's libHalide.so (an imported library given by its full path, which
# the link path does not cover): attnc links it for --backend=halide.
get_target_property(ATTNC_HALIDE_LIBRARY Halide::Halide LOCATION)
get_filename_component(ATTNC_HALIDE_LIBDIR "${ATTNC_HALIDE_LIBRARY}" DIRECTORY)
set_property(TARGET attnc attnc-opt attnc-run attnc-tune APPEND PROPERTY INSTALL_RPATH "${ATTNC_HALIDE_LIBDIR}")
set_target_properties(attnc_runtime PROPERTIES EXPORT_NAME runtime)

install(TARGETS attnc attnc-opt attnc-run attnc-tune attnc_runtime
  EXPORT AttncTargets
  RUNTIME DESTINATION bin
  ARCHIVE DESTINATION lib)
# The Halide runtime objects attnc merges into --backend=halide objects (tools/attnc).
install(DIRECTORY ${PROJECT_BINARY_DIR}/${ATTNC_HALIDE_RUNTIME_DIR}/
  DESTINATION ${ATTNC_HALIDE_RUNTIME_DIR} FILES_MATCHING PATTERN "*.o")
install(FILES ${PROJECT_SOURCE_DIR}/include/attnc/Runtime/attnc_runtime.h
  DESTINATION include/attnc/Runtime)
# The runtime's sources, for projects that cross-compile (AttncConfig builds them with the
# project's toolchain), with the two C headers they include from elsewhere: Halide's runtime
# header (MIT) and DLPack's (Apache-2.0), since a cross toolchain searches neither.
file(GLOB ATTNC_RUNTIME_SOURCES ${PROJECT_SOURCE_DIR}/lib/Runtime/*.cpp
     ${PROJECT_SOURCE_DIR}/lib/Runtime/*.h)
install(FILES ${ATTNC_RUNTIME_SOURCES} DESTINATION share/attnc/runtime)
get_target_property(ATTNC_HALIDE_RUNTIME_INCLUDE Halide::Runtime INTERFACE_INCLUDE_DIRECTORIES)
string(REGEX REPLACE "^\\$<BUILD_INTERFACE:(.*)>$" "\\1" ATTNC_HALIDE_RUNTIME_INCLUDE
       "${ATTNC_HALIDE_RUNTIME_INCLUDE}")
install(FILES ${ATTNC_HALIDE_RUNTIME_INCLUDE}/HalideRuntime.h
  DESTINATION share/attnc/runtime/include)
find_path(ATTNC_DLPACK_INCLUDE dlpack/dlpack.h REQUIRED)
install(FILES ${ATTNC_DLPACK_INCLUDE}/dlpack/dlpack.h DESTINATION share/attnc/runtime/include/dlpack)
install(EXPORT AttncTargets NAMESPACE Attnc:: DESTINATION ${ATTNC_INSTALL_CMAKEDIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/AttncConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/AttncConfig.cmake
  INSTALL_DESTINATION ${ATTNC_INSTALL_CMAKEDIR})
# 0.x: a minor version may break the ABI (ATTNC_ABI_VERSION), so only patch releases match.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/AttncConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/cmake/AttncConfig.cmake
  ${PROJECT_BINARY_DIR}/cmake/AttncConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/cmake/AttncAddKernel.cmake
  DESTINATION ${ATTNC_INSTALL_CMAKEDIR})
