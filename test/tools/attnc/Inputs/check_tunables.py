"""Checks that `attnc --schedule` accepts exactly what `attnc --list-tunables` lists, target by
target: for every (backend, target) of `attnc --list-targets`, each listed tunable is set to
its largest listed value (a multiple of the listed step where it must be one), to `auto`
where it has one and to each of its choices, and compiles to the tiled form; every
tunable that another target lists and this one does not is refused as unknown; and the
error for an unknown tunable names exactly the listed ones. Prints one line per target."""
import re
import subprocess
import sys

ATTNC, SPEC = sys.argv[1], sys.argv[2]


def attnc(*args):
    return subprocess.run([ATTNC, *args], capture_output=True, text=True)


def targets():
    rows = attnc("--list-targets").stdout.splitlines()[1:]
    return [row.split()[:2] for row in rows if row and not row.startswith(("backends:",
            "halide runtime", "kernel cache"))]


def table(backend, target):
    """name -> list of valid values, from --list-tunables."""
    out = attnc("--list-tunables", "--backend", backend, "--target", target).stdout
    lines = out.splitlines()[1:]
    tunables = {}
    for name_line, detail in zip(lines[0::2], lines[1::2]):
        name = name_line.split()[0]
        choices = re.search(r"one of (.*)$", detail)
        if choices:
            tunables[name] = choices.group(1).split(", ")
            continue
        lo, hi = map(int, re.search(r"range \[(\d+), (\d+)\]", detail).groups())
        step = re.search(r"a multiple of (?:the target's vector width \()?(\d+)", detail)
        step = int(step.group(1)) if step else 1
        values = [str(hi // step * step)]
        tunables[name] = values + (["auto"] if "default auto" in detail else [])
    return tunables


def main():
    tables = {(b, t): table(b, t) for t, b in targets()}
    every = set().union(*tables.values())
    failures = 0
    for (backend, target), tunables in tables.items():
        base = [SPEC, "--backend", backend, "--target", target, "--emit=tiled", "-o", "-"]
        for name, values in tunables.items():
            for value in values:
                r = attnc(*base, "--schedule", "%s=%s" % (name, value))
                if r.returncode:
                    failures += 1
                    print("FAIL %s %s: %s=%s refused: %s" % (backend, target, name, value,
                                                          r.stderr.strip()))
        for name in sorted(every - set(tunables)):
            r = attnc(*base, "--schedule", name + "=1")
            if r.returncode == 0 or "unknown tunable" not in r.stderr:
                failures += 1
                print("FAIL %s %s: %s accepted though not listed" % (backend, target, name))
        r = attnc(*base, "--schedule", "no_such=1")
        named = re.search(r"this target has (.*)$", r.stderr.strip())
        if not named or named.group(1).split(", ") != list(tunables):
            failures += 1
            print("FAIL %s %s: the error names %s" % (backend, target, r.stderr.strip()))
        print("%s %s: %s" % (backend, target, " ".join(tunables)))
    print("%d targets, %d failures" % (len(tables), failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
