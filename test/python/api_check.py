"""The Python package (tools/python/attnc) against compiled kernels, as a user calls it:

- attnc.compile of spec text -> a module whose kernels take NumPy arrays (DLPack, no copy):
  f32 out and lse against a float64 NumPy evaluation of softmax(q k^T / sqrt(d)) v with a
  bottom-right causal mask and GQA, rtol 2e-5 / atol 2e-6 (matrix.json's f32 tolerance);
- outputs allocated, or written in place through out= (a strided view of a larger buffer);
  read-only and strided inputs (NumPy exports no read-only array through DLPack);
- a packed varlen kernel with its int32 offsets and kv_lens passed by name;
- a kernel whose mods read input tensors (document ids, a bias table of 2 * seq_kv - 1
  columns) after q, k, v, against NumPy, and a table of the wrong shape;
- a backward kernel (outputs = [dq, dk, dv]) on the forward's out and lse, against NumPy's
  float64 gradients (rtol 1e-4 of each gradient's largest), and its tensors' errors;
- every error as an exception: AttncError with the runtime's code and message (shape, dtype,
  offsets, aliasing outputs, a tensor on another device), TypeError for Python-side mistakes, CompileError with attnc's diagnostic;
- help(): the signature and the tensors from the kernel's descriptor;
- the cache: a second process's compile of the same spec starts no attnc (a hash and a
  dlopen), and a changed schedule compiles again;
- attnc.load of the cached object, of a multi-target object (the variant this CPU runs),
  and of a shared object that holds no kernel.

Prints PASS / FAIL lines; exits non-zero on a failure.
"""
import argparse
import ctypes
import os
import pydoc
import subprocess
import sys

import numpy as np

import attnc
from attnc._abi import DLDataType, DLDevice, DLTensor, K_DL_CUDA, K_DL_FLOAT

SPEC = """
attn.kernel @gqa {
  attn.attention {num_heads = 4, num_kv_heads = 2, head_dim = 32, dtype = f32, layout = bhsd,
                  mask = #attn.causal<bottom_right>, outputs = [out, lse]}
}
attn.kernel @gqa_bwd {
  attn.attention {num_heads = 4, num_kv_heads = 2, head_dim = 32, dtype = f32, layout = bhsd,
                  mask = #attn.causal<bottom_right>, outputs = [dq, dk, dv]}
}
attn.kernel @packed {
  attn.attention {num_heads = 2, num_kv_heads = 1, head_dim = 32, dtype = f32, layout = bshd,
                  mask = #attn.causal<bottom_right>, outputs = [out, lse],
                  varlen = cu_seqlens, kv_cache = lengths}
}
attn.kernel @tables {
  attn.attention {num_heads = 2, head_dim = 32, dtype = f32, layout = bhsd, mask = #attn.full,
                  outputs = [out], inputs = [document_id: i32 [batch, seq_kv],
                                             bias: f32 [heads, 2 * seq_kv - 1]]}
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
      %x = attn.load @bias[%h, %kv] : f32
      %r = arith.addf %s, %x : f32
      attn.yield %r : f32
    }
    mask_mod {
    ^bb0(%b: index, %h: index, %q: index, %kv: index):
      %dq = attn.load @document_id[%b, %q] : i32
      %dk = attn.load @document_id[%b, %kv] : i32
      %keep = arith.cmpi eq, %dq, %dk : i32
      attn.yield %keep : i1
    }
}
"""
# A kernel family beside attention (one target: multi-target objects dispatch attention alone).
MHA_SPEC = """
attn.kernel @padded_mha {
  attn.multihead_attention {embed_dim = 64, dtype = f32, key_padding = lengths} {
    attn.attention {num_heads = 2, head_dim = 32, dtype = f32, layout = bshd,
                    mask = #attn.full, outputs = [out]}
  }
}
attn.kernel @causal_mha {
  attn.multihead_attention {embed_dim = 64, dtype = f32} {
    attn.attention {num_heads = 2, head_dim = 32, dtype = f32, layout = bshd,
                    mask = #attn.causal<top_left>, outputs = [out]}
  }
}
attn.kernel @in_projection {
  attn.projection {in_features = 64, out_features = 192, dtype = f32}
}
attn.kernel @causal_attention {
  attn.attention {num_heads = 2, head_dim = 32, dtype = f32, layout = bshd,
                  mask = #attn.causal<top_left>, outputs = [out]}
}
attn.kernel @out_projection {
  attn.projection {in_features = 64, out_features = 64, dtype = f32}
}
"""
RTOL, ATOL = 2e-5, 2e-6
failures = 0


