"""Writing files whole or not at all."""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

__all__ = ["atomic_path"]


@contextlib.contextmanager
def atomic_path(path) -> Iterator[Path]:
    """Yield a temporary path beside ``path`` that replaces ``path`` when the block succeeds.

    Write the file to the path yielded; when the block ends normally the file is moved onto
    ``path`` in one step (:func:`os.replace`, atomic within a file system), and when it ends
    with any exception, KeyboardInterrupt included, the temporary file is removed. So ``path``
    is either the old file or the complete new one, never half written.

    Examples
    --------
    >>> with atomic_path("out.txt") as tmp:
    ...     _ = tmp.write_text("done")
    >>> Path("out.txt").read_text()
    'done'
    """
    path = Path(path)
    # a hidden name in the same folder (same file system); the writer creates it, so the
    # file gets the usual permissions (umask), unlike a mkstemp file
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}.part")
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
