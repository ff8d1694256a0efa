"""Standard output written whole, or the command fails (exit 2); a reader that stops reading
(``mobeval ... | head``) lets the work run to its end."""

from __future__ import annotations

import contextlib
import errno
import os
import sys

STDOUT = "<stdout>"


class _CheckedStream:
    """A text stream in front of ``stream`` (standard output) that writes whole or raises an
    OSError naming :data:`STDOUT`. Python's own buffered stream may drop what a short write left
    over (a nearly full disk keeps the first 4 KiB and reports nothing), so when ``stream`` has a
    file descriptor the bytes are kept here (up to :data:`_PENDING_BYTES`, or line by line on a
    terminal) and written with ``os.write`` until every byte is taken; ``buffer`` takes bytes
    the same way (UTF-8 text to a text-only stream); after a failure the rest goes to /dev/null.

    A reader that goes away (``mobeval run job.toml | head``: EPIPE) is not a failure of the
    command: what it prints from then on goes to the null device, the work goes on to the end
    (OUT's files whole), and :func:`checked_stdout` says so when the block is done."""

    def __init__(self, stream) -> None:
        self._stream = stream
        self._pending = bytearray()
        self.buffer = _CheckedBytes(self)
        self.reader_gone = False
        try:
            self._fd = stream.fileno()
            self._terminal = stream.isatty()
        except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is an OSError
            self._fd = None

    def write(self, text: str) -> int:
        if self._fd is None:
            try:
                return self._stream.write(text)
            except OSError as error:
                self._failed(error)
                return len(text)
        encoding = self._stream.encoding or "utf-8"
        self.write_bytes(text.encode(encoding, self._stream.errors or "strict"))
        return len(text)

    def write_bytes(self, data: bytes) -> int:
        if self._fd is None:
            try:
                if not hasattr(self._stream, "buffer"):  # text only: StringIO, a notebook's
                    return self._stream.write(data.decode("utf-8", "backslashreplace"))
                return self._stream.buffer.write(data)
            except OSError as error:
                self._failed(error)
                return len(data)
        self._pending += data
        if self._terminal or len(self._pending) >= _PENDING_BYTES:
            self.flush()
        return len(data)

    def flush(self) -> None:
        try:
            self._stream.flush()
            if self._fd is not None:
                data = memoryview(bytes(self._pending))
                self._pending.clear()
                while data:
                    data = data[os.write(self._fd, data) :]
        except OSError as error:
            self._failed(error)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)

    def _failed(self, error: OSError) -> None:
        self._pending.clear()
        with contextlib.suppress(OSError, ValueError):
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, self._stream.fileno())
            os.close(null)
        if error.errno == errno.EPIPE:
            self.reader_gone = True
            return
        raise OSError(error.errno, error.strerror or str(error), STDOUT) from None


class _CheckedBytes:
    """``sys.stdout.buffer`` of a :class:`_CheckedStream`: its bytes, in order with the text."""

    def __init__(self, text: _CheckedStream) -> None:
        self._text = text

    def write(self, data: bytes) -> int:
        return self._text.write_bytes(data)

    def flush(self) -> None:
        self._text.flush()


#: Bytes :class:`_CheckedStream` keeps before writing it out.
_PENDING_BYTES = 1 << 20


@contextlib.contextmanager
def checked_stdout():
    """Standard output for the ``with`` block, written whole or failing: flushed at the end, and
    a write or flush that fails (a full disk, a file size limit: any write that ends short fails
    on the next one) raises an OSError naming :data:`STDOUT`. A reader that stopped reading lets
    the block run to its end and then raises :class:`BrokenPipeError` naming :data:`STDOUT`."""
    stream = sys.stdout
    checked = _CheckedStream(stream)
    sys.stdout = checked
    try:
        yield checked
        checked.flush()
    finally:
        sys.stdout = stream
    if checked.reader_gone:
        raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE), STDOUT)
