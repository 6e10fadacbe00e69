"""Block-style YAML as dumpers write it, read line by line (issue 22).

Even with libyaml's C parser, most of a large YAML scenario's load is PyYAML making a Python
node (and marks, and a resolver call) per scalar before any object is built. What
``kubectl get -o yaml``, ``kubesched snapshot`` and PyYAML's ``safe_dump`` write is a small
part of YAML: block mappings and sequences, one scalar per line, plain or single-line quoted,
``{}`` and ``[]``, literal blocks (``|``, ``|-``) and PyYAML's anchors on mappings. That part
is read here straight into Python objects, a line at a time.

Anything else anywhere in the text (flow collections, tags, comments after a value, folded or
multi-line scalars, directives, tabs, other line breaks, a document marker with content) makes
``block_documents`` answer None, and the caller hands the whole text to PyYAML: what is read
here is what PyYAML reads, and every error is PyYAML's. Plain scalars are resolved and built
by the loader's own resolver and constructors (once per distinct text); keys must resolve to
strings (others go through PyYAML, which the scenario loader turns into JSON keys).
"""

from __future__ import annotations

import re
from typing import Any

from yaml.nodes import ScalarNode
from yaml.scanner import Scanner

from kubesched.api.fastyaml import SCALAR_TAGS, STR

