#!/usr/bin/env python3
"""How far attnc's % of peak moves between runs of the same workloads, against either peak.

  python3 benchmarks/spread.py RUN1/results.json RUN2/results.json [...] [--halide]

For each workload present in every run: attnc's % of the peak measured once at the start of
its run, and % of the peak probed during its row (runs of benchmarks/run.py that have
`peak_samples`), one figure per run, and the range (max - min, in points) of each; then the
median and mean range over the workloads. A denominator whose range is smaller tells the
kernel's speed apart from the machine's state better. Reads nothing but the JSON files.
"""
import argparse
import json
import statistics

from acceptance import attnc_name


def key(record):
    w = record["workload"]
    return (w["variant"], w.get("dtype", "f32"), w["head_dim"], w["seq"], w["threads"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", metavar="RESULTS_JSON")
    parser.add_argument("--halide", action="store_true", help="the Halide backend's column")
    args = parser.parse_args()
    runs = [{key(r): r for r in json.load(open(path))["records"]} for path in args.runs]
    if any("run_peak_gflops" not in r for run in runs for r in run.values()):
        raise SystemExit("spread.py: every run needs per-row peaks (benchmarks/run.py's "
                         "results.json from after the row probes)")
    ranges = {"start": [], "row": []}
    print("%-34s %-26s %-26s" % ("workload", "% of the run's start peak", "% of the row's peak"))
    for k in [k for k in runs[0] if all(k in run for run in runs)]:
        records = [run[k] for run in runs]
        name = attnc_name(records[0]["results"], "halide" if args.halide else "mlir")
        if not name or any(name not in r["results"] for r in records):
            continue
        gflops = [r["results"][name]["gflops"] for r in records]
        cols = []
        for which, peak in (("start", "run_peak_gflops"), ("row", "peak_gflops")):
            pct = [100 * g / r[peak] for g, r in zip(gflops, records)]
            ranges[which].append(max(pct) - min(pct))
            cols.append("%s (%.1f)" % (" ".join("%.1f" % p for p in pct), ranges[which][-1]))
        print("%-34s %-26s %-26s" % ("%s %s d%d seq %d %d thr" % k, *cols))
    for which in ranges:
        if ranges[which]:
            print("range in points against the %s peak: median %.1f, mean %.1f" % (
                which, statistics.median(ranges[which]), statistics.mean(ranges[which])))


if __name__ == "__main__":
    main()
