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


def dtype(record):
    return record["workload"].get("dtype", "f32")  # records from before dtypes are f32


def dtype_label(record):
    """"" for f32 rows (their labels from before dtypes), else " bf16"."""
    return "" if dtype(record) == "f32" else " " + dtype(record)


def f32_twins(records):
    """id(record) of each non-f32 row -> the f32 row of the same shape in the same run."""
    f32 = {tuple(sorted((k, v) for k, v in r["workload"].items() if k != "dtype")): r
           for r in records if dtype(r) == "f32"}
    return {id(r): f32.get(tuple(sorted((k, v) for k, v in r["workload"].items() if k != "dtype")))
            for r in records if dtype(r) != "f32"}


def cell(record, name, twin=None):
    result = record["results"].get(name)
    if result is None:
        return "—"
    others = [r["gflops"] for n, r in record["results"].items() if not n.startswith("attnc")]
    best = record["useful_gflop"] / result["best_s"]
    text = "%.1f (best %.1f; %.0f%%" % (result["gflops"], best, 100 * result["gflops"] / record["peak_gflops"])
    if name.startswith("attnc") and others:
        text += ", %.2fx" % (result["gflops"] / max(others))
    if name.startswith("attnc") and twin and name in twin["results"]:
        text += ", %.2fx f32" % (result["gflops"] / twin["results"][name]["gflops"])
    if result.get("memory_mib") is not None:
        text += ", %.0f MiB" % result["memory_mib"]
    return text + ")"


def peak_cell(record):
    """The row's peak in GFLOPS; for runs that probe it per row, the spread of the probes."""
    samples = record.get("peak_samples")
    if not samples:
        return "%.1f" % record["peak_gflops"]
    return "%.1f (%.1f-%.1f)" % (record["peak_gflops"], min(samples), max(samples))


def table(records, names):
    """One row per record, grouped by variant (the run interleaves a shape's variants)."""
    lines = ["| workload | peak | " + " | ".join(names) + " |", "|---" * (len(names) + 2) + "|"]
    twins = f32_twins(records)
    order = list(dict.fromkeys(r["workload"]["variant"] for r in records))
    for r in sorted(records, key=lambda r: order.index(r["workload"]["variant"])):
        w = r["workload"]
        label = "%s%s h%d/%d d%d seq %d, %d thr" % (w["variant"], dtype_label(r), w["heads"],
                                                     w["kv_heads"], w["head_dim"], w["seq"],
                                                     w["threads"])
        lines.append("| %s | %s | %s |" % (label, peak_cell(r), " | ".join(
            cell(r, n, twins.get(id(r))) for n in names)))
    return lines


