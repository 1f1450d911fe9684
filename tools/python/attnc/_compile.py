"""attnc.compile: a spec to a loaded module through the attnc compiler, with an on-disk cache
keyed by the spec, the target, the schedule, the tuning DB and the compiler's build id, so
that a second call costs a hash and a dlopen."""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile

from ._module import Module
from .errors import CompileError

_loaded: dict[str, Module] = {}  # cache key -> Module, within this process


def find_attnc(attnc: str | None = None) -> str:
    """The attnc compiler: `attnc`, $ATTNC, attnc on PATH, or this source tree's build."""
    here = os.path.dirname(os.path.abspath(__file__))
    tree = os.path.join(here, "..", "..", "..", "build", "bin", "attnc")
    for candidate in (attnc, os.environ.get("ATTNC"), shutil.which("attnc"), tree):
        if candidate and os.access(candidate, os.X_OK):
            return os.path.abspath(candidate)
    raise CompileError("no attnc compiler found: pass attnc=PATH, set $ATTNC, put attnc on "
                       "PATH, or build this tree (scripts/main.sh)")


def cache_dir(directory=None):
    return os.path.abspath(directory or os.environ.get("ATTNC_PYTHON_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "attnc", "python"))


def build_id(attnc, directory):
    """The compiler's build id (`attnc --version`), remembered on disk per binary (path, size,
    modification time) so that a warm call starts no process."""
    st = os.stat(attnc)
    stamp = hashlib.sha256(("%s\0%d\0%d" % (attnc, st.st_size, st.st_mtime_ns)).encode())
    memo = os.path.join(directory, "build-ids", stamp.hexdigest())
    try:
        with open(memo) as f:
            return f.read().strip()
    except OSError:
        pass
    text = subprocess.run([attnc, "--version"], stdout=subprocess.PIPE, text=True,
                          check=True).stdout
    ids = [line.split()[-1] for line in text.splitlines() if line.startswith("attnc build id")]
    if not ids:
        raise CompileError("%s --version names no build id" % attnc)
    _write_atomically(memo, ids[0].encode())
    return ids[0]


def _write_atomically(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path))
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def _spec_text(spec):
    """`spec` itself, or the file it names (a one-line string naming a file)."""
    if "\n" not in spec and os.path.isfile(spec):
        with open(spec) as f:
            return f.read()
    if "attn." not in spec:
        raise FileNotFoundError("%r is neither a spec (no attn. op) nor a file" % spec)
    return spec


def compile(spec: str | os.PathLike, target: str | None = None, schedule: str | None = None,
            tuning_db: str | os.PathLike | None = None, backend: str | None = None,
            cache: str | os.PathLike | None = None, attnc: str | None = None) -> Module:
    """Compiles `spec` (its text or a path) for `target` (default: host, this machine's CPU;
    several, comma-separated, for one object that picks at run time) with an optional
    schedule ("name=value,..."), tuning DB (a path) and backend ("mlir", "halide") into a
    shared object, cached in `cache` ($ATTNC_PYTHON_CACHE, else ~/.cache/attnc/python), and
    loads it. Raises CompileError with attnc's diagnostics."""
    text = _spec_text(spec)
    # attnc's own default is x86-64-avx512 (objects for deployment); a module compiled here
    # is loaded here, so it is built for this machine.
    target = target or "host"
    directory = cache_dir(cache)
    compiler = find_attnc(attnc)
    key = hashlib.sha256()
    for part in (build_id(compiler, directory), text, target or "", schedule or "",
                 backend or ""):
        key.update(part.encode() + b"\0")
    if tuning_db:
        with open(tuning_db, "rb") as f:
            key.update(f.read())
    digest = key.hexdigest()
    if digest in _loaded:
        return _loaded[digest]
    so = os.path.join(directory, "kernels", digest + ".so")
    if not os.path.exists(so):
        _build(compiler, text, [("--target", target), ("--schedule", schedule),
                                ("--tuning-db", tuning_db), ("--backend", backend)], so)
    _loaded[digest] = Module(so)
    return _loaded[digest]


def _build(attnc, text, options, so):
    os.makedirs(os.path.dirname(so), exist_ok=True)
    with tempfile.TemporaryDirectory(dir=os.path.dirname(so)) as work:
        source = os.path.join(work, "spec.mlir")
        with open(source, "w") as f:
            f.write(text)
        out = os.path.join(work, "kernels.so")
        command = [attnc, source, "--emit=so", "-o", out]
        command += ["%s=%s" % (flag, value) for flag, value in options if value]
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True)
        if done.returncode:
            raise CompileError(done.stdout.replace(source, "<spec>").strip())
        os.replace(out, so)  # atomic: a concurrent caller sees the whole file or none
