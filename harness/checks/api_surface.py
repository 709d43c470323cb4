"""**api-surface**: every public path of a library, consistent within a release and
unchanged across releases.

Users of tiktoken do not only call ``encode``: they call ``encode_batch``,
``encode_to_numpy``, ``decode_with_offsets``, ``decode_tokens_bytes``... An adapter that
declares :attr:`~harness.interface.Capabilities.api_surface` walks all of them on an input
(:meth:`harness.calls.Calls.api_surface`; the paths are listed in
:mod:`implementations.tiktoken_surface`, :mod:`implementations.hf.surface` and the
JavaScript adapters of :mod:`implementations.javascript`). Three things are judged:

1. **Within one release** (:data:`RULES`): paths that must agree do (``encode_batch([t])``
   is ``[encode(t)]`` under each policy, ``decode_bytes`` is the join of
   ``decode_tokens_bytes``, ``decode(errors="strict")`` succeeds exactly when the bytes are
   UTF-8, the raw byte path ``_encode_bytes`` gives ``encode_ordinary``'s IDs on valid
   UTF-8 and always decodes back to its bytes, ...). A disagreement is a divergence of
   that release: kind ``inconsistent:<path>~<path>:<shape>|<shape>``.
2. **Across releases**: where the reference walks the same library's surface (the
   installed tiktoken beside ``tiktoken@0.9.0`` from ``tokconf env add``), each path both
   releases have is compared: values, or error category *and* native type, since a
   ``KeyError`` that became a ``ValueError`` breaks ``except KeyError:`` in user code.
   Decode paths are compared only where both releases encoded the input to the same IDs
   (otherwise they decode different things, and id-parity has said so). Kind
   ``changed:<path>:<shape>|<shape>``. Across languages (tiktoken's WASM build in Node
   walks tiktoken's path names beside Python tiktoken) the native types cannot match and
   are not compared; categories are.
3. **Helpers against the reference**: JavaScript packages ship the helpers front ends
   count with: gpt-tokenizer's ``countTokens``, ``isWithinTokenLimit`` and generators must
   agree with its ``encode`` (a count that disagrees with ``len(encode(text))`` is a
   divergence), its decoders with UTF-8 over its own token bytes, and its chat template's
   count (``encodeChat``) with the reference's count of the same chat as OpenAI's cookbook
   computes it with Python tiktoken (:func:`_chat_count`). Kind
   ``count:encodeChat[user]:<shape>|<shape>``.

One finding per input: the first difference in path order names the kind, every other
difference's kind is kept in :attr:`~harness.checks.base.Finding.kinds` (judged each on
its own, so a second symptom never hides the first); the detail lists every differing
path.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from harness.calls import Calls, surface_from_data
from harness.checks.base import AGREE, DEFAULT, SKIP, UNSUPPORTED, Result, Subject, expected_text, shape
from harness.outcomes import Outcome, is_ids

__all__ = ["FAILED_WALK", "RULES", "check_api_surface", "outcome_key", "surface_of", "takes_ids", "walk_failure"]

Surface = dict[str, Outcome]

#: the one path of a surface whose walk failed as a whole (:func:`surface_of`)
FAILED_WALK = "api_surface"


def surface_of(calls: Calls, text: str) -> Surface | None:
    """``calls``' API surface on ``text`` (path -> outcome); ``None`` if it has none."""
    if not calls.info.capabilities.api_surface:
        return None
    outcome = calls.api_surface(text)
    if outcome.is_unsupported:
        return None
    if not outcome.is_ok:
        return {FAILED_WALK: outcome}  # the walk itself failed: that is its one path
    return surface_from_data(outcome.value)


def walk_failure(surface: Mapping[str, Outcome] | None) -> Outcome | None:
    """How the walk failed, where ``surface`` (of :func:`surface_of`, or a golden's paths)
    is a walk that failed as a whole; else None.

    >>> walk_failure({FAILED_WALK: Outcome.timeout(60.0)}).kind
    'timeout'
    >>> walk_failure({"encode[default]": Outcome.ok((1,))}) is None, walk_failure(None) is None
    (True, True)
    """
    walk = surface.get(FAILED_WALK) if surface else None
    return walk if walk is not None and not walk.is_ok else None


