"""attnc_runtime.h's C ABI as ctypes structures: DLPack's DLTensor and attnc_options.

Shared by the Python callers of compiled kernels (test/numerics/device_run.py, the benchmark
peer benchmarks/peers/attnc_peer.py, benchmarks/gpu/run.py).
"""
import ctypes

K_DL_CPU, K_DL_CUDA = 1, 2  # DLDeviceType
K_DL_FLOAT, K_DL_BFLOAT = 2, 4  # DLDataTypeCode


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
