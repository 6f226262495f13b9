"""The embedded store: SQLite (WAL, FTS5) with numpy or faiss vectors in one directory.

`backend` is the plugin (`EmbeddedBackend`, registered through the `contextpipe.stores`
entry point) and the store; the private modules beside it each serve one of its parts.
"""
