#!/usr/bin/env python3
"""The GPU check: attnc's CUDA kernels against the reference, then against PyTorch's attention.

Runs on a machine with an NVIDIA GPU, PyTorch and Triton, and no MLIR or Halide, from the
bundle prepare.py built elsewhere:
  1. numerics: every bundled matrix case on the device (PyTorch CUDA tensors passed through
     attnc's DLPack C ABI, on PyTorch's current stream), compared with the reference outputs
     under the matrix's tolerances;
  2. benchmark: bf16, head_dim 64 and 128, seq 1024 to 16384, dense / causal / sliding window /
     block-sparse, attnc against PyTorch SDPA's flash and cuDNN backends (dense, causal),
     SDPA with a boolean mask (the others) and FlexAttention (all), as TFLOP/s over the
     attended (query, key) pairs, median and best of --repeat runs timed with CUDA events.
Writes results.json and report.md under --out (default $OUT). Stops benchmarking at
--deadline seconds and writes what it has. With --device cpu it runs an opencl bundle on this
machine's CPU (small sizes, SDPA only): a check of the harness, not a measurement of a GPU.
"""
import argparse
import ctypes
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "..", "..", "tools", "python"),
                os.path.join(HERE, "..", "..", "test", "numerics")]
from attnc._abi import K_DL_CPU, K_DL_CUDA, DLDataType, DLDevice, DLTensor, Options  # noqa: E402
from device_run import as_float64, compare  # noqa: E402

DL_CODES = {torch.float32: (2, 32), torch.float16: (2, 16), torch.bfloat16: (4, 16),
            torch.int32: (0, 32)}  # kDLInt: the mods' integer inputs
TORCH_DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}


class Kernel:
    """One kernel of the bundle, called with torch tensors."""

    def __init__(self, so, name):
        self.library = ctypes.CDLL(so)
        self.entry = getattr(self.library, name)
        self.entry.restype = ctypes.c_int
        self.library.attnc_last_error.restype = ctypes.c_char_p

    @staticmethod
    def tensor(t):
        shape = (ctypes.c_int64 * t.dim())(*t.shape)
        strides = (ctypes.c_int64 * t.dim())(*t.stride())
        device = DLDevice(K_DL_CUDA if t.is_cuda else K_DL_CPU, t.device.index or 0)
        code, bits = DL_CODES[t.dtype]
        dl = DLTensor(ctypes.c_void_p(t.data_ptr()), device, t.dim(), DLDataType(code, bits, 1),
                      shape, strides, 0)
        dl._keep = (t, shape, strides)
        return dl

    def __call__(self, q, k, v, out, lse=None, inputs=()):
        stream = torch.cuda.current_stream().cuda_stream if q.is_cuda else None
        options = Options(0, ctypes.c_void_p(stream) if stream else None)
        args = [self.tensor(t) for t in (q, k, v, out)]
        lse_arg = ctypes.byref(self.tensor(lse)) if lse is not None else None
        extra = [self.tensor(t) for t in inputs]  # the mods' inputs, after lse
        rc = self.entry(*(ctypes.byref(a) for a in args), lse_arg,
                        *(ctypes.byref(a) for a in extra), ctypes.byref(options))
        if rc:
            raise RuntimeError("kernel returned %d: %s"
                               % (rc, self.library.attnc_last_error().decode()))


def load(directory, name, dtype, device):
    array = np.load(os.path.join(directory, name + ".npy"))
    if dtype == torch.bfloat16:  # stored as raw bits
        return torch.from_numpy(array.astype(np.int16)).view(torch.bfloat16).to(device)
    return torch.from_numpy(array).to(dtype).to(device)


def numeric_items(manifest):
    """(case, backend, shared object) for every bundled case and each of its kernels."""
    return [(case, backend, so) for case in manifest["numerics"]
            for backend, so in case["kernels"].items()]


