"""Writes report.md (and PNG plots when matplotlib is there) from the harness's records.

  python3 benchmarks/report.py DIR     renders DIR/report.md again from DIR/results.json
"""
import collections
import json
import os
import re
import sys


def peer_names(records):
    names = []
    for r in records:
        for n in list(r["results"]) + list(r["notes"]):
            if n not in names:
                names.append(n)
    return sorted(names, key=lambda n: (not n.startswith("attnc"), n))


def cell(record, name):
    result = record["results"].get(name)
    if result is None:
        return "—"
    others = [r["gflops"] for n, r in record["results"].items() if not n.startswith("attnc")]
    best = record["useful_gflop"] / result["best_s"]
    text = "%.1f (best %.1f; %.0f%%" % (result["gflops"], best, 100 * result["gflops"] / record["peak_gflops"])
    if name.startswith("attnc") and others:
        text += ", %.2fx" % (result["gflops"] / max(others))
    if result.get("memory_mib") is not None:
        text += ", %.0f MiB" % result["memory_mib"]
    return text + ")"


def table(records, names):
    lines = ["| workload | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for r in records:
        w = r["workload"]
        label = "%s h%d/%d d%d seq %d, %d thr" % (w["variant"], w["heads"], w["kv_heads"],
                                                   w["head_dim"], w["seq"], w["threads"])
        lines.append("| %s | %s |" % (label, " | ".join(cell(r, n) for n in names)))
    return lines


def reasons(records):
    """Why a peer has no figure: one line per (peer, reason), naming the workloads. Time-budget
    skips share a line per peer, each workload with its predicted time."""
    seen = collections.OrderedDict()
    for r in records:
        w = r["workload"]
        for n, why in r["notes"].items():
            label = w["variant"]
            skip = re.match(r"skipped: predicted (\d+) s per call \(budget (\d+) s\)", why)
            if skip:
                why = "skipped: predicted time per call over the %s s budget" % skip.group(2)
                label = "%s d%d seq %d %d thr (%s s)" % (w["variant"], w["head_dim"], w["seq"],
                                                        w["threads"], skip.group(1))
            items = seen.setdefault((n, why), [])
            if label not in items:
                items.append(label)
    return ["- **%s**: %s%s" % (n, why, "" if "not installed" in why else ": " + ", ".join(v))
            for (n, why), v in seen.items()]


def plots(out, records, names):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return ["(No plots: matplotlib is not installed; benchmarks/peers/install.sh installs it.)"]
    variants = sorted({r["workload"]["variant"] for r in records})
    files = []
    for metric, label, fname in (("gflops", "GFLOPS (useful work)", "gflops"),
                                 ("percent", "% of FMA peak", "peak"),
                                 ("memory_mib", "peak memory growth (MiB)", "memory")):
        for d in sorted({r["workload"]["head_dim"] for r in records}):
            threads = max(r["workload"]["threads"] for r in records)
            fig, axes = plt.subplots(2, 3, figsize=(15, 8), squeeze=False)
            drawn = False
            for ax, variant in zip(axes.flat, variants):
                rows = [r for r in records if r["workload"]["variant"] == variant
                        and r["workload"]["head_dim"] == d and r["workload"]["threads"] == threads]
                for n in names:
                    pts = []
                    for r in rows:
                        res = r["results"].get(n)
                        if res is None:
                            continue
                        y = 100 * res["gflops"] / r["peak_gflops"] if metric == "percent" else res.get(metric)
                        if y is not None:
                            pts.append((r["workload"]["seq"], y))
                    if pts:
                        ax.plot(*zip(*sorted(pts)), marker="o", label=n)
                        drawn = True
                ax.set_title("%s, head_dim %d, %d threads" % (variant, d, threads))
                ax.set_xscale("log", base=2)
                if metric == "memory_mib":
                    ax.set_yscale("log")
                ax.set_xlabel("sequence length")
                ax.set_ylabel(label)
                if ax.lines:
                    ax.legend(fontsize=7)
            if not drawn:  # e.g. memory measured for one head_dim only
                plt.close(fig)
                continue
            fig.tight_layout()
            path = "%s_d%d.png" % (fname, d)
            fig.savefig(os.path.join(out, path), dpi=80)
            plt.close(fig)
            files.append("![%s, head_dim %d](%s)" % (label, d, path))
    return files


def write(out, meta, records):
    names = peer_names(records)
    lines = ["# attnc vs peers", "",
             "Command: `%s`  " % meta["command"], "Date: %s  " % meta["date"],
             "Machine: %s; FMA peak %s  " % (meta["machine"], ", ".join(
                 "%.1f GFLOPS on %s threads" % (g, t) for t, g in meta["peaks"].items())),
             "Timed samples: one call each (the harness before --min-sample)." if "min_sample_s"
             not in meta else "Timed samples: back-to-back calls filling at least %g s, divided "
             "by their number." % meta["min_sample_s"],
             "Thread pools: %s.  " % meta["spinning"] if "spinning" in meta else "",
             "",
             "Each cell: GFLOPS of useful work, median of the repeats (best: of the fastest repeat; "
             "% of the FMA peak on the same threads, from the median[; for attnc: x over the "
             "best peer, medians][; peak memory growth of one call]). — means no figure; the "
             "reasons are listed below the table.", ""]
    lines += table(records, names)
    lines += ["", "## Peers without figures", ""] + (reasons(records) or ["(none)"])
    lines += ["", "## Plots", ""] + plots(out, records, names)
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    with open(os.path.join(sys.argv[1], "results.json")) as f:
        data = json.load(f)
    write(sys.argv[1], data["meta"], data["records"])
