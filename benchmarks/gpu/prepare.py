#!/usr/bin/env python3
"""Builds the GPU check's bundle here: kernels, reference data and a manifest for run.py.

The GPU machine has PyTorch and Triton but no MLIR or Halide, so everything is compiled here,
once per kernel source (--kernels, backend:target pairs; default the Halide backend's
cuda-sm90 schedule and the mlir backend's tensor-core kernels, cuda-sm80 (mma.sync) and
cuda-sm90a (wgmma + TMA)):
  - numerics: every case of the numeric matrix and of mod_inputs.json (mods that read
    input tensors; and each f32 case again in bf16), compiled by each source that takes its
    dtype, with attnc-run's seeded inputs, the mods' inputs and reference outputs as .npy
    (one reference per case); the split-KV decode cases of decode.json and paged.json
    (per-sequence lengths, paged caches) for the mlir backend's CUDA kernels, with their
    lengths, block tables and pages;
  - benchmark kernels: bf16, head_dim 64 and 128, dense / causal / sliding window (256 keys
    back) / block-sparse (Longformer: 64-key blocks, one block either side, block 0 global),
    shape-generic (any batch and sequence length); and for the decode sources a split-KV
    decode kernel of a Llama-3-8B step, timed against the device's read bandwidth.
run.py, on the GPU machine, loads each kernel through its C ABI with PyTorch CUDA tensors.
The bundle is also packed as <out>.tar.xz (about 10 MB against 60 MB unpacked: the device
tool carries at most 64 MiB), which run.py unpacks when the directory is not there.
With --kernels halide:opencl the same bundle runs on this machine (run.py --device cpu), which
checks the harness itself without a GPU; --kernels mlir:host --matrices decode.json paged.json
checks its decode cases (lengths, block tables, pages) on the MLIR CPU decode kernels.
"""
import argparse
import json
import os
import subprocess
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "..", "..", "tools", "python"),
                os.path.join(HERE, "..", "..", "test", "numerics")]
import attnc_matrix  # noqa: E402
import cross_run  # noqa: E402
import numpy as np  # noqa: E402
from compiled_check import cases  # noqa: E402

BUILD = os.environ.get("ATTNC_BUILD", os.path.join(HERE, "..", "..", "build"))

# The benchmark masks by name; run.py states the same masks for FlexAttention and SDPA.
BENCH_MASKS = {
    "dense": "#attn.full",
    "causal": "#attn.causal<top_left>",
    "window256": "#attn.sliding_window<left = 256, right = 0>",
    "longformer64": "#attn.longformer<block = 64, window = 1, global = [0]>",
}


def run(cmd):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), proc.stdout))


# The dtypes each kernel source compiles.
# mlir:host (this machine's CPU kernels) checks the harness's decode cases here.
DTYPES = {("halide", "opencl"): {"f32", "bf16"}, ("halide", "cuda-sm80"): {"f32", "f16", "bf16"},
          ("halide", "cuda-sm90"): {"f32", "f16", "bf16"}, ("mlir", "cuda-sm80"): {"f32", "f16", "bf16"},
          ("mlir", "cuda-sm90a"): {"f16", "bf16"}, ("mlir", "host"): {"f32", "f16", "bf16"}}


def parse_kernels(text):
    """[(backend, target)] from "backend:target,...", each a known source."""
    sources = [tuple(item.split(":", 1)) for item in text.split(",") if item]
    for source in sources:
        if source not in DTYPES:
            sys.exit("unknown kernel source %s; expected one of %s" % (
                ":".join(source), ", ".join(":".join(s) for s in DTYPES)))
    return sources


def compile_kernel(args, source, spec, so):
    backend, target = source
    run([args.attnc, spec, "--backend", backend, "--target", target, "--emit=so", "-o", so])


# The sources that build split-KV decode kernels (num_splits, kv_cache).
DECODE_SOURCES = {("mlir", "cuda-sm80"), ("mlir", "cuda-sm90a"), ("mlir", "host")}


# The device tool carries 64 MiB: a decode case's k and v are bundled up to this size (the
# decode matrices' long caches stay in the CPU tests).
MAX_KV_BYTES = 1800000


