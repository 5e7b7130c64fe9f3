"""Give the heap's freed memory back to the system.

Reading a project's files and indexing their lines allocates far more for a moment than it
keeps (Django's 9.7 MB of files: ~30 MB kept, ~60 MB more of RSS), and glibc keeps what
Python frees in the middle of its heap, so the server's RSS only grew as projects came and
went. ``malloc_trim`` hands the free pages back; elsewhere than glibc it does nothing.
"""

from __future__ import annotations

import ctypes
import logging
from collections.abc import Callable

log = logging.getLogger(__name__)


def _find_malloc_trim() -> Callable[[int], int] | None:
    # The process's own symbols, where the C library already is: ctypes.util.find_library
    # would run ldconfig in a subprocess at every server start (~5 ms).
    try:
        trim: Callable[[int], int] = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError, TypeError):  # not glibc, or no symbols of the process
        return None
    return trim


_MALLOC_TRIM = _find_malloc_trim()


def give_back_freed_memory() -> None:
    """Return the heap's free pages to the system (a few ms; call it off the event loop)."""
    if _MALLOC_TRIM is not None:
        try:
            _MALLOC_TRIM(0)
        except Exception:  # never worth failing the caller for
            log.debug("malloc_trim failed", exc_info=True)
