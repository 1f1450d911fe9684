#!/usr/bin/env python3
"""Compiles every numeric-matrix case (without weights) with two attnc binaries and compares
the objects: byte for byte (--mode bytes), or only the tile functions' machine code and the
constant pools (--mode tile-code: for a change of the descriptor or the entry, which the tile
functions must survive unchanged). Exit status 1 if any object differs.

  test/numerics/same_objects.py --old OLD/bin/attnc --new build/bin/attnc --work /tmp/same

The previous commit's attnc comes from a build of it (git worktree add, then scripts/build.sh
there, or a checkout of it built into another directory).
"""
import argparse
import os
import subprocess
import sys

import attnc_matrix


def tile_code(obj):
    """The disassembly of obj's *_tile functions and the contents of its constant pools."""
    text = subprocess.run(["objdump", "-d", "--no-addresses", obj], check=True,
                          capture_output=True, text=True).stdout
    keep, on = [], False
    for line in text.splitlines():
        if line.startswith("<") and line.endswith(">:"):
            on = line.endswith("_tile>:")
        if on:
            keep.append(line)
    headers = subprocess.run(["objdump", "-h", obj], check=True, capture_output=True,
                             text=True).stdout
    for section in [l.split()[1] for l in headers.splitlines() if ".rodata.cst" in l]:
        keep.append(subprocess.run(["objdump", "-s", "-j", section, obj], check=True,
                                   capture_output=True, text=True).stdout.split("\n", 3)[-1])
    return "\n".join(keep)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", required=True, help="the previous attnc")
    parser.add_argument("--new", required=True, help="this attnc")
    parser.add_argument("--work", required=True)
    parser.add_argument("--mode", choices=["bytes", "tile-code"], default="bytes")
    parser.add_argument("--targets", nargs="+",
                        default=["x86-64-avx512", "x86-64-avx512-bf16", "x86-64-avx2"])
    args = parser.parse_args()
    env = dict(os.environ, ATTNC_KERNEL_CACHE="")
    same = differ = 0
    for target in args.targets:
        for case in attnc_matrix.load()["cases"]:
            case["outputs"] = [o for o in case["outputs"] if o != "weights"]
            directory, spec = attnc_matrix.write_spec(case, os.path.join(args.work, target))
            objs = []
            for which, attnc in (("old", args.old), ("new", args.new)):
                obj = os.path.join(directory, which + ".o")
                subprocess.run([attnc, spec, "--target", target, "--emit=obj", "-o", obj],
                               check=True, env=env)
                objs.append(obj)
            if args.mode == "bytes":
                equal = open(objs[0], "rb").read() == open(objs[1], "rb").read()
            else:
                equal = tile_code(objs[0]) == tile_code(objs[1])
            same += equal
            differ += not equal
            if not equal:
                print("DIFFERS %s on %s" % (case["name"], target))
    print("%s: %d objects the same, %d different"
          % ("bytes" if args.mode == "bytes" else "tile functions and constants", same, differ))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