def outcome_key(outcome: Outcome, *, native: bool = True) -> tuple[Any, ...]:
    """What must match across releases: the value, or kind + category + native type
    (``native=False``: across languages, where exception types cannot be the same)."""
    if outcome.is_ok:
        return ("ok", outcome.value)
    return (outcome.kind, outcome.category, outcome.native_type if native else None)


def _wrap(o: Outcome) -> Outcome:
    return Outcome.ok((o.value,)) if o.is_ok else o


def _join(o: Outcome) -> Outcome:
    return Outcome.ok(o.value[0]) if o.is_ok else o  # (joined bytes, lengths)


def _utf8(errors: str) -> Callable[[Outcome], Outcome]:
    def convert(o: Outcome) -> Outcome:
        if not o.is_ok:
            return o
        try:
            return Outcome.ok(bytes(o.value).decode("utf-8", errors=errors))
        except UnicodeDecodeError as exc:
            return Outcome.raised("invalid-utf8", "builtins.UnicodeDecodeError", str(exc))
    return convert


def _offsets_text(o: Outcome) -> Outcome:
    return Outcome.ok(o.value[0]) if o.is_ok else o


def _same(o: Outcome) -> Outcome:
    return o


def _length(o: Outcome) -> Outcome:
    return Outcome.ok(len(o.value)) if o.is_ok else o


def _over_limit(o: Outcome) -> Outcome:
    """``isWithinTokenLimit(text, n - 1)`` where n tokens: ``false``."""
    return Outcome.ok(False) if o.is_ok else o


#: gpt-tokenizer's policy labels (as tiktoken's walk: default, all, ordinary, one).
_LABELS = ("default", "all", "ordinary", "one")


#: (surface family, path, derived-from path, how the second becomes the first's expectation).
#: A rule applies when both paths are present and neither is unsupported.
RULES: tuple[tuple[str, str, str, Callable[[Outcome], Outcome]], ...] = (
    *(("tiktoken", f"encode_batch[{p}]", f"encode[{p}]", _wrap) for p in ("default", "all", "ordinary", "one")),
    *(("tiktoken", f"encode_to_numpy[{p}]", f"encode[{p}]", _same) for p in ("default", "all", "ordinary", "one")),
    ("tiktoken", "encode_ordinary_batch", "encode_ordinary", _wrap),
    ("tiktoken", "decode_bytes", "decode_tokens_bytes", _join),
    ("tiktoken", "decode[replace]", "decode_bytes", _utf8("replace")),
    ("tiktoken", "decode[strict]", "decode_bytes", _utf8("strict")),
    ("tiktoken", "decode_with_offsets", "decode[strict]", _same),
    ("tiktoken", "decode_batch", "decode[replace]", _wrap),
    ("tiktoken", "decode_bytes_batch", "decode_bytes", _wrap),
    *(("tokenizers", f"encode_batch[{p}]", f"encode[{p}]", _wrap) for p in ("special", "plain")),
    ("tokenizers", "decode_batch[keep]", "decode[keep]", _wrap),
    # tiktoken's WASM build walks tiktoken's names (implementations/javascript/tiktoken_wasm.mjs)
    ("tiktoken", "TextDecoder(decode_bytes)", "decode_bytes", _utf8("replace")),
    # gpt-tokenizer (implementations/javascript/gpt_tokenizer.mjs): every count a user can
    # ask for is the length of what encode gives; every decoder is UTF-8 over its bytes
    *(("gpt-tokenizer", f"encodeGenerator[{p}]", f"encode[{p}]", _same) for p in _LABELS),
    *(("gpt-tokenizer", f"countTokens[{p}]", f"encode[{p}]", _length) for p in _LABELS),
    *(("gpt-tokenizer", f"isWithinTokenLimit[{p}](n)", f"encode[{p}]", _length) for p in _LABELS),
    *(("gpt-tokenizer", f"isWithinTokenLimit[{p}](n-1)", f"encode[{p}]", _over_limit) for p in _LABELS),
    ("gpt-tokenizer", "countTokens[chat]", "encodeChat[user]", _length),
    ("gpt-tokenizer", "isWithinTokenLimit[chat](n)", "encodeChat[user]", _length),
    *(("gpt-tokenizer", p, "decode_bytes", _utf8("replace"))
      for p in ("decode", "decode[again]", "decode[after-partial]", "decodeGenerator", "decodeAsyncGenerator",
                "decodeAsync")),
    ("transformers", "__call__[plain]", "encode[plain]", _same),
    ("transformers", "__call__batch[plain]", "encode[plain]", _wrap),
    ("transformers", "batch_decode[default]", "decode[default]", _wrap),
)

