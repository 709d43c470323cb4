"""The split pattern: Oniguruma (inside ``tokenizers``) must split exactly as tiktoken does.

Measured with tokenizers 0.23: Oniguruma reads ``X++``, ``X?+`` and ``X*+`` possessively,
as tiktoken's fancy-regex does, but reads ``\\p{N}{1,3}+`` as ``(?:\\p{N}{1,3})+``, so
tiktoken's own cl100k pattern, given unchanged, keeps a whole digit run in one chunk.
tokconf translates ``X{n,m}+`` to the atomic group ``(?>X{n,m})`` and ``$`` to ``\\z``.
"""

from __future__ import annotations

import itertools

import pytest
import regex
from tokenizers import Regex, pre_tokenizers

from harness.registry import default_registry
from implementations.hf.convert import CL100K_PATTERN, O200K_PATTERN, oniguruma_pattern

DIGIT_ALPHABETS = {
    "ascii": "1234567890",
    "arabic-indic": "٠١٢٣٤٥٦٧٨٩",
    "fullwidth": "０１２３４５６７８９",
    "mixed": "1٢３4½²Ⅻ৭7",  # Nd, No and Nl are all \p{N}
}
CONTEXTS = [
    "{}",
    " {}",
    "a{}b",
    "x {}\n",
    "{} {}",
    "\n{}\r\n",
    "abc{}def",
    "'{}",
    "{}'s",
    "\t{}  ",
    "中{}文",
    "{}😊",
    "{}.{}",
    "${}",
    "-{}",
    "  {}\n\n",
    "{}\u3000{}",
    "A{}'LL",
]


def onig_split(pattern: str, text: str) -> list[str]:
    splitter = pre_tokenizers.Split(Regex(pattern), behavior="isolated", invert=False)
    return [chunk for chunk, _ in splitter.pre_tokenize_str(text)]


def onig_matches(pattern: str, text: str) -> list[str]:
    """What Oniguruma matches (``removed`` + ``invert`` keeps the matches only)."""
    splitter = pre_tokenizers.Split(Regex(pattern), behavior="removed", invert=True)
    return [chunk for chunk, _ in splitter.pre_tokenize_str(text)]


def run_of(alphabet: str, n: int) -> str:
    return "".join(itertools.islice(itertools.cycle(alphabet), n))


@pytest.fixture(scope="module")
def pair(request):
    registry = default_registry()
    return registry.get(f"tiktoken:{request.param}"), registry.get(f"hf:{request.param}")


# -- the translation ------------------------------------------------------------------------


def test_translated_cl100k_pattern() -> None:
    assert oniguruma_pattern(CL100K_PATTERN) == (
        r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|(?>\p{N}{1,3})|"
        r" ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++\z|\s*[\r\n]|\s+(?!\S)|\s"
    )


def test_o200k_pattern_needs_no_translation() -> None:
    # tiktoken 0.14's o200k pattern has no possessive quantifier and no `$`
    assert oniguruma_pattern(O200K_PATTERN) == O200K_PATTERN


@pytest.mark.parametrize(
    ("source", "translated"),
    [
        (r"a{2}+", r"(?>a{2})"),
        (r"[a-z]{1,3}+x", r"(?>[a-z]{1,3})x"),
        (r"(?:ab){2,}+", r"(?>(?:ab){2,})"),
        (r"\p{L}{1,3}?", r"\p{L}{1,3}?"),  # lazy stays lazy
        (r"[$]$", r"[$]\z"),  # `$` inside a class is a literal
        (r"\$", r"\$"),
        (r"[^\]{]{2}+", r"(?>[^\]{]{2})"),
        (r"\p{N}{", r"\p{N}{"),  # not an interval: a literal brace
        (r"(?<=a)b++(?!c)", r"(?<=a)b++(?!c)"),
        (r"(?i)k{3}+", r"(?i)(?>k{3})"),  # an inline flag group has no body
        (r"[[a]]{2}+", r"(?>[[a]]{2})"),  # a nested class is one atom
    ],
)
def test_translation_rules(source: str, translated: str) -> None:
    assert oniguruma_pattern(source) == translated


