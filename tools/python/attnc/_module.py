"""attnc.load: the kernels of a compiled shared object."""
from __future__ import annotations

import ctypes
import os
import weakref
from typing import Any, Callable

from . import _abi, _elf, _kernel
from .errors import AttncError


class Module:
    """The kernels of one shared object (`attnc SPEC --emit=so`), as attributes and by
    name (`module["causal"]`); each a function whose help() shows its tensors."""

    def __init__(self, path: str | os.PathLike):
        self.path = os.path.abspath(path)
        names = [n[len(_abi.DESCRIBE_PREFIX):] for n in _elf.exported_functions(self.path)
                 if n.startswith(_abi.DESCRIBE_PREFIX) and "." not in n]
        if not names:
            raise AttncError(1, "%s exports no attnc kernel (no %s* function): build it with "
                             "`attnc SPEC --emit=so` from this attnc" % (self.path,
                                                                         _abi.DESCRIBE_PREFIX))
        self._library = ctypes.CDLL(self.path)
        _kernel.bind(self._library)
        _loaded.add(self)
        self._use_parallel_for()
        self.kernels = {}
        for name in sorted(names):
            describe = getattr(self._library, _abi.DESCRIBE_PREFIX + name)
            describe.restype = ctypes.POINTER(_abi.KernelDesc)
            describe.argtypes = []
            desc = describe()
            if not desc:  # a multi-target object with no variant for this CPU
                raise AttncError(10, self._library.attnc_last_error().decode())
            self.kernels[name] = _callable(_kernel.Kernel(self._library, desc, self.path))

    def _use_parallel_for(self):
        # Each object links a runtime of its own, with its own setting.
        self._library.attnc_set_parallel_for(_parallel_for, None)

    def __getattr__(self, name: str) -> Callable[..., Any]:
        kernels = self.__dict__.get("kernels", {})
        if name in kernels:
            return kernels[name]
        raise AttributeError("%s has no kernel %r (it has %s)"
                             % (self.__dict__.get("path"), name, ", ".join(kernels)))

    def __getitem__(self, name: str) -> Callable[..., Any]:
        return self.__getattr__(name)

    def __dir__(self):
        return list(self.kernels) + ["kernels", "path"]

    def __repr__(self):
        return "<attnc module %s: %s>" % (self.path, ", ".join(self.kernels))


def _callable(kernel):
    """A plain function calling `kernel`, so that help() shows its signature and tensors."""
    def call(*args, **kwargs):
        return kernel(*args, **kwargs)

    call.__name__ = call.__qualname__ = kernel.name
    call.__module__ = "attnc.kernels"
    call.__doc__ = kernel.doc()
    call.__signature__ = kernel.signature()
    call.kernel = kernel
    return call


_parallel_for = None  # the host's attnc_parallel_for_fn (its address), or None: the runtime's
_loaded: weakref.WeakSet[Module] = weakref.WeakSet()


def set_parallel_for(address: int | None) -> None:
    """Runs the helper threads of every attnc kernel loaded, now and later, through the
    host's parallel loop at `address` (a C attnc_parallel_for_fn, attnc_runtime.h), or
    through each runtime's own pool again with None. attnc.torch.use_intra_op_pool() passes
    PyTorch's."""
    global _parallel_for
    _parallel_for = address
    for module in list(_loaded):
        module._use_parallel_for()


def load(path: str | os.PathLike) -> Module:
    """The kernels of the shared object at `path`, needing only the runtime it links in."""
    return Module(path)
