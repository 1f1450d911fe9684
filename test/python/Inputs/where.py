"""What the venv holds: the attnc distribution pip installed (editable, from this tree) and
whether the package's launch in C (attnc/_call.c) was built."""
import importlib.metadata
import os

import attnc
import attnc._kernel

print("installed attnc %s" % importlib.metadata.version("attnc"))
here = os.path.realpath(attnc.__file__)
print("imported from %s" % os.path.relpath(here, os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.dirname(here))))))
print("launch in C: %s" % ("built" if attnc._kernel._call else "not built"))