def test_doctests() -> None:
    import doctest

    from implementations.hf import convert as hf_convert

    from implementations.hf import tokenizer_json as hf_json
    for module in (hf_convert, hf_json):
        assert doctest.testmod(module).failed == 0


# -- what Oniguruma does with tiktoken's constructs, measured --------------------------------


@pytest.mark.parametrize("n", range(1, 21))
def test_unchanged_tiktoken_pattern_keeps_whole_digit_runs(n: int) -> None:
    run = run_of("1234567890", n)
    tiktoken_chunks = [run[i : i + 3] for i in range(0, n, 3)]
    assert regex.findall(CL100K_PATTERN, run) == tiktoken_chunks
    assert onig_split(CL100K_PATTERN, run) == [run]  # differs from tiktoken for n >= 4
    assert onig_split(oniguruma_pattern(CL100K_PATTERN), run) == tiktoken_chunks


def test_unchanged_pattern_changes_ids() -> None:
    from tokenizers import Tokenizer

    registry = default_registry()
    reference, hf = registry.get("tiktoken:cl100k_base"), registry.get("hf:cl100k_base")
    raw = Tokenizer.from_str(hf.native.to_str())
    raw.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(CL100K_PATTERN), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    text = "Year 2024 and 1000000 dollars"
    assert reference.encode(text) == hf.encode(text) == [9679, 220, 2366, 19, 323, 220, 1041, 931, 15, 11441]
    assert raw.encode(text).ids == [9679, 220, 508, 1187, 323, 220, 1041, 410, 410, 11441]
    assert raw.encode("1234").ids == [717, 1958] != reference.encode("1234") == [4513, 19]


@pytest.mark.parametrize(
    ("pattern", "text"),
    [
        (r"a++a", "aaa"),
        (r"a+a", "aaa"),
        (r"xb?+b", "xb"),
        (r"xb?b", "xb"),
        (r"c*+c", "cc"),
        (r"c*c", "cc"),
        (r"\p{N}++\p{N}", "123"),
    ],
)
def test_oniguruma_reads_other_possessives_as_tiktoken_does(pattern: str, text: str) -> None:
    # `regex` reads possessive quantifiers as fancy-regex (tiktoken's engine) does
    assert onig_matches(pattern, text) == regex.findall(pattern, text)


def test_oniguruma_dollar_is_end_of_line() -> None:
    # fancy-regex's `$` is the end of the text; Oniguruma's is the end of a line
    assert onig_matches(r"\s+$", "  \nabc") == ["  "]
    assert onig_matches(r"\s+\z", "  \nabc") == []
    # inside tiktoken's pattern the possessive run swallows the newline, so `$` cannot
    # show the difference there; `\z` makes that independent of the argument
    assert onig_matches(r"\s++$", "  \nabc") == []


# -- the proof: digit runs 1..20 in context, chunks and IDs equal tiktoken's ------------------


@pytest.mark.parametrize("pair", ["cl100k_base", "o200k_base"], indirect=True)
@pytest.mark.parametrize("alphabet", sorted(DIGIT_ALPHABETS))
def test_digit_runs_split_and_encode_as_tiktoken(pair, alphabet: str) -> None:
    reference, hf = pair
    pattern = reference.native._pat_str
    texts = [
        context.format(*([run_of(DIGIT_ALPHABETS[alphabet], n)] * context.count("{}")))
        for n in range(1, 21)
        for context in CONTEXTS
    ]
    for text in texts:
        assert hf.pretokenize(text) == regex.findall(pattern, text), ascii(text)
    assert hf.encode_batch(texts) == reference.encode_batch(texts)


@pytest.mark.parametrize("pair", ["cl100k_base", "o200k_base"], indirect=True)
@pytest.mark.parametrize("n", range(1, 21))
def test_pure_digit_run_is_cut_in_threes_from_the_left(pair, n: int) -> None:
    reference, hf = pair
    run = run_of("9876543210", n)
    assert hf.pretokenize(run) == [run[i : i + 3] for i in range(0, n, 3)]
    assert hf.encode(run) == reference.encode(run)
    assert [hf.token_bytes(i) for i in hf.encode(run)] == [run[i : i + 3].encode() for i in range(0, n, 3)]
