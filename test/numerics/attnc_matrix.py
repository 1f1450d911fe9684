"""The shared numeric test matrix (matrix.json) and the specs its cases stand for.

Every backend's numeric tests read the matrix through this module, so a case means the same
spec everywhere. A case names its mask structurally (kind + fields) and its score_mod /
mask_mod by name; spec_text() turns it into attn dialect text.
"""
import json
import os
import zlib

MATRIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "matrix.json")

# score_mod bodies, by name. Constants are exact in binary so a float64 re-implementation
# sees the same numbers.
SCORE_MODS = {
    # 5 * tanh(score / 5): Gemma-style soft-capping.
    "softcap5": """
      %cap = arith.constant 5.0 : f32
      %x = arith.divf %s, %cap : f32
      %t = math.tanh %x : f32
      %r = arith.mulf %t, %cap : f32""",
    # ALiBi: score + 2^(-8 (h + 1) / H) * (kv - q).
    "alibi": """
      %c1 = arith.constant 1 : index
      %h1 = arith.addi %h, %c1 : index
      %hi = arith.index_cast %h1 : index to i64
      %hf = arith.sitofp %hi : i64 to f32
      %step = arith.constant {neg_eight_over_heads} : f32
      %e = arith.mulf %hf, %step : f32
      %slope = math.exp2 %e : f32
      %qi = arith.index_cast %q : index to i64
      %ki = arith.index_cast %kv : index to i64
      %d = arith.subi %ki, %qi : i64
      %df = arith.sitofp %d : i64 to f32
      %bias = arith.mulf %slope, %df : f32
      %r = arith.addf %s, %bias : f32""",
    # A smooth relative-position bias: score + 0.5 * sin(0.125 * (kv - q)).
    "relative_bias": """
      %qi = arith.index_cast %q : index to i64
      %ki = arith.index_cast %kv : index to i64
      %d = arith.subi %ki, %qi : i64
      %df = arith.sitofp %d : i64 to f32
      %freq = arith.constant 0.125 : f32
      %amp = arith.constant 0.5 : f32
      %x = arith.mulf %df, %freq : f32
      %sin = math.sin %x : f32
      %bias = arith.mulf %sin, %amp : f32
      %r = arith.addf %s, %bias : f32""",
    # mod_inputs.json: mods that read the case's input tensors (INPUTS).
    # ALiBi with the slopes from a tensor: score + slopes[h] * (kv - q).
    "alibi_slopes": """
      %slope = attn.load @slopes[%h] : f32
      %qi = arith.index_cast %q : index to i64
      %ki = arith.index_cast %kv : index to i64
      %d = arith.subi %ki, %qi : i64
      %df = arith.sitofp %d : i64 to f32
      %bias = arith.mulf %slope, %df : f32
      %r = arith.addf %s, %bias : f32""",
    # A learned relative-position bias: score + bias[h, clamp(kv - q, -128, 128) + 128].
    "relative_table": """
      %lo = arith.constant -128 : index
      %hi = arith.constant 128 : index
      %d = arith.subi %kv, %q : index
      %c = arith.maxsi %d, %lo : index
      %e = arith.minsi %c, %hi : index
      %at = arith.addi %e, %hi : index
      %bias = attn.load @bias[%h, %at] : f32
      %r = arith.addf %s, %bias : f32""",
    # Soft-capping with a cap per head: cap[h] * tanh(score / cap[h]).
    "softcap_heads": """
      %cap = attn.load @cap[%h] : f32
      %x = arith.divf %s, %cap : f32
      %t = math.tanh %x : f32
      %r = arith.mulf %t, %cap : f32""",
}


def _documents(length, divide):
    """Packed documents of `length` tokens (the document index by `divide`): attend within
    your own document only."""
    return """
      %%len = arith.constant %d : index
      %%dq = arith.%s %%q, %%len : index
      %%dk = arith.%s %%kv, %%len : index
      %%keep = arith.cmpi eq, %%dq, %%dk : index""" % (length, divide, divide)


