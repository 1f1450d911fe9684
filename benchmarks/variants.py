"""The variants group of benchmarks/run.py: the attention of the textbooks beside softmax
attention, in one run with one report: additive (Bahdanau) scores against the tanh roofline
and PyTorch eager, linear attention (causal and non-causal) against PyTorch eager chunked and
attnc's softmax attention, multi-head attention from X against nn.MultiheadAttention, ONNX
Runtime and attnc's own composition.

    benchmarks/.venv/bin/python benchmarks/run.py --group variants --out DIR
    benchmarks/.venv/bin/python benchmarks/run.py --group variants --quick --out DIR

Needs torch and the attnc package (benchmarks/peers/install.sh; the package is tools/python,
attnc and attnc-run come from $ATTNC_BUILD, default build/); onnxruntime and onnx for the ONNX
Runtime column; matplotlib for the plots. Writes DIR/results.json, DIR/report.md and
DIR/variants-*.png. Each benchmark is additive.py, linear.py and multihead.py with their
default shapes (--quick: tiny ones, one repeat, which keeps the harness working), run one
after the other on --threads threads; the report's last section checks issue 37's speed bars
on the figures of this run.
"""
import datetime
import json
import os
import sys

import additive
import linear
import multihead
import timing

QUICK = {"additive": ["--seq", "64", "128", "--repeats", "1", "--min-sample", "0"],
         "linear": ["--seq", "64", "256", "--repeats", "1", "--min-sample", "0"],
         "multihead": ["--seq", "1", "17", "--embed", "256", "--repeats", "1",
                       "--min-sample", "0"]}


def measure(quick, threads, target):
    """{"additive": .., "linear": {"causal": .., "non_causal": ..}, "multihead": ..}: each
    benchmark's measure() result."""
    common = ["--threads", str(threads), "--target", target]

    def args(module, *extra):
        return module.arguments((QUICK[module.__name__] if quick else []) + common + list(extra))

    results = {"additive": additive.measure(args(additive))}
    print("\n".join(additive.table(results["additive"])), flush=True)
    results["linear"] = {}
    for name, extra in (("causal", []), ("non_causal", ["--non-causal"])):
        results["linear"][name] = linear.measure(args(linear, *extra))
        print("\n".join(linear.table(results["linear"][name])), flush=True)
    results["multihead"] = multihead.measure(args(multihead))
    print("\n".join(multihead.table(results["multihead"])), flush=True)
    return results


def bars(results):
    """Issue 37's speed bars, each with this run's figure: (text, met)."""
    out = []
    for row in results["additive"]["rows"]:
        if "torch" in row["ms"]:
            x = row["ms"]["torch"][0] / row["ms"]["additive"][0]
            out.append(("additive, seq %d: %.1fx PyTorch eager (bar: 3x)" % (row["seq"], x),
                        x >= 3))
    for row in results["linear"]["causal"]["rows"]:
        if row["seq"] == 16384:
            x = row["ms"]["torch"][0] / row["ms"]["linear"][0]
            out.append(("linear causal, seq 16384: %.1fx PyTorch eager chunked (bar: 5x)" % x,
                        x >= 5))
    mh = results["multihead"]
    for row in mh["rows"]:
        t, fused = row["ms"], row["ms"]["attnc"][0]
        where = "multi-head E %d, seq %d" % (row["embed"], row["seq"])
        composed = t["composed"][0] / fused
        out.append(("%s: fused %.2fx the composition (bar: never more than 5%% slower)"
                    % (where, composed), composed >= 1 / 1.05))
        if row["embed"] == 768 and row["seq"] <= 256:
            x = t["torch"][0] / fused
            out.append(("%s: %.2fx nn.MultiheadAttention (bar: 1.3x)" % (where, x), x >= 1.3))
            if "ort" in t:
                for key, weights in (("attnc", "PyTorch"), ("attnc_onnx", "ONNX")):
                    x = t["ort"][0] / t[key][0]
                    out.append(("%s: %.2fx ONNX Runtime, %s-order weights (bar: within 10%%, "
                                "0.91x)" % (where, x, weights), x >= 1 / 1.1))
        if row["embed"] == 768 and row["seq"] == 2048:
            proj = row["projection_gflop"] / (t["projections"][0] * 1e-3) / mh["peak"]
            out.append(("%s: projections at %.0f%% of the FMA peak (bar: 80%%)"
                        % (where, 100 * proj), proj >= 0.8))
    return out


