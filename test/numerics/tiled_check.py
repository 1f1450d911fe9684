#!/usr/bin/env python3
"""Checks that attn.flash, evaluated tile by tile, means what its attn.attention means.

For each case of matrix.json (every dtype) and each tile shape: run `attnc-run --reference`
untiled on seeded inputs, then `attnc-run --reference --tiled BQxBKV` (attn-normalize +
attn-tile-flash in process, then the online-softmax recurrence of attn.flash) on the same
q/k/v files, and compare out and lse elementwise, plus the number of kept pairs. The
reference-only `weights` output is left out of the spec, as attn.flash has none.

Tolerance, per element: |tiled - untiled| <= UNIT[dtype] * max(|tiled|, |untiled|) + ATOL[dtype].
Both evaluations compute in double and differ only in summation order (a few double ulps),
then round once to the output type; two nearly equal doubles can round to neighbouring
values of that type, never further apart. One rounding unit of the type is therefore the
bound: UNIT is its spacing relative to the magnitude (f32 2^-23, f16 2^-10, bf16 2^-7; lse
is f32 in every case). ATOL covers the rest: 1e-12 for outputs that cancel to nearly 0,
where summation order moves a double by about seq_kv * 2^-53 absolute, and for f16 the
spacing of its subnormals, 2^-24. lse must be -inf (fully masked rows) at exactly the same
places on both sides, and the tiled run must count the same kept pairs (skipping empty
tiles must not lose any).
"""
import argparse
import copy
import os
import re
import subprocess
import sys

import numpy as np

import attnc_matrix
from crosscheck import from_storage

UNIT = {"f32": 2.0 ** -23, "f16": 2.0 ** -10, "bf16": 2.0 ** -7}
ATOL = {"f32": 1e-12, "f16": 2.0 ** -24, "bf16": 1e-12}
DEFAULT_TILES = "64x64,16x32,37x23,1x1"


def run(cmd):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return proc.returncode, proc.stdout


def kept_pairs(log):
    match = re.search(r"^kept pairs: (\d+)", log, re.M)
    return int(match.group(1)) if match else None


def tiles_line(log):
    match = re.search(r"^tiles \S+: (.*)$", log, re.M)
    return match.group(1) if match else "no tile counts"


def compare(got, want, dtype):
    """(worst |d| / tolerance, worst |d|, message or None) over finite and -inf entries."""
    if got.shape != want.shape:
        return np.inf, np.inf, "shape %s, untiled %s" % (got.shape, want.shape)
    if np.isnan(got).any() or np.isnan(want).any():
        return np.inf, np.inf, "NaN"
    ninf_got, ninf_want = np.isneginf(got), np.isneginf(want)
    if (ninf_got != ninf_want).any():
        return np.inf, np.inf, "-inf at %d places where the other side is finite" % (
            (ninf_got != ninf_want).sum())
    finite = ~ninf_got
    diff = np.abs(got[finite] - want[finite])
    if diff.size == 0:
        return 0.0, 0.0, None
    tol = UNIT[dtype] * np.maximum(np.abs(got[finite]), np.abs(want[finite])) + ATOL[dtype]
    ratio = diff / tol
    worst = int(np.argmax(ratio))
    message = None
    if ratio[worst] > 1:
        message = "%d elements over tolerance; worst tiled %r, untiled %r" % (
            (ratio > 1).sum(), got[finite][worst], want[finite][worst])
    return float(ratio[worst]), float(diff.max()), message


def sizes(case):
    return ["--batch", str(case["batch"]), "--seq-q", str(case["seq_q"]),
            "--seq-kv", str(case["seq_kv"])]


def check_tile(case, spec, directory, untiled, tile, args):
    """Returns (ok, line, worst ratios per output)."""
    out_dir = os.path.join(directory, "tiled-" + tile)
    inputs = sum([["--" + n, os.path.join(untiled["dir"], n + ".npy")] for n in "qkv"], [])
    rc, log = run([args.attnc_run, spec, "--reference", "--tiled", tile, "-o", out_dir]
                  + inputs)
    if rc != 0:
        return False, "attnc-run --tiled failed:\n" + log, {}
    problems, parts, worst = [], [], {}
    for output in case["outputs"]:
        dtype = case["dtype"] if output == "out" else "f32"
        got = from_storage(np.load(os.path.join(out_dir, output + ".npy")), case["dtype"])
        want = from_storage(np.load(os.path.join(untiled["dir"], output + ".npy")), case["dtype"])
        ratio, diff, message = compare(got, want, dtype)
        worst[output] = ratio
        parts.append("%s max|d| %.1e (%.2f of tol)" % (output, diff, ratio))
        if message:
            problems.append("%s: %s" % (output, message))
    if kept_pairs(log) != untiled["kept"]:
        problems.append("kept pairs %s, untiled %s" % (kept_pairs(log), untiled["kept"]))
    line = "; ".join(parts) + "; " + tiles_line(log)
    return not problems, line + "".join("\n  " + p for p in problems), worst


def run_untiled(case, spec, directory, args):
    out_dir = os.path.join(directory, "untiled")
    rc, log = run([args.attnc_run, spec, "--reference", "--seed", "5", "-o", out_dir]
                  + sizes(case))
    return rc, log, {"dir": out_dir, "kept": kept_pairs(log)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attnc-run", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--tiles", default=DEFAULT_TILES,
                        help="comma-separated BQxBKV shapes (default %(default)s)")
    parser.add_argument("--only", help="run only the case of this name")
    args = parser.parse_args()
    tiles = args.tiles.split(",")
    passed = failed = 0
    worst = {}
    for case in attnc_matrix.load()["cases"]:
        if args.only and case["name"] != args.only:
            continue
        case = copy.deepcopy(case)
        case["outputs"] = [o for o in case["outputs"] if o != "weights"]
        directory, spec = attnc_matrix.write_spec(case, args.work)
        rc, log, untiled = run_untiled(case, spec, directory, args)
        if rc != 0:
            print("FAIL %-42s untiled reference failed:\n%s" % (case["name"], log))
            failed += len(tiles)
            continue
        for tile in tiles:
            ok, line, ratios = check_tile(case, spec, directory, untiled, tile, args)
            print("%s %-42s %-6s %s" % ("PASS" if ok else "FAIL", case["name"], tile, line))
            passed += ok
            failed += not ok
            for output, ratio in ratios.items():
                key = (output, case["dtype"] if output == "out" else "f32")
                worst[key] = max(worst.get(key, 0.0), ratio)
    print("largest error, as a fraction of its tolerance: " + ", ".join(
        "%s %s %.2f" % (o, d, r) for (o, d), r in sorted(worst.items())))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
