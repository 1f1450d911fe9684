"""Timing helpers the Python benchmarks share: median and best milliseconds of calls."""
import os
import shutil
import statistics
import subprocess
import time


def attnc_run():
    """attnc-run of $ATTNC_BUILD (default: the checkout's build/), else the one on PATH."""
    build = os.environ.get("ATTNC_BUILD", os.path.join(os.path.dirname(__file__), "..", "build"))
    built = os.path.join(build, "bin", "attnc-run")
    return built if os.path.exists(built) else shutil.which("attnc-run") or "attnc-run"


def timed(fn, repeats):
    """Median and best milliseconds of `repeats` calls of fn after one warm-up call (and,
    for a torch.compile'd function, its compile)."""
    return timed_in_turn({"fn": fn}, repeats)["fn"]


def timed_in_turn(calls, repeats, min_sample=0.0):
    """timed() for several calls, one round of all of them per repeat: a drift of the
    machine's speed moves every call alike, so their ratios hold. With min_sample (seconds),
    a sample of a call shorter than that is as many back-to-back calls as fill it (counted
    from the warm-up call's time), divided by their number: a sub-millisecond call is then
    not one draw of the VM's noise."""
    counts = {}
    for name, fn in calls.items():
        start = time.perf_counter()
        fn()
        counts[name] = max(1, min(1000, int(min_sample / (time.perf_counter() - start))))
    times = {name: [] for name in calls}
    for _ in range(repeats):
        for name, fn in calls.items():
            start = time.perf_counter()
            for _ in range(counts[name]):
                fn()
            times[name].append((time.perf_counter() - start) / counts[name])
    return {name: (statistics.median(t) * 1e3, min(t) * 1e3) for name, t in times.items()}


def probe(flag, threads):
    """The figure an attnc-run probe (--fma-peak, --tanh-peak) prints for `threads`."""
    line = subprocess.run([attnc_run(), flag, "--num-threads", str(threads)],
                          capture_output=True, text=True, check=True).stdout
    return float(line.split()[2])


def fma_peak(threads):
    """attnc-run's FMA peak probe on `threads` threads, in GFLOPS."""
    return probe("--fma-peak", threads)


def machine():
    """The CPU's model name and its count of logical CPUs."""
    with open("/proc/cpuinfo") as f:
        names = [line.split(":", 1)[1].strip() for line in f if line.startswith("model name")]
    return "%s, %d CPUs" % (names[0] if names else "unknown CPU", os.cpu_count())


def tanh_peak(threads):
    """attnc-run's tanh roofline on `threads` threads: billions of additive-score steps
    (acc += v tanh(k + q), one per pair and head_dim element) a second."""
    return probe("--tanh-peak", threads)


def best_probe(result, key, probes, unit):
    """result[key] = the best of the probes (one was taken before each row: a busy moment
    only lowers a probe, so the best is the machine's bound); the header text that says so."""
    result[key], result[key + "_probes"] = max(probes), probes
    return "%.2f %s (the best of %d probes, one before each row; lowest %.2f)" % (
        result[key], unit, len(probes), min(probes))
