"""Where a result store lives: a local directory or an fsspec URL (``s3://bucket/sweep.zarr``,
``gs://...``, ``file://...``, ``memory://...``).

Every command that creates, resumes, checks or reads a store goes through location(): `run -o`,
`sweep -o`, `tables --from`, and anything built on sweep.store.open_store. A local path keeps the
file-system rules of the rest of the package (symbolic links, names too long, aside-and-rename
creation); a URL is read and written through fsspec (s3fs for s3://) and zarr's FsspecStore.

Credentials and endpoints come from the environment, read by the file system's own library,
never from a spec or a command line (a spec is copied into its store's attributes): for s3://,
botocore's AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN or AWS_PROFILE, and
AWS_ENDPOINT_URL for an S3-compatible server (MinIO, Ceph); for any protocol, fsspec's
FSSPEC_<PROTOCOL>_<OPTION> variables (e.g. FSSPEC_S3_ENDPOINT_URL).

Object storage cannot rename, so a new store is written in a local temporary directory and
uploaded with its root metadata (zarr.json) last: until that object exists the prefix is not a
store, and a creation that fails removes what it uploaded.
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Callable

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
ROOT_META = "zarr.json"


def is_url(path) -> bool:
    """True for an fsspec URL (a protocol such as s3://, or a chained one with ::)."""
    text = os.fspath(path) if isinstance(path, os.PathLike) else str(path)
    return bool(_URL.match(text)) or "::" in text


def location(path_or_url) -> "LocalStore | RemoteStore":
    """The place of a store: LocalStore for a path (or a file:// URL), RemoteStore for a URL."""
    if not is_url(path_or_url):
        return LocalStore(path_or_url)
    text = str(path_or_url)
    if text.startswith("file://") and "::" not in text:
        return LocalStore(text[len("file://"):])
    return RemoteStore(text)


# Object stores: a key needs no parent directories (making one may even create a bucket)
OBJECT_STORES = {"s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "adl", "oss", "memory"}


class LocalStore:
    """A store directory on a local (or mounted) file system: pathlib calls, nothing more."""
    remote = False

    def __init__(self, path):
        self.path = Path(path)
        self.shown = str(path)

    @property
    def name(self) -> str:
        return self.path.name

    def exists(self) -> bool:
        return self.path.exists()

    def is_symlink(self) -> bool:
        return self.path.is_symlink()

    def is_dir(self) -> bool:
        return self.path.is_dir()

    def is_file(self, *parts: str) -> bool:
        return self.path.joinpath(*parts).is_file()

    def read_bytes(self, *parts: str) -> bytes:
        return self.path.joinpath(*parts).read_bytes()

    def children(self) -> list[str]:
        return [e.name for e in self.path.iterdir()]

    def prefetch(self, parts: list[str]) -> None:
        """Nothing to do: local reads are cheap one by one."""

    def zarr_store(self, read_only: bool = True) -> str:
        return str(self.path)


class RemoteStore:
    """A store under an fsspec URL. The object listing is read once per instance (one request
    per thousand objects on S3) and answers the existence checks; make a new instance to see
    later writes. Errors of the storage library (no credentials, endpoint unreachable, no such
    bucket) surface as OSError with a short message, which the callers turn into one line."""
    remote = True

    def __init__(self, url: str):
        self.shown = self.url = url.rstrip("/")
        self._keys: set[str] | None = None
        self._fs = self._root = None
        self._fetched: dict[str, object] = {}

    @property
    def name(self) -> str:
        return self.url.rsplit("/", 1)[-1]

    def _call(self, fn: Callable, *args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except OSError:
            raise
        except ImportError as exc:
            raise OSError(f"{self.url.split(':', 1)[0]}:// needs a package that is not "
                          f"installed ({exc.name or exc}); for s3://: pip install "
                          "'extoll-vec[s3]'") from None
        except Exception as exc:  # noqa: BLE001 - botocore, aiohttp and others raise their own
            msg = " ".join(str(exc).split())[:200]
            raise OSError(f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__) \
                from None

    @property
    def fs(self):
        if self._fs is None:
            from fsspec.core import url_to_fs
            self._fs, self._root = self._call(url_to_fs, self.url)
            self._root = self._root.rstrip("/")
        return self._fs

    @property
    def root(self) -> str:
        self.fs
        return self._root

    def _key(self, *parts: str) -> str:
        return "/".join((self.root,) + parts)

    def keys(self) -> set[str]:
        """Every object under the store, relative to its root."""
        if self._keys is None:
            fs = self.fs
            self._call(fs.invalidate_cache)
            found = self._call(fs.find, self.root) if self._call(fs.isdir, self.root) else []
            prefix = self.root + "/"
            self._keys = {k[len(prefix):] for k in found if k.startswith(prefix)}
        return self._keys

    def exists(self) -> bool:
        return bool(self.keys()) or bool(self._call(self.fs.exists, self.root))

    def is_symlink(self) -> bool:
        return False

    def is_dir(self) -> bool:
        return bool(self.keys()) or bool(self._call(self.fs.isdir, self.root))

    def is_file(self, *parts: str) -> bool:
        return "/".join(parts) in self.keys()

    def read_bytes(self, *parts: str) -> bytes:
        got = self._fetched.pop("/".join(parts), None)
        if isinstance(got, bytes):
            return got
        return self._call(self.fs.cat_file, self._key(*parts))

    def prefetch(self, parts: list[str]) -> None:
        """Fetch these objects at once (concurrent requests: a store's metadata is an object
        per array, and one request at a time costs a round trip each); read_bytes takes
        them. Objects that fail are read again, one by one, by read_bytes."""
        got = self._call(self.fs.cat, [self._key(p) for p in parts], on_error="return")
        for p in parts:
            self._fetched[p] = got.get(self._key(p))

    def children(self) -> list[str]:
        return sorted({k.split("/", 1)[0] for k in self.keys()})

    def zarr_store(self, read_only: bool = True):
        from zarr.storage import FsspecStore
        return self._call(FsspecStore.from_url, self.url, read_only=read_only)

    def remove(self) -> None:
        """Delete every object of the store (--overwrite of a store, a failed upload)."""
        if self.keys():
            self._call(self.fs.rm, [self._key(k) for k in sorted(self.keys())])
        self._keys = None

    def upload(self, local: Path) -> None:
        """Copy the local store directory `local` here, its root zarr.json last; on failure
        (or Ctrl-C) remove what was copied."""
        files = sorted(str(p.relative_to(local)).replace(os.sep, "/")
                       for p in local.rglob("*") if p.is_file())
        first = [f for f in files if f != ROOT_META]
        protocols = self.fs.protocol
        protocols = {protocols} if isinstance(protocols, str) else set(protocols)
        try:
            if not protocols & OBJECT_STORES:    # a file system with directories (sftp, hdfs)
                for d in sorted({self._key(*f.split("/")[:-1]) for f in files}):
                    self._call(self.fs.makedirs, d, exist_ok=True)
            if first:
                self._call(self.fs.put, [str(local / f) for f in first],
                           [self._key(f) for f in first])
            self._call(self.fs.put_file, str(local / ROOT_META), self._key(ROOT_META))
        except BaseException:
            self._keys = None
            try:
                self.remove()
            except OSError:
                pass
            raise
        finally:
            self._keys = None
