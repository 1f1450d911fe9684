"""attnc's exceptions."""
from __future__ import annotations

from ._abi import STATUS_NAMES


class AttncError(RuntimeError):
    """An error the C ABI reported (status: its attnc_status; code: its name, such as
    "ATTNC_ERR_SHAPE"), with the runtime's message."""

    status: int
    code: str
    message: str

    def __init__(self, status: int, message: str):
        self.status = status
        self.code = STATUS_NAMES[status] if 0 <= status < len(STATUS_NAMES) else str(status)
        self.message = message
        super().__init__("%s: %s" % (self.code, message))


class CompileError(RuntimeError):
    """attnc refused a spec or failed to compile it; the message is its diagnostics."""
