# Finds what attnc builds against and exposes it as targets:
#   attnc_mlir_deps  interface target: LLVM/MLIR 22 headers, the shared libMLIR and libLLVM,
#                    -fno-rtti (typeinfo must match the installed libraries)
#   ATTNC_PTXAS      CUDA's ptxas, if present (lit feature `ptxas`)
#   ATTNC_NVDISASM   CUDA's nvdisasm, if present (lit feature `nvdisasm`)
#   ATTNC_LLD        LLVM's linker, if present: attnc merges kernel objects and links --emit=so
#                    with it
#   Halide::Halide   the Halide wheel's libHalide (its C++ SDK; Halide_DIR from scripts/setup.sh),
#                    and Halide::Runtime, its C runtime headers

find_package(MLIR REQUIRED CONFIG)
if(NOT LLVM_VERSION_MAJOR EQUAL 22)
  message(FATAL_ERROR "attnc needs LLVM/MLIR 22, found ${LLVM_PACKAGE_VERSION} at ${MLIR_DIR}")
endif()
message(STATUS "Using MLIR ${LLVM_PACKAGE_VERSION} from ${MLIR_DIR}")
list(APPEND CMAKE_MODULE_PATH "${MLIR_CMAKE_DIR}" "${LLVM_CMAKE_DIR}")
include(TableGen)
include(AddLLVM)
include(AddMLIR)
include_directories(${MLIR_INCLUDE_DIRS}) # mlir-tblgen's include path for the ODS

add_library(attnc_mlir_deps INTERFACE)
target_include_directories(attnc_mlir_deps SYSTEM INTERFACE ${LLVM_INCLUDE_DIRS} ${MLIR_INCLUDE_DIRS})
target_include_directories(attnc_mlir_deps INTERFACE
  ${PROJECT_SOURCE_DIR}/include ${PROJECT_BINARY_DIR}/dialects)
target_compile_options(attnc_mlir_deps INTERFACE -fno-rtti)
target_link_libraries(attnc_mlir_deps INTERFACE MLIR LLVM)

find_package(Halide 21 REQUIRED)
message(STATUS "Using Halide ${Halide_VERSION} from ${Halide_DIR}")
# Where attnc keeps the Halide runtime objects of its targets, under the build tree and the
# install prefix alike (tools/attnc/CMakeLists.txt), one directory per Halide version.
set(ATTNC_HALIDE_RUNTIME_DIR lib/attnc/halide-runtime-${Halide_VERSION})

# LLVM 22's lld (Debian's lld-22; an older ld.lld may not read LLVM 22's objects): it merges
# a spec of 300 kernels' objects (-r) in 0.4 s where GNU ld takes 3.4 s. Without it attnc
# uses the C++ compiler's default linker.
find_program(ATTNC_LLD ld.lld-${LLVM_VERSION_MAJOR})
if(NOT ATTNC_LLD)
  find_program(ATTNC_LLD ld.lld PATHS ${LLVM_TOOLS_BINARY_DIR} NO_DEFAULT_PATH)
endif()
message(STATUS "lld: ${ATTNC_LLD}")

find_program(ATTNC_PTXAS ptxas HINTS ENV CUDA_HOME PATH_SUFFIXES bin
             PATHS /usr/local/cuda/bin DOC "CUDA ptxas, used to check generated PTX")
message(STATUS "ptxas: ${ATTNC_PTXAS}")
# The CUDA toolkit the cuda-* targets compile with (ptxas, libdevice) unless CUDA_HOME,
# CUDA_ROOT or CUDA_PATH names another at run time.
if(ATTNC_PTXAS)
  get_filename_component(ATTNC_CUDA_TOOLKIT "${ATTNC_PTXAS}" DIRECTORY)
  get_filename_component(ATTNC_CUDA_TOOLKIT "${ATTNC_CUDA_TOOLKIT}" DIRECTORY)
else()
  set(ATTNC_CUDA_TOOLKIT /usr/local/cuda)
endif()
# nvdisasm comes from PyPI (nvidia-cuda-nvdisasm, in the project's venv; setup.sh).
file(GLOB ATTNC_NVDISASM_HINTS "$ENV{ATTNC_VENV}/lib/python3*/site-packages/nvidia/cu*/bin"
     "${PROJECT_SOURCE_DIR}/.venv/lib/python3*/site-packages/nvidia/cu*/bin")
find_program(ATTNC_NVDISASM nvdisasm HINTS ${ATTNC_NVDISASM_HINTS} PATHS /usr/local/cuda/bin
             DOC "CUDA nvdisasm, used to check the SASS of generated cubins")
message(STATUS "nvdisasm: ${ATTNC_NVDISASM}")
