"""attnc's own kernels as a peer: each workload's spec compiled with `attnc --emit=so` and
called through its C entry point with DLPack tensors (ctypes), exactly as a C user would.

dtypes: an f32 workload compiles its spec (dtype = f32) for the f32 target (run.py --target);
a bf16 one compiles it with dtype = bf16 for the bf16 target (bf16_target(): x86-64-avx512-bf16
when `attnc --list-targets` lists it and it runs here, else the f32 target) and passes q, k, v
and out as bf16 DLTensors (kDLBfloat, 16 bits) over uint16 arrays of bf16 bit patterns. A build
whose CPU backend has no bf16 kernels rejects the spec ("supports dtype f32 only"): the
workload is unsupported, with attnc's message as the reason."""
import ctypes
import os
import re
import subprocess

import numpy as np

from peers.base import Peer, Unsupported, aligned, bf16_bits

from attnc._abi import K_DL_BFLOAT as DL_BFLOAT, K_DL_FLOAT as DL_FLOAT
from attnc._abi import DLDataType, DLDevice, DLTensor, Options

BUILD = os.environ.get("ATTNC_BUILD", os.path.join(os.path.dirname(__file__), "..", "..", "build"))
BF16_TARGET = "x86-64-avx512-bf16"
HALIDE_TARGETS = ("x86-64-avx512", "x86-64-avx2")  # attnc --backend=halide


def dl_tensor(array, dtype="f32"):
    """A DLTensor viewing a C-contiguous numpy array (kept alive by the caller): float32, for
    dtype bf16 a uint16 array of bf16 bit patterns, or int32 (lengths, tables, offsets)."""
    assert array.flags.c_contiguous
    if array.dtype == np.int32:
        code, bits = 0, 32  # kDLInt
    elif dtype == "bf16":
        assert array.dtype == np.uint16
        code, bits = DL_BFLOAT, 16
    else:
        assert array.dtype == np.float32
        code, bits = DL_FLOAT, 32
    shape = (ctypes.c_int64 * array.ndim)(*array.shape)
    t = DLTensor(array.ctypes.data, DLDevice(1, 0), array.ndim, DLDataType(code, bits, 1),
                 shape, None, 0)
    t._shape = shape  # keep the shape array alive with the struct
    return t


def compile_entry(name, spec, target, work, build=BUILD):
    """The C entry point (ctypes) of kernel `name` of the spec text `spec`, compiled with
    `attnc --emit=so` for `target` in the directory `work`."""
    path = os.path.join(work, name + ".mlir")
    with open(path, "w") as f:
        f.write(spec)
    so = os.path.join(work, name + ".so")
    subprocess.run([os.path.join(build, "bin", "attnc"), path, "--target", target, "--emit=so",
                    "-o", so], check=True)
    entry = getattr(ctypes.CDLL(so), name)
    entry.restype = ctypes.c_int
    return entry


def bind_call(entry, name, tensors, arrays, threads):
    """A function that calls `entry` on the DLTensors `tensors` with `threads` threads and
    returns arrays[3] (out); it keeps `arrays` alive, which the tensors only point at."""
    args = [ctypes.byref(t) for t in tensors] + [ctypes.byref(Options(threads, None))]

    def run():
        rc = entry(*args)
        if rc:
            raise RuntimeError("attnc kernel %s returned %d" % (name, rc))
        return arrays[3]
    return run


def list_targets(build=BUILD):
    """{target: runs here (bool)} from `attnc --list-targets` (a table: name first, the
    "runs here" yes / no last; the lines after the table, e.g. "backends: ...", are not
    targets)."""
    out = subprocess.run([os.path.join(build, "bin", "attnc"), "--list-targets"],
                         capture_output=True, text=True, check=True).stdout
    targets = {}
    for line in out.splitlines()[1:]:
        fields = line.split()
        if len(fields) >= 2 and fields[-1] in ("yes", "no") and not fields[0].endswith(":"):
            targets[fields[0]] = fields[-1] == "yes"
    return targets


def bf16_target(f32_target, build=BUILD):
    """The target bf16 kernels are compiled for: BF16_TARGET when this build lists it and it
    runs here (and ATTNC_CPU_FEATURES, which makes the runtime see a smaller CPU in tests,
    does not leave AVX512-BF16 out), else the f32 target."""
    seen = os.environ.get("ATTNC_CPU_FEATURES")
    if seen is not None and "avx512bf16" not in seen.split(","):
        return f32_target
    try:
        return BF16_TARGET if list_targets(build).get(BF16_TARGET) else f32_target
    except (OSError, subprocess.CalledProcessError):
        return f32_target


