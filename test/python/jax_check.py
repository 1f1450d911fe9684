"""The Python package on JAX arrays (DLPack, no copy on the way in):

- f32 and bf16 jax.Array inputs: the outputs (NumPy arrays, bf16 as ml_dtypes.bfloat16: JAX
  arrays are immutable, so the package allocates NumPy ones) are bit for bit those of the
  same call on NumPy arrays;
- an int32 JAX array as q: AttncError ATTNC_ERR_DTYPE with the runtime's message.

Prints PASS / FAIL lines; exits non-zero on a failure.
"""
import argparse
import sys

import jax.numpy as jnp
import ml_dtypes
import numpy as np

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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attnc", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    rng = np.random.default_rng(5)
    q = rng.standard_normal((2, 4, 33, 64), np.float32)
    k, v = (rng.standard_normal((2, 2, 70, 64), np.float32) for _ in range(2))
    for dtype, kind in (("f32", np.float32), ("bf16", ml_dtypes.bfloat16)):
        kernel = attnc.compile(SPEC % dtype, cache=args.work, attnc=args.attnc).gqa
        arrays = [x.astype(kind) for x in (q, k, v)]
        want = kernel(*arrays)
        got = kernel(*(jnp.asarray(x) for x in arrays))
        same = all(type(g) is np.ndarray and g.dtype == w.dtype and
                   g.tobytes() == w.tobytes() for g, w in zip(got, want))
        check("%s JAX arrays in: NumPy's outputs, bit for bit" % dtype, same)
    try:
        kernel(jnp.asarray(q.astype(np.int32)), jnp.asarray(k), jnp.asarray(v))
        check("int32 q: AttncError ATTNC_ERR_DTYPE", False, "no exception")
    except attnc.AttncError as e:
        check("int32 q: AttncError ATTNC_ERR_DTYPE",
              e.code == "ATTNC_ERR_DTYPE" and "q has dtype int32" in str(e), str(e))
    print("%d failed" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
