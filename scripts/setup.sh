#!/usr/bin/env bash
# Installs what attnc needs on Debian 12 and builds it into build/. Idempotent: a second run
# installs nothing and only rebuilds what changed (ccache keeps rebuilds from scratch cheap).
#
#   apt:  LLVM/MLIR 22 (shared libLLVM/libMLIR, mlir-tblgen, FileCheck, lit), ccache, ninja,
#         DLPack headers, PoCL + the OpenCL ICD loader, python3-numpy (reference cross-checks),
#         the AArch64 cross toolchain and QEMU, clang-22 with its runtimes (the fuzzers).
#   pip:  a project-local venv (.venv) with the pinned Halide wheel (its C++ SDK and CMake
#         package), the CMake that Halide's package config requires (>= 3.28), and NVIDIA's
#         nvdisasm (the CUDA toolkit on these machines ships ptxas but no disassembler).
# Sourced by scripts/main.sh and scripts/test.sh; exports ATTNC_BUILD and ATTNC_VENV.
set -euo pipefail

ATTNC_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ATTNC_BUILD=${ATTNC_BUILD:-$ATTNC_ROOT/build}
ATTNC_VENV=${ATTNC_VENV:-$ATTNC_ROOT/.venv}
HALIDE_VERSION=21.0.0
CMAKE_VERSION=3.31.10
NVDISASM_VERSION=13.5.37  # SASS of the CUDA cubins (HMMA checks); the toolkit here has none
ML_DTYPES_VERSION=0.7.0  # NumPy's bfloat16, for the Python package's bf16 calls (tests)
LLVM_VERSION=22
export ATTNC_ROOT ATTNC_BUILD ATTNC_VENV

step() { printf '[setup %s] %s\n' "$(date +%T)" "$*"; }
source "$ATTNC_ROOT/scripts/apt.sh"

install_apt() {
  attnc_apt_install llvm-$LLVM_VERSION-dev libmlir-$LLVM_VERSION-dev mlir-$LLVM_VERSION-tools \
    llvm-$LLVM_VERSION-tools ccache ninja-build libdlpack-dev libgtest-dev pocl-opencl-icd \
    ocl-icd-opencl-dev python3-venv python3-numpy \
    g++-aarch64-linux-gnu qemu-user \
    clang-$LLVM_VERSION libclang-rt-$LLVM_VERSION-dev `# aarch64: cross build, emulation; fuzzers` \
    lld-$LLVM_VERSION `# merges a spec's kernel objects` \
    python3-dev `# the Python package's launch in C (tools/python/attnc/_call.c)` \
    chromium  # renders attnc.viz's head view in the tests (headless)
}

install_venv() {
  local want="halide==$HALIDE_VERSION cmake==$CMAKE_VERSION nvidia-cuda-nvdisasm==$NVDISASM_VERSION"
  want+=" ml_dtypes==$ML_DTYPES_VERSION"
  local stamp=$ATTNC_VENV/.attnc-requirements
  if [[ -f $stamp && $(cat "$stamp") == "$want" ]]; then step "venv: $want present"; return; fi
  step "venv: installing $want into $ATTNC_VENV"
  [[ -x $ATTNC_VENV/bin/python ]] || python3 -m venv "$ATTNC_VENV"
  "$ATTNC_VENV/bin/pip" install -q --disable-pip-version-check $want
  echo "$want" >"$stamp"
}

# The Python package (tools/python/attnc), editable: the venv's python imports this tree's;
# pip builds its C launch (attnc/_call*.so) in place, again when _call.c or the runtime's
# header is newer than it.
install_python_package() {
  local pkg=$ATTNC_ROOT/tools/python/attnc here ext
  here=$("$ATTNC_VENV/bin/python" -c 'import attnc, os; print(os.path.dirname(os.path.realpath(attnc.__file__)))' 2>/dev/null || true)
  ext=$(compgen -G "$pkg/_call.*.so" | head -1 || true)
  if [[ $here == "$pkg" && -n $ext && $ext -nt $pkg/_call.c &&
        $ext -nt $ATTNC_ROOT/include/attnc/Runtime/attnc_runtime.h ]]; then
    step "venv: attnc (Python) present"; return
  fi
  step "venv: installing the attnc Python package (editable) from tools/python"
  "$ATTNC_VENV/bin/pip" install -q --disable-pip-version-check -e "$ATTNC_ROOT/tools/python"
}

