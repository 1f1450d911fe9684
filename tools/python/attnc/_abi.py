"""attnc_runtime.h's C ABI as ctypes structures: DLPack's DLTensor, attnc_options and the
kernel descriptor (attnc_kernel_desc and its three tables).

The descriptor's fields follow ATTNC_KERNEL_DESC_FIELDS and the table field lists, in order;
test/python/abi-layout.test checks every offset against the C compiler's. The scripts that
call kernels through their C entries (test/numerics, benchmarks/peers/attnc_peer.py,
benchmarks/gpu/run.py) use these structures too.
"""
import ctypes

ABI_VERSION = 9  # ATTNC_ABI_VERSION this package reads
DESCRIBE_PREFIX = "attnc_describe_"  # ATTNC_DESCRIBE_PREFIX

K_DL_CPU, K_DL_CUDA = 1, 2  # DLDeviceType
K_DL_INT, K_DL_FLOAT, K_DL_BFLOAT = 0, 2, 4  # DLDataTypeCode

TENSOR_OUTPUT, TENSOR_UNIT_INNER, TENSOR_SCRATCH, TENSOR_OPTIONAL = 1, 2, 4, 8  # attnc_tensor_flag
SYMBOL_REDUCED = 1  # attnc_symbol_flag

STATUS_NAMES = ["ATTNC_OK", "ATTNC_ERR_NULL", "ATTNC_ERR_DTYPE", "ATTNC_ERR_DEVICE",
                "ATTNC_ERR_SHAPE", "ATTNC_ERR_STRIDE", "ATTNC_ERR_LIMIT", "ATTNC_ERR_ABI",
                "ATTNC_ERR_KERNEL", "ATTNC_ERR_ALIAS", "ATTNC_ERR_CPU", "ATTNC_ERR_INDEX"]


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class Options(ctypes.Structure):
    """attnc_options: threads (0 = all cores) and, for CUDA kernels, the CUstream."""
    _fields_ = [("num_threads", ctypes.c_int32), ("stream", ctypes.c_void_p)]


class SymbolDesc(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("value", ctypes.c_int64), ("max", ctypes.c_int64),
                ("param", ctypes.c_int32), ("flags", ctypes.c_int32)]


class TensorDesc(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dims", ctypes.c_char_p),
                ("legend", ctypes.c_char_p), ("about", ctypes.c_char_p),
                ("strides", ctypes.c_char_p), ("arg", ctypes.c_int32),
                ("flags", ctypes.c_int32), ("dtype_code", ctypes.c_int32),
                ("dtype_bits", ctypes.c_int32), ("stride_param", ctypes.c_int32),
                ("fill", ctypes.c_int32), ("bound", ctypes.c_char_p)]


class PhaseDesc(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("items", ctypes.c_char_p),
                ("index", ctypes.c_char_p), ("item", ctypes.c_void_p),
                ("device", ctypes.c_void_p)]


class KernelDesc(ctypes.Structure):
    _fields_ = [("abi_version", ctypes.c_int32), ("device_type", ctypes.c_int32),
                ("num_symbols", ctypes.c_int32), ("num_tensors", ctypes.c_int32),
                ("num_phases", ctypes.c_int32), ("num_args", ctypes.c_int32),
                ("num_params", ctypes.c_int32), ("reserved", ctypes.c_int32),
                ("cpu_needs", ctypes.c_int64), ("name", ctypes.c_char_p),
                ("target", ctypes.c_char_p), ("symbols", ctypes.POINTER(SymbolDesc)),
                ("tensors", ctypes.POINTER(TensorDesc)), ("phases", ctypes.POINTER(PhaseDesc))]


STRUCTS = {"attnc_kernel_desc": KernelDesc, "attnc_symbol_desc": SymbolDesc,
           "attnc_tensor_desc": TensorDesc, "attnc_phase_desc": PhaseDesc,
           "attnc_options": Options, "DLTensor": DLTensor}
