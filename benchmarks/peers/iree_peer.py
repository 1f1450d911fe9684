"""IREE's CPU attention as a peer: one `iree_linalg_ext.attention` op per workload, compiled
ahead of time by iree-base-compiler for the host CPU (llvm-cpu, --iree-llvmcpu-target-cpu=host)
and run by iree-base-runtime's local-task driver on w.threads worker threads.

How each variant is expressed (IREE 3.13.0):
  dense           no mask operand.
  every other     the optional mask operand: the workload's boolean keep matrix as an i1
                  tensor [seq, seq] (True = attend), built in prepare and broadcast over batch
                  and heads by its indexing map (m, k2). IREE computes every (query, key) pair
                  and applies the mask per element: it does not skip fully masked tiles, so a
                  sliding window costs as much as dense attention.
                  (The op's region can compute a mask from iree_linalg_ext.index, which would
                  avoid the seq^2 mask, but 3.13's llvm-cpu pipeline rejects it or, with the
                  loops reordered, computes wrong results; the mask operand is what works.)
  gqa             native, without repeating k/v: q [B, H, S, D] is viewed as
                  [B, KVH, H/KVH, S, D] and k/v keep [B, KVH, S, D]; the indexing maps give
                  k and v no group dimension, so query head h reads kv head h // (H/KVH).

bf16: the same op on bf16 q, k, v and out (the scale stays an f32 constant); IREE's llvm-cpu
lowering accumulates in f32. The inputs are uploaded as ml_dtypes.bfloat16 arrays (ml_dtypes
comes with iree-base-runtime), and the output comes back as one.

Threads: the local-task driver's executor is created from the process-wide runtime flags when
a driver is created, so prepare parses --task_topology_group_count=w.threads and creates a
fresh (uncached) driver and device for each thread count (kept for later workloads). Inputs
are uploaded once in prepare; the timed call runs the module and maps the result to numpy.
"""
import time

import numpy as np

from peers.base import Peer, Unsupported

try:
    import iree.compiler as ireec
    import iree.runtime as ireert
except ImportError as e:  # make() reports it
    ireec = ireert = None
    _IMPORT_ERROR = e

COMPILE_ARGS = ["--iree-llvmcpu-target-cpu=host"]
MASK_BYTES_LIMIT = 4 << 30


def f32_hex(x):
    """An MLIR float literal that is exactly the float32 nearest x."""
    return "0x%08X" % int(np.float32(x).view(np.uint32))


def module_text(w):
    """The MLIR module of workload w: @attention(q, k, v[, mask]) -> out."""
    b, h, kvh, s, d = w.batch, w.heads, w.kv_heads, w.seq, w.head_dim
    if h % kvh:
        raise Unsupported("heads (%d) not a multiple of kv_heads (%d)" % (h, kvh))
    g = h // kvh
    if g > 1:  # loops (b, h, g, m, k1, k2, n): k and v have no g
        dims = "(b, h, g, m, k1, k2, n)"
        q_shape, kv_shape = (b, kvh, g, s, d), (b, kvh, s, d)
        q_map, o_map = "(b, h, g, m, k1)", "(b, h, g, m, n)"
    else:
        dims = "(b, h, m, k1, k2, n)"
        q_shape, kv_shape = (b, h, s, d), (b, h, s, d)
        q_map, o_map = "(b, h, m, k1)", "(b, h, m, n)"
    maps = [q_map, "(b, h, k2, k1)", "(b, h, k2, n)", "()"]
    element = {"f32": "f32", "bf16": "bf16"}[w.dtype]
    tq = "tensor<%sx%s>" % ("x".join(map(str, q_shape)), element)
    tkv = "tensor<%sx%s>" % ("x".join(map(str, kv_shape)), element)
    args = ["%%q: %s" % tq, "%%k: %s" % tkv, "%%v: %s" % tkv]
    ins, types = ["%q", "%k", "%v", "%scale"], [tq, tkv, tkv, "f32"]
    if w.variant != "dense":
        tm = "tensor<%dx%dxi1>" % (s, s)
        args.append("%%mask: %s" % tm)
        ins.append("%mask")
        types.append(tm)
        maps.append("(m, k2)")
    maps.append(o_map)
    map_text = ",\n      ".join("affine_map<%s -> %s>" % (dims, m) for m in maps)
    return """func.func @attention(%(args)s) -> %(tq)s {
  %%scale = arith.constant %(scale)s : f32
  %%init = tensor.empty() : %(tq)s
  %%out = iree_linalg_ext.attention <indexing_maps = [
      %(maps)s]>
      ins(%(ins)s : %(types)s) outs(%%init : %(tq)s) {
    ^bb0(%%score: f32):
      iree_linalg_ext.yield %%score : f32
  } -> %(tq)s
  return %%out : %(tq)s
}
""" % {"args": ", ".join(args), "tq": tq, "scale": f32_hex(1.0 / np.sqrt(d)), "maps": map_text,
       "ins": ", ".join(ins), "types": ", ".join(types)}