def check(name, ok, detail=""):
    global failures
    failures += not ok
    print("%s %-52s %s" % ("PASS" if ok else "FAIL", name, detail))


def raises(name, call, kind, *texts):
    try:
        call()
    except kind as e:
        missing = [t for t in texts if t not in str(e)]
        return check(name, not missing, "missing %r in %r" % (missing, str(e)) if missing else "")
    except Exception as e:  # the wrong kind of exception
        return check(name, False, "%s: %s" % (type(e).__name__, e))
    check(name, False, "no exception")


def reference(q, k, v):
    """softmax(q k^T / sqrt(d)) v in float64, bottom-right causal, GQA: (out, lse)."""
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    group = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(q.shape[-1])
    sq, skv = q.shape[2], k.shape[2]
    keep = np.arange(skv)[None, :] <= np.arange(sq)[:, None] + (skv - sq)
    s = np.where(keep, s, -np.inf)
    m = s.max(-1, keepdims=True)
    p = np.exp(s - m)
    total = p.sum(-1, keepdims=True)
    return p @ v / total, (m + np.log(total))[..., 0]


def reference_gradients(q, k, v, d_out, d_lse=None):
    """The gradients of reference()'s out (and lse, for d_lse) on q, k and v for d_out, in
    float64: (dq, dk, dv), dk and dv summed over each KV head's query heads."""
    q, k, v, d_out = (x.astype(np.float64) for x in (q, k, v, d_out))
    d_lse = 0 if d_lse is None else d_lse.astype(np.float64)[..., None]
    group = q.shape[1] // k.shape[1]
    kk, vv = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
    scale = 1 / np.sqrt(q.shape[-1])
    s = q @ kk.transpose(0, 1, 3, 2) * scale
    sq, skv = q.shape[2], k.shape[2]
    s = np.where(np.arange(skv)[None, :] <= np.arange(sq)[:, None] + (skv - sq), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    dp = d_out @ vv.transpose(0, 1, 3, 2)
    ds = p * (dp - (dp * p).sum(-1, keepdims=True) + d_lse)
    fold = lambda x: x.reshape(x.shape[0], -1, group, *x.shape[2:]).sum(2)
    return (ds @ kk * scale, fold(ds.transpose(0, 1, 3, 2) @ q * scale),
            fold(p.transpose(0, 1, 3, 2) @ d_out))


def check_backward(module, rng):
    """The backward kernel: the forward's out and lse in, dq, dk and dv out, against NumPy's
    float64 gradients (rtol 1e-4 of each gradient's largest: matrix.json's f32 backward
    tolerance), and its tensors checked like the forward's."""
    q = rng.standard_normal((2, 4, 40, 32), np.float32)
    k, v = (rng.standard_normal((2, 2, 70, 32), np.float32) for _ in range(2))
    d_out = rng.standard_normal((2, 4, 40, 32), np.float32)
    out, lse = module.gqa(q, k, v)
    grads = module.gqa_bwd(q, k, v, out, lse, d_out)
    want = reference_gradients(q, k, v, d_out)
    errors = [np.abs(g - w).max() / np.abs(w).max() for g, w in zip(grads, want)]
    check("backward: dq, dk, dv = NumPy's float64 gradients", max(errors) <= 1e-4,
          "max |err| / max |want| %s" % ", ".join("%.1e" % e for e in errors))
    d_lse = rng.standard_normal(lse.shape, np.float32)
    grads = module.gqa_bwd(q, k, v, out, lse, d_out, d_lse=d_lse)
    want = reference_gradients(q, k, v, d_out, d_lse)
    errors = [np.abs(g - w).max() / np.abs(w).max() for g, w in zip(grads, want)]
    check("backward with d_lse (optional, by name): = NumPy's", max(errors) <= 1e-4,
          "max |err| / max |want| %s" % ", ".join("%.1e" % e for e in errors))
    bwd = module.gqa_bwd
    raises("backward, d_out of the wrong shape: AttncError ATTNC_ERR_SHAPE",
           lambda: bwd(q, k, v, out, lse, d_out[:, :, :39]), attnc.AttncError,
           "ATTNC_ERR_SHAPE", "d_out has shape [2, 4, 39, 32]")
    raises("backward, dq= q: AttncError ATTNC_ERR_ALIAS",
           lambda: bwd(q, k, v, out, lse, d_out, dq=q), attnc.AttncError, "ATTNC_ERR_ALIAS",
           "dq overlaps q")
    raises("backward, no lse: TypeError", lambda: bwd(q, k, v, out), TypeError,
           "missing input lse")


def close(got, want):
    return bool(np.allclose(got, want, rtol=RTOL, atol=ATOL))


class OnCuda:
    """A DLPack producer whose tensor says it is on CUDA device 0 (over host memory, which no
    kernel may read): what a torch CUDA tensor hands a CPU kernel, on a machine with no GPU."""

    class Managed(ctypes.Structure):
        _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                    ("deleter", ctypes.c_void_p)]

    def __init__(self, array):
        self.array = array
        self.shape = (ctypes.c_int64 * array.ndim)(*array.shape)
        self.managed = self.Managed(DLTensor(array.ctypes.data, DLDevice(K_DL_CUDA, 0),
                                             array.ndim, DLDataType(K_DL_FLOAT, 32, 1),
                                             self.shape, None, 0), None, None)

    def __dlpack__(self, stream=None):
        new = ctypes.pythonapi.PyCapsule_New
        new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p,
                                                       ctypes.c_void_p]
        return new(ctypes.addressof(self.managed), b"dltensor", None)

    def __dlpack_device__(self):
        return (K_DL_CUDA, 0)