def kv_bytes(case):
    size = 4 if case["dtype"] == "f32" else 2
    return 2 * case["batch"] * case["kv_heads"] * case["seq_kv"] * case["head_dim"] * size


def serving_arguments(case, directory, reference):
    """A decode case's k and v as its kernel takes them (pages where the cache is paged) and
    its arguments after lse (kv_lens, block_table), as .npy files in DIRECTORY: ({"k": path,
    "v": path} or {}, [paths]). Built from the reference's inputs and lengths.json by the
    cross runner's own code, so the pages are the ones the reference saw."""
    if not case.get("kv_cache"):
        return {}, []
    load = lambda name: np.load(os.path.join(reference, name + ".npy"))
    plain = dict(case, mod_inputs=[])  # the mods' inputs are listed after these
    arguments, _ = cross_run.entry_arguments(plain, reference, load("q"), load("k"),
                                             load("v"), "lse" in case["outputs"])
    arrays = {name: array for name, array, _ in arguments}
    paged = "block_table" in arrays
    paths = {}
    for name in ("k", "v", "kv_lens", "block_table"):
        if name in arrays and (paged or name not in ("k", "v")):
            paths[name] = os.path.join(directory, "kernel_%s.npy" % name)
            np.save(paths[name], arrays[name])
            if name in ("k", "v"):  # the bundle carries the pages alone
                os.remove(os.path.join(reference, name + ".npy"))
    kv = {name: paths[name] for name in ("k", "v") if name in paths}
    return kv, [paths[name] for name in ("kv_lens", "block_table") if name in paths]


MATRICES = ["matrix.json", "mod_inputs.json", "decode.json", "paged.json"]


def numeric_cases(args):
    """(case, its matrix's tolerances, sources) of every bundled case: the matrix and
    mod_inputs.json on every source, decode.json and paged.json on DECODE_SOURCES; each f32
    case again in bf16."""
    folder = os.path.dirname(attnc_matrix.MATRIX)
    decode = [s for s in args.kernels if s in DECODE_SOURCES]
    for name, sources, cap in (("matrix.json", args.kernels, None),
                               ("mod_inputs.json", args.kernels, None),
                               ("decode.json", decode, MAX_KV_BYTES),
                               ("paged.json", decode, MAX_KV_BYTES)):
        if name not in args.matrices:
            continue
        matrix = attnc_matrix.load(os.path.join(folder, name))
        for case in cases(matrix, ["bf16"]):
            takes = [s for s in sources if case["dtype"] in DTYPES[s]]
            if takes and (cap is None or kv_bytes(case) <= cap):
                yield case, matrix["tolerances"], takes


def numerics(args, manifest):
    work = os.path.join(args.out, "numerics")
    for case, tolerances, sources in numeric_cases(args):
        case["outputs"] = [o for o in case["outputs"] if o != "weights"]
        directory, spec = attnc_matrix.write_spec(case, work)
        kernels, tolerance = {}, {}
        for source in sources:
            so = os.path.join(directory, "%s-%s.so" % source)
            compile_kernel(args, source, spec, so)
            kernels[":".join(source)] = os.path.relpath(so, args.out)
            # The mlir backend runs f32 on TF32 tensor cores: the matrix's tf32 tolerance.
            tf32 = source[0] == "mlir" and case["dtype"] == "f32"
            tolerance[":".join(source)] = tolerances["tf32" if tf32 else case["dtype"]]
        inputs = attnc_matrix.write_inputs(case, directory)
        reference = os.path.join(directory, "reference")
        run([args.attnc_run, spec, "--reference", "-o", reference,
             "--batch", str(case["batch"]), "--seq-q", str(case["seq_q"]),
             "--seq-kv", str(case["seq_kv"]), "--seed", "5"]
            + (["--kv-lens", case["kv_lens"]] if "kv_lens" in case else [])
            + ["--input=%s=%s" % item for item in inputs])
        kv, lengths = serving_arguments(case, directory, reference)
        relative = lambda path: os.path.relpath(path, args.out)
        manifest["numerics"].append({
            "name": case["name"], "dir": relative(directory),
            "dtype": case["dtype"], "lse": "lse" in case["outputs"], "kernels": kernels,
            "tolerance": tolerance, "kv": {name: relative(path) for name, path in kv.items()},
            "inputs": [relative(path) for path in lengths + [path for _, path in inputs]]})
        print("numerics:", case["name"], "(%s)" % ", ".join(kernels))


