"""attnc from Python: load compiled attention kernels, compile specs, call kernels on any
DLPack tensors (PyTorch, NumPy, JAX) without copies.

    import attnc, torch
    module = attnc.compile("examples/causal_gqa.mlir")   # a spec's path or its text
    out, lse = module.causal_gqa(q, k, v)                # torch tensors in, torch tensors out
    help(module.causal_gqa)                              # its tensors, dtypes and shapes

attnc.load("k.so") loads an object built by `attnc SPEC --emit=so`; it needs only the runtime
the object links in (no MLIR). Errors the C ABI reports raise attnc.AttncError.
attnc.torch.register(module.causal_gqa, "attnc::causal_gqa") makes a kernel a torch custom op
(docs/Python.md). attnc.viz.head_view(weights, tokens, "heads.html") draws attention weights
as an interactive page.
"""
import importlib

from ._compile import compile, find_attnc
from ._module import Module, load
from .errors import AttncError, CompileError

__all__ = ["AttncError", "CompileError", "Module", "compile", "find_attnc", "load"]


def __getattr__(name):
    """attnc.torch and attnc.viz on first use: importing attnc imports neither torch nor
    NumPy."""
    if name in ("torch", "viz"):
        return importlib.import_module("attnc." + name)
    raise AttributeError("module 'attnc' has no attribute %r" % name)
