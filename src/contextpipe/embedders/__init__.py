"""Built-in embedders. Each module is a plugin registered through the
`contextpipe.embedders` entry-point group (entry point name = embedder name), exactly like
a third-party plugin; only the configured one is imported.
"""
