"""Imported at start-up by the sanitizer build's test Python (test/lit.cfg.py puts this
directory on PYTHONPATH, with the ASan runtime in LD_PRELOAD). The interpreter keeps the
runtime, which the kernels it loads need, and so do the Python processes it starts; its other
children do not inherit the preload. They are attnc's tools (linked with the runtime
themselves) and the compilers and linkers those run, which are not instrumented and free
nothing at exit by design: LeakSanitizer, preloaded into them, would report that and fail
the build step."""
import os
import subprocess

_PRELOADED = {name: os.environ.pop(name) for name in ("LD_PRELOAD", "LSAN_OPTIONS", "PYTHONPATH")
              if name in os.environ}


class _Popen(subprocess.Popen):
    def __init__(self, args, *rest, **kwargs):
        program = args if isinstance(args, (str, bytes, os.PathLike)) else args[0]
        if os.path.basename(os.fsdecode(program)).split()[0].startswith("python"):
            kwargs["env"] = dict(kwargs.get("env") or os.environ, **_PRELOADED)
        super().__init__(args, *rest, **kwargs)


subprocess.Popen = _Popen