#: Paths whose input is the IDs an encode path produced (compared across releases only
#: when those IDs agree).
_DECODE_SOURCES = {"tiktoken": ("encode[all]", "encode_ordinary"), "tokenizers": ("encode[plain]",),
                   "transformers": ("encode[plain]",)}


def _agrees(got: Outcome, want: Outcome) -> bool:
    if got.is_ok and want.is_ok:
        if isinstance(got.value, bool) or isinstance(want.value, bool):
            return got.value is want.value  # a count of 0 is not `false`
        return got.value == want.value
    return got.kind == want.kind and got.category == want.category


def _chat_count(surface: Surface, subject: Subject) -> list[tuple[str, str, Outcome, Outcome]]:
    """A chat template's token count against the reference's count of the same chat,
    as OpenAI's cookbook counts it with Python tiktoken (``num_tokens_from_messages``:
    3 tokens per message, the role's and content's tokens, 3 to prime the reply)."""
    chat = surface.get("encodeChat[user]")
    if chat is None or chat.is_unsupported or subject.is_reference:
        return []
    reference = subject.reference
    role, content = reference.encode("user", DEFAULT), reference.encode(subject.text, DEFAULT)
    if not role.is_ok:
        return []
    own = surface.get("encode[default]")
    if own is not None and own.is_ok and content.is_ok and own.value != content.value:
        return []  # the content itself encodes differently: id-parity's finding, not the template's
    want = Outcome.ok(3 + len(role.value) + len(content.value) + 3) if content.is_ok else content
    got = _length(chat)
    return [] if _agrees(got, want) else [("encodeChat[user]", f"num_tokens_from_messages({reference.name})", got, want)]


def _inconsistencies(family: str, surface: Surface, text: str, calls: Calls) -> list[tuple[str, str, Outcome, Outcome]]:
    found = []
    for fam, path, source, convert in RULES:
        if fam != family or path not in surface or source not in surface:
            continue
        got, base = surface[path], surface[source]
        if got.is_unsupported or base.is_unsupported:
            continue
        if path == "decode_with_offsets":
            got = _offsets_text(got)
            ids = surface.get("encode[all]")
            offsets = surface[path].value[1] if surface[path].is_ok else None
            if offsets is not None and ids is not None and ids.is_ok and len(offsets) != len(ids.value):
                found.append((path, "encode[all]", Outcome.ok(len(offsets)), Outcome.ok(len(ids.value))))
                continue
        want = convert(base)
        if not _agrees(got, want):
            found.append((path, source, got, want))
    if family == "tiktoken":
        found += _raw_bytes(surface, text, calls) + _pieces(surface)
    return found


def _pieces(surface: Surface) -> list[tuple[str, str, Outcome, Outcome]]:
    """Single-token paths against the IDs they came from: ``decode_tokens_bytes`` is each
    ID's ``decode_single_token_bytes``, and ``encode_single_token`` takes each back."""
    source = surface.get("encode[all]") if surface.get("encode[all]", Outcome.ok(None)).is_ok else surface.get("encode_ordinary")
    singles = surface.get("decode_single_token_bytes[distinct]")
    if source is None or not source.is_ok or singles is None or singles.is_unsupported:
        return []
    found = []
    distinct = tuple(dict.fromkeys(source.value))
    tokens = surface.get("decode_tokens_bytes")
    if singles.is_ok and tokens is not None and not tokens.is_unsupported:
        table = dict(zip(distinct, singles.value))
        want = Outcome.ok((b"".join(table[i] for i in source.value), tuple(len(table[i]) for i in source.value)))
        if not _agrees(tokens, want):
            found.append(("decode_tokens_bytes", "decode_single_token_bytes[distinct]", tokens, want))
    whole = surface.get("decode_bytes")
    if singles.is_ok and tokens is None and whole is not None and not whole.is_unsupported:
        # a build without decode_tokens_bytes (tiktoken's WASM build): decode_bytes itself
        table = dict(zip(distinct, singles.value))
        want = Outcome.ok(b"".join(table[i] for i in source.value))
        if not _agrees(whole, want):
            found.append(("decode_bytes", "decode_single_token_bytes[distinct]", whole, want))
    back = surface.get("encode_single_token[pieces]")
    if back is not None and not back.is_unsupported and not _agrees(back, Outcome.ok(distinct)):
        found.append(("encode_single_token[pieces]", "encode[all]", back, Outcome.ok(distinct)))
    return found


