"""Reading the documents a user hands in: run configs, sweep specs, and whatever else a command
reads as YAML. One place turns every way such a file can be unusable into one SpecError
(``FILE[:LINE:COL]: WHAT: message``) instead of an OSError, UnicodeDecodeError or
RecursionError traceback.

    read_yaml_document(path, what) -> (data, positions)   read_document_text + parse_yaml_document
    read_document_text(path, what) -> str                 the file's text, checked
    parse_yaml_document(text, path, what)                 YAML -> (data, positions), checked

`what` names the document in the messages ("config", "spec", ...). positions come from
sweep/yamlpos.py: key path -> (line, column) of every mapping key and list item, and a
duplicate key is an error there. Accepted: UTF-8 with or without a byte order mark, CRLF line
ends, comments, anchors and aliases, JSON (JSON is YAML). Refused, each in one line: a missing
file, a directory, a FIFO, socket or device (/dev/null excepted: an empty document), a symlink
loop, an unreadable or over-long name, a file over MAX_BYTES,
compressed, binary, UTF-16/32 or otherwise non-UTF-8 bytes, control characters YAML forbids,
invalid YAML, more than one document, nesting deeper than MAX_DEPTH, more than MAX_NODES
values once aliases are expanded (a "billion laughs" document), and numbers too long to read.
"""
from __future__ import annotations

import codecs
import errno
import os
import stat
from typing import Any

import yaml

from .errors import SpecError

MAX_BYTES = 1 << 20          # a config or spec is a few KiB of text
MAX_DEPTH = 64               # nesting levels of mappings and lists
MAX_NODES = 100_000          # values in the document, each alias counted where it is used

_COMPRESSED = ((b"\x1f\x8b", "gzip"), (b"BZh", "bzip2"), (b"\xfd7zXZ\x00", "xz"),
               (b"\x28\xb5\x2f\xfd", "zstd"), (b"PK\x03\x04", "zip"))
