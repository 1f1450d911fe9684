#!/usr/bin/env python3
"""attnc against the attention implementations a user would pick instead, in one run.

  python3 benchmarks/run.py --out DIR             the full comparison (peers: peers/install.sh)
  python3 benchmarks/run.py --quick --out DIR     tiny shapes, keeps the harness working (CI)
  python3 benchmarks/run.py --group variants --out DIR
                                                  additive, linear and multi-head attention
                                                  (variants.py)

For every workload (variant x seq x head_dim x threads x dtype) each available peer is first
checked against attnc's reference evaluator on a small problem of the same variant and dtype
(max abs error <= 1e-4 on inputs in [-1, 1) for f32: float32 accumulation of a few hundred
terms, far below that; <= 1e-2 for bf16, see AGREEMENT_ATOL), then timed with its repeats
interleaved with the other peers' (so drift hits all alike): median and best of --repeats after
one warm-up; a sample is as many back-to-back calls as fill --min-sample seconds, divided by
their number. GFLOPS count useful work only, 4 * head_dim per (query, key) pair the mask keeps,
whatever the dtype; % of peak is against the peak of the row's dtype on the same threads,
probed once per repeat round of the row (the median of those probes): the FMA peak for f32
(attnc-run --fma-peak), the bf16 dot-product peak for bf16 (attnc-run --bf16-peak: vdpbf16ps;
the FMA peak on a CPU without it); the run also records the memory read bandwidth on each
thread count (attnc-run --bandwidth-peak), the bound of memory-bound rows; memory is the growth
of a fresh process's peak RSS during one call. A peer that cannot run a workload is listed with
the reason.

bf16 workloads (--dtypes ... bf16): q, k, v and out in bf16. The inputs are the f32 workload's
rounded to bf16, handed to every peer as float32 arrays of bf16 numbers (each converts them
exactly, untimed); the reference is the f32 reference evaluator on those same inputs, i.e. the
exact answer that bf16 peers approximate (their output alone is rounded to bf16).
"""
import os

# Thread pools that spin after a call take the cores from the next peer timed (seen: attnc 30%
# slower at seq 2048 right after an OpenMP peer). OpenMP peers (torch, oneDNN, OpenBLAS) wait
# passively; it must be set before any OpenMP runtime loads. ONNX Runtime: ort_peer.py.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse
import datetime
import importlib
import json
import os
import platform
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from peers import attnc_peer  # noqa: E402
from peers.base import DTYPES, VARIANTS, Unsupported, Workload, aligned, round_bf16, to_float32  # noqa: E402

# Peer modules and the peers each provides (named in the report when not installed).
PEER_MODULES = {"torch_peers": ("torch-sdpa", "torch-flex"), "iree_peer": ("iree",),
                "unfused_peers": ("openblas-unfused", "onednn-unfused"),
                "ort_peer": ("onnxruntime-mha",)}
# Max abs error against the reference, per dtype. bf16: rounding the output to bf16 alone is up
# to 2^-9 |out| (|out| < 1, so < 2e-3), rounding P to bf16 before P V (oneDNN, SDPA) another
# 2^-9 or so; 1e-2 leaves room for that and the order of accumulation, and still catches a
# wrong mask or scale (errors of order 0.1). Measured at seq 192: SDPA bf16 2.8e-3 (causal).
AGREEMENT_ATOL = {"f32": 1e-4, "bf16": 1e-2}
CHECK_SEQ = 192


def workloads(args):
    """Shape by shape, a shape's variants and dtypes adjacent: the ratios between variants
    (causal % of dense, BigBird / dense) and dtypes then compare measurements minutes apart
    at most, not the two ends of the run (seen: dense head_dim 128 at 79% of the peak, causal
    on the same shape 109% of it, an hour later). Lengths grow within each series, as the
    time budget's predictions need."""
    for d in args.head_dims:
        for s in args.seqs:
            for t in args.threads:
                if t == 1 and args.one_thread_seqs and s not in args.one_thread_seqs:
                    continue
                for variant in args.variants:
                    heads, kv = (32, 8) if variant == "gqa" else (args.heads, args.heads)
                    if args.quick and variant == "gqa":
                        heads, kv = 8, 2
                    for dtype in args.dtypes:
                        yield Workload(variant, 1, heads, kv, s, d, t, dtype)


