"""A BERT sentence encoder (embeddings, encoder layers, mean pooling) as an ONNX graph
built from its safetensors weights with the `onnx` package: no torch, and nothing but the
weights is read. `_session` runs it.

Rules:

- The weights are checked against the architecture before anything is built: a missing
  tensor or one of another shape or type is a `ValueError` saying which.
- The graph computes what sentence-transformers computes (GELU with erf, LayerNorm eps
  1e-12, the mean over every token) for one text, unpadded.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from onnx import TensorProto, helper, numpy_helper

#: The operator set the graph is written in (LayerNormalization needs 17).
_OPSET = 17
#: Initialisers of fewer elements are written into the graph; larger ones stay arrays.
_INLINE_LIMIT = 1024


@dataclass(frozen=True)
class BertShape:
    """The architecture the weights must match."""

    vocab: int
    positions: int
    hidden: int
    heads: int
    intermediate: int
    layers: int

    def expected(self) -> Iterator[tuple[str, tuple[int, ...]]]:
        """Every tensor the graph reads, with its shape."""
        h, i = self.hidden, self.intermediate
        yield "embeddings.word_embeddings.weight", (self.vocab, h)
        yield "embeddings.position_embeddings.weight", (self.positions, h)
        yield "embeddings.token_type_embeddings.weight", (2, h)
        yield "embeddings.LayerNorm.weight", (h,)
        yield "embeddings.LayerNorm.bias", (h,)
        for layer in range(self.layers):
            prefix = f"encoder.layer.{layer}."
            for part in ("query", "key", "value"):
                yield f"{prefix}attention.self.{part}.weight", (h, h)
                yield f"{prefix}attention.self.{part}.bias", (h,)
            yield f"{prefix}attention.output.dense.weight", (h, h)
            yield f"{prefix}intermediate.dense.weight", (i, h)
            yield f"{prefix}intermediate.dense.bias", (i,)
            yield f"{prefix}output.dense.weight", (h, i)
            for norm in ("attention.output", "output"):
                yield f"{prefix}{norm}.dense.bias", (h,)
                yield f"{prefix}{norm}.LayerNorm.weight", (h,)
                yield f"{prefix}{norm}.LayerNorm.bias", (h,)


def checked_weights(
    weights: Mapping[str, npt.NDArray[Any]], shape: BertShape
) -> dict[str, npt.NDArray[np.float32]]:
    """The tensors the graph reads, after checking each one's presence, shape and type
    (`ValueError` naming the first that is wrong).
    """
    checked: dict[str, npt.NDArray[np.float32]] = {}
    for name, dims in shape.expected():
        tensor = weights.get(name)
        if tensor is None:
            raise ValueError(f"no tensor {name}")
        if tensor.shape != dims or tensor.dtype != np.float32:
            raise ValueError(
                f"tensor {name} is {tensor.dtype} {tuple(tensor.shape)}, expected float32 {dims}"
            )
        checked[name] = tensor
    return checked


class _Graph:
    """Collects nodes and initialisers; each node's output gets a fresh name. Large
    initialisers stay numpy arrays handed to the session (`external`): copying 90 MB into
    and out of protobuf messages would take longer than the rest of loading.
    """

    def __init__(self) -> None:
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self.external: dict[str, npt.NDArray[Any]] = {}
        self._count = 0

    def const(self, name: str, value: npt.NDArray[Any]) -> str:
        array = np.ascontiguousarray(value)
        if array.size < _INLINE_LIMIT:
            self.initializers.append(numpy_helper.from_array(array, name))
            return name
        placeholder = TensorProto(name=name, dims=array.shape, data_type=TensorProto.FLOAT)
        placeholder.data_location = TensorProto.EXTERNAL
        for key, value_ in (("location", "weights"), ("offset", "0"), ("length", "0")):
            placeholder.external_data.add(key=key, value=value_)
        self.initializers.append(placeholder)
        self.external[name] = array
        return name

    def op(self, kind: str, *inputs: str, **attributes: Any) -> str:
        self._count += 1
        output = f"{kind}_{self._count}"
        self.nodes.append(helper.make_node(kind, list(inputs), [output], **attributes))
        return output


def _f32(value: float) -> npt.NDArray[np.float32]:
    return np.array(value, dtype=np.float32)


@dataclass(frozen=True)
class BertModel:
    """The serialised ONNX graph (`input_ids` (1, T) int64 in, `pooled` (1, hidden) out)
    and the weights it names as external initialisers.
    """

    graph: bytes
    external: Mapping[str, npt.NDArray[Any]]


def bert_model(weights: Mapping[str, npt.NDArray[np.float32]], shape: BertShape) -> BertModel:
    """The model computing mean-pooled BERT output from `weights`."""
    g = _Graph()
    w = weights
    hidden, heads = shape.hidden, shape.heads
    head = hidden // heads
    one, half = g.const("one", _f32(1.0)), g.const("half", _f32(0.5))
    inv_sqrt2 = g.const("inv_sqrt2", _f32(1.0 / np.sqrt(2.0)))

    def layer_norm(x: str, prefix: str) -> str:
        scale = g.const(f"{prefix}.weight", w[f"{prefix}.weight"])
        bias = g.const(f"{prefix}.bias", w[f"{prefix}.bias"])
        return g.op("LayerNormalization", x, scale, bias, axis=-1, epsilon=1e-12)

    def dense(x: str, prefix: str, weight: npt.NDArray[np.float32] | None = None) -> str:
        kernel = w[f"{prefix}.weight"].T if weight is None else weight
        product = g.op("MatMul", x, g.const(f"{prefix}.kernel", kernel))
        return g.op("Add", product, g.const(f"{prefix}.bias", w[f"{prefix}.bias"]))

    # Embeddings: word + position + token type 0 (a single sentence), then LayerNorm.
    length = g.op("Shape", "input_ids", start=1, end=2)  # [T], one-dimensional
    zero = g.const("zero", np.array([0], np.int64))
    position = g.op(
        "Slice", g.const("position", w["embeddings.position_embeddings.weight"]), zero, length, zero
    )
    word = g.op("Gather", g.const("word", w["embeddings.word_embeddings.weight"]), "input_ids")
    token_type = g.const("token_type", w["embeddings.token_type_embeddings.weight"][0])
    x = layer_norm(g.op("Add", g.op("Add", word, position), token_type), "embeddings.LayerNorm")

    split = g.const("split_heads", np.array([0, 0, heads, head], np.int64))
    merge = g.const("merge_heads", np.array([0, 0, hidden], np.int64))
    scale = g.const("scale", _f32(1.0 / np.sqrt(head)))
    for layer in range(shape.layers):
        prefix = f"encoder.layer.{layer}."

        def heads_of(x: str, part: str, perm: list[int], at: str = prefix) -> str:
            projected = dense(x, f"{at}attention.self.{part}")
            return g.op("Transpose", g.op("Reshape", projected, split), perm=perm)

        query = heads_of(x, "query", [0, 2, 1, 3])
        key = heads_of(x, "key", [0, 2, 3, 1])
        value = heads_of(x, "value", [0, 2, 1, 3])
        scores = g.op("Mul", g.op("MatMul", query, key), scale)
        attended = g.op("MatMul", g.op("Softmax", scores, axis=-1), value)
        attended = g.op("Reshape", g.op("Transpose", attended, perm=[0, 2, 1, 3]), merge)
        attended = dense(attended, f"{prefix}attention.output.dense")
        x = layer_norm(g.op("Add", attended, x), f"{prefix}attention.output.LayerNorm")
        inner = dense(x, f"{prefix}intermediate.dense")
        gate = g.op("Add", one, g.op("Erf", g.op("Mul", inner, inv_sqrt2)))
        inner = g.op("Mul", g.op("Mul", inner, half), gate)  # exact GELU, as BERT's
        out = dense(inner, f"{prefix}output.dense")
        x = layer_norm(g.op("Add", out, x), f"{prefix}output.LayerNorm")

    g.nodes.append(helper.make_node("ReduceMean", [x], ["pooled"], axes=[1], keepdims=0))
    graph = helper.make_graph(
        g.nodes,
        "bert",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, "T"])],
        [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, [1, hidden])],
        g.initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", _OPSET)])
    model.ir_version = 8  # the onnxruntime wheels read it
    return BertModel(model.SerializeToString(), g.external)
