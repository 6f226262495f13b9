"""Running a BERT graph (`_bert`) on onnxruntime, built from its weights or read back from
the optimised model an earlier process saved (`_model_cache`); only onnxruntime is
imported, never `onnx`.

Rules:

- Each text runs alone, on a session of one intra-op thread, with no padding: a text's
  vector is a function of that text only (onnxruntime's kernels round differently for
  other batch shapes), and two texts run at once on two threads.
- Rows are L2-normalised afterwards in float32.
- A session built from the weights can write its optimised model on the way (`save_to`),
  at `ORT_ENABLE_EXTENDED`: the level onnxruntime names as free of hardware-specific
  rewrites. For this graph (no convolutions) `ORT_ENABLE_ALL` writes the same graph, byte
  for byte, so a session of either level runs the same kernels. A saved model is read
  back with optimisation off (`ORT_DISABLE_ALL`): it is optimised already, and optimising
  it again yields the same 199 nodes (measured), at twice the cost.
- Writing the optimised model is best effort: when it fails the session is built without.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from importlib import import_module
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]


def _runtime() -> Any:
    # onnxruntime ships no types: its objects are `Any` here, and what `run` returns is
    # made an array below.
    return import_module("onnxruntime")


def _options(runtime: Any, level: str) -> Any:
    options: Any = runtime.SessionOptions()
    options.intra_op_num_threads = 1  # one text per call: parallel over texts instead
    options.inter_op_num_threads = 1
    options.graph_optimization_level = getattr(runtime.GraphOptimizationLevel, level)
    return options


class BertRunner:
    """Runs the graph over texts, one text per call, on up to two threads at once."""

    def __init__(self, session: Any, keep: Sequence[object] = ()) -> None:
        self._session = session
        self._keep = list(keep)  # memory the session reads: it lives as long as the session
        workers = max(1, min(2, len(os.sched_getaffinity(0))))
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="contextpipe-embed")

    @classmethod
    def built(
        cls, graph: bytes, external: Mapping[str, npt.NDArray[Any]], save_to: Path | None
    ) -> BertRunner:
        """A runner of the serialised `graph`, whose large initialisers are the arrays of
        `external`; the optimised model is written to `save_to` (ONNX, weights in
        `save_to` + ".data") when given and writable.
        """
        runtime = _runtime()
        if save_to is not None:
            try:
                return cls._built(runtime, graph, external, save_to)
            except Exception:  # onnxruntime's errors share no base class but Exception
                pass  # built again without saving: an error of the graph itself shows then
        return cls._built(runtime, graph, external, None)

    @classmethod
    def _built(
        cls,
        runtime: Any,
        graph: bytes,
        external: Mapping[str, npt.NDArray[Any]],
        save_to: Path | None,
    ) -> BertRunner:
        options = _options(runtime, "ORT_ENABLE_ALL" if save_to is None else "ORT_ENABLE_EXTENDED")
        if save_to is not None:
            options.optimized_model_filepath = str(save_to)
            data = f"{save_to.name}.data"
            options.add_session_config_entry(
                "session.optimized_model_external_initializers_file_name", data
            )
            options.add_session_config_entry(
                "session.optimized_model_external_initializers_min_size_in_bytes", "1024"
            )
        weights = [runtime.OrtValue.ortvalue_from_numpy(array) for array in external.values()]
        options.add_external_initializers(list(external), weights)
        session = runtime.InferenceSession(graph, options, providers=["CPUExecutionProvider"])
        return cls(session, weights)

    @classmethod
    def saved(cls, path: Path) -> BertRunner | None:
        """A runner of the optimised model saved at `path`, or None when onnxruntime cannot
        read it.
        """
        runtime = _runtime()
        options = _options(runtime, "ORT_DISABLE_ALL")
        try:
            session = runtime.InferenceSession(
                str(path), options, providers=["CPUExecutionProvider"]
            )
        except Exception:  # onnxruntime's errors share no base class but Exception
            return None
        return cls(session)

    def pooled(self, token_ids: Sequence[Sequence[int]], dimension: int) -> Vectors:
        """The mean-pooled output of each sequence of token ids, L2-normalised: shape
        `(len(token_ids), dimension)`.
        """
        if not token_ids:
            return np.zeros((0, dimension), np.float32)
        pooled = np.stack(list(self._pool.map(self._one, token_ids)))
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, np.float32(1e-12))).astype(np.float32)

    def _one(self, ids: Sequence[int]) -> npt.NDArray[np.float32]:
        feed = {"input_ids": np.asarray(ids, dtype=np.int64).reshape(1, -1)}
        outputs: Sequence[object] = self._session.run(["pooled"], feed)
        return np.asarray(outputs[0], dtype=np.float32)[0]


def runtime_version() -> str:
    """The version of onnxruntime (saved models are kept per version)."""
    return str(_runtime().__version__)