def check_case(bundle, case, backend, so, device):
    """One matrix case on one backend's kernel: {name, backend, dtype, ok, note}."""
    directory = os.path.join(bundle, case["dir"])
    dtype = TORCH_DTYPES[case["dtype"]]
    # A decode case over a paged cache takes k and v as pages (prepare.py's serving_arguments).
    kv = {n: os.path.join(bundle, path) for n, path in case.get("kv", {}).items()}
    q, k, v = (load(os.path.dirname(kv[n]), os.path.basename(kv[n])[:-len(".npy")], dtype,
                    device) if n in kv else load(os.path.join(directory, "reference"), n, dtype,
                                                 device)
               for n in ("q", "k", "v"))
    out = torch.zeros_like(q)
    ref_dir = os.path.join(directory, "reference")
    ref_lse = np.load(os.path.join(ref_dir, "lse.npy")) if case["lse"] else None
    lse = torch.zeros(ref_lse.shape, dtype=torch.float32, device=device) \
        if case["lse"] else None
    ok, note = True, ""
    label = "%s [%s]" % (case["name"], backend)
    tol = case["tolerance"][backend]
    inputs = [torch.from_numpy(np.load(os.path.join(bundle, path))).to(device)
              for path in case.get("inputs", [])]
    try:
        Kernel(os.path.join(bundle, so), case["name"])(q, k, v, out, lse, inputs)
        if device == "cuda":
            torch.cuda.synchronize()
        if os.path.exists(os.path.join(ref_dir, "out.npy")):
            got = out.float().cpu().numpy().astype(np.float64)
            ref = as_float64(np.load(os.path.join(ref_dir, "out.npy")), case["dtype"])
            ok = compare(label + " out", got, ref, tol["rtol"], tol["atol"])
        if lse is not None:
            ok = compare(label + " lse", lse.cpu().numpy().astype(np.float64),
                         ref_lse.astype(np.float64), tol["rtol"], tol["atol"]) and ok
    except RuntimeError as e:
        ok, note = False, str(e)
        print(label, note)
    return {"name": case["name"], "backend": backend, "dtype": case["dtype"], "ok": ok,
            "note": note}


