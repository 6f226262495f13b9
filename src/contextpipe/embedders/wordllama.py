"""`wordllama`: a fast static embedder for large code bases, 256-d.

The vectors are WordLlama's (`l2_supercat`, 256-d): the mean of the static vectors of a
text's tokens (its Llama-2 tokenizer, no truncation), L2-normalised. The weights (16 MB)
and the tokenizer ship in the PyPI package `wordllama`, which `contextpipe model install
wordllama` installs with `--no-deps`; only its two files are read, the package itself is
never imported (its loader looks for them in the wrong folder and then downloads).

Pooling is done here: each text's token vectors gathered and summed on their own, in token
order, so that a vector does not depend on its batch, and a text without a token (the empty
one) gets the first unit vector instead of a division by zero. Normalising the sum is
normalising the mean. A sparse product (texts x token counts) . token vectors gives the
very same floats and pools a batch about twice as fast, but it imports scipy.sparse: 0.12 s
of every command that embeds a query, and 18,000 objects more for the cyclic collector to
walk in a long-running process; tokenising takes most of the time either way.

Chosen over a model2vec-style distillation of MiniLM by measurement (docs/embedding.md):
SciFact train nDCG@10 0.549 against 0.414, code file localisation about even.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from contextpipe import Embedder, Settings, hookimpl

from ._files import LoadedOnce, ModelPackage, weights_digest

NAME = "wordllama"
PACKAGE = "wordllama"
_MODULE = "wordllama"
_WEIGHTS = Path("weights") / "l2_supercat_256.safetensors"
_TOKENIZER = Path("tokenizers") / "l2_supercat_tokenizer_config.json"
_VOCABULARY = 32000


class WordLlamaEmbedder(LoadedOnce["_Loaded"]):
    """WordLlama l2_supercat: mean of static token vectors, L2-normalised, 256-d."""

    name = NAME
    dimension = 256
    model_package = f"{PACKAGE}==0.4.0.post1"

    def __init__(self) -> None:
        super().__init__(lambda: _Loaded(ModelPackage.find(_MODULE, PACKAGE, NAME)))

    @property
    def space(self) -> str:
        return f"{NAME}:l2_supercat:{self.dimension}:{self.loaded().digest}"

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        loaded = self.loaded()
        encodings = loaded.tokenizer.encode_batch(list(texts), add_special_tokens=False)
        sums = np.zeros((len(encodings), self.dimension), dtype=np.float32)
        empty = np.zeros(len(encodings), dtype=bool)
        for row, encoding in enumerate(encodings):
            if encoding.ids:
                # Along the first axis numpy adds the rows one after another: token order.
                sums[row] = loaded.table[encoding.ids].sum(axis=0)
            else:
                empty[row] = True
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        vectors = sums / np.maximum(norms, np.float32(1e-12))
        vectors[empty, 0] = 1.0  # a text without a token: the first unit vector
        return vectors


class _Loaded:
    """The token vectors (float32), the tokenizer and the weights' hash."""

    def __init__(self, package: ModelPackage) -> None:
        # Imported here: choosing the embedder must not cost these imports.
        from safetensors.numpy import load as load_safetensors

        weights_path = package.folder / _WEIGHTS
        weights = package.read(weights_path)
        self.digest = weights_digest(weights)
        try:
            table = load_safetensors(weights.data).get("embedding.weight")
            expected = (_VOCABULARY, WordLlamaEmbedder.dimension)
            if table is None or table.shape != expected:
                found = "no tensor" if table is None else f"shape {table.shape}"
                raise ValueError(f"embedding.weight: {found}, expected {expected}")
        except Exception as exc:  # the library's own error or a wrong shape: name the file
            raise package.damaged(weights_path, exc) from None
        self.table = np.ascontiguousarray(table, dtype=np.float32)
        self.tokenizer = package.tokenizer(package.folder / _TOKENIZER, None)


@hookimpl
def contextpipe_embedders(settings: Settings) -> list[Embedder]:
    """The WordLlama embedder, registered like any other embedder plugin."""
    return [WordLlamaEmbedder()]
