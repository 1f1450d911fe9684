"""DLPack exchange: a DLTensor over any object with __dlpack__ (a torch tensor, a NumPy
array, a JAX array), without a copy."""
import ctypes

from ._abi import DLDataType, DLDevice, DLTensor, K_DL_BFLOAT, K_DL_CPU, K_DL_FLOAT, K_DL_INT

_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


class Borrowed:
    """A DLTensor borrowed from `obj`: valid while this object lives (it keeps the capsule,
    whose producer keeps the memory; the capsule is not consumed, so its destructor frees
    the producer's DLManagedTensor when this goes)."""

    @staticmethod
    def require(obj, name):
        """TypeError unless `obj` is a DLPack producer."""
        if not hasattr(obj, "__dlpack__"):
            raise TypeError("%s is a %s, which has no __dlpack__: pass a torch tensor, a NumPy "
                            "array or another DLPack producer" % (name, type(obj).__name__))

    def __init__(self, obj, name):
        self.require(obj, name)
        if getattr(obj, "requires_grad", False):
            obj = obj.detach()  # a forward call: torch exports no tensor that requires grad
        try:
            self.capsule = obj.__dlpack__()
        except BufferError:
            # NumPy exports no read-only array (DLPack before 1.0 cannot say read-only): an
            # input the kernel only reads, described from its array interface instead.
            if not hasattr(obj, "__array_interface__"):
                raise
            self.tensor, self.keep = _from_array_interface(obj)
            return
        address = _get_pointer(self.capsule, b"dltensor")
        # DLManagedTensor starts with its DLTensor.
        self.tensor = DLTensor.from_address(address)

    def pointer(self):
        return ctypes.pointer(self.tensor)


_TYPESTRS = {"f": K_DL_FLOAT, "i": K_DL_INT}


def _from_array_interface(array):
    """A DLTensor over a NumPy array's memory (its __array_interface__), and what keeps it."""
    face = array.__array_interface__
    kind, size = face["typestr"][1], int(face["typestr"][2:])
    code = K_DL_BFLOAT if str(array.dtype) == "bfloat16" else _TYPESTRS.get(kind)
    if code is None or face["typestr"][0] == ">":
        raise TypeError("a read-only array of dtype %s cannot be passed" % array.dtype)
    shape = (ctypes.c_int64 * len(face["shape"]))(*face["shape"])
    strides = None
    if face.get("strides"):
        strides = (ctypes.c_int64 * len(face["shape"]))(*(s // size for s in face["strides"]))
    tensor = DLTensor(face["data"][0], DLDevice(K_DL_CPU, 0), len(face["shape"]),
                      DLDataType(code, size * 8, 1), shape, strides, 0)
    return tensor, (array, shape, strides)