# what PyYAML's reader refuses, and characters whose handling is left to it
_NON_PRINTABLE = re.compile("[^\x0a\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_LEFT_TO_PYYAML = ("\x85", "\u2028", "\u2029", "\ufeff", "\n%", "\n...")
# a plain scalar does not start with one of these (but "-", "?" and ":" before a non-space)
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")
_DOCUMENT_START = re.compile("^---", re.MULTILINE)
_ANCHOR = re.compile(r"[^\s,\[\]{}]+")
_MAX_KEY = 1024  # PyYAML's longest simple key
_MAX_DEPTH = 200  # deeper nesting is left to PyYAML (and the interpreter's stack)


def _starts_with_indicator(text: str) -> bool:
    """Whether a plain scalar cannot start as ``text`` does (PyYAML's ``check_plain`` in
    block context)."""
    first = text[0]
    return first in _INDICATORS and not (first in "-?:" and text[1:2] not in ("", " "))


class _Unsupported(Exception):
    """Outside the part of YAML read here: PyYAML reads the text."""


def block_documents(text: str, loader: Any) -> list[Any] | None:
    """The documents of ``text`` as PyYAML's ``load_all`` with ``loader`` (a PyYAML loader
    instance: its resolver and scalar constructors are used) builds them, or None when the
    text is not all block-style YAML of the kind read here."""
    if _NON_PRINTABLE.search(text) is not None or any(s in text for s in _LEFT_TO_PYYAML):
        return None
    if text.startswith(("%", "...")):
        return None
    try:
        return _Reader(text, loader).documents()
    except (_Unsupported, RecursionError):
        return None


class _Reader:
    def __init__(self, text: str, loader: Any) -> None:
        self.text = text
        self.lines = text.split("\n")
        self.loader = loader
        self.plain: dict[str, Any] = {}  # plain scalar text -> value
        self.keys: set[str] = set()  # plain texts known to resolve to strings
        self.pos = 0  # the current line
        self.end = 0  # the current document's end (exclusive)
        self.cur: tuple[int, str] | None = None  # (indent, content) of the current line
        self.anchors: dict[str, Any] = {}
        self.depth = 0

    # -- documents

    def documents(self) -> list[Any]:
        lines = self.lines
        starts = []
        line, offset = 0, 0
        for m in _DOCUMENT_START.finditer(self.text):
            line += self.text.count("\n", offset, m.start())
            offset = m.start()
            if lines[line].rstrip(" ") != "---":
                raise _Unsupported
            starts.append(line)
        docs: list[Any] = []
        bounds = [0, *starts, len(lines)]
        for k in range(len(bounds) - 1):
            begin = bounds[k] + (1 if k > 0 else 0)
            explicit = k > 0
            self.pos, self.end = begin, bounds[k + 1]
            self.anchors = {}
            self._seek()
            if self.cur is None:
                if explicit:
                    docs.append(None)
                continue
            docs.append(self._block(self.cur[0]))
            if self.cur is not None:
                raise _Unsupported
        return docs

    def _seek(self) -> None:
        """Make the first content line at or after ``pos`` current (None: the document
        ends first)."""
        lines, pos, end = self.lines, self.pos, self.end
        while pos < end:
            line = lines[pos]
            content = line.lstrip(" ")
            if content and content[0] != "#":
                self.pos = pos
                self.cur = (len(line) - len(content), content.rstrip(" "))
                return
            pos += 1
        self.pos = end
        self.cur = None

    def _advance(self) -> None:
        self.pos += 1
        self._seek()

    # -- collections

    def _block(self, col: int) -> Any:
        assert self.cur is not None
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise _Unsupported
        content = self.cur[1]
        if content == "-" or content.startswith("- "):
            out: Any = self._seq(col)
        elif self._is_entry(content):
            out = self._map(col)
        else:
            raise _Unsupported  # a scalar on its own line (a multi-line or top-level one)
        self.depth -= 1
        return out

    def _map(self, col: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        keys, plain = self.keys, self.plain
        while True:
            assert self.cur is not None
            content = self.cur[1]
            # the common line, inline: a key and a plain scalar both seen before (what
            # ``_key`` and ``_value`` would make of them, without their checks again)
            pos = content.find(": ")
            key = content[:pos]
            if pos > 0 and key in keys:
                rest = content[pos + 2:].lstrip(" ")
                value = plain.get(rest, plain) if rest else plain
                if value is not plain:
                    out[key] = value
                    self.pos += 1
                    self._seek()
                else:
                    out[key] = self._value(rest, col)
            else:
                key, rest = self._key(content)
                out[key] = self._value(rest, col)
            cur = self.cur
            if cur is None or cur[0] < col:
                return out
            if cur[0] > col:
                raise _Unsupported
            content = cur[1]
            if content == "-" or content.startswith("- "):
                return out  # (the caller's, or an error PyYAML reports)

    def _seq(self, col: int) -> list[Any]:
        out: list[Any] = []
        while True:
            assert self.cur is not None
            content = self.cur[1]
            if content == "-":
                self._advance()
                cur = self.cur
                item = self._block(cur[0]) if cur is not None and cur[0] > col else None
            else:
                body = content[2:]
                item_text = body.lstrip(" ")
                item_col = col + 2 + len(body) - len(item_text)
                if item_text == "-" or item_text.startswith("- "):
                    raise _Unsupported  # a sequence in a sequence's entry, on one line
                if self._is_entry(item_text):
                    self.cur = (item_col, item_text)
                    self.depth += 1
                    item = self._map(item_col)
                    self.depth -= 1
                elif item_text[0] == "|":
                    item = self._literal(item_text, col)
                else:
                    if item_text[0] in "&>":
                        raise _Unsupported
                    self._advance()
                    item = self._scalar(item_text)
            out.append(item)
            cur = self.cur
            if cur is None or cur[0] < col:
                return out
            if cur[0] > col:
                raise _Unsupported
            content = cur[1]
            if not (content == "-" or content.startswith("- ")):
                return out  # the enclosing mapping's next key (kubectl's style)

    # -- entries and values

    def _is_entry(self, content: str) -> bool:
        """Whether ``content`` starts a mapping entry (``key:`` and what follows)."""
        first = content[0]
        if first == '"' or first == "'":
            _, end = self._quoted(content)
            return content[end:end + 1] == ":" and content[end + 1:end + 2] in ("", " ")
        if _starts_with_indicator(content):
            return False
        return ": " in content or content.endswith(":")

    def _key(self, content: str) -> tuple[str, str]:
        first = content[0]
        if first == '"' or first == "'":
            key, end = self._quoted(content)
            if content[end:end + 1] != ":" or content[end + 1:end + 2] not in ("", " "):
                raise _Unsupported
            return key, content[end + 1:].lstrip(" ")
        pos = content.find(": ")
        if pos < 0:
            if not content.endswith(":"):
                raise _Unsupported
            pos = len(content) - 1
        key = content[:pos]
        if key not in self.keys:
            if (not key or _starts_with_indicator(key) or len(key) > _MAX_KEY
                    or key != key.rstrip(" ") or " #" in key
                    or self.loader.resolve(ScalarNode, key, (True, False)) != STR):
                raise _Unsupported
            self.keys.add(key)
        return key, content[pos + 1:].lstrip(" ")

    def _value(self, rest: str, col: int) -> Any:
        """The value of a mapping entry at column ``col`` whose line goes on with ``rest``;
        leaves the line after it current."""
        if rest == "":
            return self._nested(col)
        first = rest[0]
        if first == "&":
            name = rest[1:]
            if _ANCHOR.fullmatch(name) is None:
                raise _Unsupported  # (an anchor on a scalar, or a tag after it)
            value = self._nested(col)
            if value is None:
                raise _Unsupported
            self.anchors[name] = value
            return value
        if first == "|":
            return self._literal(rest, col)
        self._advance()
        return self._scalar(rest)

    def _nested(self, col: int) -> Any:
        """What follows a ``key:`` alone on its line: a block more indented, or a sequence at
        the key's own column, or nothing (null)."""
        self._advance()
        cur = self.cur
        if cur is None:
            return None
        if cur[0] > col:
            return self._block(cur[0])
        if cur[0] == col and (cur[1] == "-" or cur[1].startswith("- ")):
            return self._seq(col)
        return None

    def _scalar(self, text: str) -> Any:
        """A value alone on the rest of its line (the line is already passed)."""
        first = text[0]
        if first == '"' or first == "'":
            value, end = self._quoted(text)
            if end != len(text):
                raise _Unsupported
            return value
        if first == "*":
            name = text[1:]
            if _ANCHOR.fullmatch(name) is None or name not in self.anchors:
                raise _Unsupported
            return self.anchors[name]
        if text == "{}":
            return {}
        if text == "[]":
            return []
        return self._plain(text)

    def _plain(self, text: str) -> Any:
        known = self.plain.get(text, self.plain)
        if known is not self.plain:
            return known
        if _starts_with_indicator(text):
            raise _Unsupported
        if " #" in text or ": " in text or text.endswith(":"):
            raise _Unsupported
        loader = self.loader
        tag = loader.resolve(ScalarNode, text, (True, False))
        if tag == STR:
            value: Any = text
        elif tag in SCALAR_TAGS:
            value = loader.yaml_constructors[tag](loader, ScalarNode(tag, text))
        else:
            raise _Unsupported
        self.plain[text] = value
        return value

    def _quoted(self, s: str) -> tuple[str, int]:
        """A quoted scalar at the start of ``s`` (on this line only), and where it ends."""
        if s[0] == "'":
            parts = []
            i = 1
            while True:
                j = s.find("'", i)
                if j < 0:
                    raise _Unsupported  # (it goes on to the next line)
                parts.append(s[i:j])
                if s[j + 1:j + 2] != "'":
                    return "".join(parts) if len(parts) > 1 else parts[0], j + 1
                parts.append("'")
                i = j + 2
        parts = []
        i = 1
        while True:
            j = s.find('"', i)
            if j < 0:
                raise _Unsupported
            k = s.find("\\", i, j)
            if k < 0:
                parts.append(s[i:j])
                return "".join(parts), j + 1
            parts.append(s[i:k])
            c = s[k + 1:k + 2]
            if c in Scanner.ESCAPE_REPLACEMENTS:
                parts.append(Scanner.ESCAPE_REPLACEMENTS[c])
                i = k + 2
            elif c in Scanner.ESCAPE_CODES:
                n = Scanner.ESCAPE_CODES[c]
                digits = s[k + 2:k + 2 + n]
                if len(digits) != n or not all(d in "0123456789abcdefABCDEF" for d in digits):
                    raise _Unsupported
                parts.append(chr(int(digits, 16)))
                i = k + 2 + n
            else:
                raise _Unsupported

    def _literal(self, header: str, col: int) -> str:
        """A literal block scalar (``|`` or ``|-``) of an entry at column ``col``."""
        if header not in ("|", "|-"):
            raise _Unsupported
        lines, end = self.lines, self.end
        pos = self.pos + 1
        if pos >= end:
            raise _Unsupported
        first = lines[pos]
        content = first.lstrip(" ")
        indent = len(first) - len(content)
        if not content or indent <= col:
            raise _Unsupported  # (leading blank lines, or an empty block)
        body: list[str] = []
        last = pos  # the last line with content
        while pos < end:
            line = lines[pos]
            if line[:indent].strip(" "):
                break  # less indented and not blank: the block ends
            part = line[indent:]
            body.append(part)
            if part:
                last = pos
            pos += 1
        if last == len(lines) - 1:
            raise _Unsupported  # (the text ends on the block's last line, without a break)
        while body and body[-1] == "":
            body.pop()
        self.pos = pos
        self._seek()
        text = "\n".join(body)
        return text if header == "|-" else text + "\n"
