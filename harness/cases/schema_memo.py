"""Case files already found valid: the schema check is skipped for text it passed before.

Checking a case file against ``cases.schema.json`` is over a third of what loading the
shipped cases costs (1.23 s of CPU with the check, 0.78 s without, on a slow core), and
every ``tokconf`` command that runs cases paid it again for the same twenty unchanged
files. Whether a text passes is a pure
function of the text, the schema and the ``jsonschema`` release, so a pass is kept under
``TOKCONF_CACHE_DIR`` as an empty file named by the hash of all three. Only passes are
kept: a file with problems is checked every time, so its messages are always made fresh.
A cache that cannot be written costs time, not correctness. Each distinct valid text
leaves one empty file; nothing removes old ones (the folder ``valid-cases`` may be
deleted at any time).
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from importlib import metadata
from pathlib import Path

__all__ = ["known_valid", "remember_valid"]

#: raise when what a kept pass means changes (another check joins the schema's)
FORMAT = 1


@lru_cache(maxsize=4)
def _prefix(schema_path: Path) -> bytes:
    try:
        release = metadata.version("jsonschema")
    except metadata.PackageNotFoundError:
        release = "unknown"
    return f"{FORMAT}\0{release}\0".encode("ascii") + hashlib.sha256(schema_path.read_bytes()).digest()


def _marker(text: str, schema_path: Path, folder: Path | None) -> Path | None:
    digest = hashlib.sha256(_prefix(schema_path) + text.encode("utf-8", "surrogatepass")).hexdigest()
    if folder is None:
        from harness.vocab import cache_dir

        try:
            folder = cache_dir() / "valid-cases"
        except OSError:
            return None
    return folder / digest


def known_valid(text: str, schema_path: Path, *, folder: Path | None = None) -> bool:
    """Whether ``text`` passed ``schema_path`` before (with this ``jsonschema`` release);
    ``folder``: where passes are kept (``valid-cases`` under ``TOKCONF_CACHE_DIR``).

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> schema = folder / "s.json"; _ = schema.write_text("{}")
    >>> known_valid("cases: []", schema, folder=folder)
    False
    >>> remember_valid("cases: []", schema, folder=folder)
    >>> known_valid("cases: []", schema, folder=folder), known_valid("cases: [] ", schema, folder=folder)
    (True, False)
    """
    marker = _marker(text, schema_path, folder)
    return marker is not None and marker.is_file()


def remember_valid(text: str, schema_path: Path, *, folder: Path | None = None) -> None:
    """Keep that ``text`` passed ``schema_path``."""
    marker = _marker(text, schema_path, folder)
    if marker is None:
        return
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()
    except OSError:
        pass