# mask_mod bodies, by name; each defines %keep.
MASK_MODS = {
    # Packed documents of 37 tokens: attend within your own document only.
    "document37": _documents(37, "divui"),
    # Even heads are causal, odd heads see everything the mask allows.
    "even_heads_causal": """
      %c2 = arith.constant 2 : index
      %c0 = arith.constant 0 : index
      %parity = arith.remui %h, %c2 : index
      %even = arith.cmpi eq, %parity, %c0 : index
      %causal = arith.cmpi ule, %kv, %q : index
      %true = arith.constant true
      %keep = arith.select %even, %causal, %true : i1""",
    # Even batch entries (sequences) see everything the mask allows, odd ones are causal:
    # a sequence keeps its index b when packed (varlen) or cached (kv_cache).
    "odd_batches_causal": """
      %c2 = arith.constant 2 : index
      %c0 = arith.constant 0 : index
      %parity = arith.remui %b, %c2 : index
      %even = arith.cmpi eq, %parity, %c0 : index
      %causal = arith.cmpi ule, %kv, %q : index
      %keep = arith.ori %even, %causal : i1""",
    # Masks everything: every row is fully masked.
    "nothing": """
      %keep = arith.constant false""",
    # mask_mod.json: bodies whose tiles the kernels classify by interval analysis.
    "document64": _documents(64, "divui"),
    "document100": _documents(100, "floordivsi"),
    # Prefix-LM: the first 70 keys for everyone, causal after.
    "prefix70": """
      %n = arith.constant 70 : index
      %prefix = arith.cmpi slt, %kv, %n : index
      %causal = arith.cmpi sge, %q, %kv : index
      %keep = arith.ori %prefix, %causal : i1""",
    # Key blocks: the first 64 of every 128 keys.
    "key_blocks": """
      %c128 = arith.constant 128 : index
      %c64 = arith.constant 64 : index
      %r = arith.remui %kv, %c128 : index
      %keep = arith.cmpi ult, %r, %c64 : index""",
    # A band |q - kv| <= 40 through max and min, and a slope through a product.
    "band40_slope": """
      %d1 = arith.subi %q, %kv : index
      %d2 = arith.subi %kv, %q : index
      %far = arith.maxsi %d1, %d2 : index
      %c40 = arith.constant 40 : index
      %band = arith.cmpi sle, %far, %c40 : index
      %c3 = arith.constant 3 : index
      %q3 = arith.muli %q, %c3 : index
      %k2 = arith.muli %kv, %c3 : index
      %lo = arith.minsi %q3, %k2 : index
      %c0 = arith.constant 0 : index
      %any = arith.cmpi sge, %lo, %c0 : index
      %keep = arith.andi %band, %any : i1""",
    # Half the query heads (h / 2 even) see one document of 96, the others the whole row.
    "heads_documents96": """
      %c2 = arith.constant 2 : index
      %c96 = arith.constant 96 : index
      %pair = arith.divui %h, %c2 : index
      %parity = arith.remui %pair, %c2 : index
      %c0 = arith.constant 0 : index
      %odd = arith.cmpi ne, %parity, %c0 : index
      %dq = arith.ceildivsi %q, %c96 : index
      %dk = arith.ceildivsi %kv, %c96 : index
      %same = arith.cmpi eq, %dq, %dk : index
      %keep = arith.select %odd, %odd, %same : i1""",
}


# mask_mods that read input tensors (mod_inputs.json), each defining %keep.
MASK_MODS.update({
    # Packed documents of any lengths: attend within your own document only.
    "document_ids": """
      %dq = attn.load @document_id[%b, %q] : i32
      %dk = attn.load @document_id[%b, %kv] : i32
      %keep = arith.cmpi eq, %dq, %dk : i32""",
    # Prefix-LM with a prefix length per sequence: the first prefix[b] keys for everyone,
    # causal after.
    "prefix_lengths": """
      %n32 = attn.load @prefix[%b] : i32
      %n = arith.index_cast %n32 : i32 to index
      %in = arith.cmpi slt, %kv, %n : index
      %causal = arith.cmpi sge, %q, %kv : index
      %keep = arith.ori %in, %causal : i1""",
})


def _document_ids(case, rng):
    """[batch, seq_kv] document ids: case["documents"] documents of random lengths per
    sequence (at least one token each), numbered from 0."""
    seq, docs = case["seq_kv"], case.get("documents", 4)
    ids = []
    for _ in range(case["batch"]):
        cuts = sorted(rng.choice(range(1, seq), size=docs - 1, replace=False).tolist())
        ids.append([sum(t >= c for c in cuts) for t in range(seq)])
    return ids


# Tensors mods read (a case's "mod_inputs"), by name: the spec's declaration, the NumPy dtype
# and a maker of the values from the case and a NumPy Generator seeded by the case's name.
INPUTS = {
    "document_id": ("document_id: i32 [batch, seq_kv]", "int32", _document_ids),
    "prefix": ("prefix: i32 [batch]", "int32",
               lambda case, rng: rng.integers(0, case["seq_kv"] + 1, case["batch"])),
    "slopes": ("slopes: f32 [heads]", "float32",
               lambda case, rng: [2.0 ** (-8.0 * (h + 1) / case["heads"])
                                  for h in range(case["heads"])]),
    "bias": ("bias: f32 [heads, 257]", "float32",
             lambda case, rng: rng.uniform(-1, 1, (case["heads"], 257))),
    "cap": ("cap: f32 [heads]", "float32",
            lambda case, rng: rng.uniform(2, 10, case["heads"])),
}


