"""Paths and files on any file system Spark reaches, through Hadoop's FileSystem API: the URI of
a job's path (:func:`as_uri`), the few file operations the engine needs (:class:`Files`: list an
input's data files, read a file's first bytes, write, rename a staged section into place) and
OUT's lock (:func:`out_lock`)."""

from __future__ import annotations

import contextlib
import os
import re
import zlib
from pathlib import PurePosixPath

from pyspark.sql import SparkSession

from mobeval.io.sources import format_of
from mobeval.io.text import GZIP_MAGIC
from mobeval.io.writers import output_lock, require_staged


def as_uri(path: str | os.PathLike) -> str:
    """The URI Spark reads: ``s3a://b/k`` stays as given; a job path that went through
    ``pathlib`` (``/jobs/s3a:/b/k``, the job file's folder prefixed) gets its scheme back."""
    text = os.fspath(path)
    if "://" in text:
        return text
    parts = PurePosixPath(text).parts
    for index, part in enumerate(parts):
        if re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]+:", part):
            scheme, rest = part[:-1].lower(), "/".join(parts[index + 1 :])
            return f"{scheme}:/{rest}" if scheme in ("file", "dbfs") else f"{scheme}://{rest}"
    return text


class Files:
    """The few file operations the engine needs, through Hadoop's FileSystem API."""

    def __init__(self, spark: SparkSession) -> None:
        self.jvm = spark.sparkContext._jvm
        self.conf = spark.sparkContext._jsc.hadoopConfiguration()
        self._systems: dict[str, object] = {}  # scheme://authority -> its FileSystem

    def _path(self, uri: str):
        """Hadoop's Path of ``uri`` and its FileSystem (one look-up per scheme and authority: a
        result's commit makes some twenty calls on the same one)."""
        path = self.jvm.org.apache.hadoop.fs.Path(uri)
        root = re.match(r"[A-Za-z][A-Za-z0-9+.-]*://[^/]*|[A-Za-z][A-Za-z0-9+.-]*:", uri)
        where = root.group(0) if root else ""  # no scheme: the default file system
        if where not in self._systems:
            self._systems[where] = path.getFileSystem(self.conf)
        return path, self._systems[where]

    def _unchecked(self, fs):
        """``fs``, or the raw file system under it when it is a checksummed one (the local file
        system): what a file is created through, so that no ``.<name>.crc`` lies beside it in OUT
        (the checksummed file system still reads, renames and deletes a file without one, and
        deletes or renames a checksum left by an older run with its file)."""
        if self.jvm.org.apache.hadoop.fs.ChecksumFileSystem._java_lang_class.isInstance(fs):
            return fs.getRawFileSystem()
        return fs

    def matches(self, pattern: str) -> bool:
        """Whether the glob ``pattern`` (a URI) names anything."""
        path, fs = self._path(pattern)
        return bool(fs.globStatus(path))

    def exists(self, uri: str) -> bool:
        path, fs = self._path(uri)
        return bool(fs.exists(path))

    def _qualified(self, uri: str) -> str:
        path, fs = self._path(uri)
        return str(fs.makeQualified(path))

    def local_path(self, uri: str) -> str | None:
        """The path on the driver's disk when ``uri`` is on the local file system, else None."""
        path, fs = self._path(uri)
        if fs.getUri().getScheme() != "file":
            return None
        return str(fs.makeQualified(path).toUri().getPath())

    def remove_staged(self, uri: str, root: str) -> None:
        """Delete ``uri`` recursively (nothing if absent) once
        :func:`mobeval.io.writers.require_staged` has checked, on the fully qualified URIs, that
        it lies inside ``root/.staging``."""
        path, fs = self._path(require_staged(self._qualified(uri), self._qualified(root)))
        if fs.exists(path):
            fs.delete(path, True)

    def rename(self, source: str, target: str) -> None:
        """Move ``source`` to ``target`` (its folder made if needed); an OSError if refused."""
        src, fs = self._path(source)
        dst, _ = self._path(target)
        fs.mkdirs(dst.getParent())
        if not fs.rename(src, dst):
            raise OSError(f"could not move {source} to {target}")

    def glob(self, pattern: str) -> list[str]:
        """The URIs the glob ``pattern`` names, sorted."""
        path, fs = self._path(pattern)
        return sorted(str(status.getPath()) for status in fs.globStatus(path) or [])

    def keep_data_files(self, uri: str, root: str) -> None:
        """Delete the ``_SUCCESS`` marker and ``.crc`` checksums Hadoop writes beside part files
        of a staged section ``uri``, so that Polars and DuckDB read the directory as it is."""
        require_staged(self._qualified(uri), self._qualified(root))
        path, fs = self._path(uri)
        fs = self._unchecked(fs)  # the checksummed view hides the .crc files
        for status in fs.listStatus(path):
            if status.getPath().getName().startswith(("_", ".")):
                fs.delete(status.getPath(), False)

    def write_text(self, uri: str, text: str) -> None:
        """Write through a temporary name, then rename (atomic where the file system is); no
        checksum file beside it (:meth:`_unchecked`)."""
        path, fs = self._path(uri)
        temporary = self.jvm.org.apache.hadoop.fs.Path(path.getParent(), f".tmp-{path.getName()}")
        stream = self._unchecked(fs).create(temporary, True)
        try:
            stream.write(bytearray(text.encode()))
        finally:
            stream.close()
        if fs.exists(path):
            fs.delete(path, False)
        if not fs.rename(temporary, path):
            raise OSError(f"could not write {uri}")

    def write_bytes(self, uri: str, data: bytes) -> None:
        """Write a new file (its folder made if needed), with no checksum file beside it."""
        path, fs = self._path(uri)
        stream = self._unchecked(fs).create(path, True)
        try:
            stream.write(bytearray(data))
        finally:
            stream.close()

    def is_file(self, uri: str) -> bool:
        path, fs = self._path(uri)
        return bool(fs.exists(path)) and bool(fs.getFileStatus(path).isFile())

    def head(self, uri: str, size: int) -> bytes:
        """The file's first ``size`` bytes, gunzipped (the first ``size`` of those) when it starts
        with gzip's magic bytes whatever its name, as the local engine opens text files
        (:func:`mobeval.io.text.open_binary`); a damaged gzip stream gives what came out of it."""
        path, fs = self._path(uri)
        stream = fs.open(path)
        try:
            data = bytes(stream.readNBytes(size))
        finally:
            stream.close()
        if data[:2] != GZIP_MAGIC:
            return data
        gunzip = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            return gunzip.decompress(data, size)
        except zlib.error:
            return b""

    def read_text(self, uri: str) -> str | None:
        path, fs = self._path(uri)
        if not fs.exists(path):
            return None
        stream = fs.open(path)
        try:
            return self.jvm.org.apache.commons.io.IOUtils.toString(stream, "UTF-8")
        finally:
            stream.close()

    def data_files(self, uri: str) -> list[tuple[str, int, float]]:
        """(uri, size, mtime) of the files a path or a glob names, sorted; for a directory, its
        Parquet / CSV files (recursively) except hidden ones (``.``, ``_``, as Spark skips)."""
        path, fs = self._path(uri)
        found = []
        for status in fs.globStatus(path) or []:
            if not status.isDirectory():
                found.append(_file_entry(status))
                continue
            root = str(status.getPath().toUri().getPath()).rstrip("/") + "/"
            listing = fs.listFiles(status.getPath(), True)
            while listing.hasNext():
                entry = listing.next()
                inside = str(entry.getPath().toUri().getPath()).removeprefix(root)
                hidden = any(part.startswith((".", "_")) for part in inside.split("/"))
                if not hidden and format_of(inside):  # a directory's data files, as locally
                    found.append(_file_entry(entry))
        return sorted(found)


def _file_entry(status) -> tuple[str, int, float]:
    return str(status.getPath()), int(status.getLen()), status.getModificationTime() / 1000


def out_lock(spark: SparkSession, out):
    """OUT's lock (:func:`mobeval.io.writers.output_lock`) when OUT is on the driver's local file
    system; nothing elsewhere (HDFS, object stores: two runs on one such OUT are not prevented)."""
    local = None if out is None else Files(spark).local_path(as_uri(out))
    return contextlib.nullcontext() if local is None else output_lock(local)
