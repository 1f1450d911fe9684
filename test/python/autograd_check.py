"""torch.autograd through attnc kernels (attnc.torch.register_autograd), issue 40's acceptance:

- for each variant (dense, causal, sliding window, block-sparse, GQA, soft-capping, ALiBi) and
  query / key length N in {1, 17, 128, 2048}: the forward kernel (outputs = [out, lse]) as a
  custom op whose backward is the backward kernel (outputs = [dq, dk, dv]); the gradients of
  sum(out * w) on q, k and v against torch autograd through a float64 math attention with the
  same mask and score_mod, |got - want| <= rtol (|want| + max(max |want|, max |d_out|)) with
  rtol 1e-4 in f32 and 2e-2 in bf16 (matrix.json's backward tolerances);
- packed documents of random lengths, the mask_mod reading a document-id tensor (int32, passed
  to the op after q, k, v; it gets no gradient);
- learned tables the score_mod reads (a relative-position bias [heads, 33] and per-head
  soft-cap values, float32): their gradients too, in f32 and bf16, and on 1, 2 and 8 threads
  the same bits;
- the backward kernel's dq, dk and dv bit-identical on 1, 2 and 8 threads;
- a loss through lse as well as out (the backward kernel's d_lse), and through lse alone:
  the gradients against float64 autograd again.

Prints PASS / FAIL lines; exits non-zero on a failure.
"""
import argparse
import math
import sys

import torch

import attnc
import attnc.torch

SPEC = """
attn.kernel @fwd {{
  attn.attention {{num_heads = {heads}, num_kv_heads = {kv_heads}, head_dim = 32, dtype = {dtype},
                  layout = bhsd, mask = {mask}, outputs = [out, lse]}}
{mod}}}
attn.kernel @bwd {{
  attn.attention {{num_heads = {heads}, num_kv_heads = {kv_heads}, head_dim = 32, dtype = {dtype},
                  layout = bhsd, mask = {mask}, outputs = [dq, dk, dv]}}
{mod}}}
"""
SOFTCAP = """  score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %cap = arith.constant 3.0 : f32
    %x = arith.divf %s, %cap : f32
    %t = math.tanh %x : f32
    %r = arith.mulf %t, %cap : f32
    attn.yield %r : f32
  }
"""
ALIBI = """  score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %d = arith.subi %kv, %q : index
    %di = arith.index_cast %d : index to i32
    %df = arith.sitofp %di : i32 to f32
    %hi = arith.index_cast %h : index to i32
    %hf = arith.sitofp %hi : i32 to f32
    %one = arith.constant 1.0 : f32
    %h1 = arith.addf %hf, %one : f32
    %c = arith.constant -0.125 : f32
    %slope = arith.mulf %c, %h1 : f32
    %bias = arith.mulf %slope, %df : f32
    %r = arith.addf %s, %bias : f32
    attn.yield %r : f32
  }
"""
# Blocks of 16 x 16 over 2048 positions: block (r, c) kept where (r + 2 c) % 3 != 0, and
# every diagonal block.
LAYOUT = [[int((r + 2 * c) % 3 != 0 or r == c) for c in range(128)] for r in range(128)]
BLOCKS = "#attn.block_sparse<block = [16, 16], layout = [%s]>" % ", ".join(
    "[%s]" % ", ".join(map(str, row)) for row in LAYOUT)