def inputs(w, seed=0):
    """q, k, v as cache-line-aligned float32 arrays; for bf16 workloads the same numbers
    rounded to bf16."""
    rng = np.random.default_rng(seed)
    draw = lambda heads: aligned(
        rng.uniform(-1, 1, (w.batch, heads, w.seq, w.head_dim)).astype(np.float32))
    q, k, v = draw(w.heads), draw(w.kv_heads), draw(w.kv_heads)
    if w.dtype == "bf16":
        q, k, v = (aligned(round_bf16(a)) for a in (q, k, v))
    return q, k, v


def attnc_targets(args):
    """{dtype: the target attnc compiles that dtype's kernels for}."""
    return {"f32": args.target,
            "bf16": args.bf16_target or attnc_peer.bf16_target(args.target)}


def load_peers(work, targets, baseline=None, halide_sources=()):
    peers, missing = attnc_peer.make(work, targets, baseline, halide_sources), {}
    for module in PEER_MODULES:
        try:
            peers += importlib.import_module("peers." + module).make()
        except ImportError as e:
            for name in PEER_MODULES[module]:
                missing[name] = "not installed (benchmarks/peers/install.sh): %s" % e
        except Exception as e:  # a broken peer is reported, not fatal
            for name in PEER_MODULES[module]:
                missing[name] = "could not be loaded: %s: %s" % (type(e).__name__, e)
    return peers, missing


def reference(w, q, k, v, work):
    """attnc's reference evaluator on q, k, v (via attnc-run --reference), in float32 whatever
    w's dtype: for bf16, the exact answer on the bf16 inputs."""
    name, text = w.as_f32().spec()
    directory = tempfile.mkdtemp(dir=work)
    spec = os.path.join(directory, "spec.mlir")
    with open(spec, "w") as f:
        f.write(text)
    for n, a in (("q", q), ("k", k), ("v", v)):
        np.save(os.path.join(directory, n + ".npy"), a)
    subprocess.run([os.path.join(attnc_peer.BUILD, "bin", "attnc-run"), "--reference", spec,
                    "--q", os.path.join(directory, "q.npy"), "--k", os.path.join(directory, "k.npy"),
                    "--v", os.path.join(directory, "v.npy"), "-o", directory],
                   check=True, stdout=subprocess.DEVNULL)
    return np.load(os.path.join(directory, "out.npy"))


def check_agreement(peers, w, work):
    """Per peer: None if it agrees with the reference on a small problem, else the reason."""
    small = Workload(w.variant, 1, w.heads, w.kv_heads, CHECK_SEQ, w.head_dim, w.threads, w.dtype)
    q, k, v = inputs(small, seed=1)
    want = reference(small, q, k, v, work)
    atol = AGREEMENT_ATOL[w.dtype]
    verdicts = {}
    for peer in peers:
        try:
            got = to_float32(peer.prepare(small, q, k, v)())
            err = float(np.max(np.abs(got - want)))
            verdicts[peer.name] = None if err <= atol else \
                "disagrees with the reference: max abs err %.2e > %.0e" % (err, atol)
        except Unsupported as e:
            verdicts[peer.name] = "unsupported: %s" % e
        except Exception as e:  # a peer failing is a result, not a harness crash
            verdicts[peer.name] = "failed: %s" % (str(e).splitlines() or ["?"])[0][:200]
    return verdicts


def time_workload(peers, w, repeats, budget, history, min_sample, probe):
    """Interleaved repeats, each round opened by `probe()` (the GFLOPS of the row's peak,
    measured now: returned as the third result, one per round). A peer whose previous
    (smaller) run of the same series predicts more than `budget` seconds per call is
    skipped, with the prediction as the reason. The
    prediction scales with seq^2 whatever the mask: conservative for peers that skip masked
    work, right for those that compute everything.

    A sample is as many back-to-back calls as fill `min_sample` seconds (from the warm-up
    call), divided by their number: on a machine whose idle cores take milliseconds to wake
    (a VM's halted vCPUs), or whose cores still run the previous peer's spinning OpenMP
    threads, a single call of a few milliseconds measures that latency, not the kernel."""
    q, k, v = inputs(w)
    runs, notes = {}, {}
    series = (w.variant, w.head_dim, w.threads, w.dtype)
    for peer in peers:
        last = history.get((peer.name, series))
        if last:
            predicted = last[0] * (w.seq / last[1]) ** 2
            if predicted > budget:
                notes[peer.name] = "skipped: predicted %.0f s per call (budget %.0f s)" % (predicted, budget)
                continue
        try:
            runs[peer.name] = peer.prepare(w, q, k, v)
        except Unsupported as e:
            notes[peer.name] = "unsupported: %s" % e
        except Exception as e:
            notes[peer.name] = "failed: %s" % (str(e).splitlines() or ["?"])[0][:200]
    times = {name: [] for name in runs}
    calls = {name: 1 for name in runs}
    peaks = []
    for r in range(repeats + 1):  # round 0 warms up and sizes the samples
        if r:
            peaks.append(probe())
        for name, fn in list(runs.items()):
            start = time.perf_counter()
            try:
                for _ in range(calls[name]):
                    fn()
            except Exception as e:
                notes[name] = "failed: %s" % (str(e).splitlines() or ["?"])[0][:200]
                del runs[name]
                continue
            elapsed = time.perf_counter() - start
            if r:
                times[name].append(elapsed / calls[name])
            else:
                calls[name] = max(1, min(1000, int(min_sample / max(elapsed, 1e-6))))
    results = {}
    for name, ts in times.items():
        if name in notes or not ts:
            continue
        median = statistics.median(ts)
        results[name] = {"median_s": median, "best_s": min(ts),
                         "gflops": w.useful_flops() / median * 1e-9}
        history[(name, series)] = (median, w.seq)
    return results, notes, peaks


