"""A compiled kernel as a Python callable, from its descriptor (attnc_describe_NAME)."""
import ctypes
import functools
import inspect
import re
import sys
from typing import Any, Callable

from . import _abi
from ._dlpack import Borrowed
from .errors import AttncError

try:  # the launch in C (tools/python/attnc/_call.c), where pip built it
    from . import _call
except ImportError:
    _call = None

# type -> a function giving an object of that type as a DLPack capsule, faster than its
# __dlpack__ (_call.c): torch tensors, once torch is imported.
_converters: dict[type, Callable[[Any], Any]] = {}


def _register_torch():
    import torch
    _converters[torch.Tensor] = torch._C._to_dlpack

_DTYPES = {(_abi.K_DL_FLOAT, 32): "float32", (_abi.K_DL_FLOAT, 16): "float16",
           (_abi.K_DL_BFLOAT, 16): "bfloat16", (_abi.K_DL_INT, 32): "int32"}
_DEVICES = {_abi.K_DL_CPU: "cpu", _abi.K_DL_CUDA: "cuda"}


def _text(raw):
    return raw.decode() if raw else ""


def _dims(text):
    """"batch+1,heads,2*seq_kv-1" -> [("batch", 1, 1), ("heads", 1, 0), ("seq_kv", 2, -1)]:
    (symbol, scale, constant) per dim."""
    dims = []
    for item in filter(None, text.split(",")):
        scale, _, rest = item.rpartition("*")
        name, add = re.match(r"([^+-]*)([+-]\d+)?$", rest).groups()
        dims.append((name, int(scale) if scale else 1, int(add) if add else 0))
    return dims


def _dim_text(name, scale, add):
    return ("%d*" % scale if scale != 1 else "") + name + ("%+d" % add if add else "")


class TensorSpec:
    """One tensor of a kernel's interface (its attnc_tensor_desc)."""

    def __init__(self, desc):
        self.name = _text(desc.name)
        self.dims = _dims(_text(desc.dims))
        self.legend = _text(desc.legend)
        self.arg = desc.arg
        self.output = bool(desc.flags & _abi.TENSOR_OUTPUT)
        self.scratch = bool(desc.flags & _abi.TENSOR_SCRATCH)
        self.optional = bool(desc.flags & _abi.TENSOR_OPTIONAL)  # may be None
        self.dtype = _DTYPES.get((desc.dtype_code, desc.dtype_bits),
                                 "dtype %d/%d" % (desc.dtype_code, desc.dtype_bits))
        self.bound = _text(desc.bound)

    def shape_text(self):
        return "[%s]" % ", ".join(_dim_text(*d) for d in self.dims)

    def __repr__(self):
        return "%s: %s %s" % (self.name, self.dtype, self.shape_text())


