#!/usr/bin/env python3
"""Lists what the lit suite did not run on this machine, and why.

A lit test whose REQUIRES / UNSUPPORTED line excludes it here did not run at all; a test with
`%if FEATURE %{ ... %}` steps ran everything else (compiling and FileChecking what it can) but
not those steps. The features are the ones test/lit.cfg.py found on this machine, which it
writes to lit-features.txt in the test build directory; lit's own expression evaluator decides
each line, so this list says exactly what lit skipped.

  not_run.py --features build/test/lit-features.txt --lit-dir /usr/lib/llvm-22/utils/lit test/
"""
import argparse
import os
import re
import sys

SUFFIXES = (".mlir", ".test")
KEYWORD = re.compile(r"(?:^|\s)(REQUIRES|UNSUPPORTED):(.*)$")
GATED = re.compile(r"%if\s+(.+?)\s*%{")


def test_files(root):
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if d != "Inputs")
        for name in sorted(files):
            if name.endswith(SUFFIXES):
                yield os.path.join(directory, name)


def reasons(path, features, evaluate):
    """('whole test' or 'steps', why) for what of the test lit does not run here."""
    with open(path) as f:
        text = f.read()
    out = []
    for line in text.splitlines():
        match = KEYWORD.search(line)
        if not match:
            continue
        kind, expr = match.group(1), match.group(2).strip()
        for clause in (c.strip() for c in expr.split(",") if c.strip()):
            holds = evaluate(clause, features)
            if kind == "REQUIRES" and not holds:
                out.append(("whole test", "needs " + clause))
            elif kind == "UNSUPPORTED" and holds:
                out.append(("whole test", "unsupported where " + clause + " holds"))
    if out:
        return out
    # A negated condition (`%if !avx512 && avx2`) is the alternative to a step that ran, not
    # something this machine lacks.
    gated = sorted({m.group(1) for m in GATED.finditer(text)
                    if "!" not in m.group(1) and not evaluate(m.group(1), features)})
    return [("steps", "steps that need " + g + " (the rest ran)") for g in gated]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--features", required=True)
    parser.add_argument("--lit-dir", required=True, help="the directory of lit's package")
    parser.add_argument("root")
    args = parser.parse_args()
    sys.path.insert(0, args.lit_dir)
    from lit.BooleanExpression import BooleanExpression
    with open(args.features) as f:
        features = f.read().split()
    rows = []
    for path in test_files(args.root):
        for scope, why in reasons(path, features, BooleanExpression.evaluate):
            rows.append((os.path.relpath(path, args.root), scope, why))
    print("lit features here: " + " ".join(sorted(features)))
    if not rows:
        print("not run on this machine: nothing (every lit test ran every step)")
        return 0
    print("not run on this machine (%d):" % len(rows))
    for path, scope, why in rows:
        print("  %-48s %-10s %s" % (path, scope, why))
    return 0


if __name__ == "__main__":
    sys.exit(main())
