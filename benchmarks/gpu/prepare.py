#!/usr/bin/env python3
"""Builds the GPU check's bundle here: kernels, reference data and a manifest for run.py.

The GPU machine has PyTorch and Triton but no MLIR or Halide, so everything is compiled here,
once per kernel source (--kernels, backend:target pairs; default the Halide backend's
cuda-sm90 schedule and the mlir backend's tensor-core kernels, cuda-sm80 (mma.sync) and
cuda-sm90a (wgmma + TMA)):
  - numerics: every case of the numeric matrix and of mod_inputs.json (mods that read
    input tensors; and each f32 case again in bf16), compiled by each source that takes its
    dtype, with attnc-run's seeded inputs, the mods' inputs and reference outputs as .npy
    (one reference per case);
  - benchmark kernels: bf16, head_dim 64 and 128, dense / causal / sliding window (256 keys
    back) / block-sparse (Longformer: 64-key blocks, one block either side, block 0 global),
    shape-generic (any batch and sequence length).
run.py, on the GPU machine, loads each kernel through its C ABI with PyTorch CUDA tensors.
The bundle is also packed as <out>.tar.xz (about 10 MB against 60 MB unpacked: the device
tool carries at most 64 MiB), which run.py unpacks when the directory is not there.
With --kernels halide:opencl the same bundle runs on this machine (run.py --device cpu), which
checks the harness itself without a GPU.
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
DTYPES = {("halide", "opencl"): {"f32", "bf16"}, ("halide", "cuda-sm80"): {"f32", "f16", "bf16"},
          ("halide", "cuda-sm90"): {"f32", "f16", "bf16"}, ("mlir", "cuda-sm80"): {"f32", "f16", "bf16"},
          ("mlir", "cuda-sm90a"): {"f16", "bf16"}}


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


def numerics(args, manifest):
    matrix = attnc_matrix.load()
    with_inputs = attnc_matrix.load(os.path.join(os.path.dirname(attnc_matrix.MATRIX),
                                                 "mod_inputs.json"))
    work = os.path.join(args.out, "numerics")
    for case in list(cases(matrix, ["bf16"])) + list(cases(with_inputs, ["bf16"])):
        sources = [s for s in args.kernels if case["dtype"] in DTYPES[s]]
        if not sources:
            continue
        case["outputs"] = [o for o in case["outputs"] if o != "weights"]
        directory, spec = attnc_matrix.write_spec(case, work)
        kernels, tolerance = {}, {}
        for source in sources:
            so = os.path.join(directory, "%s-%s.so" % source)
            compile_kernel(args, source, spec, so)
            kernels[":".join(source)] = os.path.relpath(so, args.out)
            # The mlir backend runs f32 on TF32 tensor cores: the matrix's tf32 tolerance.
            tf32 = source[0] == "mlir" and case["dtype"] == "f32"
            tolerance[":".join(source)] = matrix["tolerances"]["tf32" if tf32 else case["dtype"]]
        inputs = attnc_matrix.write_inputs(case, directory)
        run([args.attnc_run, spec, "--reference", "-o", os.path.join(directory, "reference"),
             "--batch", str(case["batch"]), "--seq-q", str(case["seq_q"]),
             "--seq-kv", str(case["seq_kv"]), "--seed", "5"]
            + ["--input=%s=%s" % item for item in inputs])
        manifest["numerics"].append({
            "name": case["name"], "dir": os.path.relpath(directory, args.out),
            "dtype": case["dtype"], "lse": "lse" in case["outputs"], "kernels": kernels,
            "tolerance": tolerance,
            "inputs": [os.path.relpath(path, args.out) for _, path in inputs]})
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(HERE, "bundle"))
    parser.add_argument("--kernels", type=parse_kernels,
                        default=parse_kernels("halide:cuda-sm90,mlir:cuda-sm80,mlir:cuda-sm90a"),
                        help="kernel sources, backend:target,... (halide:opencl checks the "
                             "harness on this machine)")
    parser.add_argument("--heads", type=int, default=16)
    parser.add_argument("--attnc", default=os.path.join(BUILD, "bin", "attnc"))
    parser.add_argument("--attnc-run", default=os.path.join(BUILD, "bin", "attnc-run"))
    args = parser.parse_args()
    manifest = {"kernels": [":".join(s) for s in args.kernels], "numerics": [], "bench": []}
    numerics(args, manifest)
    bench_kernels(args, manifest)
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    archive = args.out.rstrip("/") + ".tar.xz"
    with tarfile.open(archive, "w:xz") as tar:
        tar.add(args.out, arcname=os.path.basename(args.out.rstrip("/")))
    print("bundle in", args.out, "and", archive)


if __name__ == "__main__":
    main()
