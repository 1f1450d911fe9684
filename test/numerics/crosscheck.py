#!/usr/bin/env python3
"""Cross-checks attnc's reference evaluator against NumPy over the whole numeric matrix.

For each case of matrix.json: write the spec, make q/k/v (NumPy's seeded generator, or
attnc-run's own for cases marked "inputs": "seeded"), run `attnc-run --reference` on the
spec as written and again after `attnc-opt --attn-normalize`, and compare every output with
the float64 NumPy computation below, which shares no code with attnc: masks, mods, GQA and
layouts are re-implemented here from the dialect documentation.

Tolerances (per element, |got - want| <= atol + rtol * |want|): the reference computes in
double and rounds once to the output type, so the bound is that rounding:
  f32  rtol 1e-6   (issue requirement; f32 rounding is 6e-8)
  f16  rtol 5e-4, atol 3e-8   (f16 unit roundoff 2^-11; half the subnormal spacing 2^-24)
  bf16 rtol 4e-3   (bf16 unit roundoff: 2^-8 = 3.9e-3)
lse is f32 in every case; fully masked rows must give out = 0 and lse = -inf exactly.

Gradients (`attnc-run --reference --backward` on the spec as written, its seeded d_out):
dq, dk, dv against the float64 backward below (score_mods unrounded, as the reference's
backward takes them), |got - want| <= 1e-6 |want| + 1e-7 max |want| + 1e-12 (the files
hold the double gradients rounded to f32: 6e-8; a row of one key has gradient 0, which
NumPy's sums may leave at 1e-17).
"""
import argparse
import os
import subprocess
import sys

import numpy as np

import attnc_matrix

RTOL = {"f32": 1e-6, "f16": 5e-4, "bf16": 4e-3}
ATOL = {"f32": 1e-12, "f16": 3e-8, "bf16": 1e-30}
MASK64 = (1 << 64) - 1


# ----------------------------------------------------------------------------- storage types

def to_storage(x, dtype):
    """float64 array -> what attnc reads from .npy for `dtype` (bf16: '<u2' bit patterns)."""
    if dtype == "f32":
        return x.astype(np.float32)
    if dtype == "f16":
        return x.astype(np.float16)
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16  # round to nearest even
    return rounded.astype(np.uint16)


