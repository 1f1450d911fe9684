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


def timed_in_turn(calls, repeats):
    """timed() for several calls, one round of all of them per repeat: a drift of the
    machine's speed moves every call alike, so their ratios hold."""
    for fn in calls.values():
        fn()
    times = {name: [] for name in calls}
    for _ in range(repeats):
        for name, fn in calls.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: (statistics.median(t) * 1e3, min(t) * 1e3) for name, t in times.items()}


def fma_peak(threads):
    """attnc-run's FMA peak probe on `threads` threads, in GFLOPS."""
    line = subprocess.run([attnc_run(), "--fma-peak", "--num-threads", str(threads)],
                          capture_output=True, text=True, check=True).stdout
    return float(line.split()[2])


def tanh_peak(threads):
    """attnc-run's tanh roofline on `threads` threads: billions of additive-score steps
    (acc += v tanh(k + q), one per pair and head_dim element) a second."""
    line = subprocess.run([attnc_run(), "--tanh-peak", "--num-threads", str(threads)],
                          capture_output=True, text=True, check=True).stdout
    return float(line.split()[2])