def rss_mib(field):
    """VmRSS (now) or VmHWM (peak since the last reset) of this process, in MiB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024.0
    raise RuntimeError("no %s in /proc/self/status" % field)


def memory_child(args):
    """Run in a fresh process: prepare one peer, then report how far one call raises the
    resident set above what preparation left resident. The kernel's high-water mark is
    reset first (clear_refs 5), so peaks of preparation (imports, compilation) do not count."""
    spec = json.loads(args.memory_child)
    w = Workload(**spec["workload"])
    peers, _ = load_peers(spec["work"], spec["targets"], spec.get("baseline"))
    peer = next(p for p in peers if p.name == spec["peer"])
    fn = peer.prepare(w, *inputs(w))
    before = rss_mib("VmRSS")
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    fn()
    print(json.dumps({"mib": max(0.0, rss_mib("VmHWM") - before)}))


def measure_memory(peer, w, work, targets, baseline=None):
    spec = json.dumps({"workload": w.__dict__, "peer": peer, "work": work, "targets": targets,
                       "baseline": baseline})
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--memory-child", spec],
                          capture_output=True, text=True)
    if proc.returncode:
        print("memory of %s on %s not measured: %s" % (peer, w.name, proc.stderr.strip()[-300:]),
              file=sys.stderr)
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])["mib"]


def remeasure_memory(args):
    with open(args.remeasure_memory) as f:
        data = json.load(f)
    work = tempfile.mkdtemp(prefix="attnc-bench-")
    targets = data["meta"].get("attnc_targets") or attnc_targets(args)
    threads = max(r["workload"]["threads"] for r in data["records"])
    for r in data["records"]:
        w = Workload(**r["workload"])
        for result in r["results"].values():
            result.pop("memory_mib", None)
        if w.threads != threads or (args.memory_head_dims and w.head_dim not in args.memory_head_dims):
            continue
        for name, result in r["results"].items():
            result["memory_mib"] = measure_memory(name, w, work, targets)
        print(w.name, {n: x.get("memory_mib") for n, x in r["results"].items()}, flush=True)
    data["meta"]["command"] += "; memory: " + command_line()
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(data, f, indent=1)
    import report
    report.write(args.out, data["meta"], data["records"])


def fma_peak(threads):
    out = subprocess.run([os.path.join(attnc_peer.BUILD, "bin", "attnc-run"), "--fma-peak",
                          "--num-threads", str(threads)], capture_output=True, text=True,
                         check=True).stdout
    return float(re.search(r"FMA peak: ([0-9.]+) GFLOPS", out).group(1))


def read_bandwidth(threads):
    """GB/s of attnc-run --bandwidth-peak on `threads` threads: the bound of memory-bound rows
    (decode), beside the FMA peak of compute-bound ones."""
    out = subprocess.run([os.path.join(attnc_peer.BUILD, "bin", "attnc-run"), "--bandwidth-peak",
                          "--num-threads", str(threads)], capture_output=True, text=True,
                         check=True).stdout
    return float(re.search(r"read bandwidth: ([0-9.]+) GB/s", out).group(1))


def bf16_peak(threads):
    """(GFLOPS of vdpbf16ps chains on `threads` threads, None), or (None, why not): a CPU without
    AVX512-BF16, or an attnc-run without --bf16-peak."""
    proc = subprocess.run([os.path.join(attnc_peer.BUILD, "bin", "attnc-run"), "--bf16-peak",
                           "--num-threads", str(threads)], capture_output=True, text=True)
    found = re.search(r"bf16 dot peak: ([0-9.]+) GFLOPS", proc.stdout)
    if found and proc.returncode == 0:
        return float(found.group(1)), None
    why = (proc.stdout.strip() or proc.stderr.strip() or "exit status %d" % proc.returncode)
    return None, why.splitlines()[0].replace("bf16 dot peak: ", "")


def peak_of(w, peaks, bf16_peaks):
    """(GFLOPS at the start of the run, name, probe) of the peak a workload's % is against;
    probe() measures it again."""
    if w.dtype == "bf16" and bf16_peaks.get(w.threads):
        return bf16_peaks[w.threads], "bf16 dot", lambda: bf16_peak(w.threads)[0]
    return peaks[w.threads], "FMA", lambda: fma_peak(w.threads)


def command_line():
    """This run's command line, with paths under the working directory made relative."""
    cwd = os.getcwd() + os.sep
    return " ".join(shlex.quote(a[len(cwd):] if a.startswith(cwd) else a)
                    for a in [sys.executable] + sys.argv)


