"""The Python package on PyTorch tensors (DLPack, no copy):

- f32 torch tensors in, torch tensors out, against a float64 torch evaluation of causal GQA
  attention (bottom-right), rtol 2e-5 / atol 2e-6 (matrix.json's f32 tolerance);
- bf16: torch bf16 in and out, against the same evaluation of the bf16 inputs, rtol 2e-2 /
  atol 8e-3 (matrix.json's bf16 tolerance);
- strided views in (a bshd tensor transposed to bhsd) and out= views written in place;
- an input that requires grad (detached for the forward call);
- a float64 tensor: AttncError ATTNC_ERR_DTYPE with the runtime's message;
- attnc.torch.register: two kernels as custom ops (schema, eager, torch.library.opcheck); a
  small model using both (self-attention, a projection, cross-attention) under
  torch.compile(fullgraph=True, dynamic=True): one graph, no graph break and no recompile over
  five sequence lengths, against the float64 evaluation of the same model (rtol 1e-4, atol
  1e-5: two f32 kernels and a projection); through inductor, against eager;
- attnc.torch.use_intra_op_pool: a launch on torch's intra-op threads (at::parallel_for),
  bit-identical to one on the runtime's pool and to one on a single thread.

Prints PASS / FAIL lines; exits non-zero on a failure.
"""
import argparse
import sys

import torch

import attnc

SPEC = """
attn.kernel @gqa {
  attn.attention {num_heads = 4, num_kv_heads = 2, head_dim = 64, dtype = %(dtype)s, layout = bhsd,
                  mask = #attn.causal<bottom_right>, outputs = [out, lse]}
}
attn.kernel @cross {
  attn.attention {num_heads = 4, num_kv_heads = 4, head_dim = 64, dtype = %(dtype)s, layout = bhsd,
                  mask = #attn.full, outputs = [out]}
}
"""
failures = 0


def check(name, ok, detail=""):
    global failures
    failures += not ok
    print("%s %-52s %s" % ("PASS" if ok else "FAIL", name, detail))


def reference(q, k, v, causal=True):
    q, k, v = (x.double() for x in (q, k, v))
    group = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(group, 1), v.repeat_interleave(group, 1)
    s = q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5
    sq, skv = q.shape[2], k.shape[2]
    keep = torch.arange(skv)[None, :] <= torch.arange(sq)[:, None] + (skv - sq)
    s = s.masked_fill(~keep, float("-inf")) if causal else s
    lse = torch.logsumexp(s, -1)
    return torch.exp(s - lse[..., None]) @ v, lse


