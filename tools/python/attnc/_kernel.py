"""A compiled kernel as a Python callable, from its descriptor (attnc_describe_NAME)."""
import ctypes
import inspect

from . import _abi
from ._dlpack import Borrowed
from .errors import AttncError

_DTYPES = {(_abi.K_DL_FLOAT, 32): "float32", (_abi.K_DL_FLOAT, 16): "float16",
           (_abi.K_DL_BFLOAT, 16): "bfloat16", (_abi.K_DL_INT, 32): "int32"}
_DEVICES = {_abi.K_DL_CPU: "cpu", _abi.K_DL_CUDA: "cuda"}


def _text(raw):
    return raw.decode() if raw else ""


def _dims(text):
    """"batch+1,heads" -> [("batch", 1), ("heads", 0)]."""
    dims = []
    for item in filter(None, text.split(",")):
        name, _, add = item.partition("+")
        dims.append((name, int(add) if add else 0))
    return dims


class TensorSpec:
    """One tensor of a kernel's interface (its attnc_tensor_desc)."""

    def __init__(self, desc):
        self.name = _text(desc.name)
        self.dims = _dims(_text(desc.dims))
        self.legend = _text(desc.legend)
        self.arg = desc.arg
        self.output = bool(desc.flags & _abi.TENSOR_OUTPUT)
        self.scratch = bool(desc.flags & _abi.TENSOR_SCRATCH)
        self.dtype = _DTYPES.get((desc.dtype_code, desc.dtype_bits),
                                 "dtype %d/%d" % (desc.dtype_code, desc.dtype_bits))
        self.bound = _text(desc.bound)

    def shape_text(self):
        return "[%s]" % ", ".join(n + ("+%d" % a if a else "") for n, a in self.dims)

    def __repr__(self):
        return "%s: %s %s" % (self.name, self.dtype, self.shape_text())


class Kernel:
    """A kernel of a loaded object: call it with DLPack tensors (torch, NumPy, JAX).

    Inputs go by position in the kernel's argument order or by name; outputs are allocated
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
        self.inputs = [t for t in args if not t.output]
        self.outputs = [t for t in args if t.output]

    # The signature and help() text, from the descriptor.
    def signature(self):
        P = inspect.Parameter
        params = [P(t.name, P.POSITIONAL_OR_KEYWORD, annotation="%s%s" % (t.dtype, t.shape_text()))
                  for t in self.inputs]
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
                                              "output" if t.output else "input")
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
            for (name, add), n in zip(spec.dims, shape):
                sizes.setdefault(name, n - add)  # n may be symbolic (torch.compile's fakes)
        return sizes

    def output_shape(self, spec, sizes):
        try:
            return tuple(sizes[name] + add for name, add in spec.dims)
        except KeyError as missing:
            raise AttncError(4, "%s: cannot size output %s %s: no input binds %s; pass %s=..."
                             % (self.name, spec.name, spec.shape_text(), missing, spec.name))

    def allocate(self, spec, sizes, like):
        """An output for `spec` shaped from `sizes`, of the library of `like`."""
        shape = self.output_shape(spec, sizes)
        module = type(like).__module__.split(".")[0]
        if module == "torch":
            import torch
            return like.new_empty(shape, dtype=getattr(torch, spec.dtype))
        import numpy
        if spec.dtype == "bfloat16":
            try:
                import ml_dtypes
            except ImportError:
                raise AttncError(2, "%s: NumPy has no bfloat16 for output %s: pass torch "
                                 "tensors, install ml_dtypes, or pass %s=..."
                                 % (self.name, spec.name, spec.name))
            return numpy.empty(shape, ml_dtypes.bfloat16)
        return numpy.empty(shape, spec.dtype)

    def __call__(self, *args, num_threads=0, stream=None, **named):
        if len(args) > len(self.inputs):
            raise TypeError("%s takes %d inputs (%s), %d given" % (
                self.name, len(self.inputs), ", ".join(t.name for t in self.inputs), len(args)))
        given = dict(zip((t.name for t in self.inputs), args))
        known = {t.name for t in self.inputs + self.outputs}
        for name, value in named.items():
            if name not in known:
                raise TypeError("%s has no tensor %r (it takes %s)"
                                % (self.name, name, ", ".join(sorted(known))))
            if name in given:
                raise TypeError("%s: %s given twice" % (self.name, name))
            given[name] = value
        missing = [t.name for t in self.inputs if given.get(t.name) is None]
        if missing:
            raise TypeError("%s: missing input %s" % (self.name, ", ".join(missing)))
        borrowed = {name: Borrowed(value, name) for name, value in given.items()}
        sizes = None
        for spec in self.outputs:
            if given.get(spec.name) is None:
                sizes = sizes or self.bind_sizes(given)
                given[spec.name] = self.allocate(spec, sizes, given[self.inputs[0].name])
                borrowed[spec.name] = Borrowed(given[spec.name], spec.name)
        array = (ctypes.POINTER(_abi.DLTensor) * max(self.num_args, 1))()
        for spec in self.inputs + self.outputs:
            array[spec.arg] = borrowed[spec.name].pointer()
        options = _abi.Options(int(num_threads), stream)
        status = self._library.attnc_rt_run(self._desc_pointer, array, ctypes.byref(options))
        if status:
            raise AttncError(status, self._library.attnc_last_error().decode())
        outs = tuple(given[t.name] for t in self.outputs)
        return outs[0] if len(outs) == 1 else outs


def bind(library):
    """Declares the runtime functions a kernel object carries (it links the runtime in)."""
    library.attnc_rt_run.restype = ctypes.c_int
    library.attnc_rt_run.argtypes = [ctypes.POINTER(_abi.KernelDesc),
                                     ctypes.POINTER(ctypes.POINTER(_abi.DLTensor)),
                                     ctypes.POINTER(_abi.Options)]
    library.attnc_last_error.restype = ctypes.c_char_p
    library.attnc_last_error.argtypes = []
