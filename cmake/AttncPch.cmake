# Precompiled MLIR headers for attnc's MLIR libraries, tools and fuzzers.
#
# Parsing MLIR's dialect and pass headers is 85-90% of the compile time of a typical attnc
# source (clang -ftime-trace on lib/Transforms/TileFlash.cpp: 30 of 35 s in headers). They are
# parsed once, into one precompiled header that every target calling
# attnc_precompile_mlir_headers reuses, instead of once per source file. Only headers of the
# installed MLIR go in, so the precompiled header is rebuilt when MLIR changes, not when
# attnc's headers do. ATTNC_PCH=OFF turns it off (to check that every source includes what
# it uses).
option(ATTNC_PCH "Precompile the MLIR headers attnc's sources share" ON)

set(ATTNC_MLIR_PCH_HEADERS
  <mlir/Dialect/Arith/IR/Arith.h>
  <mlir/Dialect/Func/IR/FuncOps.h>
  <mlir/Dialect/GPU/IR/GPUDialect.h>
  <mlir/Dialect/LLVMIR/LLVMDialect.h>
  <mlir/Dialect/LLVMIR/NVVMDialect.h>
  <mlir/Dialect/Math/IR/Math.h>
  <mlir/Dialect/MemRef/IR/MemRef.h>
  <mlir/Dialect/NVGPU/IR/NVGPUDialect.h>
  <mlir/Dialect/SCF/IR/SCF.h>
  <mlir/Dialect/Vector/IR/VectorOps.h>
  <mlir/Dialect/X86Vector/X86VectorDialect.h>
  <mlir/IR/Builders.h>
  <mlir/IR/PatternMatch.h>
  <mlir/Pass/Pass.h>
  <mlir/Transforms/DialectConversion.h>
)

# The header is built once, for an empty object library with attnc_mlir_deps' flags, and
# reused by every target that calls attnc_precompile_mlir_headers (the same compiler flags).
if(ATTNC_PCH)
  file(CONFIGURE OUTPUT ${PROJECT_BINARY_DIR}/attnc_mlir_pch.cpp
       CONTENT "// The object library that owns attnc's precompiled MLIR headers.\n")
  add_library(attnc_mlir_pch OBJECT ${PROJECT_BINARY_DIR}/attnc_mlir_pch.cpp)
  target_link_libraries(attnc_mlir_pch PRIVATE attnc_mlir_deps)
  target_precompile_headers(attnc_mlir_pch PRIVATE ${ATTNC_MLIR_PCH_HEADERS})
endif()

# attnc_precompile_mlir_headers(TARGET...): each TARGET compiles with the precompiled header.
function(attnc_precompile_mlir_headers)
  if(NOT ATTNC_PCH)
    return()
  endif()
  foreach(target ${ARGN})
    target_precompile_headers(${target} REUSE_FROM attnc_mlir_pch)
  endforeach()
endfunction()
