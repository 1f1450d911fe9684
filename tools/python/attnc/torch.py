"""attnc kernels as PyTorch custom operators (torch.library): opaque to torch.compile, so a
compiled graph calls the ahead-of-time kernel with no graph break, and its fake
implementation (output shapes from the kernel's descriptor, symbolic sizes kept symbolic)
lets `dynamic=True` graphs take any sequence length without recompiling.

    import attnc, attnc.torch
    module = attnc.compile(spec)
    op = attnc.torch.register(module.causal_gqa, "attnc::causal_gqa")
    out, lse = torch.ops.attnc.causal_gqa(q, k, v)       # or op(q, k, v)

attnc.torch.register_autograd(module.fwd, module.bwd, "attnc::attention") does the same for a
forward kernel (outputs = [out, lse]) and makes torch.autograd run the backward kernel of the
same spec (outputs = [dq, dk, dv]) for it.

attnc.torch.use_intra_op_pool() runs the kernels' helper threads on PyTorch's intra-op pool
(at::parallel_for) instead of the runtime's own, so that kernels and torch share threads.
"""
from __future__ import annotations

import os
from typing import Any, Callable

import torch

from . import _module
from ._kernel import Kernel

# attnc_parallel_for_fn over at::parallel_for, and a count of its calls (for the tests).
_POOL_SOURCE = r"""
#include <ATen/Parallel.h>
#include <atomic>
#include <cstdint>

namespace {
std::atomic<int64_t> calls{0};

int parallelFor(void *, int32_t count, void (*body)(void *, int32_t), void *closure) {
  calls.fetch_add(1, std::memory_order_relaxed);
  at::parallel_for(0, count, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      body(closure, static_cast<int32_t>(i));
  });
  return 0;
}
} // namespace

int64_t parallel_for_address() { return reinterpret_cast<int64_t>(&parallelFor); }
int64_t parallel_for_calls() { return calls.load(); }
"""
_pool = None


def intra_op_pool() -> Any:
    """The C++ helper holding the attnc_parallel_for_fn over PyTorch's intra-op pool:
    compiled against this torch's headers on first use (torch.utils.cpp_extension, about a
    minute on 2 cores; cached under $TORCH_EXTENSIONS_DIR, ~/.cache/torch_extensions)."""
    global _pool
    if _pool is None:
        from torch.utils.cpp_extension import load_inline
        _pool = load_inline("attnc_intra_op_pool", _POOL_SOURCE,
                            functions=["parallel_for_address", "parallel_for_calls"],
                            extra_cflags=["-O2"], verbose=bool(os.environ.get("ATTNC_VERBOSE")))
    return _pool


def use_intra_op_pool(enable: bool = True) -> None:
    """Runs the helper threads of every attnc kernel loaded, now and later, on PyTorch's
    intra-op pool (torch.get_num_threads() threads; num_threads=0 calls take them all), or
    on each runtime's own pool again with enable=False. Results do not change: the kernels
    split their work the same way on any threads."""
    _module.set_parallel_for(intra_op_pool().parallel_for_address() if enable else None)


def _kernel_of(kernel):
    found = getattr(kernel, "kernel", kernel)  # a module's function, or the Kernel itself
    if not isinstance(found, Kernel):
        raise TypeError("attnc.torch.register takes a kernel of an attnc module "
                        "(module.NAME), not a %s" % type(kernel).__name__)
    return found


def schema(kernel: Callable[..., Any] | Kernel) -> str:
    """The operator schema of `kernel`: its inputs as Tensors (optional ones `Tensor?`,
    default None), its outputs returned."""
    found = _kernel_of(kernel)
    inputs = ", ".join(("Tensor? %s=None" if t.optional else "Tensor %s") % t.name
                       for t in found.inputs)
    outputs = ", ".join("Tensor" for _ in found.outputs)
    return "(%s) -> %s" % (inputs, outputs if len(found.outputs) == 1 else "(%s)" % outputs)


def register(kernel: Callable[..., Any] | Kernel, name: str) -> Any:
    """Defines the custom operator `name` ("namespace::op") that runs `kernel` (module.NAME)
    on torch tensors, with a fake implementation for torch.compile; returns it (also
    reachable as torch.ops.namespace.op). Outputs are new tensors (the op mutates nothing)."""
    found = _kernel_of(kernel)
    device = "cuda" if found.device == "cuda" else "cpu"

    def run(*tensors):
        return found(*tensors)

    op = torch.library.custom_op(name, run, mutates_args=(), device_types=device,
                                 schema=schema(found))

    def fake(*tensors):
        sizes = found.bind_sizes(dict(zip((t.name for t in found.inputs), tensors)))
        outs = tuple(tensors[0].new_empty(found.output_shape(spec, sizes),
                                          dtype=getattr(torch, spec.dtype))
                     for spec in found.outputs)
        return outs if len(outs) > 1 else outs[0]

    op.register_fake(fake)
    op.__doc__ = found.doc()
    return op


def register_autograd(forward: Callable[..., Any] | Kernel, backward: Callable[..., Any] | Kernel,
                      name: str) -> Any:
    """Defines the custom operator `name` as register() does for `forward` (a kernel of a spec
    with outputs = [out, lse]) and makes torch.autograd run `backward` (the same spec with
    outputs = [dq, dk, dv]) for it: gradients reach q, k, v and the float32 tensors the
    spec's mods read (bias tables, per-head values; the int32 ones, ids and lengths, get
    none). A loss through lse reaches q and k too (the backward kernel's d_lse). Also
    registers the backward kernel as `name` + "_backward"."""
    fwd, bwd = _kernel_of(forward), _kernel_of(backward)
    names = lambda tensors: [t.name for t in tensors]
    extras = names(fwd.inputs)[3:]  # the tensors the mods read
    tables = [t.name for t in fwd.inputs[3:] if t.dtype == "float32"]  # with gradients
    if names(fwd.inputs)[:3] != ["q", "k", "v"] or names(fwd.outputs) != ["out", "lse"]:
        raise TypeError("attnc.torch.register_autograd takes a forward kernel of q, k, v with "
                        "outputs = [out, lse]; %s has inputs %s and outputs %s"
                        % (fwd.name, names(fwd.inputs), names(fwd.outputs)))
    if (names(bwd.outputs) != ["dq", "dk", "dv"] + ["d_" + t for t in tables]
            or names(bwd.inputs) != ["q", "k", "v", "out", "lse", "d_out"] + extras + ["d_lse"]):
        raise TypeError("attnc.torch.register_autograd takes the backward kernel of the same "
                        "spec (outputs = [dq, dk, dv]); %s has inputs %s and outputs %s"
                        % (bwd.name, names(bwd.inputs), names(bwd.outputs)))
    op = register(fwd, name)
    backward_op = register(bwd, name + "_backward")

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs, *output)

    def gradients(ctx, d_out, d_lse):
        q, k, v, *mods, out, lse = ctx.saved_tensors
        if d_out is None:  # a loss through lse alone
            d_out = torch.zeros_like(out)
        dq, dk, dv, *d_tables = backward_op(
            q, k, v, out, lse, d_out.contiguous(), *mods,
            None if d_lse is None else d_lse.to(torch.float32).contiguous())
        # The float32 inputs' gradients in order; ids and lengths (int32) have none.
        found = iter(d_tables)
        return (dq, dk, dv) + tuple(next(found) if name in tables else None for name in extras)

    op.register_autograd(gradients, setup_context=setup_context)
    return op
