"""Stores: the toolkit any backend uses, and the bundled backends, each in its own folder.

The toolkit is what a backend needs beyond the plugin contract: `graph` resolves the
declared edges a store keeps into the `GraphView` it offers (with `_bulk`, which builds a
large graph's objects without the cyclic collector). `embedded/` is the default backend
(SQLite with numpy or faiss vectors), loaded like any third-party store through the
`contextpipe.stores` entry point: nothing imports it.
"""
