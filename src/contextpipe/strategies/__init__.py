"""Built-in strategies. Each module is a plugin registered through the
`contextpipe.strategies` entry-point group, exactly like a third-party plugin.
"""
