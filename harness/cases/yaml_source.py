"""YAML read with ``yaml.safe_load`` semantics, but remembering where every value came from.

Case files must fail with a line number, and PyYAML's ``safe_load`` forgets positions
and silently keeps the last of two equal keys. Here the document is *composed* with
``SafeLoader`` (the node tree keeps start marks), checked for duplicate keys, and only
then constructed into plain Python values, exactly as ``safe_load`` would build them.
:class:`YamlDocument` maps a JSON path (``["cases", 3, "expect"]``) back to a line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import yaml

__all__ = ["YamlProblem", "YamlDocument", "parse_yaml", "format_path", "safe_load"]

# YAML 1.1 (PyYAML) treats these as line breaks, even inside quoted scalars, where they
# are folded into spaces: text pasted with them would silently change. They must be
# written with ``text_escaped`` instead.
_HIDDEN_BREAKS = {"\x85": "U+0085 NEXT LINE", "\u2028": "U+2028 LINE SEPARATOR", "\u2029": "U+2029 PARAGRAPH SEPARATOR"}


class YamlProblem(ValueError):
    """A YAML-level defect: ``line`` is 1-based, ``field`` a readable path; ``column``
    (1-based) is known for syntax errors."""

    def __init__(self, line: int, field: str, expected: str, *, column: int | None = None) -> None:
        where = f"line {line}, column {column}" if column is not None else f"line {line}"
        super().__init__(f"{where}: {field}: {expected}")
        self.line = line
        self.column = column
        self.field = field
        self.expected = expected


@dataclass(frozen=True)
class YamlDocument:
    """Plain data (as ``yaml.safe_load`` gives it) plus the node tree for line look-ups."""

    data: Any
    root: yaml.Node | None

    def line_of(self, path: Sequence[str | int], *, key: bool = False) -> int:
        """1-based line of the value at ``path`` (or of its key, with ``key=True``).

        A path that leaves the tree (a missing key) gives the line of the deepest
        node found, i.e. the mapping that lacks it.

        >>> doc = parse_yaml("a:\\n  b: [1,\\n    2]\\n")
        >>> doc.line_of(["a", "b", 1]), doc.line_of(["a", "b"], key=True), doc.line_of(["a", "zz"])
        (3, 2, 2)
        """
        node = self.root
        key_node: yaml.Node | None = None
        for step in path:
            child = _child(node, step)
            if child is None:
                break
            key_node, node = child
        target = key_node if key and key_node is not None else node
        return target.start_mark.line + 1 if target is not None else 1


def parse_yaml(text: str) -> YamlDocument:
    """Compose, check and construct one YAML document as ``SafeLoader`` does.

    Raises :class:`YamlProblem` for syntax errors, duplicate mapping keys and the
    invisible YAML line breaks (U+0085, U+2028, U+2029).

    >>> parse_yaml("x: 1\\ny: [a, b]\\n").data
    {'x': 1, 'y': ['a', 'b']}
    >>> try:
    ...     parse_yaml("x: 1\\nx: 2\\n")
    ... except YamlProblem as exc:
    ...     print(exc)
    line 2: x: each key once; 'x' is repeated (first at line 1) and YAML would silently keep the last one
    """
    _refuse_hidden_breaks(text)
    if _FAST_LOADER is not None:
        try:
            return _parse_with(_FAST_LOADER, text)
        except (YamlProblem, yaml.YAMLError):
            pass  # the pure-Python loader below says what is wrong, in its own words
    return _parse_with(yaml.SafeLoader, text)


#: libyaml's loader when PyYAML was built with it: the same node tree (marks included)
#: and the same constructor, composed in C (the shipped cases load 7x faster). Any
#: document it refuses is read again by ``SafeLoader``, whose message is the one shown.
_FAST_LOADER = getattr(yaml, "CSafeLoader", None)


def safe_load(text: str) -> Any:
    """``yaml.safe_load(text)``, composed in C where PyYAML has libyaml: every process that
    loads the registry reads the five shipped source specs (22-40 ms of CPU with the
    pure-Python loader, 4-7 ms so), a run reads the everyday prose (40 ms, 3 ms). A
    document libyaml refuses is read again by ``SafeLoader``, so the error raised is the
    one ``yaml.safe_load`` raises.

    >>> safe_load("a: [1, x]\\n")
    {'a': [1, 'x']}
    """
    if _FAST_LOADER is not None:
        try:
            return yaml.load(text, Loader=_FAST_LOADER)  # noqa: S506 - CSafeLoader is safe_load's loader
        except yaml.YAMLError:
            pass
    return yaml.safe_load(text)


def _parse_with(loader_class: Any, text: str) -> YamlDocument:
    loader = loader_class(text)
    try:
        try:
            root = loader.get_single_node()
        except yaml.MarkedYAMLError as exc:
            mark = _blamed_mark(exc, text)
            raise YamlProblem(
                mark.line + 1 if mark is not None else 1, "(YAML syntax)", f"valid YAML: {_syntax_message(exc)}",
                column=mark.column + 1 if mark is not None else None,
            ) from exc
        except yaml.YAMLError as exc:
            raise YamlProblem(1, "(YAML syntax)", f"valid YAML: {exc}") from exc
        if root is not None:
            _refuse_duplicate_keys(root, [], set())
        data = loader.construct_document(root) if root is not None else None
    finally:
        loader.dispose()
    return YamlDocument(data=data, root=root)


def _blamed_mark(exc: yaml.MarkedYAMLError, text: str) -> Any:
    """The place to show for a syntax error.

    PyYAML finds an unclosed quote or bracket only at the end of the file (its problem
    mark), while its context mark is where the unclosed construct began; that is where
    the fix goes. Otherwise the problem mark is where the parser stopped understanding.
    """
    problem, context = exc.problem_mark, exc.context_mark
    if problem is None:
        return context
    at_end = not text[problem.index:].strip()
    if context is not None and at_end:
        return context
    return problem


def _syntax_message(exc: yaml.MarkedYAMLError) -> str:
    """PyYAML's words with both of its positions, 1-based, and without its snippets.

    >>> try:
    ...     yaml.safe_load('a: "unclosed\\nb: 1\\n')
    ... except yaml.MarkedYAMLError as exc:
    ...     print(_syntax_message(exc))
    while scanning a quoted scalar (line 1, column 4) found unexpected end of stream (line 3, column 1)
    """
    parts = []
    for words, mark in ((exc.context, exc.context_mark), (exc.problem, exc.problem_mark)):
        if words:
            parts.append(f"{words} (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else words)
    return " ".join(parts)


def format_path(path: Sequence[str | int]) -> str:
    """A JSON path for humans.

    >>> format_path(["cases", 3, "expect", "ids", "tiktoken:cl100k_base", 0])
    'cases[3].expect.ids["tiktoken:cl100k_base"][0]'
    >>> format_path([])
    '(file)'
    """
    out = ""
    for step in path:
        if isinstance(step, int):
            out += f"[{step}]"
        elif step.isidentifier():
            out += ("." if out else "") + step
        else:
            out += '["' + step.replace('"', '\\"') + '"]'
    return out or "(file)"


def _child(node: yaml.Node | None, step: str | int) -> tuple[yaml.Node | None, yaml.Node] | None:
    if isinstance(node, yaml.SequenceNode) and isinstance(step, int):
        return (None, node.value[step]) if 0 <= step < len(node.value) else None
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.value == str(step):
                return key_node, value_node
    return None


def _refuse_duplicate_keys(node: yaml.Node, path: list[str | int], visited: set[int]) -> None:
    if id(node) in visited:  # an alias: already checked where its anchor was defined
        return
    visited.add(id(node))
    if isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _refuse_duplicate_keys(item, [*path, index], visited)
    elif isinstance(node, yaml.MappingNode):
        seen: dict[tuple[str, str], int] = {}
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.tag != "tag:yaml.org,2002:merge":
                identity = (key_node.tag, key_node.value)
                line = key_node.start_mark.line + 1
                if identity in seen:
                    raise YamlProblem(
                        line,
                        format_path([*path, key_node.value]),
                        f"each key once; {key_node.value!r} is repeated (first at line "
                        f"{seen[identity]}) and YAML would silently keep the last one",
                    )
                seen[identity] = line
                _refuse_duplicate_keys(value_node, [*path, key_node.value], visited)
            else:
                _refuse_duplicate_keys(value_node, path, visited)


def _refuse_hidden_breaks(text: str) -> None:
    for ch, name in _HIDDEN_BREAKS.items():
        at = text.find(ch)
        if at >= 0:
            line = text.count("\n", 0, at) + 1
            raise YamlProblem(
                line,
                "(file)",
                f"no raw {name}: YAML reads it as a line break and changes the text; "
                f"write it as an escape in `text_escaped` (\\u{ord(ch):04x})",
            )
