"""The Python package on PyTorch tensors (DLPack, no copy):

- f32 torch tensors in, torch tensors out, against a float64 torch evaluation of causal GQA
  attention (bottom-right), rtol 2e-5 / atol 2e-6 (matrix.json's f32 tolerance);
- bf16: torch bf16 in and out, against the same evaluation of the bf16 inputs, rtol 2e-2 /
  atol 8e-3 (matrix.json's bf16 tolerance);
- strided views in (a bshd tensor transposed to bhsd) and out= views written in place;
- an input that requires grad (detached for the forward call);
- a float64 tensor: AttncError ATTNC_ERR_DTYPE with the runtime's message;
- attnc.torch.register: the kernel as a custom op (its schema, eager, torch.library.opcheck),
  under torch.compile(fullgraph=True, dynamic=True) one graph for three sequence lengths, and
  through inductor.

Prints PASS / FAIL lines; exits non-zero on a failure.
"""
import argparse
import sys

import torch

import attnc

SPEC = """
attn.kernel @gqa {
  attn.attention {num_heads = 4, num_kv_heads = 2, head_dim = 64, dtype = %s, layout = bhsd,
                  mask = #attn.causal<bottom_right>, outputs = [out, lse]}
}
"""
failures = 0


def check(name, ok, detail=""):
    global failures
    failures += not ok
    print("%s %-52s %s" % ("PASS" if ok else "FAIL", name, detail))


def reference(q, k, v):
    q, k, v = (x.double() for x in (q, k, v))
    group = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(group, 1), v.repeat_interleave(group, 1)
    s = q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5
    sq, skv = q.shape[2], k.shape[2]
    keep = torch.arange(skv)[None, :] <= torch.arange(sq)[:, None] + (skv - sq)
    s = s.masked_fill(~keep, float("-inf"))
    lse = torch.logsumexp(s, -1)
    return torch.exp(s - lse[..., None]) @ v, lse


def check_op(kernel, q, k, v, out):
    """The kernel as a torch custom op: eager, opcheck, torch.compile without graph breaks or
    recompiles across sequence lengths."""
    import attnc.torch
    op = attnc.torch.register(kernel, "attnc_test::gqa")
    check("custom op: the kernel's schema", str(op._opoverload._schema) ==
          "attnc_test::gqa(Tensor q, Tensor k, Tensor v) -> (Tensor, Tensor)",
          str(op._opoverload._schema))
    check("custom op = the kernel", torch.equal(torch.ops.attnc_test.gqa(q, k, v)[0], out))
    try:
        torch.library.opcheck(op, (q, k, v))
        check("torch.library.opcheck", True)
    except Exception as e:
        check("torch.library.opcheck", False, "%s: %s" % (type(e).__name__, e))
    graphs = []

    def counting(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    def step(q, k, v):
        out, lse = torch.ops.attnc_test.gqa(q, k, v)
        return out * 2, lse

    compiled = torch.compile(step, backend=counting, fullgraph=True, dynamic=True)
    ok = True
    for seq in (33, 20, 7):
        args = [x[:, :, :n].clone() for x, n in ((q, seq), (k, seq + 40), (v, seq + 40))]
        got, _ = compiled(*args)
        want, _ = reference(q[:, :, :seq], k[:, :, :seq + 40], v[:, :, :seq + 40])
        ok &= torch.allclose(got.double(), 2 * want, rtol=2e-5, atol=4e-6)
    check("torch.compile(fullgraph, dynamic): 3 lengths, 1 graph", ok and len(graphs) == 1,
          "%d graphs" % len(graphs))
    inductor = torch.compile(step, fullgraph=True)
    check("torch.compile(fullgraph) with inductor", torch.equal(inductor(q, k, v)[0], 2 * out))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attnc", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    f32 = attnc.compile(SPEC % "f32", cache=args.work, attnc=args.attnc).gqa
    bf16 = attnc.compile(SPEC % "bf16", cache=args.work, attnc=args.attnc).gqa
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
    check_op(f32, q, k, v, out)
    print("%d failed" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