def _raw_bytes(surface: Surface, text: str, calls: Calls) -> list[tuple[str, str, Outcome, Outcome]]:
    """``_encode_bytes``: encode_ordinary's IDs on valid UTF-8; always back to its bytes."""
    raw, ordinary = surface.get("_encode_bytes"), surface.get("encode_ordinary")
    if raw is None or raw.is_unsupported:
        return []
    found = []
    if expected_text(text) == text and ordinary is not None and ordinary.is_ok and not _agrees(raw, ordinary):
        found.append(("_encode_bytes", "encode_ordinary", raw, ordinary))
    if raw.is_ok:
        back = calls.decode_bytes(raw.value)
        data = text.encode("utf-8", "surrogatepass")
        if not (back.is_ok and back.value == data):
            found.append(("_encode_bytes→decode_bytes", "input bytes", back, Outcome.ok(data)))
    return found


def _changes(family: str, mine: Surface, theirs: Surface, *, native: bool = True) -> list[tuple[str, Outcome | None, Outcome | None]]:
    """Paths whose outcome differs between two releases, over the *union* of their paths.

    Within one language (two releases of one library) a path one release lacks, or
    supports where the other does not, is a change (``None``: the path is absent), as
    ``tokconf gate`` reports it; across languages (tiktoken's WASM build beside Python
    tiktoken) the two builds walk different path lists, so only shared paths count.
    """
    sources = _DECODE_SOURCES.get(family, ())
    same_ids = next((mine[s].value == theirs[s].value for s in sources
                     if s in mine and s in theirs and mine[s].is_ok and theirs[s].is_ok), False)
    changed: list[tuple[str, Outcome | None, Outcome | None]] = []
    for path in [*mine, *(p for p in theirs if p not in mine)]:
        outcome, other = mine.get(path), theirs.get(path)
        if outcome is None or other is None or outcome.is_unsupported != other.is_unsupported:
            if native:
                changed.append((path, outcome, other))
            continue
        if outcome.is_unsupported:
            continue
        if takes_ids(path) and not same_ids:
            continue
        if outcome_key(outcome, native=native) != outcome_key(other, native=native):
            changed.append((path, outcome, other))
    return changed


def _presence(path: str, got: Outcome | None, want: Outcome | None) -> str | None:
    """``removed:``/``added:``/``no-longer-supported:``/``now-supported:`` + path, or None
    when both releases have the path and support it (the reference is the other release)."""
    if want is not None and got is None:
        return f"removed:{path}"
    if got is not None and want is None:
        return f"added:{path}"
    if got is not None and want is not None and got.is_unsupported != want.is_unsupported:
        return f"{'no-longer' if got.is_unsupported else 'now'}-supported:{path}"
    return None


def takes_ids(path: str) -> bool:
    """Whether a path's input is the IDs an encode path gave (not the text).

    >>> takes_ids("decode_with_offsets"), takes_ids("encode_single_token[pieces]"), takes_ids("encode[all]")
    (True, True, False)
    """
    return (path.startswith(("decode", "batch_decode", "convert_ids", "TextDecoder("))
            or path == "encode_single_token[pieces]")


def _label(outcome: Outcome) -> str:
    if outcome.kind == "raised":
        return f"{shape(outcome)}({outcome.native_type})"
    return shape(outcome)


