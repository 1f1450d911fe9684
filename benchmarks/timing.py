"""Timing helpers the Python benchmarks share: median and best milliseconds of calls."""
import statistics
import subprocess
import time


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
    """attnc-run's FMA peak probe on `threads` threads, in GFLOPS (attnc-run on PATH)."""
    line = subprocess.run(["attnc-run", "--fma-peak", "--num-threads", str(threads)],
                          capture_output=True, text=True, check=True).stdout
    return float(line.split()[2])
