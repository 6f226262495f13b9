"""The faces: the ways other people and processes reach a `Pipeline`. Each is thin, a few
lines per command or endpoint over what the package root exports.
"""
