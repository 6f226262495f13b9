"""How much memory the host can give without taking it from anyone: what `Pipeline.warm_up`
lets the store read ahead into the operating system's cache.

Linux says it in `/proc/meminfo` (`MemAvailable`: free memory and the cache it can
reclaim; a container's limit is not looked at: pages read past it are its own cache's to
drop, never a reason to kill it). Elsewhere, the free physical pages, where the system
gives them. Unknown: `UNKNOWN_BYTES`, so that a machine that does not say still has a
store of a few hundred megabytes read, and not one of tens of gigabytes.
"""

from __future__ import annotations

import os
from pathlib import Path

#: What is assumed when the host does not say.
UNKNOWN_BYTES = 2 << 30

_MEMINFO = Path("/proc/meminfo")


def available_memory() -> int:
    """Bytes of memory available now (see the module docstring)."""
    found = _meminfo_available()
    if found is None:
        found = _free_pages()
    return UNKNOWN_BYTES if found is None else found


def _meminfo_available() -> int | None:
    try:
        for line in _MEMINFO.read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024  # the file counts in kB
    except (OSError, ValueError, IndexError):
        pass
    return None


def _free_pages() -> int | None:
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):  # no sysconf (Windows), no such name (macOS)
        return None
