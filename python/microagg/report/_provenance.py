"""Where a release came from: the identity of its files (name, size, SHA-256), so that a
review board signs off on exactly the bytes it was shown."""

from __future__ import annotations

import hashlib
import os
from typing import Any

__all__ = ["file_provenance"]

_CHUNK = 1 << 20


def file_provenance(path: Any) -> dict[str, Any]:
    """``{"name", "size", "sha256"}`` of the file at ``path``: its base name, its size in
    bytes and the hex SHA-256 of its content, read in 1 MiB chunks (constant memory for any
    file size). ``ValueError`` naming the path when it is not a readable regular file."""
    p = os.fspath(path)
    if not os.path.isfile(p):
        raise ValueError(f"file_provenance: {p!r} is not a regular file")
    digest = hashlib.sha256()
    size = 0
    with open(p, "rb") as f:
        for chunk in iter(lambda: f.read(_CHUNK), b""):
            digest.update(chunk)
            size += len(chunk)
    return {"name": os.path.basename(p), "size": size, "sha256": digest.hexdigest()}