def mask_mod(name):
    """The benchmark mask as a FlexAttention mask_mod (same semantics as attnc's)."""
    if name == "causal":
        return lambda b, h, q, kv: q >= kv
    if name == "window256":
        return lambda b, h, q, kv: (q >= kv) & (q - kv <= 256)
    if name == "longformer64":
        return lambda b, h, q, kv: ((q // 64 - kv // 64).abs() <= 1) | (q // 64 == 0) | \
            (kv // 64 == 0)
    return None


def kept_pairs(name, seq, device):
    """Attended (query, key) pairs of one head: the useful work."""
    fn = mask_mod(name)
    if fn is None:
        return seq * seq
    total = 0
    rows = torch.arange(seq, device=device)
    for start in range(0, seq, 1024):  # a strip at a time: no seq x seq matrix
        q = rows[start:start + 1024, None]
        total += int(fn(0, 0, q, rows[None, :]).sum())
    return total


def timed(fn, repeat, device):
    """Median and best seconds of `repeat` calls after warm-up."""
    for _ in range(3):
        fn()
    times = []
    for _ in range(repeat):
        if device == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) / 1e3)
        else:
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
    return statistics.median(times), min(times)


def sdpa_peers(name, q, k, v, device):
    """(peer name, callable): PyTorch SDPA's backends for this mask."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    sdpa = torch.nn.functional.scaled_dot_product_attention
    found = []
    if name in ("dense", "causal"):
        causal = name == "causal"
        backends = [("sdpa-flash", SDPBackend.FLASH_ATTENTION),
                    ("sdpa-cudnn", SDPBackend.CUDNN_ATTENTION)] if device == "cuda" else \
            [("sdpa-math", SDPBackend.MATH)]
        for peer, backend in backends:
            def call(backend=backend):
                with sdpa_kernel(backend):
                    return sdpa(q, k, v, is_causal=causal)
            found.append((peer, call))
    else:
        seq = q.shape[2]
        rows = torch.arange(seq, device=device)
        bool_mask = mask_mod(name)(0, 0, rows[:, None], rows[None, :])
        found.append(("sdpa-mask", lambda: sdpa(q, k, v, attn_mask=bool_mask)))
    return found


def flex_peer(name, q, k, v, device):
    """FlexAttention with this mask as a block mask (compiled once per mask and shape)."""
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    # Each mask and shape is a recompile. Past dynamo's limit (8) FlexAttention silently runs
    # unfused, materialising the scores (0.3 TFLOP/s, measured on the H200 before this): raise
    # the limit, and make hitting it an error the row records.
    for name, value in (("recompile_limit", 256), ("fail_on_recompile_limit_hit", True)):
        if hasattr(torch._dynamo.config, name):
            setattr(torch._dynamo.config, name, value)
    flex = torch.compile(flex_attention)
    fn = mask_mod(name) or (lambda b, h, qi, kv: qi >= 0)
    block_mask = create_block_mask(fn, None, None, q.shape[2], k.shape[2], device=device)
    return [("flex", lambda: flex(q, k, v, block_mask=block_mask))]


def bench_items(manifest, args):
    """(benchmark entry, sequence length, part), the order they are timed in: attnc and SDPA
    for every kernel and length first, then FlexAttention (each mask and shape costs it a
    compile of tens of seconds) at --flex-seqs."""
    prefill = [e for e in manifest["bench"] if e["mask"] != "decode"]
    items = [(entry, seq, "core") for entry in prefill for seq in args.seqs]
    items += [(entry, length, "decode") for entry in manifest["bench"] if entry["mask"] == "decode"
              for length in args.decode_lens]
    if args.device == "cuda":
        items += [(entry, seq, "flex") for entry in prefill for seq in args.flex_seqs]
    return items


def decode_row(bundle, entry, length, args):
    """A decode step (one new token per sequence) over a cache of `length` keys: GB/s of K and
    V read by each attnc kernel and by SDPA (its GQA form), against read_bandwidth's."""
    kernels = {backend: Kernel(os.path.join(bundle, so), entry["name"])
               for backend, so in entry["kernels"].items() if backend not in args.skip_backends}
    dtype, device = TORCH_DTYPES[entry["dtype"]], args.device
    q = torch.randn((args.batch, entry["heads"], 1, entry["dim"]), dtype=dtype, device=device)
    k, v = (torch.randn((args.batch, entry["kv_heads"], length, entry["dim"]), dtype=dtype,
                        device=device) for _ in range(2))
    out = torch.empty_like(q)
    lse = torch.empty(q.shape[:3], dtype=torch.float32, device=device)
    sdpa = torch.nn.functional.scaled_dot_product_attention
    calls = [("attnc-" + backend, lambda kernel=kernel: kernel(q, k, v, out, lse))
             for backend, kernel in kernels.items()]
    calls.append(("sdpa-gqa", lambda: sdpa(q, k, v, enable_gqa=True)))
    cache = 2.0 * k.numel() * k.element_size()
    row = {"kernel": entry["name"], "mask": "decode", "dim": entry["dim"], "seq": length,
           "tflops": {}, "gbps": {}}
    for peer, call in calls:
        try:
            median, best = timed(call, args.repeat, device)
            row["gbps"][peer] = {"median": cache / median / 1e9, "best": cache / best / 1e9}
        except Exception as e:
            row["gbps"][peer] = {"error": str(e).splitlines()[0][:200]}
            if device == "cuda" and not context_alive():
                raise
    return row


def read_bandwidth(device):
    """GB/s of a sum over 1 GiB of bf16 (a read of far more than the last-level cache), median
    of 10: the ceiling the decode rows are read against, measured in the same run."""
    x = torch.ones(1 << 29, dtype=torch.bfloat16, device=device)
    median, _ = timed(lambda: x.sum(), 10, device)
    return x.numel() * x.element_size() / median / 1e9


def bench_row(bundle, entry, seq, part, args):
    """Times one kernel of the bundle and SDPA (part "core"), or FlexAttention (part "flex"),
    at one sequence length; a decode kernel over a cache of that length (part "decode")."""
    if part == "decode":
        return decode_row(bundle, entry, seq, args)
    kernels = {} if part == "flex" else {
        backend: Kernel(os.path.join(bundle, so), entry["name"])
        for backend, so in entry["kernels"].items() if backend not in args.skip_backends}
    dtype = TORCH_DTYPES[entry["dtype"]]
    shape = (args.batch, entry["heads"], seq, entry["dim"])
    q, k, v = (torch.randn(shape, dtype=dtype, device=args.device) for _ in range(3))
    out = torch.empty_like(q)
    flops = 4.0 * args.batch * entry["heads"] * entry["dim"] * \
        kept_pairs(entry["mask"], seq, args.device)
    row = {"kernel": entry["name"], "mask": entry["mask"], "dim": entry["dim"], "seq": seq,
           "tflops": {}}
    calls = [("attnc-" + backend, lambda kernel=kernel: kernel(q, k, v, out))
             for backend, kernel in kernels.items()]
    calls += (flex_peer if part == "flex" else sdpa_peers)(entry["mask"], q, k, v, args.device)
    for peer, call in calls:
        try:
            median, best = timed(call, args.repeat, args.device)
            row["tflops"][peer] = {"median": flops / median / 1e12, "best": flops / best / 1e12}
        except Exception as e:  # a peer without this shape: say so, go on
            row["tflops"][peer] = {"error": str(e).splitlines()[0][:200]}
            if args.device == "cuda" and not context_alive():
                raise  # the context is gone: the supervisor starts a new process
    return row


def context_alive():
    """False once a kernel fault has poisoned this process's CUDA context."""
    try:
        torch.cuda.synchronize()
        return True
    except RuntimeError:
        return False


def matmul_peak(device):
    """The bf16 matrix-product rate PyTorch reaches here (TFLOP/s, median of 10): the ceiling
    the attention figures are read against, measured in the same run."""
    if device != "cuda":
        return None
    a, b = (torch.randn(8192, 8192, dtype=torch.bfloat16, device=device) for _ in range(2))
    median, _ = timed(lambda: a @ b, 10, device)
    return 2.0 * 8192 ** 3 / median / 1e12


def decode_lines(rows, bandwidth):
    """The decode rows as a table: GB/s of K and V and their share of the read bandwidth."""
    lines = ["", "## Decode: GB/s of K and V read (median / best), %% of the read bandwidth (%s "
             "GB/s, a 1 GiB sum; a cache within the last-level cache may pass it)"
             % ("%.0f" % bandwidth if bandwidth else "not measured"), "",
             "| kernel | cache length | peer | median | best | % of bandwidth |",
             "|---|---|---|---|---|---|"]
    for row in sorted(rows, key=lambda r: r["seq"]):
        for peer, t in row.get("gbps", {}).items():
            if "error" in t:
                lines.append("| %s | %d | %s | %s | | |" % (row["kernel"], row["seq"], peer,
                                                           t["error"]))
            else:
                lines.append("| %s | %d | %s | %.0f | %.0f | %.0f%% |" % (
                    row["kernel"], row["seq"], peer, t["median"], t["best"],
                    100 * t["median"] / bandwidth if bandwidth else 0))
    return lines


def report(numeric, rows, peak, args, bandwidth=None):
    lines = ["# GPU check (benchmarks/gpu/run.py)", "",
             "Device: %s; torch %s." % (torch.cuda.get_device_name() if args.device == "cuda"
                                        else "CPU (harness check)", torch.__version__), "",
             "bf16 matrix product (8192^3, torch.matmul): %s TFLOP/s median." % peak, "",
             "## Numerics: %d of %d cases pass" % (sum(r["ok"] for r in numeric), len(numeric)),
             ""]
    lines += ["- FAIL %s [%s] (%s) %s" % (r["name"], r["backend"], r["dtype"], r["note"])
              for r in numeric if not r["ok"]]
    lines += ["", "## TFLOP/s over attended pairs (median / best)", "",
              "| kernel | seq | peer | median | best |", "|---|---|---|---|---|"]
    for row in sorted(rows, key=lambda r: (r["kernel"], r["seq"])):
        if row.get("mask") == "decode" and "error" not in row:
            continue  # decode_lines
            lines.append("| %s | %d | (all) | %s | |" % (row["kernel"], row["seq"], row["error"]))
        for peer, t in row["tflops"].items():
            if "error" in t:
                lines.append("| %s | %d | %s | %s | |" % (row["kernel"], row["seq"], peer,
                                                        t["error"]))
            else:
                lines.append("| %s | %d | %s | %.2f | %.2f |" % (row["kernel"], row["seq"], peer,
                                                                 t["median"], t["best"]))
    decode = [r for r in rows if r.get("gbps")]
    if decode:
        lines += decode_lines(decode, bandwidth)
    return "\n".join(lines) + "\n"


def unpack(bundle):
    """Unpacks <bundle>.tar.xz (prepare.py's archive) when the bundle directory is missing."""
    archive = bundle.rstrip("/") + ".tar.xz"
    if os.path.exists(os.path.join(bundle, "manifest.json")) or not os.path.exists(archive):
        return
    # Plain files and directories only, where the filter exists (Python 3.12, backports).
    safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
    with tarfile.open(archive) as tar:
        tar.extractall(os.path.dirname(os.path.abspath(bundle)), **safe)


def worker(args, manifest):
    """Runs items from --start on, one JSON line each; stops at a lost context (exit 3)."""
    if args.worker == "numerics":
        items = numeric_items(manifest)
        run = lambda item: check_case(args.bundle, *item, args.device)  # noqa: E731
    else:
        items = bench_items(manifest, args)
        run = lambda item: bench_row(args.bundle, *item, args)  # noqa: E731
    with open(os.path.join(args.out, args.worker + ".jsonl"), "a") as f:
        for item in items[args.start:args.start + args.count]:
            if args.worker == "bench" and time.time() > args.deadline_at:
                print("deadline reached; stopping the benchmark")
                return 0
            try:
                if args.worker == "numerics" and item[1] in args.skip_backends:
                    raise RuntimeError("not run: this backend's kernels hung or crashed twice")
                record = run(item)
            except Exception as e:  # recorded as the item's failure; the context decides the rest
                record = failure(args.worker, item, str(e))
            f.write(json.dumps(record) + "\n")
            f.flush()
            if args.device == "cuda" and not context_alive():
                return 3
    return 0


def failure(mode, item, why):
    """The record of an item whose process failed (a fault, a hang, an exception)."""
    if mode == "numerics":
        case, backend, _ = item
        return {"name": case["name"], "backend": backend, "dtype": case["dtype"], "ok": False,
                "note": why.splitlines()[0][:300] if why else "no output"}
    entry, seq, _ = item
    return {"kernel": entry["name"], "mask": entry["mask"], "dim": entry["dim"], "seq": seq,
            "tflops": {}, "error": why.splitlines()[0][:300] if why else "no output"}


def read_lines(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def worker_command(args, mode, start, count):
    return [sys.executable, os.path.abspath(__file__), "--worker", mode, "--start", str(start),
            "--count", str(count), "--bundle", args.bundle, "--out", args.out,
            "--device", args.device, "--seqs", ",".join(map(str, args.seqs)),
            "--flex-seqs", ",".join(map(str, args.flex_seqs)),
            "--decode-lens", ",".join(map(str, args.decode_lens)),
            "--batch", str(args.batch), "--repeat", str(args.repeat),
            "--deadline-at", str(args.deadline_at),
            "--skip-backends", ",".join(sorted(args.skip_backends))]


def supervise(args, mode, items):
    """Runs the items in worker processes, each item's result a line of <out>/<mode>.jsonl.

    A kernel fault poisons a CUDA context for good and a hung kernel never returns, so one
    process cannot be trusted past either: the worker that dies or stops making progress for
    --item-timeout seconds is killed, its item recorded as failed, and a new worker goes on
    with the next one."""
    path = os.path.join(args.out, mode + ".jsonl")
    if os.path.exists(path):
        os.remove(path)
    lost = {}
    while len(read_lines(path)) < len(items) and time.time() < args.deadline_at + 60:
        start = len(read_lines(path))
        proc = subprocess.Popen(worker_command(args, mode, start, len(items) - start))
        count, since = start, time.monotonic()
        while proc.poll() is None:
            time.sleep(0.5)
            now = len(read_lines(path))
            if now != count:
                count, since = now, time.monotonic()
            elif time.monotonic() - since > args.item_timeout:
                proc.kill()
                proc.wait()
        count = len(read_lines(path))
        if proc.returncode == 0 and count == start:
            break  # a clean stop without progress: the benchmark's deadline
        if proc.returncode == 0:
            continue
        # The item that lost the context recorded its own failure; one that hung or killed its
        # process did not.
        index = count - 1 if proc.returncode == 3 else count
        why = {3: "lost the CUDA context"}.get(proc.returncode, "worker %s (exit %d)" % (
            "hung, killed" if proc.returncode < 0 else "died", proc.returncode))
        sanitize(args, mode, index, why)
        if proc.returncode != 3 and count < len(items):
            with open(path, "a") as f:
                f.write(json.dumps(failure(mode, items[count], why)) + "\n")
        if mode == "numerics":  # a backend failing like this each time would eat the lease
            backend = items[index][1]
            lost[backend] = lost.get(backend, 0) + 1
            if lost[backend] >= 2:
                args.skip_backends.add(backend)
    return read_lines(path)


def sanitize(args, mode, index, why):
    """Runs the failed item again under compute-sanitizer's memcheck (the first few only),
    appending its report to <out>/sanitizer.txt: where a fault happened, not only that it did."""
    if args.device != "cuda" or args.sanitize <= 0 or not shutil.which("compute-sanitizer"):
        return
    args.sanitize -= 1
    scratch = os.path.join(args.out, "sanitized")
    os.makedirs(scratch, exist_ok=True)
    command = worker_command(args, mode, index, 1)
    command[command.index("--out") + 1] = scratch
    try:
        proc = subprocess.run(["compute-sanitizer", "--tool", "memcheck", "--print-limit", "8"]
                              + command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=100)
        text = proc.stdout
    except subprocess.TimeoutExpired as e:
        text = (e.stdout or b"").decode(errors="replace") + "\n(timed out)"
    with open(os.path.join(args.out, "sanitizer.txt"), "a") as f:
        f.write("== %s item %d (%s)\n%s\n" % (mode, index, why, text[-6000:]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", default=os.path.join(HERE, "bundle"))
    parser.add_argument("--out", default=os.environ.get("OUT", "gpu-results"))
    parser.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    parser.add_argument("--seqs", type=lambda s: [int(x) for x in s.split(",")],
                        default=[1024, 4096, 16384])
    parser.add_argument("--flex-seqs", type=lambda s: [int(x) for x in s.split(",") if x],
                        default=[4096, 16384], help="lengths FlexAttention is timed at")
    parser.add_argument("--decode-lens", type=lambda s: [int(x) for x in s.split(",") if x],
                        default=[4096, 16384, 65536], help="cache lengths of the decode rows")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--deadline", type=float, default=360.0,
                        help="seconds after the start at which the benchmark stops (results are kept)")
    parser.add_argument("--item-timeout", type=float, default=120.0,
                        help="seconds without progress after which a worker is killed")
    parser.add_argument("--sanitize", type=int, default=2,
                        help="failed items run again under compute-sanitizer (at most this many)")
    parser.add_argument("--skip-bench", action="store_true")
    parser.add_argument("--worker", choices=["numerics", "bench"], help=argparse.SUPPRESS)
    parser.add_argument("--start", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--count", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--deadline-at", type=float, default=0.0, help=argparse.SUPPRESS)
    parser.add_argument("--skip-backends", type=lambda s: set(filter(None, s.split(","))),
                        default=set(), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.device == "cuda" and not torch.cuda.is_available():
        sys.exit("no CUDA device visible to PyTorch; use --device cpu with an opencl bundle")
    unpack(args.bundle)
    with open(os.path.join(args.bundle, "manifest.json")) as f:
        manifest = json.load(f)
    os.makedirs(args.out, exist_ok=True)
    if args.worker:
        return worker(args, manifest)
    args.deadline_at = time.time() + args.deadline
    numeric = supervise(args, "numerics", numeric_items(manifest))
    peak = None if args.skip_bench else matmul_peak(args.device)
    decodes = any(e["mask"] == "decode" for e in manifest["bench"])
    bandwidth = read_bandwidth(args.device) if decodes and not args.skip_bench else None
    rows = [] if args.skip_bench else supervise(args, "bench", bench_items(manifest, args))
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump({"kernels": manifest["kernels"], "matmul_tflops": peak,
                   "read_gbps": bandwidth, "numerics": numeric, "bench": rows}, f, indent=1)
    with open(os.path.join(args.out, "report.md"), "w") as f:
        f.write(report(numeric, rows, peak and "%.0f" % peak, args, bandwidth))
    failed = ["%s [%s]" % (r["name"], r["backend"]) for r in numeric if not r["ok"]]
    print("numerics: %d passed, %d failed" % (len(numeric) - len(failed), len(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
