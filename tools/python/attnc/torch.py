"""attnc kernels as PyTorch custom operators (torch.library): opaque to torch.compile, so a
compiled graph calls the ahead-of-time kernel with no graph break, and its fake
implementation (output shapes from the kernel's descriptor, symbolic sizes kept symbolic)
lets `dynamic=True` graphs take any sequence length without recompiling.

    import attnc, attnc.torch
    module = attnc.compile(spec)
    op = attnc.torch.register(module.causal_gqa, "attnc::causal_gqa")
    out, lse = torch.ops.attnc.causal_gqa(q, k, v)       # or op(q, k, v)
"""
import torch

from ._kernel import Kernel


def _kernel_of(kernel):
    found = getattr(kernel, "kernel", kernel)  # a module's function, or the Kernel itself
    if not isinstance(found, Kernel):
        raise TypeError("attnc.torch.register takes a kernel of an attnc module "
                        "(module.NAME), not a %s" % type(kernel).__name__)
    return found


def schema(kernel):
    """The operator schema of `kernel`: its inputs as Tensors, its outputs returned."""
    kernel = _kernel_of(kernel)
    inputs = ", ".join("Tensor %s" % t.name for t in kernel.inputs)
    outputs = ", ".join("Tensor" for _ in kernel.outputs)
    return "(%s) -> %s" % (inputs, outputs if len(kernel.outputs) == 1 else "(%s)" % outputs)


def register(kernel, name):
    """Defines the custom operator `name` ("namespace::op") that runs `kernel` (module.NAME)
    on torch tensors, with a fake implementation for torch.compile; returns it (also
    reachable as torch.ops.namespace.op). Outputs are new tensors (the op mutates nothing)."""
    kernel = _kernel_of(kernel)
    device = "cuda" if kernel.device == "cuda" else "cpu"

    def run(*tensors):
        return kernel(*tensors)

    op = torch.library.custom_op(name, run, mutates_args=(), device_types=device,
                                 schema=schema(kernel))

    def fake(*tensors):
        sizes = kernel.bind_sizes(dict(zip((t.name for t in kernel.inputs), tensors)))
        outs = tuple(tensors[0].new_empty(kernel.output_shape(spec, sizes),
                                          dtype=getattr(torch, spec.dtype))
                     for spec in kernel.outputs)
        return outs if len(outs) > 1 else outs[0]

    op.register_fake(fake)
    op.__doc__ = kernel.doc()
    return op
