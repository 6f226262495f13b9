"""The in-memory store: the reference backend, for tests and as the model a third-party
backend copies. `backend` is the plugin (`MemoryBackend`, registered through the
`contextpipe.stores` entry point as `memory`, like any other) and the store; it imports
only the package root and the toolkit `contextpipe.stores.graph`.
"""