def from_storage(a, dtype):
    if dtype == "bf16" and a.dtype == np.uint16:
        return (a.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return a.astype(np.float64)


# ----------------------------------------------------------------------------- masks and mods

def splitmix64(x):
    x = (x + 0x9E3779B97F4A7C15) & MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


def mask_keep(mask, sq, skv):
    """Boolean [sq, skv]: which (query, key) pairs the mask attribute keeps."""
    i = np.arange(sq)[:, None]
    j = np.arange(skv)[None, :]
    kind = mask["kind"]
    if kind == "full":
        return np.ones((sq, skv), bool)
    if kind in ("causal", "sliding_window"):
        left = np.inf if kind == "causal" or mask["left"] == "inf" else mask["left"]
        right = 0 if kind == "causal" else (np.inf if mask["right"] == "inf" else mask["right"])
        center = i + (skv - sq if mask.get("align") == "bottom_right" else 0)
        return (j >= center - left) & (j <= center + right)
    if kind == "block_sparse":
        layout = np.array(mask["layout"], bool)
        qb, kb = i // mask["block"][0], j // mask["block"][1]
        inside = (qb < layout.shape[0]) & (kb < layout.shape[1])
        return inside & layout[np.minimum(qb, layout.shape[0] - 1),
                               np.minimum(kb, layout.shape[1] - 1)]
    if kind == "longformer":
        qb, kb = i // mask["block"], j // mask["block"]
        g = np.array(mask["global"], int)
        return (np.abs(qb - kb) <= mask["window"]) | np.isin(qb, g) | np.isin(kb, g)
    if kind == "bigbird":
        b = mask["block"]
        qb, kb = i // b, j // b
        keep = (np.abs(qb - kb) <= mask["window"]) | (qb < mask["global"]) | (kb < mask["global"])
        num_kv_blocks = -(-skv // b)
        chosen = np.zeros((-(-sq // b), num_kv_blocks), bool)
        for row in range(chosen.shape[0]):
            for r in range(mask["random"]):
                draw = splitmix64((mask["seed"] + row * mask["random"] + r) & MASK64)
                chosen[row, draw % num_kv_blocks] = True
        return keep | chosen[qb, kb]
    parts = [mask_keep(m, sq, skv) for m in mask["masks"]]
    return np.logical_and.reduce(parts) if kind == "and" else np.logical_or.reduce(parts)


def mask_mod_keep(name, heads, sq, skv):
    """Boolean [heads, sq, skv], or None without a mask_mod."""
    h = np.arange(heads)[:, None, None]
    i = np.arange(sq)[None, :, None]
    j = np.arange(skv)[None, None, :]
    shape = (heads, sq, skv)
    if name is None:
        return None
    if name == "document37":
        return np.broadcast_to(i // 37 == j // 37, shape)
    if name == "even_heads_causal":
        return np.broadcast_to((h % 2 == 1) | (j <= i), shape)
    if name == "nothing":
        return np.zeros(shape, bool)
    raise ValueError(name)


def f32(x):
    """x rounded to float32 (kept in float64): a mod region's f32 op rounds its result."""
    return np.asarray(x, dtype=np.float64).astype(np.float32).astype(np.float64)


def apply_score_mod(name, s, heads):
    """s: [batch, heads, sq, skv] scaled scores. Each op of the region is evaluated in float64
    on its operands and its result rounded to float32, as the region's f32 arithmetic is (the
    reference evaluator and the kernels alike)."""
    h = np.arange(heads)[None, :, None, None]
    i = np.arange(s.shape[2])[None, None, :, None]
    j = np.arange(s.shape[3])[None, None, None, :]
    if name is None:
        return s
    if name == "softcap5":
        return f32(f32(np.tanh(f32(s / 5.0))) * 5.0)
    if name == "alibi":
        slope = f32(np.exp2(f32(f32(h + 1) * f32(-8.0 / heads))))
        return f32(s + f32(slope * f32(j - i)))
    if name == "relative_bias":
        return f32(s + f32(f32(np.sin(f32(f32(j - i) * 0.125))) * 0.5))
    raise ValueError(name)


def score_mod_with_slope(name, t, heads):
    """(score_mod(t), d score_mod / dt) in float64, unrounded (the backward's forward)."""
    h = np.arange(heads)[None, :, None, None]
    i = np.arange(t.shape[2])[None, None, :, None]
    j = np.arange(t.shape[3])[None, None, None, :]
    if name is None:
        return t, np.ones_like(t)
    if name == "softcap5":
        c = np.tanh(t / 5.0)
        return 5.0 * c, 1.0 - c * c
    if name == "alibi":
        return t + np.exp2((h + 1) * (-8.0 / heads)) * (j - i), np.ones_like(t)
    if name == "relative_bias":
        return t + np.sin((j - i) * 0.125) * 0.5, np.ones_like(t)
    raise ValueError(name)


# ----------------------------------------------------------------------------- the oracle

def scaled_dot_product_attention(Q, K, V, mask, scale, score_mod=None):
    """softmax(score_mod(Q K^T * scale) + mask) V in float64, returning (out, weights, lse).

    Q: [B, H, Sq, D]; K, V: [B, H, Skv, D] (already repeated for GQA); mask: boolean,
    broadcastable to [B, H, Sq, Skv], True = attend. Rows with nothing to attend give
    out = 0, weights = 0, lse = -inf.
    """
    heads = Q.shape[1]
    scores = apply_score_mod(score_mod, Q @ K.transpose(0, 1, 3, 2) * scale, heads)
    scores = np.where(mask, scores, -np.inf)
    row_max = scores.max(axis=-1, keepdims=True)
    empty = np.isneginf(row_max)
    p = np.exp(scores - np.where(empty, 0.0, row_max))
    total = p.sum(axis=-1, keepdims=True)
    weights = np.where(empty, 0.0, p / np.where(empty, 1.0, total))
    out = weights @ V
    with np.errstate(divide="ignore"):
        lse = np.where(empty, -np.inf, row_max + np.log(np.where(empty, 1.0, total)))[..., 0]
    return out, weights, lse


def attention_gradients(Q, K, V, mask, scale, score_mod, dO):
    """dQ, dK, dV of softmax(score_mod(Q K^T scale) + mask) V for the loss gradient dO, in
    float64 (K, V repeated per query head: their gradients are per query head here)."""
    t = Q @ K.transpose(0, 1, 3, 2) * scale
    s, slope = score_mod_with_slope(score_mod, t, Q.shape[1])
    s = np.where(mask, s, -np.inf)
    row_max = s.max(axis=-1, keepdims=True)
    empty = np.isneginf(row_max)
    p = np.exp(s - np.where(empty, 0.0, row_max))
    p = np.where(empty, 0.0, p / np.where(empty, 1.0, p.sum(axis=-1, keepdims=True)))
    out = p @ V
    delta = (dO * out).sum(axis=-1, keepdims=True)
    dt = p * (dO @ V.transpose(0, 1, 3, 2) - delta) * slope
    return scale * dt @ K, scale * dt.transpose(0, 1, 3, 2) @ Q, p.transpose(0, 1, 3, 2) @ dO


def keep_and_scale(case, sq, skv):
    """The case's kept pairs (broadcastable to [B, H, sq, skv]) and its scale."""
    keep = mask_keep(case["mask"], sq, skv)[None, None]
    extra = mask_mod_keep(case.get("mask_mod"), case["heads"], sq, skv)
    if extra is not None:
        keep = keep & extra[None]
    return keep, case.get("scale", 1.0 / np.sqrt(case["head_dim"]))


def expected_gradients(case, q, k, v, d_out):
    """{"dq", "dk", "dv"} in the case's layout, dk and dv summed over each GQA group."""
    bshd = case["layout"] == "bshd"
    if bshd:
        q, k, v, d_out = (t.transpose(0, 2, 1, 3) for t in (q, k, v, d_out))
    group = case["heads"] // case["kv_heads"]
    sq, skv = q.shape[2], k.shape[2]
    keep, scale = keep_and_scale(case, sq, skv)
    dq, dk, dv = attention_gradients(q, np.repeat(k, group, axis=1), np.repeat(v, group, axis=1),
                                     keep, scale, case.get("score_mod"), d_out)
    b, kvh = k.shape[0], k.shape[1]
    dk, dv = (g.reshape(b, kvh, group, skv, -1).sum(axis=2) for g in (dk, dv))
    grads = {"dq": dq, "dk": dk, "dv": dv}
    return {n: g.transpose(0, 2, 1, 3) for n, g in grads.items()} if bshd else grads


def compare_gradient(name, got, want):
    """Largest error over max |want|, or raises with the worst element."""
    if got.shape != want.shape:
        raise AssertionError("%s: shape %s, want %s" % (name, got.shape, want.shape))
    top = float(np.abs(want).max()) if want.size else 0.0
    err = np.abs(got - want)
    bad = err > 1e-6 * np.abs(want) + 1e-7 * top + 1e-12  # 1e-12: a gradient of 0 (one key)
    if bad.any():
        k = np.argmax(err)
        raise AssertionError("%s: %d elements off; worst got %.9g want %.9g"
                             % (name, bad.sum(), got.flat[k], want.flat[k]))
    return float(err.max() / top) if top else 0.0


def expected_outputs(case, q, k, v):
    bshd = case["layout"] == "bshd"
    if bshd:  # work in bhsd
        q, k, v = (t.transpose(0, 2, 1, 3) for t in (q, k, v))
    group = case["heads"] // case["kv_heads"]
    k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
    sq, skv = q.shape[2], k.shape[2]
    keep, scale = keep_and_scale(case, sq, skv)
    out, weights, lse = scaled_dot_product_attention(q, k, v, keep, scale, case.get("score_mod"))
    if bshd:
        out = out.transpose(0, 2, 1, 3)
    return {"out": out, "lse": lse, "weights": weights}


# ----------------------------------------------------------------------------- running a case

def make_inputs(case, directory):
    """Writes q/k/v .npy from NumPy's generator; returns them as float64 (storage-rounded)."""
    rng = np.random.default_rng(abs(hash(case["name"])) % (1 << 32))
    b, h, kvh, d = case["batch"], case["heads"], case["kv_heads"], case["head_dim"]
    sq, skv = case["seq_q"], case["seq_kv"]
    if case["layout"] == "bhsd":
        shapes = {"q": (b, h, sq, d), "k": (b, kvh, skv, d), "v": (b, kvh, skv, d)}
    else:
        shapes = {"q": (b, sq, h, d), "k": (b, skv, kvh, d), "v": (b, skv, kvh, d)}
    tensors = {}
    for name, shape in shapes.items():
        stored = to_storage(rng.uniform(-1.0, 1.0, shape), case["dtype"])
        np.save(os.path.join(directory, name + ".npy"), stored)
        tensors[name] = from_storage(stored, case["dtype"])
    return tensors


def run(cmd):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        raise RuntimeError("%s failed (%d):\n%s" % (" ".join(cmd), proc.returncode, proc.stdout))


def compare(name, got, want, dtype):
    """Largest relative error, or raises with the worst element."""
    if got.shape != want.shape:
        raise AssertionError("%s: shape %s, want %s" % (name, got.shape, want.shape))
    rtol, atol = RTOL[dtype], ATOL[dtype]
    neg_inf = np.isneginf(want)
    if not np.array_equal(neg_inf, np.isneginf(got)):
        raise AssertionError("%s: -inf (fully masked rows) at different places" % name)
    if np.isnan(got).any():
        raise AssertionError("%s: NaN in the output" % name)
    g, w = got[~neg_inf], want[~neg_inf]
    err = np.abs(g - w)
    bad = err > atol + rtol * np.abs(w)
    if bad.any():
        k = np.argmax(err - rtol * np.abs(w))
        raise AssertionError("%s: %d elements off; worst got %.9g want %.9g (rtol %g, atol %g)"
                             % (name, bad.sum(), g[k], w[k], rtol, atol))
    return float(np.max(err / np.maximum(np.abs(w), 1e-300))) if err.size else 0.0


def check_case(case, args):
    directory, spec = attnc_matrix.write_spec(case, args.work)
    normalized = os.path.join(directory, "normalized.mlir")
    run([args.attnc_opt, spec, "--attn-normalize", "-o", normalized])

    seeded = case.get("inputs") == "seeded"
    sizes = ["--batch", str(case["batch"]), "--seq-q", str(case["seq_q"]),
             "--seq-kv", str(case["seq_kv"]), "--seed", "11"]
    inputs = None if seeded else make_inputs(case, directory)
    given = [] if seeded else sum((["--" + n, os.path.join(directory, n + ".npy")]
                                   for n in ("q", "k", "v")), [])
    errors = {}
    for label, path in (("spec", spec), ("normalized", normalized)):
        out_dir = os.path.join(directory, label)
        backward = ["--backward"] if label == "spec" else []
        run([args.attnc_run, "--reference", path, "-o", out_dir] + backward +
            (sizes if seeded else given))
        if inputs is None:  # attnc-run generated them; read back what it used
            inputs = {n: from_storage(np.load(os.path.join(out_dir, n + ".npy")), case["dtype"])
                      for n in ("q", "k", "v")}
        want = expected_outputs(case, inputs["q"], inputs["k"], inputs["v"])
        for output in case["outputs"]:
            got = from_storage(np.load(os.path.join(out_dir, output + ".npy")), case["dtype"])
            dtype = case["dtype"] if output == "out" else "f32"
            errors[output] = max(errors.get(output, 0.0),
                                 compare("%s %s" % (label, output), got, want[output], dtype))
        if backward:
            load = lambda name: np.load(os.path.join(out_dir, name + ".npy")).astype(np.float64)
            grads = expected_gradients(case, inputs["q"], inputs["k"], inputs["v"], load("d_out"))
            for name, want_grad in grads.items():
                errors[name] = compare_gradient(name, load(name), want_grad)
    return errors


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attnc-run", required=True)
    parser.add_argument("--attnc-opt", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--matrix", default=attnc_matrix.MATRIX)
    parser.add_argument("--only", help="run only the case of this name")
    args = parser.parse_args()

    cases = attnc_matrix.load(args.matrix)["cases"]
    if args.only:
        cases = [c for c in cases if c["name"] == args.only]
    passed = failed = 0
    for case in cases:
        try:
            errors = check_case(case, args)
            print("PASS %-42s %s" % (case["name"], ", ".join(
                "%s rel err %.2e" % kv for kv in sorted(errors.items()))))
            passed += 1
        except (AssertionError, RuntimeError) as e:
            print("FAIL %-42s %s" % (case["name"], e))
            failed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed or not cases else 0


if __name__ == "__main__":
    sys.exit(main())
