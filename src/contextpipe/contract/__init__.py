"""The plugin contract: what strategies, embedders and store backends implement, and the
values they exchange with contextpipe. Everything above the store talks to it through
these small protocols, never to a concrete backend.

- `hookspecs`: the plugin hooks and their entry-point groups.
- `strategy`: the `ContextStrategy` protocol; `proposals`: how much a strategy proposes.
- `embedding`: the `Embedder` protocol.
- `records`: the value types a store writes and reads back.
- `capabilities`: the read capabilities a store offers a request, and `Backends`.
- `store`: `StoreBackend`, `Store`, `IndexWriter`, `VectorWriter`.

Plugins import these names from the package root (`from contextpipe import ...`).
"""