def write_inputs(case, directory):
    """Writes the case's input tensors as DIRECTORY/input_NAME.npy: [(name, path)]."""
    import numpy as np  # only cases with inputs need NumPy
    rng = np.random.default_rng(zlib.crc32(case["name"].split("_as_")[0].encode()))
    os.makedirs(directory, exist_ok=True)
    written = []
    for name in case.get("mod_inputs", []):
        _, dtype, make = INPUTS[name]
        path = os.path.join(directory, "input_%s.npy" % name)
        np.save(path, np.asarray(make(case, rng), dtype=dtype))
        written.append((name, path))
    return written


def load(path=MATRIX):
    with open(path) as f:
        return json.load(f)


def _bound(value):
    return "inf" if value == "inf" else str(value)


def mask_text(mask):
    kind = mask["kind"]
    if kind == "full":
        return "#attn.full"
    if kind == "causal":
        return "#attn.causal<%s>" % mask["align"]
    if kind == "sliding_window":
        return "#attn.sliding_window<left = %s, right = %s, align = %s>" % (
            _bound(mask["left"]), _bound(mask["right"]), mask.get("align", "top_left"))
    if kind == "block_sparse":
        rows = ", ".join("[%s]" % ", ".join(map(str, r)) for r in mask["layout"])
        return "#attn.block_sparse<block = [%d, %d], layout = [%s]>" % (
            mask["block"][0], mask["block"][1], rows)
    if kind == "longformer":
        return "#attn.longformer<block = %d, window = %d, global = [%s]>" % (
            mask["block"], mask["window"], ", ".join(map(str, mask["global"])))
    if kind == "bigbird":
        return ("#attn.bigbird<block = %d, window = %d, global = %d, random = %d, seed = %d>"
                % (mask["block"], mask["window"], mask["global"], mask["random"], mask["seed"]))
    if kind in ("and", "or"):
        return "#attn.%s<[%s]>" % (kind, ", ".join(mask_text(m) for m in mask["masks"]))
    raise ValueError("unknown mask kind %r" % kind)


def spec_text(case):
    """The attn spec of a case, as one kernel named after it."""
    params = [
        "num_heads = %d" % case["heads"],
        "num_kv_heads = %d" % case["kv_heads"],
        "head_dim = %d" % case["head_dim"],
        "dtype = %s" % case["dtype"],
        "layout = %s" % case["layout"],
        "mask = %s" % mask_text(case["mask"]),
    ]
    if "scale" in case:
        params.append("scale = %r" % float(case["scale"]))
    if "max_seq" in case:
        params.append("max_seq = [%d, %d]" % tuple(case["max_seq"]))
    params.append("outputs = [%s]" % ", ".join(case["outputs"]))
    if "num_splits" in case:
        params.append("num_splits = %d" % case["num_splits"])
    if "kv_cache" in case:
        params.append("kv_cache = %s" % case["kv_cache"])
    if case.get("varlen"):
        params.append("varlen = cu_seqlens")
    if case.get("mod_inputs"):
        params.append("inputs = [%s]" % ", ".join(INPUTS[n][0] for n in case["mod_inputs"]))
    text = "attn.kernel @%s {\n  attn.attention {%s}\n" % (case["name"], ", ".join(params))
    if case.get("score_mod"):
        body = SCORE_MODS[case["score_mod"]].format(
            neg_eight_over_heads=repr(-8.0 / case["heads"]))
        text += ("    score_mod {\n    ^bb0(%s: f32, %b: index, %h: index, %q: index, "
                 "%kv: index):" + body + "\n      attn.yield %r : f32\n    }\n")
    if case.get("mask_mod"):
        text += ("    mask_mod {\n    ^bb0(%b: index, %h: index, %q: index, %kv: index):"
                 + MASK_MODS[case["mask_mod"]] + "\n      attn.yield %keep : i1\n    }\n")
    return text + "}\n"


def write_spec(case, work):
    """Writes the case's spec to WORK/<name>/spec.mlir; returns (that directory, the spec)."""
    directory = os.path.join(work, case["name"])
    os.makedirs(directory, exist_ok=True)
    spec = os.path.join(directory, "spec.mlir")
    with open(spec, "w") as f:
        f.write(spec_text(case))
    return directory, spec


def write_matrix_spec(cases, spec):
    """Writes one spec holding every case's kernel to `spec`; returns its path."""
    with open(spec, "w") as f:
        f.writelines(spec_text(case) for case in cases)
    return spec