def plot_additive(plt, result, path):
    fig, ax = plt.subplots(figsize=(6, 4))
    rows = result["rows"]
    seqs = [r["seq"] for r in rows]
    ax.plot(seqs, [r["steps"] / r["ms"]["additive"][0] * 1e-6 for r in rows], "o-",
            label="attnc additive")
    torch_rows = [r for r in rows if "torch" in r["ms"]]
    ax.plot([r["seq"] for r in torch_rows],
            [r["steps"] / r["ms"]["torch"][0] * 1e-6 for r in torch_rows], "s--",
            label="PyTorch eager (Keras formula)")
    ax.axhline(result["roofline"], color="k", linestyle=":", label="tanh roofline")
    ax.set(xscale="log", xlabel="seq", ylabel="G pairs x head_dim / s",
           title="Additive scores, %d heads, head_dim %d" % (result["heads"], result["dim"]))
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def plot_linear(plt, results, path):
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, (name, result) in zip(axes, results.items()):
        rows = result["rows"]
        for key, label, style in (("linear", "attnc linear", "o-"),
                                  ("torch", "PyTorch eager chunked", "s--"),
                                  ("softmax", "attnc softmax attention", "^:")):
            pts = [(r["seq"], r["ms"][key][0]) for r in rows if key in r["ms"]]
            ax.plot(*zip(*pts), style, label=label)
        ax.set(xscale="log", yscale="log", xlabel="seq", ylabel="ms (median)",
               title="Linear attention, %s" % name.replace("_", "-"))
        if result["crossover"]:
            ax.axvline(result["crossover"], color="grey", linewidth=0.8)
        ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def plot_multihead(plt, result, path):
    rows = result["rows"]
    labels = ["E %d\nN %d" % (r["embed"], r["seq"]) for r in rows]
    peers = [("torch", "nn.MultiheadAttention"), ("ort", "ONNX Runtime"),
             ("composed", "attnc composition")]
    fig, ax = plt.subplots(figsize=(max(6, len(rows)), 4))
    width = 0.8 / len(peers)
    for i, (key, label) in enumerate(peers):
        xs = [j + (i - 1) * width for j, r in enumerate(rows) if key in r["ms"]]
        ys = [r["ms"][key][0] / r["ms"]["attnc"][0] for r in rows if key in r["ms"]]
        ax.bar(xs, ys, width, label=label)
    ax.axhline(1.0, color="k", linewidth=0.8)
    ax.set_xticks(range(len(rows)), labels)
    ax.set(ylabel="peer time / attnc fused time", title="Multi-head attention from X")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def plots(out, results):
    """The three plots as PNGs in out; markdown lines that show them."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return ["(No plots: matplotlib is not installed; benchmarks/peers/install.sh installs it.)"]
    plot_additive(plt, results["additive"], os.path.join(out, "variants-additive.png"))
    plot_linear(plt, results["linear"], os.path.join(out, "variants-linear.png"))
    plot_multihead(plt, results["multihead"], os.path.join(out, "variants-multihead.png"))
    return ["![additive](variants-additive.png)", "", "![linear](variants-linear.png)", "",
            "![multi-head](variants-multihead.png)"]


def report(out, meta, results):
    lines = ["# attnc: attention variants (the variants group of benchmarks/run.py)", "",
             "- command: `%s`" % meta["command"], "- date: %s" % meta["date"],
             "- machine: %s" % meta["machine"], "",
             "Milliseconds are median (best) of the repeats, every call of a row timed in "
             "turn (a sample of a call under 50 ms is as many back-to-back calls as fill "
             "50 ms); % of peak against the best of the peaks attnc-run measured in the same "
             "run, one probe before each row.", "",
             "## Additive (Bahdanau) scores", ""] + additive.table(results["additive"])
    lines += ["", "## Linear attention", ""]
    for result in results["linear"].values():
        lines += linear.table(result) + [""]
    lines += ["## Multi-head attention from X", ""] + multihead.table(results["multihead"])
    lines += ["", "## Issue 37's speed bars in this run", ""]
    lines += ["- %s: %s" % ("met" if met else "**not met**", text)
              for text, met in bars(results)]
    lines += ["", "## Plots", ""] + plots(out, results)
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


def run(args, command):
    """run.py --group variants: measure, then results.json, report.md and the plots in
    args.out. 1 when an attnc out was off its reference."""
    os.makedirs(args.out, exist_ok=True)
    threads = max(args.threads)
    target = args.target
    results = measure(args.quick, threads, target)
    meta = {"command": command, "date": datetime.datetime.now().isoformat(timespec="seconds"),
            "machine": "%s; %d threads, attnc target %s" % (timing.machine(), threads, target)}
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump({"meta": meta, "results": results}, f, indent=1)
    report(args.out, meta, results)
    print("wrote %s" % os.path.join(args.out, "report.md"))
    failed = [results["additive"], results["multihead"], *results["linear"].values()]
    return 1 if any(r["failed"] for r in failed) else 0


if __name__ == "__main__":
    sys.exit("run it as: benchmarks/run.py --group variants --out DIR")