class Kernel:
    """A kernel of a loaded object: call it with DLPack tensors (torch, NumPy, JAX).

    Inputs go by position in the kernel's argument order or by name (optional ones, which
    may be None, after the others: a backward kernel's d_lse); outputs are allocated
    (like the first input: a torch tensor on its device, else a NumPy array) unless passed
    by name (`out=...`). Returns the outputs in argument order (one alone, several as a
    tuple). Every error the C ABI reports raises AttncError with the runtime's message.
    """

    def __init__(self, library, desc_pointer, path):
        self._library = library
        self._desc_pointer = desc_pointer
        desc = desc_pointer.contents
        if desc.abi_version != _abi.ABI_VERSION:
            raise AttncError(7, "%s in %s was built for runtime ABI version %d, but this "
                             "package reads version %d; rebuild it with a matching attnc"
                             % (_text(desc.name), path, desc.abi_version, _abi.ABI_VERSION))
        self.name = _text(desc.name)
        self.target = _text(desc.target)
        self.device = _DEVICES.get(desc.device_type, "device %d" % desc.device_type)
        self.num_args = desc.num_args
        self.tensors = [TensorSpec(desc.tensors[i]) for i in range(desc.num_tensors)]
        self.symbols = {}  # fixed sizes: name -> value
        self.bound = []  # sizes the tensors bind, in table order
        for i in range(desc.num_symbols):
            s = desc.symbols[i]
            (self.symbols.__setitem__(_text(s.name), s.value) if s.value >= 0
             else self.bound.append(_text(s.name)))
        args = sorted((t for t in self.tensors if not t.scratch), key=lambda t: t.arg)
        self.inputs = ([t for t in args if not t.output and not t.optional]
                       + [t for t in args if t.optional])
        self.outputs = [t for t in args if t.output]
        # What a call looks up: names to argument positions, the C launch's addresses.
        self._input_names = [t.name for t in self.inputs]
        self._input_args = [t.arg for t in self.inputs]  # by position
        self._required_args = [t.arg for t in self.inputs if not t.optional]
        self._output_args = [t.arg for t in self.outputs]
        self._arg_of = {t.name: t.arg for t in args}
        self._plans = {}  # (input type, device, shapes) -> [(output arg, allocator or error)]
        self._desc_address = ctypes.cast(desc_pointer, ctypes.c_void_p).value
        self._run_address = ctypes.cast(library.attnc_rt_run, ctypes.c_void_p).value

    # The signature and help() text, from the descriptor.
    def signature(self):
        P = inspect.Parameter
        params = [P(t.name, P.POSITIONAL_OR_KEYWORD, annotation="%s%s" % (t.dtype, t.shape_text()))
                  for t in self.inputs if not t.optional]
        params += [P(t.name, P.POSITIONAL_OR_KEYWORD, default=None,
                     annotation="%s%s | None" % (t.dtype, t.shape_text()))
                   for t in self.inputs if t.optional]
        params += [P(t.name, P.KEYWORD_ONLY, default=None,
                     annotation="%s%s | None" % (t.dtype, t.shape_text())) for t in self.outputs]
        params.append(P("num_threads", P.KEYWORD_ONLY, default=0, annotation=int))
        params.append(P("stream", P.KEYWORD_ONLY, default=None, annotation="int | None"))
        ret = ", ".join(t.name for t in self.outputs)
        return inspect.Signature(params, return_annotation=ret if len(self.outputs) < 2
                                 else "(%s)" % ret)

    def doc(self):
        lines = ["attnc kernel %s (target %s, %s tensors)." % (self.name, self.target,
                                                              self.device), ""]
        lines += ["  %-14s %-9s %-34s %s" % (t.name, t.dtype, t.shape_text(),
                                              "output" if t.output
                                              else "input, optional" if t.optional else "input")
                  for t in self.inputs + self.outputs]
        for t in self.inputs + self.outputs:
            if t.bound:
                lines.append("  %s entries: %s" % (t.name, t.bound))
        fixed = ", ".join("%s = %d" % kv for kv in self.symbols.items())
        lines += ["", "Fixed sizes: " + (fixed or "none") + ".",
                  "Bound by the tensors: " + (", ".join(self.bound) or "none") + ".",
                  "", "Outputs not passed are allocated like the first input (torch or NumPy).",
                  "num_threads: 0 = every core; stream: a CUstream for CUDA kernels.",
                  "Raises attnc.AttncError with the runtime's message on any error."]
        return "\n".join(lines)

    # A call.
    def bind_sizes(self, given):
        """The sizes of every symbol, from the fixed ones and the inputs' shapes."""
        sizes = dict(self.symbols)
        for spec in self.inputs:
            shape = getattr(given.get(spec.name), "shape", None)
            if shape is None or len(shape) != len(spec.dims):
                continue  # the runtime reports it
            for (name, scale, add), n in zip(spec.dims, shape):
                if scale == 1 and add >= 0:  # only plain dims bind (as in the runtime)
                    sizes.setdefault(name, n - add)  # n may be symbolic (torch.compile's fakes)
        return sizes

    def output_shape(self, spec, sizes):
        try:
            # Outputs have plain dims; no max() on a torch.compile fake that needs none.
            return tuple(sizes[name] + add if scale == 1 and add >= 0
                         else max(0, scale * sizes[name] + add) for name, scale, add in spec.dims)
        except KeyError as missing:
            raise AttncError(4, "%s: cannot size output %s %s: no input binds %s; pass %s=..."
                             % (self.name, spec.name, spec.shape_text(), missing, spec.name))

    def allocator(self, spec, shape, like):
        """A function making an output for `spec` of `shape`, of the library (and device) of
        `like`: torch tensors for torch inputs, NumPy arrays otherwise."""
        if type(like).__module__.split(".")[0] == "torch":
            import torch
            return functools.partial(torch.empty, shape, dtype=getattr(torch, spec.dtype),
                                     device=like.device)
        import numpy
        if spec.dtype != "bfloat16":
            return functools.partial(numpy.empty, shape, spec.dtype)
        try:
            import ml_dtypes
        except ImportError:
            raise AttncError(2, "%s: NumPy has no bfloat16 for output %s: pass torch tensors, "
                             "install ml_dtypes, or pass %s=..." % (self.name, spec.name,
                                                                     spec.name))
        return functools.partial(numpy.empty, shape, ml_dtypes.bfloat16)

    def _slots(self, args, named):
        """The call's objects by argument position; TypeError for a Python-side mistake."""
        if len(args) > len(self._input_args):
            raise TypeError("%s takes %d inputs (%s), %d given" % (
                self.name, len(self.inputs), ", ".join(self._input_names), len(args)))
        slots = [None] * self.num_args
        for i, obj in zip(self._input_args, args):
            slots[i] = obj
        for name, obj in named.items():
            i = self._arg_of.get(name)
            if i is None:
                raise TypeError("%s has no tensor %r (it takes %s)"
                                % (self.name, name, ", ".join(sorted(self._arg_of))))
            if slots[i] is not None:
                raise TypeError("%s: %s given twice" % (self.name, name))
            slots[i] = obj
        for i in self._required_args:
            if slots[i] is None:
                raise TypeError("%s: missing input %s" % (self.name, ", ".join(
                    t.name for t in self.inputs if slots[t.arg] is None and not t.optional)))
        return slots

    def _allocate_missing(self, slots):
        """Allocates the outputs not passed: shapes from the inputs' (an allocator per output
        remembered per input type, device and shapes, so that a call in a loop costs the
        allocations alone)."""
        like = slots[self._required_args[0]]
        try:
            key = (type(like), getattr(like, "device", None),
                   *[slots[i].shape for i in self._required_args])
            plans = self._plans.get(key)
        except (AttributeError, TypeError):  # no shape, or one that does not hash
            key = plans = None
        if plans is None:
            plans = self._plan(slots, like)
            if key is not None:
                if len(self._plans) > 64:
                    self._plans.clear()
                self._plans[key] = plans
        for arg, make in plans:
            if slots[arg] is None:
                if isinstance(make, AttncError):
                    raise make
                slots[arg] = make()

    def _plan(self, slots, like):
        """[(output's argument, its allocator, or the error sizing it)]."""
        given = {t.name: slots[t.arg] for t in self.inputs if slots[t.arg] is not None}
        for name, obj in given.items():
            Borrowed.require(obj, name)
        sizes = self.bind_sizes(given)
        plans = []
        for spec in self.outputs:
            try:
                plans.append((spec.arg, self.allocator(spec, self.output_shape(spec, sizes),
                                                       like)))
            except AttncError as error:  # raised only where this output is not passed
                plans.append((spec.arg, error))
        return plans

    def __call__(self, *args, num_threads=0, stream=None, **named):
        slots = self._slots(args, named)
        for i in self._output_args:
            if slots[i] is None:
                self._allocate_missing(slots)
                break
        status = None
        if _call is not None:
            if not _converters and "torch" in sys.modules:
                _register_torch()
            try:
                status = _call.run(self._desc_address, self._run_address, slots,
                                   int(num_threads), stream, _converters)
            except Exception:
                pass  # a producer C cannot take (read-only, requires grad): the path below
        if status is None:
            status = self._run_borrowed(slots, num_threads, stream)
        if status:
            raise AttncError(status, self._library.attnc_last_error().decode())
        if len(self._output_args) == 1:
            return slots[self._output_args[0]]
        return tuple(slots[i] for i in self._output_args)

    def _run_borrowed(self, slots, num_threads, stream):
        """The launch through ctypes, each tensor borrowed by Borrowed (which also takes
        read-only NumPy arrays and tensors that require grad)."""
        names = {arg: name for name, arg in self._arg_of.items()}
        keep = [None if obj is None else Borrowed(obj, names[i]) for i, obj in enumerate(slots)]
        array = (ctypes.POINTER(_abi.DLTensor) * max(self.num_args, 1))()
        for i, borrowed in enumerate(keep):
            if borrowed is not None:
                array[i] = borrowed.pointer()
        options = _abi.Options(int(num_threads), stream)
        return self._library.attnc_rt_run(self._desc_pointer, array, ctypes.byref(options))


def bind(library):
    """Declares the runtime functions a kernel object carries (it links the runtime in)."""
    library.attnc_rt_run.restype = ctypes.c_int
    library.attnc_rt_run.argtypes = [ctypes.POINTER(_abi.KernelDesc),
                                     ctypes.POINTER(ctypes.POINTER(_abi.DLTensor)),
                                     ctypes.POINTER(_abi.Options)]
    library.attnc_last_error.restype = ctypes.c_char_p
    library.attnc_last_error.argtypes = []
    library.attnc_set_parallel_for.restype = None
    library.attnc_set_parallel_for.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
