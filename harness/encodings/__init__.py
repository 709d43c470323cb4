"""Encodings as data: one small, schema-checked YAML per ID space (issue 23).

An encoding names its rank file (where it comes from and its SHA-256), its split pattern,
its special tokens with their IDs, and the adapter that is its reference. The built-in
ones are in ``harness/encodings/data/``; a user adds their own with ``--encoding-file``.
See ``docs/encodings.md``.
"""

from harness.encodings.catalog import (
    add_encoding_file,
    encoding_spec,
    encoding_specs,
    is_on_request,
    reference_of,
)
from harness.encodings.spec import EncodingError, EncodingSpec, SpecialRange, VocabularySource

__all__ = [
    "EncodingError",
    "EncodingSpec",
    "SpecialRange",
    "VocabularySource",
    "add_encoding_file",
    "encoding_spec",
    "encoding_specs",
    "is_on_request",
    "reference_of",
]