def bench_kernels(args, manifest):
    work = os.path.join(args.out, "bench")
    os.makedirs(work, exist_ok=True)
    dtype = "f32" if ("halide", "opencl") in args.kernels else "bf16"
    for mask_name, mask in BENCH_MASKS.items():
        for dim in (64, 128):
            name = "%s_d%d" % (mask_name, dim)
            spec = os.path.join(work, name + ".mlir")
            with open(spec, "w") as f:
                f.write("attn.kernel @%s {\n  attn.attention {num_heads = %d, head_dim = %d, "
                        "dtype = %s, layout = bhsd, mask = %s, outputs = [out]}\n}\n"
                        % (name, args.heads, dim, dtype, mask))
            kernels = {}
            for source in args.kernels:
                if dtype in DTYPES[source]:
                    so = "%s.%s-%s.so" % ((name,) + source)
                    compile_kernel(args, source, spec, os.path.join(work, so))
                    kernels[":".join(source)] = os.path.join("bench", so)
            manifest["bench"].append({"name": name, "kernels": kernels, "mask": mask_name,
                                      "dim": dim, "dtype": dtype, "heads": args.heads})
            print("bench:", name)


def decode_bench_kernel(args, manifest):
    """A Llama-3-8B decode step's kernel (32 / 8 heads, head_dim 128, bf16, up to 4 new tokens)
    for the sources that build decode kernels: run.py times it against the device's read
    bandwidth at several cache lengths."""
    sources = [s for s in args.kernels if s in DECODE_SOURCES]
    if not sources:
        return
    work = os.path.join(args.out, "bench")
    os.makedirs(work, exist_ok=True)
    name = "decode_gqa_d128"
    spec = os.path.join(work, name + ".mlir")
    with open(spec, "w") as f:
        f.write("attn.kernel @%s {\n  attn.attention {num_heads = 32, num_kv_heads = 8, "
                "head_dim = 128, dtype = bf16, layout = bhsd, mask = #attn.causal<bottom_right>, "
                "max_seq = [4, 131072], outputs = [out, lse], num_splits = 0}\n}\n" % name)
    kernels = {}
    for source in sources:
        so = "%s.%s-%s.so" % ((name,) + source)
        compile_kernel(args, source, spec, os.path.join(work, so))
        kernels[":".join(source)] = os.path.join("bench", so)
    manifest["bench"].append({"name": name, "kernels": kernels, "mask": "decode", "dim": 128,
                              "dtype": "bf16", "heads": 32, "kv_heads": 8})
    print("bench:", name)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(HERE, "bundle"))
    parser.add_argument("--kernels", type=parse_kernels,
                        default=parse_kernels("halide:cuda-sm90,mlir:cuda-sm80,mlir:cuda-sm90a"),
                        help="kernel sources, backend:target,... (halide:opencl checks the "
                             "harness on this machine)")
    parser.add_argument("--matrices", nargs="+", default=MATRICES, choices=MATRICES,
                        help="the numeric matrices to bundle (default: all)")
    parser.add_argument("--heads", type=int, default=16)
    parser.add_argument("--attnc", default=os.path.join(BUILD, "bin", "attnc"))
    parser.add_argument("--attnc-run", default=os.path.join(BUILD, "bin", "attnc-run"))
    args = parser.parse_args()
    manifest = {"kernels": [":".join(s) for s in args.kernels], "numerics": [], "bench": []}
    numerics(args, manifest)
    bench_kernels(args, manifest)
    decode_bench_kernel(args, manifest)
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    archive = args.out.rstrip("/") + ".tar.xz"
    with tarfile.open(archive, "w:xz") as tar:
        tar.add(args.out, arcname=os.path.basename(args.out.rstrip("/")))
    print("bundle in", args.out, "and", archive)


if __name__ == "__main__":
    main()
