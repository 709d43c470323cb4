"""Regenerate the category corpora ``cases/corpus-*.yaml``.

    python cases/tools/generate_corpus.py            # rewrite the files
    python cases/tools/generate_corpus.py --check    # exit 1 if a file is out of date

Corpus cases carry no hand-written expectations: the reference adapter of each encoding
is the oracle. Where the installed tiktoken encodes a string without touching special
tokens or lone surrogates, its cl100k_base IDs are pinned (tag ``pinned-tiktoken-0.14``)
so a tiktoken upgrade that changes them is noticed. Anything not printable is written
with backslash escapes (``text_escaped``), never raw, so the YAML is plain to read.
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
from pathlib import Path
from typing import Iterator, NamedTuple

CASES_DIR = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(CASES_DIR.parent))  # run from a checkout without installing

from harness.escapes import escape_text  # noqa: E402

PIN_TAG = "pinned-tiktoken-0.14"
PIN_ENCODING = "cl100k_base"
ORDINARY = {"disallowed_special": "none"}
ALLOW_ALL = {"allowed_special": "all"}


class Entry(NamedTuple):
    id: str
    text: str
    tags: tuple[str, ...] = ()
    policy: dict[str, str] | None = None


# ---------------------------------------------------------------- categories

WHITESPACE_KINDS = [
    ("space", " "), ("tab", "\t"), ("cr", "\r"), ("lf", "\n"), ("crlf", "\r\n"),
    ("nbsp", "\xa0"), ("line-sep", "\u2028"), ("para-sep", "\u2029"), ("ideographic", "\u3000"),
    ("nel", "\x85"), ("file-sep", "\x1c"), ("unit-sep", "\x1f"), ("vt", "\x0b"), ("ff", "\x0c"),
    ("thin", "\u2009"), ("narrow-nbsp", "\u202f"),
]
WHITESPACE_FORMS = [
    ("x1", "{k}"), ("x2", "{k}{k}"), ("x3", "{k}{k}{k}"), ("x8", "{k}" * 8),
    ("leading", "{k}hello"), ("trailing", "hello{k}"), ("between", "hello{k}world"),
    ("spaced", "hello {k} world"), ("wrapped", "{k}{k}{k}hello{k}{k}{k}"),
]
WHITESPACE_MIXES = [
    ("space-lf", " \n"), ("lf-space", "\n "), ("lf-lf", "\n\n"), ("space-lf-lf-space", " \n\n "),
    ("tab-lf", "\t\n"), ("crlf-crlf", "\r\n\r\n"), ("lf-cr", "\n\r"), ("word-crlf-word", "a\r\nb"),
    ("word-space-crlf-space-word", "a \r\n b"), ("spaces-tab-spaces", "  \t  "),
    ("python-indent", "def f():\n    return 1\n"), ("blank-lines", "x\n\n\ny"),
    ("trailing-space-lf", "hello \n"), ("lf-leading-space", "hello\n world"),
    ("paragraphs", "end.\n\n\nNext"), ("nbsp-run-between", "a\xa0\xa0b"),
    ("ideographic-cjk", "\u3000\u3000中文"), ("space-line-sep-space", " \u2028 "),
    ("two-spaces-word", "  hello"), ("word-two-spaces", "hello  "),
    ("space-nbsp-space", " \xa0 "), ("tab-space-mix", "\t \t \t"),
]


def whitespace() -> Iterator[Entry]:
    for kind, ch in WHITESPACE_KINDS:
        for form, template in WHITESPACE_FORMS:
            yield Entry(f"ws-{kind}-{form}", template.format(k=ch), ("whitespace", kind))
    for label, text in WHITESPACE_MIXES:
        yield Entry(f"ws-mix-{label}", text, ("whitespace", "mixed"))


DIGIT_EXTRAS = [
    ("zeros-1", "0"), ("zeros-4", "0000"), ("zeros-7", "0000000"), ("pi", "3.14159"),
    ("thousands", "1,000,000"), ("date", "2024-11-30"), ("phone", "+1 (555) 012-3456"),
    ("version", "v1.2.3"), ("arabic-indic", "٠١٢٣٤٥٦٧٨٩"), ("devanagari", "१२३४"),
    ("fullwidth", "１２３４"), ("superscript", "x²³¹"), ("fractions", "½⅓¾"),
    ("roman-numeral", "Ⅻ Ⅳ"), ("math-bold", "𝟏𝟐𝟑"), ("digits-letters", "123abc"),
    ("letters-digits", "abc123"), ("hex", "0x1F2E"), ("exponent", "1e10"),
    ("percent", "99%"), ("money", "$1234.56"), ("negative", "-42"), ("space-digit-runs", "1 22 333 4444"),
]


def digits() -> Iterator[Entry]:
    source = "12345678901234567890"
    for n in range(1, 21):
        run = source[:n]
        yield Entry(f"digits-run{n:02d}", run, ("digits", f"run{n}"))
        yield Entry(f"digits-space-run{n:02d}", " " + run, ("digits", f"run{n}", "leading-space"))
        yield Entry(f"digits-word-run{n:02d}", f"x{run}y", ("digits", f"run{n}", "in-word"))
    for label, text in DIGIT_EXTRAS:
        yield Entry(f"digits-{label}", text, ("digits",))


def contractions() -> Iterator[Entry]:
    forms: list[tuple[str, str, str]] = []  # (label, suffix, word before it)
    for suffix in ("s", "t", "m", "d"):
        forms += [(suffix, suffix, "it"), (suffix.upper(), suffix.upper(), "IT")]
    for suffix in ("re", "ve", "ll"):
        forms += [(suffix, suffix, "we"), (suffix.upper(), suffix.upper(), "WE"),
                  (suffix.title(), suffix.title(), "We"), (suffix[0] + suffix[1].upper(), suffix[0] + suffix[1].upper(), "wE")]
    for apostrophe, name in (("'", "ascii"), ("\u2019", "curly")):
        for label, suffix, word in forms:
            case = "upper" if label.isupper() else "lower" if label.islower() else "mixed"
            yield Entry(f"contr-{name}-{label}-word", f"{word}{apostrophe}{suffix}", ("contractions", name, case))
            yield Entry(f"contr-{name}-{label}-alone", f"{apostrophe}{suffix}", ("contractions", name, case, "alone"))
    long_s = [("long-s-word", "it'ſ"), ("long-s-upper-word", "IT'ſ"), ("long-s-alone", "'ſ"),
              ("long-s-curly", "it\u2019ſ"), ("long-s-sentence", "he'ſ going")]
    for label, text in long_s:
        yield Entry(f"contr-{label}", text, ("contractions", "long-s"))
    extras = [("dont", "don't"), ("DONT", "DON'T"), ("yall", "y'all"), ("rock-n-roll", "rock 'n' roll"),
              ("double-apos-s", "''s"), ("s-apos-s", "'s's"), ("triple-apos", "'''"), ("lamour", "l'amour"),
              ("oneil", "O'Neil"), ("trailing-apos", "it's'"), ("space-apos-s", " 's"), ("kelvin", "\u212a's"),
              ("sentence", "We'll see; they've said it's fine, I'd say you're right."),
              ("shouting", "WE'LL SEE; THEY'VE SAID IT'S FINE")]
    for label, text in extras:
        yield Entry(f"contr-{label}", text, ("contractions",))


SCRIPTS = [
    ("cjk", "zh", "中文"), ("cjk", "zh-sentence", "你好，世界！今天天气很好。"), ("cjk", "qingshan", "青山"),
    ("cjk", "yuanhai", "远海"), ("cjk", "ja", "日本語のテキストです"), ("cjk", "ja-katakana", "カタカナ"),
    ("cjk", "ext-b", "𠀀𠀁𠀂"), ("cjk", "mixed-latin", "Hello世界"), ("cjk", "fullwidth-punct", "（注：）"),
    ("hangul", "ko", "한국어"), ("hangul", "ko-sentence", "안녕하세요, 세계!"),
    ("hangul", "jamo-decomposed", "\u1112\u1161\u11ab"), ("hangul", "ko-digits", "2024년 11월"),
    ("arabic", "ar", "مرحبا بالعالم"), ("arabic", "ar-tashkeel", "مَرْحَبًا"), ("arabic", "ar-rlm", "\u200fمرحبا"),
    ("arabic", "ar-mixed", "abc مرحبا 123"), ("arabic", "persian", "سلام دنیا"),
    ("hebrew", "he", "שלום עולם"), ("devanagari", "hi", "नमस्ते"), ("devanagari", "hi-sentence", "हिन्दी भाषा"),
    ("devanagari", "virama", "क्षत्रिय"), ("thai", "th", "สวัสดีครับ"), ("thai", "th-sentence", "ภาษาไทยไม่มีช่องว่าง"),
    ("greek", "el", "Καλημέρα κόσμε"), ("cyrillic", "ru", "Привет, мир"), ("cyrillic", "uk", "Ґанок їжак"),
    ("armenian", "hy", "Բարեւ"), ("georgian", "ka", "გამარჯობა"), ("tamil", "ta", "வணக்கம்"),
    ("bengali", "bn", "নমস্কার"), ("ethiopic", "am", "ሰላም"), ("khmer", "km", "សួស្តី"),
    ("tibetan", "bo", "བཀྲ་ཤིས"), ("mongolian", "mn", "ᠮᠣᠩᠭᠣᠯ"), ("vietnamese", "vi", "Tiếng Việt"),
    ("latin", "german-sz", "Straße"), ("latin", "dotted-i", "İstanbul ıi"), ("latin", "titlecase-dz", "ǅemal"),
    ("latin", "ligature", "ﬁnancial ﬂow"), ("latin", "fullwidth", "Ｈｅｌｌｏ"), ("latin", "math-bold", "𝐇𝐞𝐥𝐥𝐨"),
    ("latin", "angstrom", "\u212b vs \u00c5"), ("latin", "alias-g-dot", "Ġthe"), ("latin", "ae", "Æ æ"),
    ("combining", "e-acute-nfd", "e\u0301"), ("combining", "cafe-nfd", "cafe\u0301"),
    ("combining", "c-cedilla-nfd", "C\u0327a va"), ("combining", "stacked", "a\u0300\u0301\u0302\u0303"),
    ("combining", "zalgo", "z\u0336\u0351\u0317a\u0338\u0352l\u0334\u0316g\u0335o\u0337"),
    ("combining", "after-space", " \u0301x"), ("combining", "after-digit", "1\u20e3"),
    ("combining", "cjk-mark", "か\u3099"), ("combining", "hebrew-points", "שָׁלוֹם"),
]


def scripts() -> Iterator[Entry]:
    for group, label, text in SCRIPTS:
        yield Entry(f"script-{label}", text, ("scripts", group))


EMOJI = [
    ("single", "😊"), ("space-single", " 😊"), ("hi-smile", "Hi 😊!"), ("three", "😀😃😄"),
    ("heart-vs16", "\u2764\ufe0f"), ("heart-text", "\u2764"), ("i-love-ny", "I \u2764\ufe0f NY"),
    ("family-zwj", "👨\u200d👩\u200d👧\u200d👦"), ("technologist-zwj", "👩\u200d💻"),
    ("rainbow-flag-zwj", "🏳\ufe0f\u200d🌈"), ("pirate-flag-zwj", "🏴\u200d☠\ufe0f"),
    ("couple-skin-zwj", "🧑🏻\u200d🤝\u200d🧑🏿"), ("thumbs-skin", "👍🏽"), ("wave-dark", "👋🏿"),
    ("skin-modifier-alone", "🏽"), ("skin-all", "👍🏻👍🏼👍🏽👍🏾👍🏿"), ("flag-us", "🇺🇸"), ("flag-jp", "🇯🇵"),
    ("flag-un", "🇺🇳"), ("flags-adjacent", "🇺🇸🇯🇵🇩🇪"), ("regional-odd", "🇺🇸🇯"),
    ("flag-scotland-tags", "🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f"),
    ("keycap-1", "1\ufe0f\u20e3"), ("keycap-hash", "#\ufe0f\u20e3"), ("zwj-dangling", "👩\u200d"),
    ("emoji-word", "good👍job"), ("emoji-digits", "123😊456"), ("emoji-cjk", "你好😊世界"),
    ("emoji-lf", "😊\n😊"), ("emoji-apos", "😊's"), ("new-emoji", "🫠🫡🪿"), ("emoji-vs15", "\u2764\ufe0e"),
    ("symbols", "★☆♠♣♥♦"), ("arrows", "→←↑↓⇒"), ("box-drawing", "┌─┐└─┘"),
    ("math-symbols", "∑∫√∞≠≤"), ("mahjong", "🀄🃏"), ("smile-repeat-spaced", "😊 😊 😊"),
]


def emoji() -> Iterator[Entry]:
    for label, text in EMOJI:
        tags = ("emoji", "zwj") if "\u200d" in text else ("emoji", "flag") if "flag" in label else ("emoji",)
        if "skin" in label or "wave" in label:
            tags = ("emoji", "skin-tone")
        yield Entry(f"emoji-{label}", text, tags)


CONTROL_EXTRAS = [
    ("nul", "\x00"), ("nul-x3", "\x00\x00\x00"), ("nul-between", "a\x00b"), ("nul-leading", "\x00hello"),
    ("nul-trailing", "hello\x00"), ("nul-spaced", " \x00 "), ("del", "\x7f"), ("del-between", "a\x7fb"),
    ("c1-80", "\x80"), ("c1-9f", "\x9f"), ("c1-csi", "a\x9bb"), ("ansi-escape", "\x1b[31mred\x1b[0m"),
    ("bom-leading", "\ufeffhello"), ("bom-trailing", "hello\ufeff"), ("zwsp", "a\u200bb"),
    ("zwnj", "a\u200cb"), ("zwj-alone", "\u200d"), ("zwj-between", "a\u200db"), ("lrm", "a\u200eb"),
    ("rlo", "\u202eabc\u202c"), ("soft-hyphen", "co\xadop"), ("nonchar-fffe", "\ufffe"),
    ("nonchar-ffff", "\uffff"), ("nonchar-plane1", "\U0001fffe"), ("private-use", "\ue000"),
    ("private-use-plane15", "\U000f0000"), ("max-code-point", "\U0010ffff"), ("replacement", "\ufffd"),
    ("replacement-between", "a\ufffdb"), ("object-replacement", "\ufffc"), ("vs16-alone", "\ufe0f"),
    ("tag-char", "\U000e0041"), ("combining-leading", "\u0301abc"), ("hangul-filler", "\u3164"),
    ("braille-blank", "\u2800"), ("word-joiner", "a\u2060b"), ("interlinear", "\ufff9a\ufffab\ufffb"),
    ("bell-backspace", "ring\x07\x08"),
]


def controls() -> Iterator[Entry]:
    for code in [*range(0x01, 0x09), *range(0x0E, 0x1C)]:
        yield Entry(f"ctrl-c0-{code:02x}", f"a{chr(code)}b", ("controls", "c0"))
    for label, text in CONTROL_EXTRAS:
        tags = ("controls", "nul") if "\x00" in text else ("controls",)
        yield Entry(f"ctrl-{label}", text, tags)


SPECIAL_TEXTS = [
    ("eot", "whole", "<|endoftext|>"), ("fim-prefix", "whole", "<|fim_prefix|>"),
    ("fim-middle", "whole", "<|fim_middle|>"), ("fim-suffix", "whole", "<|fim_suffix|>"),
    ("endofprompt", "whole", "<|endofprompt|>"), ("startoftext", "whole", "<|startoftext|>"),
    ("return", "whole", "<|return|>"), ("channel", "whole", "<|channel|>"), ("message", "whole", "<|message|>"),
    ("start", "whole", "<|start|>"), ("end", "whole", "<|end|>"),
    ("eot-open", "partial", "<|endoftext"), ("eot-close", "partial", "endoftext|>"),
    ("eot-no-gt", "partial", "<|endoftext|"), ("eot-no-lt", "partial", "|endoftext|>"),
    ("open-only", "partial", "<|"), ("close-only", "partial", "|>"), ("empty-brackets", "partial", "<||>"),
    ("spaced-inside", "partial", "<| endoftext |>"), ("upper", "partial", "<|ENDOFTEXT|>"),
    ("titlecase", "partial", "<|EndOfText|>"), ("fullwidth", "partial", "＜｜endoftext｜＞"),
    ("zwsp-inside", "partial", "<\u200b|endoftext|>"),
    ("eot-eot", "adjacent", "<|endoftext|><|endoftext|>"), ("eot-fim", "adjacent", "<|endoftext|><|fim_prefix|>"),
    ("letters-around", "adjacent", "a<|endoftext|>b"), ("text-around", "adjacent", "hello<|endoftext|>world"),
    ("nested-brackets", "nested", "<|<|endoftext|>|>"), ("nested-split", "nested", "<|endo<|endoftext|>ftext|>"),
    ("nested-prefix", "nested", "<|endoftext<|endoftext|>|>"),
    ("spaces", "wrapped", " <|endoftext|> "), ("newlines", "wrapped", "\n<|endoftext|>\n"),
    ("tab", "wrapped", "\t<|endoftext|>"), ("two-spaces-before", "wrapped", "  <|endoftext|>"),
    ("two-spaces-after", "wrapped", "<|endoftext|>  "), ("sentence", "wrapped", "hello <|endoftext|> world"),
    ("crlf", "wrapped", "\r\n<|endoftext|>\r\n"),
]
SPECIAL_POLICY_VARIANTS = {"eot", "endofprompt", "eot-eot", "eot-fim", "text-around", "nested-split",
                           "nested-brackets", "spaces", "newlines", "sentence", "crlf", "upper"}


def specials() -> Iterator[Entry]:
    for label, form, text in SPECIAL_TEXTS:
        yield Entry(f"special-{label}", text, ("specials", form))
        if label in SPECIAL_POLICY_VARIANTS:
            yield Entry(f"special-{label}-ordinary", text, ("specials", form, "policy-ordinary"), ORDINARY)
            yield Entry(f"special-{label}-allow-all", text, ("specials", form, "policy-allow-all"), ALLOW_ALL)


def long_pieces() -> Iterator[Entry]:
    blob = base64.b64encode(bytes(range(256)) * 2).decode("ascii")
    paragraph = ("Tokenizers split text into pieces. 分词器把文本切成片段。 토크나이저는 텍스트를 나눕니다. "
                 "Numbers like 1234567 and emoji 😊👍🏽 travel too; don't forget 'quotes' and\ttabs.\n") * 4
    items = [
        ("a-120", "a" * 120), ("a-600", "a" * 600), ("long-word-x3", "Pneumonoultramicroscopicsilicovolcanoconiosis" * 3),
        ("digits-600", "1234567890" * 60), ("spaces-150", " " * 150), ("spaces-600", " " * 600),
        ("newlines-300", "\n" * 300), ("tabs-200", "\t" * 200), ("bang-150", "!" * 150), ("bang-600", "!" * 600),
        ("ni-50", "你" * 50), ("nihao-50", "你好世界" * 50), ("smile-40", "😊" * 40), ("smile-150", "😊" * 150),
        ("ab-300", "ab" * 300), ("dash-200", "-" * 200), ("equals-600", "=" * 600), ("base64", blob),
        ("url", "https://example.com/search?q=" + "tokenizer+" * 20 + "&lang=en#frag"),
        ("paragraph", paragraph), ("e-acute-300", "é" * 300), ("combining-100", "a" + "\u0301" * 100),
        ("alias-g-100", "Ġ" * 100), ("nul-200", "\x00" * 200), ("crlf-200", "\r\n" * 200),
        ("word-space-run", "word " * 120), ("hangul-200", "한" * 200),
        ("a-2000", "a" * 2000), ("spaces-1000", " " * 1000), ("smile-500", "😊" * 500),
    ]
    for label, text in items:
        size = len(text.encode("utf-8", "surrogatepass"))
        yield Entry(f"long-{label}", text, ("long", "500-bytes" if size >= 500 else "100-bytes"))


REPEAT_CHARS = [("a", "a"), ("space", " "), ("bang", "!"), ("zero", "0"), ("ni", "你"), ("smile", "😊"),
                ("lf", "\n"), ("e-acute", "é"), ("apos", "'"), ("dash", "-"), ("ab", "ab"), ("dot", ".")]


def repeats() -> Iterator[Entry]:
    for label, ch in REPEAT_CHARS:
        for n in (2, 3, 7, 16, 33, 64):
            yield Entry(f"repeat-{label}-x{n}", ch * n, ("repeats", label))


FILES = {
    "corpus-whitespace.yaml": ("Whitespace kinds, runs, leading and trailing.", whitespace),
    "corpus-digits.yaml": ("Digit runs of 1-20 and other number shapes.", digits),
    "corpus-contractions.yaml": ("English contractions in every case and apostrophe, 'ſ included.", contractions),
    "corpus-scripts.yaml": ("CJK, Hangul, Arabic, Devanagari, Thai and other scripts; combining marks.", scripts),
    "corpus-emoji.yaml": ("Emoji: ZWJ sequences, skin tones, flags, keycaps, variation selectors.", emoji),
    "corpus-controls.yaml": ("NUL, C0/C1 controls, format characters, noncharacters, private use.", controls),
    "corpus-specials.yaml": ("Special-token literals: whole, partial, adjacent, nested, wrapped; several policies.", specials),
    "corpus-long.yaml": ("Pieces of 100+ and 500+ bytes.", long_pieces),
    "corpus-repeats.yaml": ("Repeated characters and pairs at several lengths.", repeats),
}


# ---------------------------------------------------------------- pinning and output


def _pinner():
    import tiktoken

    from harness.vocab import seed_tiktoken_cache

    seed_tiktoken_cache(PIN_ENCODING)
    enc = tiktoken.get_encoding(PIN_ENCODING)
    specials: set[str] = set()
    for name in ("gpt2", "cl100k_base", "o200k_base", "o200k_harmony"):
        seed_tiktoken_cache(name)
        specials |= set(tiktoken.get_encoding(name).special_tokens_set)

    def pin(entry: Entry) -> list[int] | None:
        if any(s in entry.text for s in specials) or any(0xD800 <= ord(c) <= 0xDFFF for c in entry.text):
            return None  # policy- or replacement-dependent: the reference decides at run time
        return enc.encode(entry.text, disallowed_special=())

    return pin


def _quote_escaped(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def render(description: str, entries: list[Entry], pin) -> str:
    lines = [
        "# GENERATED by cases/tools/generate_corpus.py -- edit the script, not this file.",
        "version: 1",
        f"description: {json.dumps(description, ensure_ascii=False)}",
        "cases:",
    ]
    seen: set[str] = set()
    for entry in entries:
        if entry.id in seen:
            raise ValueError(f"generated id {entry.id!r} twice; make the labels unique")
        seen.add(entry.id)
        escaped = escape_text(entry.text)
        ids = pin(entry)
        tags = ["corpus", *entry.tags, *([PIN_TAG] if ids is not None else [])]
        lines.append(f"  - id: {entry.id}")
        if escaped == entry.text:
            lines.append(f"    text: {json.dumps(entry.text, ensure_ascii=False)}")
        else:
            lines.append(f"    text_escaped: {_quote_escaped(escaped)}")
        if entry.policy:
            inner = ", ".join(f"{k}: {v}" for k, v in entry.policy.items())
            lines.append(f"    policy: {{{inner}}}")
        lines.append(f"    tags: [{', '.join(tags)}]")
        if ids is not None:
            lines.append("    expect:")
            lines.append("      ids:")
            lines.append(f"        {PIN_ENCODING}: [{', '.join(map(str, ids))}]")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    parser.add_argument("--check", action="store_true", help="compare with the files on disk; change nothing")
    args = parser.parse_args(argv)
    pin = _pinner()
    stale = []
    for name, (description, generate) in FILES.items():
        content = render(description, list(generate()), pin)
        path = CASES_DIR / name
        if args.check:
            if not path.is_file() or path.read_text(encoding="utf-8") != content:
                stale.append(name)
        else:
            path.write_text(content, encoding="utf-8", newline="\n")
    if stale:
        print("out of date (run cases/tools/generate_corpus.py): " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
