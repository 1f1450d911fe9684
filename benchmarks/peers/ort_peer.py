"""ONNX Runtime's CPU attention as a peer (onnxruntime from benchmarks/peers/install.sh):

onnxruntime-mha   the com.microsoft MultiHeadAttention contrib op, a one-node model built with
                  onnx.helper, run by an InferenceSession on the CPU execution provider (its
                  fused flash-style CPU kernel). dense: no mask; causal: unidirectional=1.
                  Other variants would need an explicit [seq, seq] attention bias and GQA the
                  GroupQueryAttention op with its own cache layout: listed as unsupported.

Layout: MultiHeadAttention takes query, key and value as [batch, seq, heads * head_dim]; prepare
transposes the bhsd inputs into that layout once (not timed), and fn() returns a transposed view
of the output (no copy), so only the attention call is timed.

Threads: intra_op_num_threads = w.threads, inter-op parallelism off, and spinning off
(session.intra_op.allow_spinning = 0): ORT's pool otherwise keeps spinning after a call and
takes the cores from whatever is timed next (seen: attnc 30% slower at seq 2048 right after an
ORT call). The session is built per workload.

bf16: the same one-node model with bfloat16 inputs and output. ONNX Runtime's CPU execution
provider registers MultiHeadAttention for float (and float16) only, so building the session
fails with NOT_IMPLEMENTED (checked with onnxruntime 1.32): the workload is unsupported, with
that message. Should a later ONNX Runtime have the kernel, the session is run through an
I/O binding over uint16 arrays of bf16 bit patterns (OrtValues typed BFLOAT16; numpy has no
bf16), so the output needs no conversion in the timed call.
"""
import numpy as np

from peers.base import Peer, Unsupported, bf16_bits

try:
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper
except ImportError as e:  # make() reports it
    onnx = ort = None
    _IMPORT_ERROR = e

OPSET = 17


def _model(w, causal):
    hidden = w.heads * w.head_dim
    element = {"f32": TensorProto.FLOAT, "bf16": TensorProto.BFLOAT16}[w.dtype]
    io = [helper.make_tensor_value_info(n, element, [w.batch, w.seq, hidden])
          for n in ("query", "key", "value", "out")]
    node = helper.make_node("MultiHeadAttention", ["query", "key", "value"], ["out"],
                            domain="com.microsoft", num_heads=w.heads,
                            unidirectional=int(causal))
    graph = helper.make_graph([node], "attention", io[:3], io[3:])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET),
                                                    helper.make_opsetid("com.microsoft", 1)])
    return model.SerializeToString()


def _packed(x):
    """[batch, heads, seq, dim] -> contiguous [batch, seq, heads * dim]."""
    b, h, s, d = x.shape
    return np.ascontiguousarray(x.transpose(0, 2, 1, 3).reshape(b, s, h * d))


class OrtMhaPeer(Peer):
    name = "onnxruntime-mha"

    def prepare(self, w, q, k, v):
        if w.variant not in ("dense", "causal"):
            raise Unsupported("MultiHeadAttention takes no mask but causal (unidirectional); "
                              "%s would need a [seq, seq] attention bias" % w.variant)
        if w.heads != w.kv_heads:
            raise Unsupported("MultiHeadAttention needs as many key/value heads as query heads")
        options = ort.SessionOptions()
        options.intra_op_num_threads = w.threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        try:
            session = ort.InferenceSession(_model(w, w.variant == "causal"), options,
                                           providers=["CPUExecutionProvider"])
        except Exception as e:
            if w.dtype != "f32" and "NOT_IMPLEMENTED" in str(e):
                raise Unsupported("ONNX Runtime %s has no CPU kernel for MultiHeadAttention in "
                                  "%s (%s)" % (ort.__version__, w.dtype,
                                               str(e).split(" : ")[-1].strip()))
            raise
        b, h, s, d = q.shape
        if w.dtype == "bf16":
            return self._bf16(session, q, k, v)
        feeds = {"query": _packed(q), "key": _packed(k), "value": _packed(v)}

        def fn(feeds=feeds):
            (out,) = session.run(["out"], feeds)
            return out.reshape(b, s, h, d).transpose(0, 2, 1, 3)
        return fn


    @staticmethod
    def _bf16(session, q, k, v):
        """The timed call over bf16 bit patterns, through an I/O binding."""
        b, h, s, d = q.shape
        arrays = {n: bf16_bits(_packed(x)) for n, x in (("query", q), ("key", k), ("value", v))}
        arrays["out"] = np.zeros((b, s, h * d), np.uint16)
        values = {n: ort.OrtValue.ortvalue_from_numpy_with_onnx_type(
            a, onnx_element_type=TensorProto.BFLOAT16) for n, a in arrays.items()}
        binding = session.io_binding()
        for n in ("query", "key", "value"):
            binding.bind_ortvalue_input(n, values[n])
        binding.bind_ortvalue_output("out", values["out"])
        out = arrays["out"]

        def fn(keep=(arrays, values)):
            session.run_with_iobinding(binding)
            return out.reshape(b, s, h, d).transpose(0, 2, 1, 3)
        return fn


def make():
    if ort is None:
        raise _IMPORT_ERROR
    return [OrtMhaPeer()]
