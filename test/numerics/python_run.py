"""Runs a matrix case's kernel again through the Python package (tools/python/attnc) on the
inputs attnc-run's C call used, and requires the outputs attnc-run wrote to be equal bit for
bit (compiled_check.py --python-replay).

attnc-run --so ... -o DIR calls the kernel through its C entry and writes the seeded inputs
(q, k, v in the spec's layout, padded), lengths.json (page table, lengths, offsets) and the
kernel's outputs (out, lse) as .npy, 16-bit floats as their raw bits. This module builds the
same call as cross_run.py's entry_arguments (pages, packed sequences, offsets), passes each
input by its descriptor name to the attnc.Kernel of the same shared object, lets the package
allocate the outputs (NumPy; bfloat16 from ml_dtypes), and compares the bytes.
"""
import os

import numpy as np

import attnc
from cross_run import entry_arguments, unpack

_modules = {}  # shared object -> attnc module, loaded once per run


def _storage(dtype):
    """The NumPy type of a case's q, k, v and out, and the type attnc-run's .npy holds."""
    if dtype == "bf16":
        import ml_dtypes
        return ml_dtypes.bfloat16, np.uint16
    return {"f32": np.float32, "f16": np.float16}[dtype], None


def _same_bits(got, want):
    got, want = np.ascontiguousarray(got), np.ascontiguousarray(want)
    return got.shape == want.shape and got.tobytes() == want.tobytes()


def replay(so, case, directory, threads):
    """Calls CASE's kernel in SO through attnc on DIRECTORY's inputs with THREADS threads:
    (ok, a line saying what was compared)."""
    if so not in _modules:
        _modules[so] = attnc.load(so)
    kernel = getattr(_modules[so], case["name"])
    kind, raw = _storage(case["dtype"])
    load = lambda name: np.load(os.path.join(directory, name + ".npy"))
    as_kind = lambda a: a.view(kind) if raw else a.astype(kind)
    q, k, v = (np.ascontiguousarray(as_kind(load(n))) for n in ("q", "k", "v"))
    arguments, lengths = entry_arguments(case, directory, q, k, v, "lse" in case["outputs"])
    inputs = {name: array for name, array, role in arguments if role == "in"}
    got = kernel(**inputs, num_threads=threads)
    got = dict(zip((t.name for t in kernel.kernel.outputs),
                   got if isinstance(got, tuple) else (got,)))
    compared = []
    for name, array in got.items():
        if name not in case["outputs"]:
            continue  # an lse-only kernel writes out too, which attnc-run does not keep
        if case.get("varlen"):  # packed: back to attnc-run's padded form
            seq_q = q.shape[1]
            array = (unpack(array, lengths["q_lens"], seq_q, 0) if name == "out" else
                     unpack(array.T, lengths["q_lens"], seq_q, -np.inf).transpose(0, 2, 1))
        want = load(name)
        if raw and name == "out":
            array = array.view(raw)
        if not _same_bits(array, want):
            off = (int((array != want).sum()) if array.shape == want.shape
                   else "shape %s, not %s" % (array.shape, want.shape))
            return False, "python: %s differs from the C call (%s of %d elements)" % (
                name, off, want.size)
        compared.append(name)
    return True, "python = C bit for bit: %s" % ", ".join(compared)