def check_op(module, q, k, v, out):
    """The kernels as torch custom ops: eager, opcheck, and a small model of two attnc ops under
    torch.compile(fullgraph=True, dynamic=True): one graph, no graph break, no recompile over
    five sequence lengths (the RUN line's TORCH_LOGS=recompiles would print one)."""
    import attnc.torch
    op = attnc.torch.register(module.gqa, "attnc_test::gqa")
    cross = attnc.torch.register(module.cross, "attnc_test::cross")
    check("custom op: the kernel's schema", str(op._opoverload._schema) ==
          "attnc_test::gqa(Tensor q, Tensor k, Tensor v) -> (Tensor, Tensor)",
          str(op._opoverload._schema))
    check("custom op = the kernel", torch.equal(torch.ops.attnc_test.gqa(q, k, v)[0], out))
    memory = torch.randn(2, 4, 50, 64)
    for name, o, args in (("gqa", op, (q, k, v)), ("cross", cross, (q, memory, memory))):
        try:
            torch.library.opcheck(o, args)
            check("torch.library.opcheck: " + name, True)
        except Exception as e:
            check("torch.library.opcheck: " + name, False, "%s: %s" % (type(e).__name__, e))

    class Block(torch.nn.Module):
        """Causal self-attention, a projection, cross-attention to a memory: two attnc ops."""

        def __init__(self):
            super().__init__()
            self.proj = torch.nn.Linear(64, 64)

        def forward(self, q, k, v, memory):
            attended, _ = torch.ops.attnc_test.gqa(q, k, v)
            h = self.proj(attended)
            return h + torch.ops.attnc_test.cross(h, memory, memory)

    def eager(q, k, v, memory):  # the same block on the float64 evaluation
        a, _ = reference(q, k, v)
        h = torch.nn.functional.linear(a, model.proj.weight.double(), model.proj.bias.double())
        return h + reference(h, memory, memory, causal=False)[0]

    model = Block()
    graphs = []

    def counting(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    torch._dynamo.utils.counters.clear()
    compiled = torch.compile(model, backend=counting, fullgraph=True, dynamic=True)
    ok, lengths = True, (33, 20, 7, 64, 45)
    with torch.no_grad():
        for seq in lengths:
            args = [x[:, :, :n].clone() for x, n in ((q, seq), (k, seq + 40), (v, seq + 40))]
            got = compiled(*args, memory)
            ok &= torch.allclose(got.double(), eager(*args, memory), rtol=1e-4, atol=1e-5)
    breaks = sum(torch._dynamo.utils.counters["graph_break"].values())
    check("model of 2 ops, torch.compile(fullgraph, dynamic): 5 lengths, 1 graph, 0 breaks",
          ok and len(graphs) == 1 and breaks == 0, "%d graphs, %d breaks" % (len(graphs), breaks))
    torch._dynamo.reset()  # another backend: a fresh compile, not a recompile of the above
    inductor = torch.compile(model, fullgraph=True)
    with torch.no_grad():
        check("torch.compile(fullgraph) with inductor",
              torch.allclose(inductor(q, k, v, memory), model(q, k, v, memory), rtol=1e-5,
                             atol=1e-6))


def check_pool(kernel, q, k, v, out):
    """attnc.torch.use_intra_op_pool: the launch's helper threads come from torch's pool
    (its parallel-for counts its calls), and the results are the same bits."""
    import attnc.torch
    pool = attnc.torch.intra_op_pool()
    before = pool.parallel_for_calls()
    attnc.torch.use_intra_op_pool()
    try:
        got = kernel(q, k, v, num_threads=0)[0]
    finally:
        attnc.torch.use_intra_op_pool(False)
    ran = pool.parallel_for_calls() - before
    alone = kernel(q, k, v, num_threads=1)[0]
    check("torch's intra-op pool runs the launch: same bits", ran == 1 and torch.equal(got, out)
          and torch.equal(alone, out), "at::parallel_for calls: %d; %d torch threads"
          % (ran, torch.get_num_threads()))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attnc", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    module = attnc.compile(SPEC % {"dtype": "f32"}, cache=args.work, attnc=args.attnc)
    f32 = module.gqa
    bf16 = attnc.compile(SPEC % {"dtype": "bf16"}, cache=args.work, attnc=args.attnc).gqa
    torch.manual_seed(3)
    q = torch.randn(2, 4, 33, 64)
    k, v = torch.randn(2, 2, 90, 64), torch.randn(2, 2, 90, 64)
    out, lse = f32(q, k, v)
    want_out, want_lse = reference(q, k, v)
    check("f32 torch in, torch out = reference",
          isinstance(out, torch.Tensor) and out.dtype == torch.float32 and
          torch.allclose(out.double(), want_out, rtol=2e-5, atol=2e-6) and
          torch.allclose(lse.double(), want_lse, rtol=2e-5, atol=2e-6),
          "max |err| %.2e" % (out.double() - want_out).abs().max())
    qb, kb, vb = (x.bfloat16() for x in (q, k, v))
    out_b, _ = bf16(qb, kb, vb)
    want_b, _ = reference(qb, kb, vb)
    check("bf16 torch in, bf16 out = reference",
          out_b.dtype == torch.bfloat16 and
          torch.allclose(out_b.double(), want_b, rtol=2e-2, atol=8e-3),
          "max |err| %.2e" % (out_b.double() - want_b).abs().max())
    # Views: k and v stored bshd, passed as bhsd views; out written into a bshd buffer.
    k_bshd, v_bshd = k.transpose(1, 2).contiguous(), v.transpose(1, 2).contiguous()
    buffer = torch.zeros(2, 33, 4, 64)
    got, _ = f32(q, k_bshd.transpose(1, 2), v_bshd.transpose(1, 2), out=buffer.transpose(1, 2))
    check("strided views in and out, written in place",
          got.data_ptr() == buffer.data_ptr() and torch.equal(buffer.transpose(1, 2), out))
    grad_q = q.clone().requires_grad_()
    check("an input that requires grad", torch.equal(f32(grad_q, k, v)[0], out))
    try:
        f32(q.double(), k, v)
        check("float64: AttncError ATTNC_ERR_DTYPE", False, "no exception")
    except attnc.AttncError as e:
        check("float64: AttncError ATTNC_ERR_DTYPE",
              e.code == "ATTNC_ERR_DTYPE" and "q has dtype float64" in str(e), str(e))
    check_op(module, q, k, v, out)
    check_pool(f32, q, k, v, out)
    print("%d failed" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