def positive_int(text):
    """argparse type: an integer > 0 (a length, head_dim, thread or repeat count of 0 or
    less has no timing)."""
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError("must be a positive integer, got %s" % text)
    return value


def positive_float(text):
    """argparse type: a finite number > 0."""
    value = float(text)
    if not (0 < value < float("inf")):
        raise argparse.ArgumentTypeError("must be a positive number, got %s" % text)
    return value


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--group", choices=["attention", "variants"], default="attention",
                        help="attention: softmax attention against its peers (the options "
                             "below); variants: additive, linear and multi-head attention "
                             "(variants.py: --quick, --threads' largest, --target)")
    parser.add_argument("--quick", action="store_true", help="tiny shapes, one repeat")
    parser.add_argument("--out", required="--memory-child" not in sys.argv)
    parser.add_argument("--variants", nargs="+", choices=VARIANTS, default=list(VARIANTS))
    parser.add_argument("--seqs", nargs="+", type=positive_int, default=[512, 1024, 2048, 4096, 8192, 16384])
    parser.add_argument("--head-dims", nargs="+", type=positive_int, default=[64, 128])
    parser.add_argument("--threads", nargs="+", type=positive_int, default=[1, 2])
    parser.add_argument("--heads", type=positive_int, default=8)
    parser.add_argument("--repeats", type=positive_int, default=3)
    parser.add_argument("--min-sample", type=positive_float, default=0.1,
                        help="a timed sample is as many back-to-back calls as fill this (s)")
    parser.add_argument("--dtypes", nargs="+", choices=DTYPES, default=["f32"],
                        help="dtypes of q, k, v and out (default f32); bf16 rows report %% of "
                             "the bf16 dot-product peak")
    parser.add_argument("--target", default="x86-64-avx512" if "avx512f" in open("/proc/cpuinfo").read() else "x86-64-avx2",
                        help="attnc's target for f32 kernels")
    parser.add_argument("--bf16-target",
                        help="attnc's target for bf16 kernels (default: %s when attnc "
                             "--list-targets has it and it runs here, else --target)"
                             % attnc_peer.BF16_TARGET)
    parser.add_argument("--one-thread-seqs", nargs="*", type=positive_int, default=[],
                        help="measure 1 thread only at these lengths (default: all)")
    parser.add_argument("--skip-peers", nargs="*", default=[], metavar="PEER",
                        help="leave these peers out (the report lists them with the reason)")
    parser.add_argument("--budget", type=positive_float, default=30.0,
                        help="skip a peer whose predicted time per call exceeds this (s)")
    parser.add_argument("--memory-head-dims", nargs="*", type=positive_int, default=None,
                        help="measure memory only for these head_dims (default: all)")
    parser.add_argument("--no-memory", action="store_true", help="skip the memory measurements")
    parser.add_argument("--halide-sources", nargs="*", default=[],
                        choices=["mullapudi2016", "li2018", "adams2019"],
                        help="also time the Halide backend with these autoschedulers' schedules")
    parser.add_argument("--baseline", metavar="BUILD_DIR",
                        help="also time the kernels of another attnc build (e.g. of the "
                             "previous commit) as attnc-<target>-baseline (and its Halide "
                             "ones as attnc-halide-<target>-baseline), in the same run")
    parser.add_argument("--memory-child", help=argparse.SUPPRESS)
    parser.add_argument("--remeasure-memory", metavar="RESULTS_JSON",
                        help="measure memory again for the records of an earlier run "
                             "(--memory-head-dims, threads = max) and rewrite its report in --out")
    args = parser.parse_args()
    if args.memory_child:
        return memory_child(args)
    if args.remeasure_memory:
        return remeasure_memory(args)
    if args.group == "variants":
        import variants
        return variants.run(args, command_line())
    if args.quick:
        args.seqs, args.head_dims, args.threads, args.heads, args.repeats = [128, 256], [64], [1, 2], 2, 1
        args.min_sample = 0.01
    args.dtypes = list(dict.fromkeys(args.dtypes))  # each once, in the order given
    os.makedirs(args.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="attnc-bench-")  # specs, kernels, reference runs

    targets = attnc_targets(args)
    peers, missing = load_peers(work, targets, args.baseline, args.halide_sources)
    for peer in [p for p in peers if p.name in args.skip_peers]:
        peers.remove(peer)
        missing[peer.name] = "left out of this run (--skip-peers)"
    peaks = {t: fma_peak(t) for t in sorted(set(args.threads))}
    bandwidth = {t: read_bandwidth(t) for t in peaks}
    bf16_peaks, bf16_missing = {}, None
    if "bf16" in args.dtypes:
        for t in peaks:
            bf16_peaks[t], bf16_missing = bf16_peak(t)
    print("peers: %s; not run: %s; FMA peak: %s; read bandwidth: %s" % (
        ", ".join(p.name for p in peers), ", ".join(missing) or "none",
        ", ".join("%.1f GFLOPS on %d threads" % (g, t) for t, g in peaks.items()),
        ", ".join("%.1f GB/s on %d threads" % (b, t) for t, b in bandwidth.items()))
        + ("" if "bf16" not in args.dtypes else "; bf16 dot peak: %s; attnc bf16 target: %s" % (
            bf16_missing or ", ".join("%.1f GFLOPS on %d threads" % (g, t)
                                      for t, g in bf16_peaks.items()), targets["bf16"])),
        flush=True)
    agreement, records, history = {}, [], {}
    for w in workloads(args):
        key = (w.variant, w.heads, w.kv_heads, w.head_dim, w.dtype)
        if key not in agreement:
            agreement[key] = check_agreement(peers, w, work)
        ok = [p for p in peers if agreement[key][p.name] is None]
        run_peak, peak_name, probe = peak_of(w, peaks, bf16_peaks)
        results, notes, row_peaks = time_workload(ok, w, args.repeats, args.budget, history,
                                                  args.min_sample, probe)
        notes.update({p.name: agreement[key][p.name] for p in peers if p not in ok})
        notes.update(missing)
        memory = not args.no_memory and not args.quick and (
            args.memory_head_dims is None or w.head_dim in args.memory_head_dims)
        if memory:
            for name in results:
                results[name]["memory_mib"] = measure_memory(name, w, work, targets,
                                                             args.baseline)
        records.append({"workload": w.__dict__, "results": results, "notes": notes,
                        "peak_gflops": statistics.median(row_peaks), "peak": peak_name,
                        "peak_samples": row_peaks, "run_peak_gflops": run_peak,
                        "useful_gflop": w.useful_flops() * 1e-9})
        print("%-32s %s" % (w.name, "  ".join("%s %.1f GFLOPS" % (n, r["gflops"])
                                              for n, r in results.items())), flush=True)
    meta = {"command": command_line(),
            "date": datetime.datetime.now().isoformat(timespec="seconds"),
            "machine": "%s, %d CPUs (%s)" % (platform.processor() or platform.machine(),
                                            os.cpu_count(), args.target),
            "peaks": peaks, "read_bandwidth": bandwidth, "min_sample_s": args.min_sample,
            "dtypes": args.dtypes,
            "spinning": "OpenMP peers with OMP_WAIT_POLICY=%s, ONNX Runtime with "
                        "allow_spinning=0, attnc's pool parks idle threads after a "
                        "kernel's last phase"
                        % os.environ["OMP_WAIT_POLICY"]}
    if "bf16" in args.dtypes:
        meta.update({"bf16_peaks": {t: g for t, g in bf16_peaks.items() if g},
                     "bf16_peak_missing": bf16_missing, "attnc_targets": targets})
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump({"meta": meta, "records": records}, f, indent=1)
    import report
    report.write(args.out, meta, records)
    print("wrote %s" % os.path.join(args.out, "report.md"))


if __name__ == "__main__":
    sys.exit(main())
