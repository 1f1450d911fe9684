"""attnc's own kernels as a peer: each workload's spec compiled with `attnc --emit=so` and
called through its C entry point with DLPack tensors (ctypes), exactly as a C user would."""
import ctypes
import os
import subprocess

import numpy as np

from peers.base import Peer

BUILD = os.environ.get("ATTNC_BUILD", os.path.join(os.path.dirname(__file__), "..", "..", "build"))


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class Options(ctypes.Structure):
    _fields_ = [("num_threads", ctypes.c_int32)]


def dl_tensor(array):
    """A DLTensor viewing a C-contiguous float32 numpy array (kept alive by the caller)."""
    assert array.dtype == np.float32 and array.flags.c_contiguous
    shape = (ctypes.c_int64 * array.ndim)(*array.shape)
    t = DLTensor(array.ctypes.data, DLDevice(1, 0), array.ndim, DLDataType(2, 32, 1),
                 shape, None, 0)
    t._shape = shape  # keep the shape array alive with the struct
    return t


class AttncPeer(Peer):
    def __init__(self, target, work, build=BUILD, label=""):
        self.name = "attnc-" + {"host": "cpu"}.get(target, target) + label
        self.target = target
        self.work = work
        self.build = build
        self.libraries = {}

    def kernel(self, w):
        name, text = w.spec()
        if name not in self.libraries:
            spec = os.path.join(self.work, name + ".mlir")
            so = os.path.join(self.work, "%s.%s%s.so" % (name, self.target,
                                                        self.name.rsplit(self.target, 1)[1]))
            with open(spec, "w") as f:
                f.write(text)
            subprocess.run([os.path.join(self.build, "bin", "attnc"), spec, "--target", self.target,
                            "--emit=so", "-o", so], check=True)
            self.libraries[name] = ctypes.CDLL(so)
        library = self.libraries[name]
        entry = getattr(library, name)
        entry.restype = ctypes.c_int
        library.attnc_last_error.restype = ctypes.c_char_p
        return library, entry

    def prepare(self, w, q, k, v):
        library, entry = self.kernel(w)
        out = np.zeros_like(q)
        arrays = (q, k, v, out)  # the DLTensors point into these: keep them alive with run()
        tensors = [dl_tensor(a) for a in arrays]
        options = Options(w.threads)
        args = [ctypes.byref(t) for t in tensors] + [None, ctypes.byref(options)]

        def run(arrays=arrays):
            if entry(*args) != 0:
                raise RuntimeError(library.attnc_last_error().decode())
            return out
        return run


def make(work, targets=("x86-64-avx512",), baseline=None):
    """attnc's peers; with `baseline` (another build's directory, e.g. of the previous
    commit) also that build's kernels as `attnc-<target>-baseline`, timed in the same run."""
    if not os.path.exists(os.path.join(BUILD, "bin", "attnc")):
        raise ImportError("attnc is not built (%s/bin/attnc); run scripts/setup.sh" % BUILD)
    peers = [AttncPeer(t, work) for t in targets]
    if baseline:
        peers += [AttncPeer(t, work, baseline, "-baseline") for t in targets]
    return peers