def check_calls(module, rng):
    gqa = module.gqa
    q = rng.standard_normal((2, 4, 40, 32), np.float32)
    k = rng.standard_normal((2, 2, 70, 32), np.float32)
    v = rng.standard_normal((2, 2, 70, 32), np.float32)
    out, lse = gqa(q, k, v)
    want_out, want_lse = reference(q, k, v)
    check("numpy in, numpy out: out and lse = reference",
          type(out) is np.ndarray and out.dtype == np.float32 and close(out, want_out) and
          close(lse, want_lse), "max |err| %.2e" % np.abs(out - want_out).max())
    # In place: out as a strided view of a larger buffer, lse preallocated.
    buffer = np.full((2, 4, 40, 64), 7.0, np.float32)
    view, lse2 = buffer[..., 16:48], np.empty((2, 4, 40), np.float32)
    got = gqa(q, k, v, out=view, lse=lse2, num_threads=1)
    check("out= a strided view: written in place, returned",
          got[0] is view and got[0].ctypes.data == buffer.ctypes.data + 64 and got[1] is lse2 and close(buffer[..., 16:48], want_out) and
          bool((buffer[..., :16] == 7).all() and (buffer[..., 48:] == 7).all()))
    # By name, and the bit-identical result on one thread and on all.
    again = gqa(q=q, k=k, v=v, num_threads=0)[0]
    check("inputs by name, any thread count: bit-identical", np.array_equal(again, view))

    # Read-only inputs (np.load(mmap_mode="r"), views of bytes), which NumPy's DLPack does not
    # export, strided too: described from the array interface, the same bits.
    wide = np.repeat(k, 2, axis=2)
    frozen = [x.copy() for x in (q, wide, np.repeat(v, 2, axis=2))]
    for x in frozen:
        x.setflags(write=False)
    got = gqa(frozen[0], frozen[1][:, :, ::2], frozen[2][:, :, ::2])[0]
    check("read-only strided NumPy inputs: bit-identical", np.array_equal(got, out))
    raises("wrong shape: AttncError ATTNC_ERR_SHAPE", lambda: gqa(q, k[:, :1], v), attnc.AttncError,
           "ATTNC_ERR_SHAPE", "k has shape [2, 1, 70, 32]")
    raises("float64 input: AttncError ATTNC_ERR_DTYPE", lambda: gqa(q.astype(np.float64), k, v),
           attnc.AttncError, "ATTNC_ERR_DTYPE", "q has dtype float64")
    raises("missing input: TypeError", lambda: gqa(q, k), TypeError, "missing input v")
    raises("unknown tensor: TypeError", lambda: gqa(q, k, v, weights=q), TypeError,
           "gqa has no tensor 'weights'")
    raises("a list, not a tensor: TypeError", lambda: gqa(q.tolist(), k, v), TypeError,
           "q is a list, which has no __dlpack__")
    raises("out= one of the inputs: AttncError ATTNC_ERR_ALIAS",
           lambda: gqa(q, k, v, out=q),
           attnc.AttncError, "ATTNC_ERR_ALIAS", "out overlaps q")
    raises("lse= inside out: AttncError ATTNC_ERR_ALIAS",
           lambda: gqa(q, k, v, out=view, lse=buffer[:, :, :, 0]),
           attnc.AttncError, "ATTNC_ERR_ALIAS", "out overlaps lse in memory")
    raises("a tensor on another device: AttncError ATTNC_ERR_DEVICE",
           lambda: gqa(OnCuda(q), k, v), attnc.AttncError, "ATTNC_ERR_DEVICE", "q is on")
    try:
        gqa(q, k, v[:, :, :69])
    except attnc.AttncError as e:
        check("AttncError carries status and code", e.status == 4 and e.code == "ATTNC_ERR_SHAPE")


