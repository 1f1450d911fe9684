#!/usr/bin/env bash
# Builds the llama.cpp peer of the serving benchmark: ggml's CPU backend from the source that
# PyPI's llama-cpp-python vendors (PyPI has no wheel of it, and its Python bindings do not
# reach ggml_flash_attn_ext), then ggml_attention.c against it, into
# benchmarks/peers/ggml/. Opt-in and idempotent; never run by CI. Needs cmake, ninja and a C
# compiler (scripts/setup.sh installs them) and the benchmark venv's pip (peers/install.sh).
#
#   benchmarks/peers/build_ggml.sh     # then serving.py times "llama.cpp" too
set -euo pipefail

PEERS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT=$PEERS/ggml
PIP=${PIP:-$PEERS/../.venv/bin/pip}
# The newest release at the time of pinning (its vendored llama.cpp: ggml 0.25.3).
VERSION=0.3.36
LIB=$OUT/libggml_attention.so

if [ -f "$LIB" ] && [ "$(cat "$OUT/version" 2>/dev/null)" = "$VERSION" ]; then
  echo "[ggml] $LIB is built (llama-cpp-python $VERSION)"
  exit 0
fi
mkdir -p "$OUT"
cd "$OUT"
if [ ! -d "llama_cpp_python-$VERSION" ]; then
  "$PIP" download --no-deps --no-binary :all: "llama-cpp-python==$VERSION" -d .
  tar xzf "llama_cpp_python-$VERSION.tar.gz"
fi
GGML=$OUT/llama_cpp_python-$VERSION/vendor/llama.cpp/ggml
# The source distribution leaves out the pkg-config template ggml's CMake configures.
touch "$GGML/ggml.pc.in"
cmake -S "$GGML" -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON \
  -DBUILD_SHARED_LIBS=ON -DGGML_BUILD_TESTS=OFF -DGGML_BUILD_EXAMPLES=OFF
ninja -C build -j2
cc -O2 -shared -fPIC -o "$LIB" "$PEERS/ggml_attention.c" -I "$GGML/include" \
  -L build/src -lggml -lggml-base -lggml-cpu -Wl,-rpath,"$OUT/build/src" -lm
echo "$VERSION" > "$OUT/version"
echo "[ggml] built $LIB"