def reasons(records):
    """Why a peer has no figure: one line per (peer, reason), naming the workloads. Time-budget
    skips share a line per peer, each workload with its predicted time."""
    seen = collections.OrderedDict()
    for r in records:
        w = r["workload"]
        for n, why in r["notes"].items():
            label = w["variant"] + dtype_label(r)
            skip = re.match(r"skipped: predicted (\d+) s per call \(budget (\d+) s\)", why)
            if skip:
                why = "skipped: predicted time per call over the %s s budget" % skip.group(2)
                label = "%s%s d%d seq %d %d thr (%s s)" % (w["variant"], dtype_label(r),
                                                          w["head_dim"], w["seq"], w["threads"],
                                                          skip.group(1))
            items = seen.setdefault((n, why), [])
            if label not in items:
                items.append(label)
    return ["- **%s**: %s%s" % (n, why, "" if "not installed" in why or "--skip-peers" in why else ": " + ", ".join(v))
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
    used = sorted({r.get("peak", "FMA") for r in records})
    peak_label = "% of FMA peak" if used == ["FMA"] else "% of peak (" + ", ".join(used) + ")"
    for metric, label, fname in (("gflops", "GFLOPS (useful work)", "gflops"),
                                 ("percent", peak_label, "peak"),
                                 ("memory_mib", "peak memory growth (MiB)", "memory")):
        for d in sorted({r["workload"]["head_dim"] for r in records}):
            threads = max(r["workload"]["threads"] for r in records)
            fig, axes = plt.subplots(2, 3, figsize=(15, 8), squeeze=False)
            drawn = False
            for ax, variant in zip(axes.flat, variants):
                rows = [r for r in records if r["workload"]["variant"] == variant
                        and r["workload"]["head_dim"] == d and r["workload"]["threads"] == threads]
                for n, dt in [(n, dt) for dt in sorted({dtype(r) for r in rows},
                                                       key=lambda x: x != "f32") for n in names]:
                    pts = []
                    for r in rows:
                        res = r["results"].get(n)
                        if res is None or dtype(r) != dt:
                            continue
                        y = 100 * res["gflops"] / r["peak_gflops"] if metric == "percent" else res.get(metric)
                        if y is not None:
                            pts.append((r["workload"]["seq"], y))
                    if pts:  # bf16 lines dashed
                        ax.plot(*zip(*sorted(pts)), marker="o", linestyle="-" if dt == "f32" else "--",
                                label=n if dt == "f32" else "%s %s" % (n, dt))
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


def peaks_line(meta, records):
    """The peaks of the run and which rows use which."""
    text = "FMA peak %s%s" % (", ".join("%.1f GFLOPS on %s threads" % (g, t)
                                        for t, g in meta["peaks"].items()),
                              " at the start of the run" if per_row_peaks(records) else "")
    if meta.get("read_bandwidth"):
        text += "; read bandwidth %s" % ", ".join("%.1f GB/s on %s threads" % (b, t)
                                                   for t, b in meta["read_bandwidth"].items())
    if "bf16" not in {dtype(r) for r in records}:
        return text
    if meta.get("bf16_peaks"):
        text += "; bf16 dot-product peak (vdpbf16ps, 64 FLOPs per instruction) %s" % ", ".join(
            "%.1f GFLOPS on %s threads" % (g, t) for t, g in meta["bf16_peaks"].items())
    if meta.get("bf16_peak_missing"):
        text += "; bf16 dot-product peak not measured (%s)" % meta["bf16_peak_missing"]
    uses = collections.OrderedDict()
    for r in records:
        uses.setdefault(dtype(r), set()).add(r.get("peak", "FMA"))
    text += ". %% of peak: %s" % "; ".join("%s rows against the %s peak" % (d, " / ".join(sorted(p)))
                                          for d, p in uses.items())
    if meta.get("attnc_targets"):
        text += ". attnc's targets: %s" % ", ".join("%s %s" % (d, t) for d, t in
                                                    meta["attnc_targets"].items() if d in uses)
    return text


def per_row_peaks(records):
    return all("peak_samples" in r for r in records)


def peak_column(records):
    """What the peak column and the % in the cells are."""
    if not per_row_peaks(records):
        return ("Peak: the GFLOPS the % in the cells divides by, measured once at the start of "
                "the run.")
    return ("Peak: the row's own peak in GFLOPS, median of one probe per repeat round "
            "(attnc-run --fma-peak, or --bf16-peak on bf16 rows, on the row's threads, "
            "interleaved with the peers' samples), and the probes' range; the % in the cells "
            "divides by it, so a disturbance that slows the whole machine during a row "
            "(another tenant, a lower clock) divides out.")


def write(out, meta, records):
    names = peer_names(records)
    bf16 = "bf16" in {dtype(r) for r in records}
    lines = ["# attnc vs peers", "",
             "Command: `%s`  " % meta["command"], "Date: %s  " % meta["date"],
             "Machine: %s; %s  " % (meta["machine"], peaks_line(meta, records)),
             "Timed samples: one call each (the harness before --min-sample)." if "min_sample_s"
             not in meta else "Timed samples: back-to-back calls filling at least %g s, divided "
             "by their number." % meta["min_sample_s"],
             "Thread pools: %s.  " % meta["spinning"] if "spinning" in meta else "",
             peak_column(records),
             "",
             ("Each cell: GFLOPS of useful work, median of the repeats (best: of the fastest repeat; "
              "% of the row's FMA peak (the peak column), from the median[; for attnc: x over the "
              "best peer, medians][; peak memory growth of one call]). — means no figure; the "
              "reasons are listed below the table." if not bf16 else
              "Each cell: GFLOPS of useful work (4 x head_dim per kept pair, whatever the dtype), "
              "median of the repeats (best: of the fastest repeat; % of the row's peak (the peak "
              "column), from the median: the FMA peak for f32 rows, the bf16 dot-product "
              "peak for bf16 rows[; for attnc: x over the best peer of the row, medians][; for "
              "attnc on a bf16 row: x over attnc on the f32 row of the same shape, same run][; "
              "peak memory growth of one call]). bf16 rows: q, k, v and out in bf16, checked "
              "against the f32 reference on the same (bf16) inputs within 1e-2. — means no "
              "figure; the reasons are listed below the table."), ""]
    lines += table(records, names)
    lines += ["", "## Peers without figures", ""] + (reasons(records) or ["(none)"])
    lines += ["", "## Plots", ""] + plots(out, records, names)
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    with open(os.path.join(sys.argv[1], "results.json")) as f:
        data = json.load(f)
    write(sys.argv[1], data["meta"], data["records"])
