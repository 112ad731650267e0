"""Where the command-line tool may write, and how: the rules that keep a release from ever
costing the user data.

* An output is never one of the inputs (compared as files: ``./a.csv``, symbolic and hard
  links to the input are the input).
* An existing output is replaced only with ``--overwrite``; without it the command fails
  before the run and leaves the old file as it was. A file that appears during the run is
  not replaced either (the finished file is linked in, which fails if the name exists).
* A regular file is written atomically: a temporary file beside it, then renamed. Something
  that is not a regular file (``/dev/null``, a FIFO) is written to directly, never replaced
  by a file; a directory is refused (the Dask engine, which writes directories, says so).
* New files get the permissions the user's umask gives (``0666 & ~umask``), like any
  other tool's output, not the ``0600`` of a temporary file.
* A failed write (a full disk: ``ENOSPC``) is an error naming the output, and leaves no
  temporary file; so does SIGINT, SIGTERM or SIGHUP during the run (see :func:`signals_as_exceptions`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
import signal
import stat
from typing import Any, Callable, Iterator, Optional, Sequence


class OutputError(ValueError):
    """An output the CLI refuses to write (one line for the user)."""


class Terminated(BaseException):
    """SIGTERM or SIGHUP arrived: unwinds like Ctrl-C so that temporary files are removed."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


@contextlib.contextmanager
def signals_as_exceptions() -> Iterator[None]:
    """Turns SIGTERM and SIGHUP into :class:`Terminated` in the main thread while the block
    runs (the previous handlers come back after it)."""
    wanted = [s for s in ("SIGTERM", "SIGHUP") if hasattr(signal, s)]

    def handler(signum: int, frame: Any) -> None:
        raise Terminated(signum)

    previous = {}
    try:
        for name in wanted:
            sig = getattr(signal, name)
            previous[sig] = signal.signal(sig, handler)
    except ValueError:  # not the main thread: leave the signals alone
        pass
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def check_output(path: str, inputs: Sequence[str], overwrite: bool, option: str = "-o") -> None:
    """Refuses, before any work, an output that is one of ``inputs`` or that exists (unless
    ``overwrite``); ``option`` names the flag in the message."""
    for src in inputs:
        if _same_file(path, src):
            raise OutputError(
                f"the output file is the input file ({src}); choose another {option} (the input is never overwritten)"
            )
    if not os.path.lexists(path):
        return
    mode = os.stat(path).st_mode if os.path.exists(path) else 0
    if stat.S_ISDIR(mode):
        raise OutputError(f"{option} {path} is a directory; name a file")
    if (stat.S_ISREG(mode) or os.path.islink(path)) and not overwrite:
        raise OutputError(f"{option} {path} exists; choose another name or add --overwrite to replace it")


def _temporary_name(path: str) -> str:
    folder, name = os.path.split(os.path.abspath(path))
    return os.path.join(folder, f".microagg-{secrets.token_hex(6)}-{name}")


def write_file(path: str, write: Callable[[str], None], overwrite: bool) -> None:
    """Writes the file ``path`` through ``write(target)`` under the rules of this module:
    atomically for a regular file (or a new name), directly for a device or FIFO."""
    if os.path.exists(path) and not stat.S_ISREG(os.stat(path).st_mode):
        _reporting_failure(path, lambda: write(path))
        return
    tmp = _temporary_name(path)
    try:
        fd = os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666)  # the umask applies
        os.close(fd)
        _reporting_failure(path, lambda: write(tmp))
        _move_into_place(tmp, path, overwrite)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def check_output_directory(path: str, inputs: Sequence[str], overwrite: bool) -> None:
    """:func:`check_output` for an output directory (the Dask engine's Parquet parts): never
    an input (or a folder holding one), an existing directory only with ``overwrite``."""
    for src in inputs:
        inside = os.path.abspath(src).startswith(os.path.abspath(path) + os.sep)
        if _same_file(path, src) or inside:
            raise OutputError(
                f"the output {path} is (or holds) the input {src}; choose another -o (the input is never overwritten)"
            )
    if not os.path.lexists(path):
        return
    if not os.path.isdir(path):
        raise OutputError(f"-o {path} exists and is not a directory; choose another name")
    if not overwrite:
        raise OutputError(f"-o {path} exists; choose another name or add --overwrite to replace it")


def write_directory(path: str, write: Callable[[str], None], overwrite: bool) -> None:
    """Writes the directory ``path`` (the Dask engine's Parquet parts) through
    ``write(target)`` into a temporary directory beside it, then renames it; with
    ``overwrite`` an existing directory is replaced only once the new one is complete."""
    if os.path.exists(path) and not overwrite:
        raise OutputError(f"{path} exists; choose another -o or add --overwrite to replace it")
    tmp = _temporary_name(path)
    old: Optional[str] = None
    try:
        os.mkdir(tmp, 0o777)  # the umask applies
        _reporting_failure(path, lambda: write(tmp))
        if os.path.lexists(path):
            old = _temporary_name(path)
            os.replace(path, old)
        os.replace(tmp, path)
    finally:
        for leftover in (tmp, old):
            if leftover is not None and os.path.lexists(leftover):
                if os.path.isdir(leftover) and not os.path.islink(leftover):
                    shutil.rmtree(leftover, ignore_errors=True)
                else:
                    os.unlink(leftover)


def _reporting_failure(path: str, write: Callable[[], None]) -> None:
    try:
        write()
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None


def _move_into_place(tmp: str, path: str, overwrite: bool) -> None:
    if overwrite:
        os.replace(tmp, path)
        return
    try:
        os.link(tmp, path)  # fails if the name appeared during the run
    except FileExistsError:
        raise OutputError(f"{path} appeared during the run; it was left as it is (add --overwrite to replace it)") from None
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EXDEV, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK):
            raise
        if os.path.lexists(path):
            raise OutputError(f"{path} appeared during the run; it was left as it is") from None
        os.replace(tmp, path)  # a file system without hard links
