"""Fail when a module of the package is in no layer of the import-linter contracts.

import-linter checks the imports between the modules a layers contract names, and says
nothing of a module it does not name; a new module at the package root would go unchecked.
"""

import sys
import tomllib
from pathlib import Path
from typing import Any

import grimp


def placed(contracts: list[dict[str, Any]]) -> list[str]:
    """Every module or package a layers contract names, with its container's prefix."""
    names: list[str] = []
    for contract in contracts:
        if contract["type"] != "layers":
            continue
        containers = contract.get("containers") or [""]
        for container in containers:
            for layer in contract["layers"]:
                for name in str(layer).replace("|", ":").split(":"):
                    name = name.strip().strip("()")
                    names.append(f"{container}.{name}" if container else name)
    return names


def main() -> int:
    config = tomllib.loads(Path("pyproject.toml").read_text())["tool"]["importlinter"]
    root = config["root_package"]
    layers = placed(config["contracts"])
    modules = grimp.build_graph(root).modules
    unplaced = sorted(
        module
        for module in modules
        if module != root and not any(module == n or module.startswith(n + ".") for n in layers)
    )
    for module in unplaced:
        print(f"pyproject.toml: {module} is in no layer of [tool.importlinter]", file=sys.stderr)
    print(f"{len(modules) - len(unplaced)} of {len(modules)} modules placed in layers")
    return 1 if unplaced else 0


if __name__ == "__main__":
    sys.exit(main())