_WIDE = ((codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"),
         (codecs.BOM_UTF16_LE, "UTF-16"), (codecs.BOM_UTF16_BE, "UTF-16"))
_OS_REASONS = {
    errno.ENOENT: "file not found",
    errno.ENAMETOOLONG: "file name too long",
    errno.ELOOP: "too many levels of symbolic links (a symlink loop?)",
    errno.EACCES: "cannot read: permission denied",
    errno.EPERM: "cannot read: operation not permitted",
    errno.EISDIR: "is a directory, not a file",
    errno.ENOTDIR: "a part of the path is not a directory",
}


NAME_MAX = 255      # bytes of one file name (Linux, macOS); PATH_MAX bounds the whole path
PATH_MAX = 4096


def path_length_problem(path: str | os.PathLike) -> str | None:
    """What makes a path one the system cannot take by its length ("file name too long (305
    bytes; allowed: at most 255)"), or None: checked before anything is computed for it."""
    parts = os.fsencode(os.fspath(path)).split(b"/")
    longest = max((len(part) for part in parts), default=0)
    if longest > NAME_MAX:
        return f"file name too long ({longest} bytes; allowed: at most {NAME_MAX})"
    total = len(os.fsencode(os.fspath(path)))
    if total > PATH_MAX:
        return f"path too long ({total} bytes; allowed: at most {PATH_MAX})"
    return None


def shown_path(path: str | os.PathLike, width: int = 120) -> str:
    """A path for a message: whole, or its start and end when it is absurdly long."""
    path = str(path)
    if len(path) <= width:
        return path
    return f"{path[:width // 2 - 2]}...{path[-(width // 2 - 2):]} ({len(path)} characters)"


def _oserror(path: str, what: str, exc: OSError) -> SpecError:
    reason = _OS_REASONS.get(exc.errno) or f"cannot read: {exc.strerror or exc}"
    return SpecError(shown_path(path), what, reason)


def read_document_text(path: str | os.PathLike, what: str) -> str:
    """The text of the file at path (at most MAX_BYTES, UTF-8, a leading BOM dropped)."""
    p = os.fspath(path)
    try:
        mode = os.stat(p).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory")
        if not stat.S_ISREG(mode) and not _is_devnull(p):
            # a FIFO would block the read until a writer comes, a device could stream forever
            kind = ("a named pipe (FIFO)" if stat.S_ISFIFO(mode) else
                    "a socket" if stat.S_ISSOCK(mode) else "a device")
            raise SpecError(shown_path(p), what, f"is {kind}, not a file; give a YAML file")
        with open(p, "rb") as fh:
            raw = fh.read(MAX_BYTES + 1)
    except SpecError:
        raise
    except OSError as exc:
        raise _oserror(p, what, exc) from None
    except ValueError:          # an embedded NUL character
        raise SpecError(shown_path(repr(p)), what, "not a valid file name") from None
    if len(raw) > MAX_BYTES:
        raise SpecError(shown_path(p), what, f"larger than {MAX_BYTES >> 20} MiB; a {what} is "
                                             "a short YAML text")
    return decode(raw, shown_path(p), what)


def _is_devnull(p: str) -> bool:
    """/dev/null: read as the empty document it is (refused as nothing to run)."""
    try:
        return os.path.samefile(p, os.devnull)
    except OSError:
        return False


def decode(raw: bytes, path: str | None, what: str) -> str:
    """UTF-8 text of raw, or SpecError saying what the bytes are instead."""
    for magic, name in _COMPRESSED:
        if raw.startswith(magic):
            raise SpecError(path, what, f"is a {name}-compressed file, not YAML text; "
                                        "decompress it first")
    for bom, name in _WIDE:
        if raw.startswith(bom):
            raise SpecError(path, what, f"is {name} text; save it as UTF-8")
    if raw.startswith(codecs.BOM_UTF8):
        raw = raw[len(codecs.BOM_UTF8):]
    nul = raw.find(b"\x00")
    if nul >= 0:
        # ASCII text in UTF-16 without a byte order mark: every other byte is NUL
        half = len(raw) // 4
        if len(raw) >= 4 and (raw[1::2].count(0) > half or raw[0::2].count(0) > half):
            raise SpecError(path, what, "is UTF-16 text; save it as UTF-8")
        line, col = _line_col(raw, nul)
        raise SpecError(path, what, "is a binary file (a NUL byte), not YAML text", line, col)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, col = _line_col(raw, exc.start)
        raise SpecError(path, what, f"is not UTF-8 text (byte 0x{raw[exc.start]:02x}); save it "
                                    "as UTF-8", line, col) from None
    bad = yaml.reader.Reader.NON_PRINTABLE.search(text)
    if bad:
        line, col = _line_col(text, bad.start())
        raise SpecError(path, what, f"control character U+{ord(bad.group()):04X}, which YAML "
                                    "does not allow", line, col)
    return text


def _line_col(buf: bytes | str, offset: int) -> tuple[int, int]:
    nl = b"\n" if isinstance(buf, bytes) else "\n"
    line = buf.count(nl, 0, offset) + 1
    return line, offset - (buf.rfind(nl, 0, offset) + 1) + 1


def _measure(node: yaml.Node, path: str | None, what: str) -> None:
    """Refuse nesting deeper than MAX_DEPTH and more than MAX_NODES values (aliases counted
    where they are used), without recursion and without expanding anything."""
    depth: dict[int, int] = {}
    size: dict[int, int] = {}
    stack: list[tuple[yaml.Node, bool]] = [(node, False)]
    while stack:
        n, done = stack.pop()
        if id(n) in size:
            continue
        kids = ([x for kv in n.value for x in kv] if isinstance(n, yaml.MappingNode) else
                n.value if isinstance(n, yaml.SequenceNode) else [])
        if not done:
            depth.setdefault(id(n), 0)
            if depth[id(n)] < 0:     # met again while its children are pending: a cycle
                raise SpecError(path, what, "an alias refers to the node that holds it",
                                n.start_mark.line + 1, n.start_mark.column + 1)
            depth[id(n)] = -1
            stack.append((n, True))
            stack.extend((k, False) for k in kids if id(k) not in size)
            continue
        d = 1 + max((depth[id(k)] for k in kids), default=0)
        s = 1 + sum(size[id(k)] for k in kids)
        if d > MAX_DEPTH:
            raise SpecError(path, what, f"nested more than {MAX_DEPTH} levels deep",
                            n.start_mark.line + 1, n.start_mark.column + 1)
        if s > MAX_NODES:
            raise SpecError(path, what, f"more than {MAX_NODES} values once its aliases are "
                                        "expanded", n.start_mark.line + 1, n.start_mark.column + 1)
        depth[id(n)], size[id(n)] = d, s


def _flow_too_deep(text: str) -> bool:
    """Flow collections ([...], {...}) nested over 1,000 deep, by counting brackets, where no
    quote or comment can hide one. PyYAML's recursive composer fails on such text with a
    RecursionError, which parse_yaml_document reports as this same message without a position,
    but only after its scanner spent over a second on 20,000 levels."""
    if any(c in text for c in "'\"#"):
        return False
    depth = 0
    for c in text:
        if c in "[{":
            depth += 1
            if depth > 1000:
                return True
        elif c in "]}":
            depth -= 1
    return False


def parse_yaml_document(text: str, path: str | None, what: str) -> tuple[Any, dict]:
    """One YAML document -> (data, positions) (sweep/yamlpos.py); SpecError naming `what`
    for invalid YAML, duplicate keys, excessive nesting or size."""
    from .sweep import yamlpos
    if all(not ln.strip() or ln.lstrip().startswith("#") for ln in text.splitlines()):
        return None, {}          # blank lines and comments only (PyYAML trips on a lone tab)
    if _flow_too_deep(text):
        raise SpecError(path, what, f"nested more than {MAX_DEPTH} levels deep")
    try:
        try:
            node = yaml.compose(text, Loader=yaml.SafeLoader)
        except yaml.YAMLError:
            node = None          # yamlpos.load reports it, with its position
        if node is not None:
            _measure(node, path, what)
        return yamlpos.load(text, path)
    except SpecError as exc:
        if exc.field != "spec" or what == "spec":
            raise
        raise SpecError(exc.path, what, exc.message, exc.line, exc.column) from None
    except RecursionError:
        raise SpecError(path, what, f"nested more than {MAX_DEPTH} levels deep") from None
    except (ValueError, OverflowError) as exc:   # a timestamp or number PyYAML cannot convert
        why = ("an integer too long to read (over 4300 digits)" if "digits" in str(exc)
               else " ".join(str(exc).split())[:120])
        raise SpecError(path, what, f"not valid YAML ({why})") from None


def read_yaml_document(path: str | os.PathLike, what: str) -> tuple[Any, dict]:
    """The YAML document in the file at path: (data, positions); SpecError for anything that
    makes it unreadable (module docstring). An empty file gives (None, {})."""
    p = os.fspath(path)
    return parse_yaml_document(read_document_text(p, what), shown_path(p), what)
