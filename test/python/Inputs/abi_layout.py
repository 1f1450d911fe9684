"""The package's ctypes mirror of the C ABI (attnc/_abi.py) in abi_layout.c's format."""
import ctypes

from attnc import _abi

for name in ("attnc_kernel_desc", "attnc_symbol_desc", "attnc_tensor_desc", "attnc_phase_desc",
             "attnc_options", "DLTensor"):
    struct = _abi.STRUCTS[name]
    for field, _ in struct._fields_:
        print(name, field, getattr(struct, field).offset)
    print(name, "size", ctypes.sizeof(struct))
print("ATTNC_ABI_VERSION", _abi.ABI_VERSION)
print("ATTNC_DESCRIBE_PREFIX", _abi.DESCRIBE_PREFIX)