class AttncPeer(Peer):
    def __init__(self, targets, work, build=BUILD, label="", backend="mlir", schedule=None):
        """targets: {dtype: target}; the peer is named after the backend (halide; mlir is
        left out of the name) and the f32 target; `schedule` is passed to --schedule."""
        self.name = "attnc-" + ("" if backend == "mlir" else backend + "-") + \
            {"host": "cpu"}.get(targets["f32"], targets["f32"]) + label
        self.backend = backend
        self.schedule = schedule
        self.targets = targets
        self.label = label
        self.work = work
        self.build = build
        self.libraries = {}

    def kernel(self, w):
        name, text = w.spec()
        target = self.targets.get(w.dtype, self.targets["f32"])
        key = (name, target)
        if key not in self.libraries:
            spec = os.path.join(self.work, name + ".mlir")
            so = os.path.join(self.work, "%s.%s.%s%s.so" % (name, self.backend, target, self.label))
            with open(spec, "w") as f:
                f.write(text)
            proc = subprocess.run([os.path.join(self.build, "bin", "attnc"), spec, "--backend",
                                   self.backend, "--target", target, "--emit=so", "-o", so] +
                                  (["--schedule", self.schedule] if self.schedule else []),
                                  capture_output=True, text=True)
            if proc.returncode:
                message = compile_error(proc.stderr)
                if re.search(r"supports dtype|dtype .*not supported|unknown target", message):
                    raise Unsupported("attnc --target %s: %s" % (target, message))
                raise RuntimeError("attnc --target %s failed: %s" % (target, message))
            self.libraries[key] = ctypes.CDLL(so)
        library = self.libraries[key]
        entry = getattr(library, name)
        entry.restype = ctypes.c_int
        library.attnc_last_error.restype = ctypes.c_char_p
        return library, entry

    def prepare(self, w, q, k, v):
        library, entry = self.kernel(w)
        if w.dtype == "bf16":  # the inputs are bf16 numbers already: exact
            q, k, v = (aligned(bf16_bits(a)) for a in (q, k, v))
        out = aligned(np.zeros_like(q))
        arrays = (q, k, v, out)  # the DLTensors point into these: keep them alive with run()
        tensors = [dl_tensor(a, w.dtype) for a in arrays]
        options = Options(w.threads)
        args = [ctypes.byref(t) for t in tensors] + [None, ctypes.byref(options)]

        def run(arrays=arrays):
            if entry(*args) != 0:
                raise RuntimeError(library.attnc_last_error().decode())
            return out
        return run


def compile_error(stderr):
    """attnc's first error line, without the spec's temporary path."""
    lines = [l for l in stderr.splitlines() if "error" in l] or stderr.splitlines() or ["?"]
    return re.sub(r"^\S*\.mlir:\d+:\d+: ", "", lines[0].strip())[:300]


def make(work, targets=None, baseline=None, halide_sources=()):
    """attnc's peers (targets: {dtype: target}, default x86-64-avx512 for every dtype); with
    `baseline` (another build's directory, e.g. of the previous commit) also that build's
    kernels as `attnc-<target>-baseline` (and, on a Halide target, its Halide ones as
    `attnc-halide-<target>-baseline`), timed in the same run."""
    if not os.path.exists(os.path.join(BUILD, "bin", "attnc")):
        raise ImportError("attnc is not built (%s/bin/attnc); run scripts/setup.sh" % BUILD)
    targets = targets or {"f32": "x86-64-avx512"}
    # The Halide backend on the same target (its bf16 kernels widen to f32 there).
    halide = targets["f32"] in HALIDE_TARGETS

    def halide_peer(build=BUILD, label="", schedule=None):
        return AttncPeer({"f32": targets["f32"]}, work, build, label, "halide", schedule)

    peers = [AttncPeer(targets, work)]
    if halide:
        peers.append(halide_peer())
        # Halide's autoschedulers instead of the hand schedule (attnc-halide-<target>-as-NAME).
        peers += [halide_peer(label="-as-" + s, schedule="source=" + s) for s in halide_sources]
    if baseline:
        peers.append(AttncPeer(targets, work, baseline, "-baseline"))
        if halide:
            peers.append(halide_peer(baseline, "-baseline"))
    return peers