class IreePeer(Peer):
    name = "iree"

    def __init__(self):
        self.modules = {}  # module text -> vmfb bytes (a thread count needs no recompilation)
        self.devices = {}  # threads -> (driver, device)
        self.compile_seconds = {}  # module text -> seconds iree-compile took (for the report)

    def device(self, threads):
        if threads not in self.devices:
            # The executor reads these flags when the driver is created: a new driver per count.
            ireert.flags.parse_flags("--task_topology_group_count=%d" % threads)
            driver = ireert._binding.create_hal_driver("local-task")
            self.devices[threads] = (driver, driver.create_default_device())
        return self.devices[threads][1]

    def vmfb(self, text):
        if text not in self.modules:
            start = time.perf_counter()
            self.modules[text] = ireec.compile_str(text, target_backends=["llvm-cpu"],
                                                   extra_args=COMPILE_ARGS)
            self.compile_seconds[text] = time.perf_counter() - start
        return self.modules[text]

    def prepare(self, w, q, k, v):
        if w.variant != "dense" and w.seq * w.seq > MASK_BYTES_LIMIT:
            raise Unsupported("the i1 mask of seq x seq (%d x %d) would take more than 4 GiB"
                              % (w.seq, w.seq))
        text = module_text(w)
        vmfb = self.vmfb(text)
        device = self.device(w.threads)
        config = ireert.Config(device=device)
        context = ireert.SystemContext(config=config)
        context.add_vm_module(ireert.VmModule.copy_buffer(context.instance, vmfb))
        function = context.modules.module["attention"]
        g = w.heads // w.kv_heads
        element = np.float32
        if w.dtype == "bf16":
            try:
                import ml_dtypes
            except ImportError as e:
                raise Unsupported("bf16 inputs need ml_dtypes (with iree-base-runtime): %s" % e)
            element = ml_dtypes.bfloat16  # exact: the inputs are bf16 numbers already
        qv = np.ascontiguousarray(q, np.float32).astype(element, copy=False)
        if g > 1:
            qv = qv.reshape(w.batch, w.kv_heads, g, w.seq, w.head_dim)
        args = [qv, np.ascontiguousarray(k, np.float32).astype(element, copy=False),
                np.ascontiguousarray(v, np.float32).astype(element, copy=False)]
        if w.variant != "dense":
            args.append(np.ascontiguousarray(w.keep_matrix(), np.bool_))
        args = [ireert.asdevicearray(device, a) for a in args]
        shape = (w.batch, w.heads, w.seq, w.head_dim)

        def run():
            return function(*args).to_host().reshape(shape)
        run.context = context  # keep the VM context alive with the closure
        return run


def make():
    if ireert is None:
        raise ImportError("iree-base-compiler / iree-base-runtime: %s" % _IMPORT_ERROR)
    return [IreePeer()]
