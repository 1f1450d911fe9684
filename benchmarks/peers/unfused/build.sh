#!/usr/bin/env bash
# Builds libunfused.so (the OpenBLAS and oneDNN unfused attention peers) next to this script.
# Needs g++, libopenblas-dev and libdnnl-dev; benchmarks/peers/install.sh installs them.
#
# OpenBLAS: links the OpenMP build (Debian's libopenblas0-openmp) when it is installed, so that
# the sgemms, our softmax loop and oneDNN share one OpenMP thread pool; otherwise the default
# -lopenblas (Debian's default is the pthreads build), on which the OpenBLAS peer runs its softmax
# on one thread (two thread pools spinning on the same cores slow each other down).
#   -fopenmp          omp_set_num_threads for oneDNN (OpenMP runtime in Debian), the softmax loop
#   -fno-math-errno   lets the softmax's expf vectorise through glibc's libmvec
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
CXX=${CXX:-g++}
OPENMP_BLAS=/usr/lib/$(gcc -print-multiarch)/openblas-openmp
if [[ -e $OPENMP_BLAS/libopenblas.so.0 ]]; then
  blas=("$OPENMP_BLAS/libopenblas.so.0" "-Wl,-rpath,$OPENMP_BLAS")
  echo "OpenBLAS: the OpenMP build ($OPENMP_BLAS)"
else
  blas=(-lopenblas)
  echo "OpenBLAS: -lopenblas (install libopenblas0-openmp for the OpenMP build; see above)"
fi
"$CXX" -O3 -march=native -fno-math-errno -fopenmp -fPIC -shared -std=c++17 -Wall -Wextra \
  -o libunfused.so.tmp unfused.cpp "${blas[@]}" -ldnnl
mv -f libunfused.so.tmp libunfused.so
echo "built $(pwd)/libunfused.so"