def _own_inconsistencies(subject: Subject, family: str, mine: Surface) -> list[tuple[str, str, Outcome, Outcome]]:
    """The adapter's paths that disagree with each other on this text, less those a drop-in
    shares with its reference: a package that re-exports tiktoken has tiktoken's own
    encode_to_numpy refusal of a lone surrogate (documented for tiktoken itself), and
    behaving as the reference does is what a drop-in promises. Releases of the reference's
    own library keep every one: when a release gained or lost one is what gating shows."""
    found = list(_inconsistencies(family, mine, subject.text, subject.adapter))
    reference = subject.reference
    if (not found or subject.is_reference or reference.info.capabilities.api_surface != family
            or subject.adapter.info.library == reference.info.library):
        return found
    theirs = surface_of(reference, subject.text)
    if not theirs or walk_failure(theirs) is not None:
        return found
    shared = {(path, source, shape(got), shape(want))
              for path, source, got, want in _inconsistencies(family, theirs, subject.text, reference)}
    return [f for f in found if (f[0], f[1], shape(f[2]), shape(f[3])) not in shared]


def check_api_surface(subject: Subject) -> Result:
    mine = surface_of(subject.adapter, subject.text)
    if mine is None:
        return UNSUPPORTED
    walk = walk_failure(mine)
    if walk is not None:
        # the walk itself crashed, timed out or raised: nothing was compared, and that
        # is the adapter's finding, never an agreement
        return subject.finding("api-surface", f"walk:{shape(walk)}",
                               f"walking {subject.name}'s API surface failed: {walk.describe()[:300]}",
                               outcomes=((subject.name, walk),))
    family = subject.adapter.info.capabilities.api_surface or ""
    problems: list[str] = []
    outcomes: list[tuple[str, Outcome]] = []
    kinds: list[str] = []
    for path, source, got, want in _own_inconsistencies(subject, family, mine):
        kinds.append(f"inconsistent:{path}~{source}:{shape(got)}|{shape(want)}")
        problems.append(f"{path} gives {got.describe()[:160]}, but {source} implies {want.describe()[:160]}")
        outcomes += [(f"{subject.name} {path}", got), (f"{subject.name} {source} implies", want)]
    for path, source, got, want in _chat_count(mine, subject):
        kinds.append(f"count:{path}:{shape(got)}|{shape(want)}")
        problems.append(f"{path} counts {got.describe()[:160]} tokens, but {source} counts {want.describe()[:160]}")
        outcomes += [(f"{subject.name} {path} count", got), (f"{source}", want)]
    reference = subject.reference
    if not subject.is_reference and reference.info.capabilities.api_surface == family:
        theirs = surface_of(reference, subject.text) or {}
        same_language = subject.adapter.info.language == reference.info.language
        # a path that appears or goes is a change between two releases of one library; a
        # drop-in that does not define a path is unsupported there, not a finding (issue 20)
        releases = subject.adapter.info.library == reference.info.library
        if walk_failure(theirs) is not None:
            theirs = {}  # the reference's walk failed: its own row's finding, nothing to compare with
        for path, got, want in _changes(family, mine, theirs, native=same_language):
            presence = _presence(path, got, want)
            if presence is not None and not releases:
                continue
            if presence is not None:
                kinds.append(presence)
                have = got if got is not None else want
                problems.append(f"{path}: {presence.split(':', 1)[0]} ({subject.name} "
                                f"{'lacks it' if got is None else got.describe()[:80]}, {reference.name} "
                                f"{'lacks it' if want is None else want.describe()[:80]})")
                if have is not None:
                    outcomes += [(f"{subject.name if got is not None else reference.name} {path}", have)]
                continue
            if got is None or want is None:
                continue  # _presence named every absent path; this only narrows the types
            kinds.append(f"changed:{path}:{_label(got)}|{_label(want)}")
            problems.append(f"{path}: {got.describe()[:160]} where {reference.name} gives {want.describe()[:160]}")
            outcomes += [(f"{subject.name} {path}", got), (f"{reference.name} {path}", want)]
    if not problems:
        return AGREE if mine else SKIP
    ids = tuple((label, o.value) for label, o in outcomes[:2]
                if o.is_ok and is_ids(o.value))
    kinds = list(dict.fromkeys(kinds))
    return subject.finding("api-surface", kinds[0], "; ".join(problems), outcomes=tuple(outcomes[:8]),
                           ids=ids if len(ids) == 2 else (), kinds=tuple(kinds) if len(kinds) > 1 else ())
