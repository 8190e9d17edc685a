"""Reading a user's file as text: the one "read bytes, check, decode UTF-8, or say why not" rule.

Every reader of input files (JSONL imports, llama-bench output, request bodies, documents to lint) goes
through here, so each refuses the same things with the same one-line message: a file that cannot be read,
one larger than the limit (which also stops an endless `/dev/zero`), NUL bytes, and bytes that are not
UTF-8 (with the byte and line). A UTF-8 byte-order mark is dropped.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

from factreg.errors import BadInput

MAX_INPUT_BYTES = 256 * 1024 * 1024


CHUNK = 1024 * 1024


def read_bytes(path: Path | str, what: str = "", max_bytes: int = MAX_INPUT_BYTES, refuse_nul: bool = False) -> bytes:
    """At most `max_bytes` of `path` (`-` is standard input), or BadInput saying why not.

    Read in chunks; with `refuse_nul` the first NUL byte stops the read (`/dev/zero` is refused at once)."""
    label = f"{what}: " if what else ""
    too_large = f"{label}{path} is too large (the limit is {max_bytes // (1024 * 1024)} MB)"
    chunks: list[bytes] = []
    size = 0
    try:
        with contextlib.ExitStack() as stack:
            if str(path) == "-":
                fh = sys.stdin.buffer
            else:
                fh = stack.enter_context(open(path, "rb"))
                if os.fstat(fh.fileno()).st_size > max_bytes:  # a regular file: refused before reading
                    raise BadInput(too_large)
            while size <= max_bytes:  # a device or pipe: read no more than the limit
                chunk = fh.read(min(CHUNK, max_bytes + 1 - size))
                if not chunk:
                    break
                if refuse_nul and b"\x00" in chunk:
                    raise BadInput(f"{label}{path}: binary file (contains NUL bytes)")
                chunks.append(chunk)
                size += len(chunk)
    except OSError as exc:
        raise BadInput(f"{label}cannot read {path}: {exc.strerror or exc}") from None
    if size > max_bytes:
        raise BadInput(too_large)
    return b"".join(chunks)


def decode(data: bytes, name: str, allow_nul: bool = False) -> str:
    """UTF-8 text of `data` (a leading byte-order mark dropped), or BadInput naming the first bad byte."""
    if not allow_nul and b"\x00" in data:
        raise BadInput(f"{name}: binary file (contains NUL bytes)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise BadInput(f"{name}: not UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}, line {line})") from None


def read_text(path: Path | str, what: str = "", max_bytes: int = MAX_INPUT_BYTES) -> str:
    """`read_bytes` then `decode`: a user's file as text, or one clear BadInput."""
    name = f"{what}: {path}" if what else str(path)
    return decode(read_bytes(path, what, max_bytes, refuse_nul=True), name)