# name: (mask attribute, its keep(q, kv) for torch, score_mod, its torch form, heads, kv heads)
VARIANTS = {
    "dense": ("#attn.full", lambda i, j: torch.ones_like(i + j, dtype=torch.bool), "", None, 4, 4),
    "causal": ("#attn.causal<top_left>", lambda i, j: j <= i, "", None, 4, 4),
    "window": ("#attn.sliding_window<left = 8, right = 2>", lambda i, j: (j >= i - 8) & (j <= i + 2),
               "", None, 4, 4),
    "block_sparse": (BLOCKS, lambda i, j: torch.tensor(LAYOUT, dtype=torch.bool)[i // 16, j // 16],
                     "", None, 4, 4),
    "gqa_causal": ("#attn.causal<top_left>", lambda i, j: j <= i, "", None, 8, 2),
    "softcap": ("#attn.causal<top_left>", lambda i, j: j <= i, SOFTCAP,
                lambda s, h, i, j: 3.0 * torch.tanh(s / 3.0), 4, 4),
    "alibi": ("#attn.causal<top_left>", lambda i, j: j <= i, ALIBI,
              lambda s, h, i, j: s - 0.125 * (h + 1) * (j - i), 4, 4),
}
failures = 0


def check(name, ok, detail=""):
    global failures
    failures += not ok
    print("%s %-44s %s" % ("PASS" if ok else "FAIL", name, detail))


def math_attention(q, k, v, keep, mod, with_lse=False):
    """float64 attention with the mask `keep` and score_mod `mod`; rows keeping nothing give 0.
    With with_lse, also the rows' log-sum-exp."""
    heads, n = q.shape[1], q.shape[2]
    group = heads // k.shape[1]
    k, v = k.repeat_interleave(group, 1), v.repeat_interleave(group, 1)
    s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    i = torch.arange(n)[:, None]
    j = torch.arange(n)[None, :]
    if mod:
        s = mod(s, torch.arange(heads).double()[None, :, None, None], i.double(), j.double())
    s = s.masked_fill(~keep(i, j), float("-inf"))
    p = torch.softmax(s, -1).nan_to_num(0.0)
    return (p @ v, torch.logsumexp(s, -1)) if with_lse else p @ v


def within(got, want, rtol, floor):
    """|got - want| <= rtol (|want| + max(max |want|, floor)): relative to the gradient's
    largest, or to `floor` (d_out's largest) where that is smaller (one key: dq and dk are 0
    up to rounding)."""
    err = (got.double() - want).abs()
    ok = bool((err <= rtol * (want.abs() + max(want.abs().max().item(), floor))).all())
    return ok, err.max().item()


def check_variant(args, name, dtype, n):
    mask, keep, mod_text, mod, heads, kv_heads = VARIANTS[name]
    module = attnc.compile(SPEC.format(heads=heads, kv_heads=kv_heads, dtype=dtype, mask=mask,
                                       mod=mod_text), cache=args.work, attnc=args.attnc)
    op = attnc.torch.register_autograd(module.fwd, module.bwd,
                                       "attnc_grad::%s_%s_%d" % (name, dtype, n))
    torch_dtype = {"f32": torch.float32, "bf16": torch.bfloat16}[dtype]
    gen = torch.Generator().manual_seed(n)
    shapes = [(1, heads, n, 32), (1, kv_heads, n, 32), (1, kv_heads, n, 32)]
    q, k, v = (torch.randn(*s, generator=gen).to(torch_dtype).requires_grad_() for s in shapes)
    w = torch.randn(1, heads, n, 32, generator=gen).to(torch_dtype)
    out, _ = op(q, k, v)
    (out.float() * w.float()).sum().backward()
    q64, k64, v64 = (x.detach().double().requires_grad_() for x in (q, k, v))
    (math_attention(q64, k64, v64, keep, mod) * w.double()).sum().backward()
    rtol = {"f32": 1e-4, "bf16": 2e-2}[dtype]
    floor = w.double().abs().max().item()
    results = [within(x.grad, x64.grad, rtol, floor) for x, x64 in ((q, q64), (k, k64), (v, v64))]
    check("%s %s N=%d: dq, dk, dv = float64 autograd" % (name, dtype, n),
          all(ok for ok, _ in results),
          "max |err| %s (rtol %g)" % (", ".join("%.1e" % e for _, e in results), rtol))
    return module, (q.detach(), k.detach(), v.detach(), w)


DOCUMENTS = """
attn.kernel @fwd {
  attn.attention {num_heads = 4, num_kv_heads = 2, head_dim = 32, dtype = f32, layout = bhsd,
                  mask = #attn.causal<top_left>, outputs = [out, lse],
                  inputs = [document_id: i32 [batch, seq_kv]]}
%(mod)s}
attn.kernel @bwd {
  attn.attention {num_heads = 4, num_kv_heads = 2, head_dim = 32, dtype = f32, layout = bhsd,
                  mask = #attn.causal<top_left>, outputs = [dq, dk, dv],
                  inputs = [document_id: i32 [batch, seq_kv]]}
%(mod)s}
""" % {"mod": """  mask_mod {
  ^bb0(%b: index, %h: index, %q: index, %kv: index):
    %dq = attn.load @document_id[%b, %q] : i32
    %dk = attn.load @document_id[%b, %kv] : i32
    %keep = arith.cmpi eq, %dq, %dk : i32
    attn.yield %keep : i1
  }
"""}


def check_documents(args, n=300):
    """Packed documents of random lengths (a document-id tensor the mask_mod reads): the
    gradients of q, k and v; the ids get none."""
    module = attnc.compile(DOCUMENTS, cache=args.work, attnc=args.attnc)
    op = attnc.torch.register_autograd(module.fwd, module.bwd, "attnc_grad::documents")
    gen = torch.Generator().manual_seed(5)
    cuts = torch.randperm(n - 1, generator=gen)[:5].sort().values + 1
    ids = torch.searchsorted(cuts, torch.arange(n), right=True).to(torch.int32)[None]
    shapes = [(1, 4, n, 32), (1, 2, n, 32), (1, 2, n, 32)]
    q, k, v = (torch.randn(*s, generator=gen).requires_grad_() for s in shapes)
    w = torch.randn(1, 4, n, 32, generator=gen)
    out, _ = op(q, k, v, ids)
    (out * w).sum().backward()
    keep = lambda i, j: (j <= i) & (ids[0][i] == ids[0][j])
    q64, k64, v64 = (x.detach().double().requires_grad_() for x in (q, k, v))
    (math_attention(q64, k64, v64, keep, None) * w.double()).sum().backward()
    floor = w.abs().max().item()
    results = [within(x.grad, x64.grad, 1e-4, floor) for x, x64 in ((q, q64), (k, k64), (v, v64))]
    check("documents (mask_mod reads ids) f32 N=%d: = float64 autograd" % n,
          all(ok for ok, _ in results),
          "max |err| %s (rtol 0.0001)" % ", ".join("%.1e" % e for _, e in results))


TABLES = """
attn.kernel @fwd {
  attn.attention {num_heads = 4, num_kv_heads = 2, head_dim = 32, dtype = %(dtype)s,
                  layout = bhsd, mask = #attn.causal<top_left>, outputs = [out, lse],
                  inputs = [bias: f32 [heads, 33], cap: f32 [heads]]}
%(mod)s}
attn.kernel @bwd {
  attn.attention {num_heads = 4, num_kv_heads = 2, head_dim = 32, dtype = %(dtype)s,
                  layout = bhsd, mask = #attn.causal<top_left>, outputs = [dq, dk, dv],
                  inputs = [bias: f32 [heads, 33], cap: f32 [heads]]}
%(mod)s}
"""
TABLES_MOD = """  score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %lo = arith.constant -16 : index
    %hi = arith.constant 16 : index
    %d = arith.subi %kv, %q : index
    %c = arith.maxsi %d, %lo : index
    %e = arith.minsi %c, %hi : index
    %at = arith.addi %e, %hi : index
    %bias = attn.load @bias[%h, %at] : f32
    %cap = attn.load @cap[%h] : f32
    %x = arith.divf %s, %cap : f32
    %t = math.tanh %x : f32
    %y = arith.mulf %t, %cap : f32
    %r = arith.addf %y, %bias : f32
    attn.yield %r : f32
  }
"""


def check_tables(args, dtype, n=200):
    """A relative-position bias table and per-head soft-cap values (float32 inputs the
    score_mod reads): the gradients of q, k, v and of both tables against float64 autograd."""
    module = attnc.compile(TABLES % {"dtype": dtype, "mod": TABLES_MOD}, cache=args.work,
                           attnc=args.attnc)
    op = attnc.torch.register_autograd(module.fwd, module.bwd, "attnc_grad::tables_" + dtype)
    torch_dtype = {"f32": torch.float32, "bf16": torch.bfloat16}[dtype]
    gen = torch.Generator().manual_seed(7)
    shapes = [(1, 4, n, 32), (1, 2, n, 32), (1, 2, n, 32)]
    q, k, v = (torch.randn(*s, generator=gen).to(torch_dtype).requires_grad_() for s in shapes)
    bias = (0.5 * torch.randn(4, 33, generator=gen)).requires_grad_()
    cap = (2 + 3 * torch.rand(4, generator=gen)).requires_grad_()
    w = torch.randn(1, 4, n, 32, generator=gen).to(torch_dtype)
    out, _ = op(q, k, v, bias, cap)
    (out.float() * w.float()).sum().backward()
    leaves = [x.detach().double().requires_grad_() for x in (q, k, v, bias, cap)]
    bias64, cap64 = leaves[3:]
    def mod(s, h, i, j):
        c = cap64[h.long()]
        return c * torch.tanh(s / c) + bias64[h.long(), ((j - i).clamp(-16, 16) + 16).long()]
    (math_attention(*leaves[:3], lambda i, j: j <= i, mod) * w.double()).sum().backward()
    rtol = {"f32": 1e-4, "bf16": 2e-2}[dtype]
    floor = w.double().abs().max().item()
    results = [within(x.grad, x64.grad, rtol, floor)
               for x, x64 in zip((q, k, v, bias, cap), leaves)]
    check("tables (bias, cap: f32 inputs) %s N=%d: dq, dk, dv, d_bias, d_cap = float64 autograd"
          % (dtype, n), all(ok for ok, _ in results),
          "max |err| %s (rtol %g)" % (", ".join("%.1e" % e for _, e in results), rtol))
    return module, (q.detach(), k.detach(), v.detach(), w, bias.detach(), cap.detach())


def check_threads(module, tensors):
    q, k, v, d_out, *tables = tensors
    out, lse = module.fwd(q, k, v, *tables)
    runs = [module.bwd(q, k, v, out, lse, d_out, *tables, num_threads=t) for t in (1, 2, 8)]
    same = all(torch.equal(a, b) for run in runs[1:] for a, b in zip(runs[0], run))
    check("backward%s on 1, 2 and 8 threads: same bits" % (" with tables" if tables else ""),
          same and len(runs[0]) == 3 + len(tables))


def check_lse_gradient(module, q, k, v, w):
    """Losses through out and lse, and through lse alone (causal GQA): the backward kernel
    takes lse's gradient as d_lse."""
    op = attnc.torch.register_autograd(module.fwd, module.bwd, "attnc_grad::through_lse")
    gen = torch.Generator().manual_seed(11)
    u = torch.randn(q.shape[:3], generator=gen)
    keep = lambda i, j: j <= i
    for name, weight_out in (("out and lse", 1.0), ("lse alone", 0.0)):
        leaves = [x.clone().requires_grad_() for x in (q, k, v)]
        out, lse = op(*leaves)
        loss = (lse * u).sum() + ((out * w).sum() if weight_out else 0)
        loss.backward()
        leaves64 = [x.detach().double().requires_grad_() for x in (q, k, v)]
        out64, lse64 = math_attention(*leaves64, keep, None, with_lse=True)
        ((lse64 * u.double()).sum() + weight_out * (out64 * w.double()).sum()).backward()
        floor = max(w.abs().max().item(), u.abs().max().item())
        results = [within(x.grad, x64.grad, 1e-4, floor) for x, x64 in zip(leaves, leaves64)]
        check("a loss through %s: dq, dk, dv = float64 autograd" % name,
              all(ok for ok, _ in results),
              "max |err| %s (rtol 0.0001)" % ", ".join("%.1e" % e for _, e in results))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attnc", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--lengths", default="1,17,128,2048")
    args = parser.parse_args()
    torch.set_num_threads(2)
    for n in map(int, args.lengths.split(",")):
        for name in VARIANTS:
            check_variant(args, name, "f32", n)
    for name in ("causal", "gqa_causal", "softcap"):
        module, tensors = check_variant(args, name, "bf16", 128)
    check_documents(args)
    check_tables(args, "bf16")
    check_threads(*check_tables(args, "f32"))
    module, tensors = check_variant(args, "gqa_causal", "f32", 300)
    check_threads(module, tensors)
    check_lse_gradient(module, *tensors)
    print("%d failed" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