def check_varlen(module, rng):
    packed = module.packed
    q_lens, kv_spans, used = [3, 0, 17], [5, 9, 40], [5, 2, 33]
    q = rng.standard_normal((sum(q_lens), 2, 32), np.float32)
    k = rng.standard_normal((sum(kv_spans), 1, 32), np.float32)
    v = rng.standard_normal((sum(kv_spans), 1, 32), np.float32)
    offsets = lambda lens: np.concatenate([[0], np.cumsum(lens)]).astype(np.int32)
    cu_q, cu_kv = offsets(q_lens), offsets(kv_spans)
    out, lse = packed(q, k, v, cu_seqlens_q=cu_q, cu_seqlens_kv=cu_kv,
                      kv_lens=np.array(used, np.int32))
    ok = out.shape == q.shape and lse.shape == (2, q.shape[0])
    for b in range(3):
        if q_lens[b] == 0:
            continue
        qs = q[cu_q[b]:cu_q[b + 1]].transpose(1, 0, 2)[None]
        ks = k[cu_kv[b]:cu_kv[b] + used[b]].transpose(1, 0, 2)[None]
        vs = v[cu_kv[b]:cu_kv[b] + used[b]].transpose(1, 0, 2)[None]
        want_out, want_lse = reference(qs, ks, vs)
        ok &= close(out[cu_q[b]:cu_q[b + 1]], want_out[0].transpose(1, 0, 2))
        ok &= close(lse[:, cu_q[b]:cu_q[b + 1]], want_lse[0])
    check("varlen with kv_lens by name: each sequence = reference", ok)
    raises("kv_lens over its span: AttncError ATTNC_ERR_INDEX",
           lambda: packed(q, k, v, cu_seqlens_q=cu_q, cu_seqlens_kv=cu_kv,
                          kv_lens=np.array([5, 10, 33], np.int32)),
           attnc.AttncError, "ATTNC_ERR_INDEX", "kv_lens[1] = 10, but sequence 1 has 9 rows")