# attnc_configure DIR [CMAKE-ARG...]: configures DIR with Ninja, ccache and clang-22 against
# LLVM/MLIR 22 and the venv's Halide, once (a configured DIR is left as it is). clang-22 (the
# sanitizers and libFuzzer need it) also builds attnc in about 20% less time than GCC 12; the
# kernels attnc writes do not depend on it (LLVM 22 generates them either way).
attnc_configure() {
  local dir=$1 halide_prefix llvm_cmake
  shift
  [[ -f $dir/build.ninja ]] && return
  # ccache caches sources compiled with a precompiled header (cmake/AttncPch.cmake) only
  # when told that the header's macros and time stamps need not be hashed. Paths are hashed
  # relative to the checkout (base dir, no working directory), so that a clone elsewhere --
  # CI's -- finds what this one compiled.
  local ccache_env="CCACHE_BASEDIR=$ATTNC_ROOT;CCACHE_NOHASHDIR=1"
  local ccache_pch="env;$ccache_env;CCACHE_SLOPPINESS=pch_defines,time_macros;ccache"
  step "cmake: configuring $dir"
  halide_prefix=$("$ATTNC_VENV/bin/python" -c 'import halide, os; print(os.path.dirname(halide.__file__))')
  llvm_cmake=$(llvm-config-$LLVM_VERSION --cmakedir)
  "$ATTNC_VENV/bin/cmake" -G Ninja -S "$ATTNC_ROOT" -B "$dir" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-$LLVM_VERSION -DCMAKE_CXX_COMPILER=clang++-$LLVM_VERSION \
    "-DCMAKE_C_COMPILER_LAUNCHER=env;$ccache_env;ccache" "-DCMAKE_CXX_COMPILER_LAUNCHER=$ccache_pch" \
    -DLLVM_DIR="$llvm_cmake" -DMLIR_DIR="$llvm_cmake/../mlir" \
    -DHalide_DIR="$halide_prefix/lib64/cmake/Halide" "$@" >/dev/null
}

# attnc_configure_sanitized DIR SANITIZERS [CMAKE-ARG...]: a build of all of attnc
# under SANITIZERS (address,undefined: build-fuzz/, scripts/fuzz.sh and scripts/sanitize.sh;
# thread: build-tsan/, scripts/sanitize.sh).
attnc_configure_sanitized() {
  attnc_configure "$1" -DATTNC_SANITIZE="$2" "${@:3}"
}
ATTNC_ASAN_BUILD=${ATTNC_ASAN_BUILD:-$ATTNC_ROOT/build-fuzz}
# attnc_fuzz_env: the sanitizer options the fuzzers run under (scripts/fuzz.sh, fuzz-at.sh).
# ASan's alternate signal stack stays on (unlike test/lit.cfg.py's tools, the fuzzers start no
# thread that LLVM's crash handler runs on): a stack overflow is reported with its input
# instead of a bare SIGSEGV. verify_asan_link_order=0: -fsanitize=fuzzer puts libstdc++ ahead
# of the shared ASan runtime among a fuzzer's libraries, which ASan's start-up check refuses
# although the runtime is loaded before main either way.
attnc_fuzz_env() {
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:verify_asan_link_order=0
  export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
}

configure_and_build() {
  attnc_configure "$ATTNC_BUILD"
  step "build: ninja -j${ATTNC_JOBS:-2}"
  "$ATTNC_VENV/bin/cmake" --build "$ATTNC_BUILD" -j "${ATTNC_JOBS:-2}"
}

timed() { local t0=$SECONDS; "$@"; step "$1 took $((SECONDS - t0)) s"; }
timed install_apt
timed install_venv
timed install_python_package
timed configure_and_build
