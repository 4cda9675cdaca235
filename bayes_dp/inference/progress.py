"""Progress of a sampling run: a tqdm bar (terminal or notebook) or the caller's callback.

The sampler reports the iterations its chains did, about every 0.1 s, from the thread that
runs it; :class:`Tracker` adds them up under a lock and passes ``(done, total)`` on.
``total`` counts the iterations of all chains, warm-up included, of the current round; in an
automatic-length run it grows when a round is extended.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable

__all__ = ["TqdmProgress", "Tracker", "resolve"]


def _interactive() -> bool:
    """Whether a person is probably watching: stderr is a terminal, or a Jupyter kernel runs."""
    if "ipykernel" in sys.modules:
        return True
    try:
        return bool(sys.stderr is not None and sys.stderr.isatty())
    except (AttributeError, ValueError):  # closed or unusual streams
        return False


def _terminal_width(stream) -> int | None:
    """Columns of the terminal behind ``stream``; None when it is no terminal."""
    try:
        return os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError):
        return None


class TqdmProgress:
    """A ``progress(done, total)`` callable that draws a ``tqdm.auto`` bar.

    In a terminal the bar shows the fraction done, draws per second (iterations of all chains,
    warm-up included) and the time left; in a Jupyter notebook it is a widget. The bar is
    created at the first call and closed by :meth:`close`.

    Parameters
    ----------
    desc : str
        Text before the bar.
    **tqdm_kwargs
        Passed to ``tqdm.auto.tqdm`` (for example ``file``, ``mininterval``, ``delay``).

    Examples
    --------
    >>> import io
    >>> buf = io.StringIO()
    >>> bar = TqdmProgress(file=buf, mininterval=0)
    >>> bar(500, 1000); bar(1000, 1000); bar.close()
    >>> "1.00k/1.00k" in buf.getvalue() and "draws/s" in buf.getvalue()
    True
    """

    def __init__(self, desc: str = "sampling", **tqdm_kwargs):
        self._desc = desc
        self._kwargs = {"unit": " draws", "unit_scale": True, "file": sys.stderr, **tqdm_kwargs}
        if _terminal_width(self._kwargs["file"]) == 0:
            # a pseudo-terminal without a size (e.g. under `script`): tqdm would take it for
            # one with no rows and print nothing
            self._kwargs = {"ncols": 80, "nrows": 24, **self._kwargs}
        self._bar = None

    def __call__(self, done: int, total: int) -> None:
        """Move the bar to ``done`` of ``total`` iterations (made on the first call)."""
        if self._bar is None:
            from tqdm.auto import tqdm

            self._bar = tqdm(total=total, desc=self._desc, **self._kwargs)
        bar = self._bar
        if bar.total != total:
            bar.total = total
            bar.refresh()
        if done > bar.n:
            bar.update(done - bar.n)

    def note(self, text: str) -> None:
        """Show ``text`` after the bar (the state of an automatic-length run)."""
        if self._bar is not None:
            self._bar.set_postfix_str(text)

    def close(self) -> None:
        """Close the bar (it stays on screen); idempotent."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def resolve(progress) -> Callable | None:
    """Return the callable for ``estimate_epsilon(progress=...)``, or None for no progress.

    None: a bar when someone is probably watching (a terminal or a notebook), shown only once
    the run has lasted a second; True: a bar; False: nothing; a callable: itself.
    """
    if progress is None:
        return TqdmProgress(delay=1.0) if _interactive() else None
    if progress is True:
        return TqdmProgress()
    if progress is False:
        return None
    if callable(progress):
        return progress
    raise TypeError(
        f"`progress` must be None, True, False or a callable progress(done, total); found "
        f"{progress!r}"
    )


class Tracker:
    """Adds up the chunks reported by the worker threads and calls ``callback(done, total)``.

    The sampler calls it from the thread that runs it (``samplers.exact.driver.ExactRun.run``),
    never from its workers, so a tqdm bar's lock is never waited on by a worker when Ctrl-C
    interrupts the run; the callback is still called under a lock, one call at a time.
    Exceptions in the callback propagate out of the sampler and stop the run. A callback with a
    ``note(text)`` method is told the state of an automatic-length run; one that the tracker
    ``owned`` (made by :func:`resolve`) is closed by :meth:`close`.
    """

    def __init__(self, callback: Callable | None, *, owned: bool = False):
        self.callback = callback
        self.owned = owned
        self.done = 0
        self.total = 0
        self._lock = threading.Lock()

    def set_total(self, total: int) -> None:
        """Set the number of iterations of the current round and report it."""
        with self._lock:
            self.total = int(total)
            if self.callback is not None:
                self.callback(self.done, self.total)

    def __call__(self, n: int) -> None:
        """Add ``n`` iterations done and report the total."""
        with self._lock:
            self.done += int(n)
            if self.callback is not None:
                self.callback(self.done, self.total)

    def note(self, text: str) -> None:
        """Pass ``text`` to the callback's ``note`` method, where it has one."""
        note = getattr(self.callback, "note", None)
        if note is not None:
            with self._lock:
                note(text)

    def close(self) -> None:
        """Close the callback if this tracker owns it."""
        close = getattr(self.callback, "close", None)
        if self.owned and close is not None:
            with self._lock:
                close()