def check_mod_inputs(module, rng):
    """Inputs the mods read follow q, k, v; a float64 NumPy evaluation of the same mask and
    bias is the reference."""
    q = rng.standard_normal((2, 2, 20, 32), np.float32)
    k = rng.standard_normal((2, 2, 20, 32), np.float32)
    v = rng.standard_normal((2, 2, 20, 32), np.float32)
    ids = np.array([[0] * 7 + [1] * 13, [0] * 15 + [2] * 5], np.int32)
    bias = rng.standard_normal((2, 39), np.float32)
    out = module.tables(q, k, v, ids, bias)
    s = np.einsum("bhqd,bhkd->bhqk", q.astype(np.float64), k) / np.sqrt(32)
    s = s + bias[None, :, None, :20]
    s = np.where(ids[:, None, :, None] == ids[:, None, None, :], s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    want = np.einsum("bhqk,bhkd->bhqd", p / p.sum(-1, keepdims=True), v)
    check("mod inputs after q, k, v: out = reference", close(out, want))
    raises("a table of the wrong shape: AttncError ATTNC_ERR_SHAPE",
           lambda: module.tables(q, k, v, ids, bias[:, :38]), attnc.AttncError,
           "ATTNC_ERR_SHAPE", "bias has shape [2, 38] but needs [2, 39] (heads, 2*seq_kv-1)")


def check_key_padding(args, rng):
    """A multi-head attention with key_padding = lengths: sequence b attends its first
    key_lengths[b] keys, a sequence with none gives out = out_proj_bias; a length over seq is
    an error before any work."""
    module = attnc.compile(MHA_SPEC, target="host", cache=os.path.join(args.work, "cache"),
                           attnc=args.attnc)
    x = rng.standard_normal((2, 6, 64), np.float32)
    w_in = rng.standard_normal((192, 64), np.float32) / 8
    b_in = rng.standard_normal(192, np.float32)
    w_out = rng.standard_normal((64, 64), np.float32) / 8
    b_out = rng.standard_normal(64, np.float32)
    weights = dict(in_proj_weight=w_in, in_proj_bias=b_in, out_proj_weight=w_out,
                   out_proj_bias=b_out)
    out = module.padded_mha(x, key_lengths=np.array([0, 4], np.int32), **weights)
    proj = x[1].astype(np.float64) @ w_in.T + b_in
    q, k, v = (proj[:, 64 * i:64 * i + 64].reshape(6, 2, 32) for i in range(3))
    s = np.einsum("ihd,jhd->hij", q, k[:4]) / np.sqrt(32)
    p = np.exp(s - s.max(-1, keepdims=True))
    attn = np.einsum("hij,jhd->ihd", p / p.sum(-1, keepdims=True), v[:4]).reshape(6, 64)
    ok = close(out[0], np.broadcast_to(b_out, (6, 64))) and close(out[1], attn @ w_out.T + b_out)
    check("multi-head key padding by key_lengths: no keys = bias, 4 keys = reference", ok)
    raises("key_lengths over seq: AttncError ATTNC_ERR_INDEX",
           lambda: module.padded_mha(x, key_lengths=np.array([7, 4], np.int32), **weights),
           attnc.AttncError, "ATTNC_ERR_INDEX", "key_lengths[0] = 7")


def check_composition(args, rng):
    """The fused multi-head attention equals attnc's own composition: the QKV projection
    kernel, the attention kernel on strided views of its output (q, k, v side by side in each
    row), the output projection kernel."""
    module = attnc.compile(MHA_SPEC, target="host", cache=os.path.join(args.work, "cache"),
                           attnc=args.attnc)
    x = rng.standard_normal((2, 70, 64), np.float32)
    w_in = rng.standard_normal((192, 64), np.float32) / 8
    b_in = rng.standard_normal(192, np.float32)
    w_out = rng.standard_normal((64, 64), np.float32) / 8
    b_out = rng.standard_normal(64, np.float32)
    fused = module.causal_mha(x, in_proj_weight=w_in, in_proj_bias=b_in, out_proj_weight=w_out,
                              out_proj_bias=b_out)
    qkv = module.in_projection(x, w_in, bias=b_in)
    q, k, v = (qkv[:, :, 64 * i:64 * i + 64].reshape(2, 70, 2, 32) for i in range(3))
    ok = not q.flags.c_contiguous  # the views are strided, not copies
    attn = module.causal_attention(q, k, v)
    composed = module.out_projection(attn.reshape(2, 70, 64), w_out, bias=b_out)
    ok &= close(fused, composed)
    check("fused multi-head attention = projection, attention, projection kernels", ok,
          "max |fused - composed| %.1e" % np.abs(fused - composed).max())


def check_help(module):
    text = pydoc.render_doc(module.gqa, renderer=pydoc.plaintext)
    wanted = ["gqa(q: 'float32[batch, heads, seq_q, head_dim]'", "*, out:", "lse:",
              "num_threads: int = 0", "k              float32   [batch, kv_heads, seq_kv, head_dim]",
              "Fixed sizes: heads = 4, kv_heads = 2, head_dim = 32"]
    missing = [w for w in wanted if w not in text]
    check("help(): signature and tensors from the descriptor", not missing,
          "missing %r in:\n%s" % (missing, text) if missing else "")
    check("dir(module) lists the kernels", {"gqa", "packed"} <= set(dir(module)))
    text = pydoc.render_doc(module.tables, renderer=pydoc.plaintext)
    wanted = ["document_id: 'int32[batch, seq_kv]'", "bias: 'float32[heads, 2*seq_kv-1]'"]
    missing = [w for w in wanted if w not in text]
    check("help(): the inputs the mods read", not missing,
          "missing %r in:\n%s" % (missing, text) if missing else "")


def check_cache(args, work):
    """A second process compiles the same spec without starting attnc."""
    log = os.path.join(work, "attnc-calls.log")
    wrapper = os.path.join(work, "attnc-logged")
    with open(wrapper, "w") as f:
        f.write('#!/bin/sh\necho "$@" >> %s\nexec %s "$@"\n' % (log, args.attnc))
    os.chmod(wrapper, 0o755)
    code = ("import attnc, sys; m = attnc.compile(sys.argv[1], cache=sys.argv[2], "
            "schedule=sys.argv[3] or None); print(m.gqa.kernel.target)")
    env = dict(os.environ, ATTNC=wrapper)
    calls = []
    for schedule in ("", "", "block_kv=32"):
        subprocess.run([sys.executable, "-c", code, SPEC, os.path.join(work, "cache2"), schedule],
                       check=True, env=env, stdout=subprocess.DEVNULL)
        with open(log) as f:
            calls.append(len(f.readlines()))
    # First: --version and the compile; second: nothing; another schedule: the compile.
    check("cache: a second process starts no attnc", calls == [2, 2, 3], "attnc runs %s" % calls)


def check_load(args, work, rng):
    cached = attnc.compile(SPEC, cache=os.path.join(work, "cache"), attnc=args.attnc)
    again = attnc.load(cached.path)
    q = rng.standard_normal((1, 4, 8, 32), np.float32)
    k = rng.standard_normal((1, 2, 8, 32), np.float32)
    check("load(cached object) = compile's kernels",
          np.array_equal(again.gqa(q, k, k)[0], cached.gqa(q, k, k)[0]))
    multi = attnc.compile(SPEC, target="x86-64-avx2,x86-64", cache=os.path.join(work, "cache"),
                          attnc=args.attnc)
    chosen = multi.gqa.kernel.target
    check("multi-target object: the variant this CPU runs", chosen in ("x86-64-avx2", "x86-64")
          and close(multi.gqa(q, k, k)[0], cached.gqa(q, k, k)[0]), chosen)
    libm = next(p for p in ("/lib/x86_64-linux-gnu/libm.so.6", "/usr/lib/x86_64-linux-gnu/libm.so.6")
                if os.path.exists(p))
    raises("load(an object with no kernel): AttncError", lambda: attnc.load(libm),
           attnc.AttncError, "exports no attnc kernel")
    raises("a bad spec: CompileError with attnc's diagnostic",
           lambda: attnc.compile(SPEC.replace("head_dim = 32", "head_dim = 0"),
                                 cache=os.path.join(work, "cache"), attnc=args.attnc),
           attnc.CompileError, "<spec>:", "error:")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attnc", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    rng = np.random.default_rng(7)
    module = attnc.compile(SPEC, cache=os.path.join(args.work, "cache"), attnc=args.attnc)
    check_calls(module, rng)
    check_varlen(module, rng)
    check_mod_inputs(module, rng)
    check_key_padding(args, rng)
    check_composition(args, rng)
    check_backward(module, rng)
    check_help(module)
    check_cache(args, args.work)
    check_load(args, args.work, rng)
    print("%d failed" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
