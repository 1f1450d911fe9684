"""Unfused matmul-softmax-matmul attention, as a user writes it with a BLAS: per (batch, head)
S = scale * Q K^T (one sgemm into a seq x seq buffer), mask and row softmax, O = S V (one
sgemm). Two peers from benchmarks/peers/unfused/libunfused.so (build with unfused/build.sh):

  openblas-unfused  cblas_sgemm (openblas_set_num_threads(w.threads)); mask + softmax: our own
                    loop over the rows, reading the boolean keep matrix, on w.threads OpenMP
                    threads when build.sh found Debian's OpenMP build of OpenBLAS
                    (libopenblas0-openmp), else on one thread (see unfused.cpp; peer.info says
                    which).
  onednn-unfused    oneDNN matmul primitives; the scale is the first matmul's output scale and
                    the mask its binary-add post-op (an additive float mask, 0 / -inf, built in
                    prepare: seq^2 floats more); the softmax is oneDNN's softmax primitive.
                    Threads: omp_set_num_threads(w.threads) (Debian's oneDNN runs on OpenMP).

Both compute all seq^2 scores of every variant (nothing is skipped) and read kv head
h // (heads / kv_heads) in place for GQA. The seq x seq score buffer (4 * seq^2 bytes, reused
across heads) is allocated in prepare but first touched by the timed call, so it shows in the
call's memory growth; workloads whose buffer would exceed 4 GiB are Unsupported.

bf16 (q, k, v, out bf16, passed as uint16 arrays of bf16 bit patterns):
  onednn-unfused    bf16 x bf16 matmul Q K^T with f32 accumulation into the f32 score buffer
                    (scale and mask as above), f32 softmax (softmax_v2) writing P in bf16 (a
                    second seq x seq buffer, 2 * seq^2 bytes), bf16 x bf16 matmul P V with f32
                    accumulation and a bf16 output.
  openblas-unfused  unsupported unless the loaded OpenBLAS exports cblas_sbgemm (built with
                    BUILD_BFLOAT16; Debian 12's 0.3.21 is not); the reason says which.
"""
import ctypes
import os

import numpy as np

from peers.base import Peer, Unsupported, bf16_bits

LIBRARY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "unfused", "libunfused.so")
# How messages (and so reports) name it: relative to the repository, not this machine.
LIBRARY_NAME = os.path.relpath(LIBRARY, os.path.join(os.path.dirname(LIBRARY), "..", "..", ".."))
SCORES_BYTES_LIMIT = 4 << 30
OPENBLAS, ONEDNN = 0, 1
DTYPES = {"f32": 0, "bf16": 1}  # unfused.cpp's UNFUSED_F32, UNFUSED_BF16
ABI_VERSION = 2  # unfused.cpp's unfused_abi_version()


def load():
    if not os.path.exists(LIBRARY):
        raise ImportError("%s is not built: run benchmarks/peers/unfused/build.sh "
                          "(needs libopenblas-dev, libdnnl-dev)" % LIBRARY_NAME)
    try:
        lib = ctypes.CDLL(LIBRARY)
    except OSError as e:
        raise ImportError("cannot load %s: %s" % (LIBRARY_NAME, e))
    if not hasattr(lib, "unfused_abi_version") or lib.unfused_abi_version() != ABI_VERSION:
        raise ImportError("%s is older than unfused_peers.py (its C ABI changed): rebuild it "
                          "with benchmarks/peers/unfused/build.sh" % LIBRARY_NAME)
    lib.unfused_last_error.restype = ctypes.c_char_p
    lib.unfused_info.restype = ctypes.c_char_p
    lib.unfused_create.restype = ctypes.c_void_p
    lib.unfused_create.argtypes = [ctypes.c_int] * 7 + [ctypes.c_float, ctypes.c_void_p,
                                                        ctypes.c_int]
    lib.unfused_run.restype = ctypes.c_int
    lib.unfused_run.argtypes = [ctypes.c_void_p] * 5
    lib.unfused_destroy.restype = None
    lib.unfused_destroy.argtypes = [ctypes.c_void_p]
    return lib


class Run:
    """The timed call: one unfused_run over all (batch, head) pairs; owns the C handle."""

    def __init__(self, lib, handle, arrays, out):
        self.lib, self.handle, self.arrays, self.out = lib, handle, arrays, out
        self.pointers = [a.ctypes.data for a in arrays] + [out.ctypes.data]

    def __call__(self):
        if self.lib.unfused_run(self.handle, *self.pointers):
            raise RuntimeError(self.lib.unfused_last_error().decode())
        return self.out

    def __del__(self):
        if self.handle:
            self.lib.unfused_destroy(self.handle)
            self.handle = None


class UnfusedPeer(Peer):
    def __init__(self, lib, impl, name):
        self.lib, self.impl, self.name = lib, impl, name
        self.info = lib.unfused_info().decode()  # library versions and threading, for reports

    def prepare(self, w, q, k, v):
        if w.dtype not in DTYPES:
            raise Unsupported("dtype %s is not benchmarked" % w.dtype)
        if w.dtype == "bf16" and self.impl == OPENBLAS:
            if hasattr(self.lib, "cblas_sbgemm"):  # dlsym: libunfused.so and its libraries
                raise Unsupported("the loaded OpenBLAS has a bf16 GEMM (cblas_sbgemm), but "
                                  "this peer has no bf16 path yet")
            raise Unsupported("the loaded OpenBLAS has no bf16 GEMM: cblas_sbgemm exists only "
                              "in builds with BUILD_BFLOAT16, which Debian's is not")
        if 4 * w.seq * w.seq > SCORES_BYTES_LIMIT:
            raise Unsupported("the seq x seq float32 score buffer (%.1f GiB at seq %d) is over "
                              "4 GiB" % (4.0 * w.seq * w.seq / (1 << 30), w.seq))
        if w.heads % w.kv_heads:
            raise Unsupported("heads (%d) not a multiple of kv_heads (%d)"
                              % (w.heads, w.kv_heads))
        arrays = [np.ascontiguousarray(a, np.float32) for a in (q, k, v)]
        if w.dtype == "bf16":
            arrays = [bf16_bits(a) for a in arrays]  # exact: the inputs are bf16 numbers
        keep = None
        if w.variant != "dense":
            keep = np.ascontiguousarray(w.keep_matrix(), np.bool_)  # bytes, 1 = attend
        handle = self.lib.unfused_create(self.impl, DTYPES[w.dtype], w.batch, w.heads,
                                         w.kv_heads, w.seq,
                                         w.head_dim, float(np.float32(1.0 / np.sqrt(w.head_dim))),
                                         None if keep is None else keep.ctypes.data, w.threads)
        if not handle:
            raise RuntimeError(self.lib.unfused_last_error().decode())
        out = np.empty((w.batch, w.heads, w.seq, w.head_dim), arrays[0].dtype)
        run = Run(self.lib, handle, arrays, out)
        run.keep = keep  # alive as long as the run: the OpenBLAS implementation reads it each call
        return run


def make():
    lib = load()
    return [UnfusedPeer(lib, OPENBLAS, "openblas-unfused"),
            UnfusedPeer(lib, ONEDNN, "onednn-unfused")]
