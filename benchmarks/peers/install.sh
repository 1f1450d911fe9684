#!/usr/bin/env bash
# Installs every benchmark peer. Opt-in and idempotent (a second run installs nothing); never
# run by CI, which does not benchmark. Needs root or sudo, Debian 12, Debian's apt and PyPI.
#
#   apt:  libdnnl-dev (oneDNN), libopenblas-dev (OpenBLAS); g++ and python3-dev, which
#         torch.compile's CPU backend (inductor) needs to build its C++ kernels; python3-venv.
#   pip:  benchmarks/.venv with pinned torch (SDPA and FlexAttention on CPU), numpy,
#         matplotlib (plots), iree-base-compiler and iree-base-runtime, onnxruntime and onnx
#         (ONNX Runtime's CPU MultiHeadAttention, built as a one-node model); jax (CPU), for
#         the Python package's check on JAX arrays.
#
# torch is PyPI's default (CUDA) build, the only one PyPI has: its nvidia-* and triton
# dependencies are several GiB on disk but unused here; every peer runs on the CPU.
#
#   benchmarks/peers/install.sh            # then: benchmarks/.venv/bin/python ...
#   ATTNC_BENCH_VENV=/elsewhere benchmarks/peers/install.sh
set -euo pipefail

BENCH_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH_VENV=${ATTNC_BENCH_VENV:-$BENCH_ROOT/.venv}
PYTHON=${PYTHON:-python3}

# torch: the newest PyPI release at the time of pinning; its CPU flex_attention compiles with
# torch.compile (inductor's C++ flex template) and matches a float64 reference (checked with
# benchmarks/peers/torch_peers.py on all six variants).
TORCH_VERSION=2.15.0
NUMPY_VERSION=2.4.6
MATPLOTLIB_VERSION=3.11.2
IREE_VERSION=3.13.0
ORT_VERSION=1.32.0
ONNX_VERSION=1.23.2
JAX_VERSION=0.10.2  # not a peer: the Python package's JAX check (test/python/jax.test)

step() { printf '[peers %s] %s\n' "$(date +%T)" "$*"; }
source "$BENCH_ROOT/../scripts/apt.sh"

install_apt() {
  # libopenblas0-openmp: OpenBLAS on the OpenMP pool the softmax loop and oneDNN use too
  # (Debian's default pthread build fights it for the 2 cores).
  attnc_apt_install libdnnl-dev libopenblas-dev libopenblas0-openmp g++ python3-dev python3-venv
}

install_venv() {
  local want=("torch==$TORCH_VERSION" "numpy==$NUMPY_VERSION" "matplotlib==$MATPLOTLIB_VERSION"
              "iree-base-compiler==$IREE_VERSION" "iree-base-runtime==$IREE_VERSION"
              "onnxruntime==$ORT_VERSION" "onnx==$ONNX_VERSION" "jax[cpu]==$JAX_VERSION")
  local stamp=$BENCH_VENV/.attnc-peers-requirements
  if [[ -f $stamp && $(cat "$stamp") == "${want[*]}" ]]; then
    step "venv: ${want[*]} present in $BENCH_VENV"; return
  fi
  step "venv: installing ${want[*]} into $BENCH_VENV (torch and its CUDA wheels: several GiB)"
  [[ -x $BENCH_VENV/bin/python ]] || "$PYTHON" -m venv "$BENCH_VENV"
  "$BENCH_VENV/bin/pip" install -q --disable-pip-version-check "${want[@]}"
  echo "${want[*]}" >"$stamp"
}

# The attnc Python package (editable, as scripts/setup.sh installs it into the project's venv):
# attnc_peer.py and benchmarks/python import it.
install_package() {
  if "$BENCH_VENV/bin/python" -c 'import attnc._call' 2>/dev/null; then
    step "venv: attnc (Python) present"; return
  fi
  "$BENCH_VENV/bin/pip" install -q --disable-pip-version-check -e "$BENCH_ROOT/../tools/python"
}

report() {
  step "installed:"
  local p
  for p in libdnnl-dev libopenblas-dev g++ python3-dev; do
    printf '  apt  %-20s %s\n' "$p" "$(dpkg-query -W -f='${Version}' "$p")"
  done
  "$BENCH_VENV/bin/python" - <<'EOF'
from importlib.metadata import version
for p in ("torch", "numpy", "matplotlib", "iree-base-compiler", "iree-base-runtime",
          "onnxruntime", "onnx", "jax"):
    print(f"  pip  {p:<20} {version(p)}")
EOF
  printf '  venv %s (%s)\n' "$BENCH_VENV" "$("$BENCH_VENV/bin/python" --version)"
}

timed() { local t0=$SECONDS; "$@"; step "$1 took $((SECONDS - t0)) s"; }
timed install_apt
timed install_venv
timed install_package
report
