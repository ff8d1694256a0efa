"""Files written whole, and read back whole.

Every byte mobeval writes to a file of its own (OUT's parts and manifest, a commit journal, a
report and its figures, auc's spilled runs) goes through :class:`WholeFile`: ``os.write`` until
the last byte is taken, then the file's size on disk checked against the bytes written. A write
that fails or makes no progress (a full disk, a quota, a file size limit) is an OSError naming the
file, the bytes written of those expected, and, for a full disk, the free space left on the
file's file system (:func:`disk_error`); the partial file is removed, so no file is ever left cut
short. (C's buffered ``fwrite``, under ``numpy.tofile``, reports nothing when the closing flush of
a small file fails: a spilled run was written short without a word.) The files Arrow writes as
it streams (hash buckets, a spooled Arrow stream) fail with :func:`library_error`, which names
the file Arrow's message does not.

What a command writes to read back itself (a spilled run, a hash bucket) is checked against what
it recorded when it wrote it (:func:`check_read`): a file that comes back shorter is the same
error, never fewer rows and a wrong value.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil

#: The errors of a write that found no room: a full disk, a full quota, a file size limit.
NO_ROOM = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


def free_space(path: str | os.PathLike) -> str:
    """``'12.0 KiB free'``: what is left on the file system of ``path``'s folder."""
    try:
        free = shutil.disk_usage(os.path.dirname(os.path.abspath(path))).free
    except OSError:
        return "free space unknown"
    size, unit = float(free), "bytes"
    for larger in ("KiB", "MiB", "GiB", "TiB"):
        if size < 1024:
            break
        size, unit = size / 1024, larger
    return f"{free} bytes free" if unit == "bytes" else f"{size:.1f} {unit} free"


def disk_error(code: int, path: str | os.PathLike, detail: str = "") -> OSError:
    """The OSError of a write to ``path`` that failed with errno ``code``: its reason, ``detail``
    (what was written), and for a write that found no room (:data:`NO_ROOM`) the free space."""
    reason = os.strerror(code) + (f" ({detail})" if detail else "")
    if code in NO_ROOM:
        reason += f"; {free_space(path)} on its file system"
    return OSError(code, reason, str(path))


def library_error(error: BaseException, path: str | os.PathLike) -> OSError | None:
    """:func:`disk_error` naming ``path`` for a library's failed write, whose message holds the
    errno (Polars' ``os error 28``, Arrow's ``[errno 28]``) but no file; None without one."""
    code = getattr(error, "errno", None)
    if code is None:
        found = re.search(r"(?:os error|errno) (\d+)", str(error), re.IGNORECASE)
        if found is None:
            return None
        code = int(found.group(1))
    return disk_error(code, path)


class WholeFile:
    """A new file ``path`` (replacing one there unless ``exclusive``) as a binary stream that a
    writer (Polars' ``write_parquet``) fills chunk by chunk: each :meth:`write` taken to its last
    byte (``os.write`` until none is left), the size on disk checked against the bytes written
    when the ``with`` block ends. A failure is :func:`disk_error` naming the file and the bytes
    written (again from :meth:`error`, for a writer that wraps it in its own error), and the
    partial file is removed; so is the file of a block that fails."""

    def __init__(self, path: str | os.PathLike, *, exclusive: bool = False) -> None:
        flags = os.O_WRONLY | os.O_CREAT | (os.O_EXCL if exclusive else os.O_TRUNC)
        self.path, self.written, self._failed = path, 0, None
        self._handle = os.open(path, flags, 0o666)

    def write(self, data) -> int:
        view = memoryview(data).cast("B")
        taken = 0
        try:
            while taken < len(view):
                step = os.write(self._handle, view[taken:])
                if step <= 0:  # no progress: the room is gone
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                taken += step
        except OSError as error:
            self.written += taken
            self._fail(error, f"{self.written} bytes written, {len(view) - taken} more to write")
        self.written += taken
        return taken

    def flush(self) -> None:
        """Nothing is held here: every byte went to the file in :meth:`write`."""

    def __enter__(self) -> WholeFile:
        return self

    def __exit__(self, kind, error, traceback) -> None:
        if self._handle is None:
            return
        if kind is not None:
            self._discard()
            return
        on_disk = os.fstat(self._handle).st_size
        if on_disk != self.written:
            self._fail(OSError(errno.EIO), f"{on_disk} bytes on disk of {self.written} written")
        os.close(self._handle)
        self._handle = None

    def _discard(self) -> None:
        os.close(self._handle)
        self._handle = None
        with contextlib.suppress(OSError):  # gone already: nothing cut short is left
            os.unlink(self.path)

    def error(self) -> OSError | None:
        """The failure's :func:`disk_error` (a new one: no traceback ties it to this file)."""
        return None if self._failed is None else disk_error(*self._failed)

    def _fail(self, error: OSError, detail: str) -> None:
        self._discard()
        self._failed = (error.errno or errno.EIO, self.path, detail)
        raise self.error() from None


def write_whole(path: str | os.PathLike, data, *, exclusive: bool = False) -> None:
    """Write ``data`` (bytes, or any buffer) to a new file ``path`` whole (:class:`WholeFile`)."""
    with WholeFile(path, exclusive=exclusive) as file:
        file.write(data)


def check_read(path: str | os.PathLike, read: int, written: int, what: str = "rows") -> None:
    """Refuse a file of this command's own (a spilled run, a hash bucket) that comes back with
    ``read`` ``what`` where ``written`` were written: it was cut short on disk (an OSError, as a
    failed write is, never fewer rows and a wrong value)."""
    if read != written:
        raise OSError(
            errno.EIO,
            f"read back {read} {what} where {written} were written: the file was cut short "
            f"({free_space(path)} on its file system)",
            str(path),
        )


def read_rows(path: str | os.PathLike, start: int, rows: int, width: int):
    """Rows ``start`` to ``start + rows - 1`` of a file of ``width`` int64 columns (a spilled run
    that :func:`write_whole` wrote) as a NumPy array, every one of them (:func:`check_read`: a
    file cut short on disk is an error)."""
    import numpy as np  # lazily: the writers import this module before any NumPy is needed

    values = np.fromfile(path, dtype=np.int64, count=width * rows, offset=8 * width * start)
    check_read(path, len(values), width * rows, "int64 values")
    return values.reshape(-1, width)
