"""Every citation of a document by file and section resolves to an existing file and heading.

The code, the benchmarks, the tests and the documents cite the docs in words, e.g.
``docs/validation/lira.md, "The pooled bound"`` (in a docstring, a comment, a warning the user
reads, a claim's sentence) or ``docs/validation/gdp.md section 9``. A moved file or a renamed
heading would leave such a citation pointing nowhere without any test noticing; this one
finds every citation (string literals joined as Python joins them, comments joined line to
line, line breaks and indentation read as one space) and checks that

* the file exists, and
* each quoted title names one of its headings or the bold lead of one of its paragraphs
  (``**The repair, part 1: coins**``): the title itself, or its start followed by ``:`` or
  `` (`` (a leading section number and backticks are ignored), and ``section N`` a heading
  numbered N.

Links between the Markdown pages are checked by the documentation build (MyST reports a link
to a missing page or heading as a warning, and CI builds with warnings as errors).
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: where citations are looked for
SOURCES = ["bayes_dp", "mia", "samplers", "benchmarks", "examples", "tests", "docs", ".ci"]
SKIP_DIRS = {"_build", "_generated", "modules", "__pycache__"}
#: this file cites made-up documents in its own checks
SELF = Path(__file__).resolve()

CITATION = re.compile(
    r"docs/(?P<path>(?:[\w-]+/)*[\w-]+\.md)`{0,2}"
    r"(?:(?:,|\s)\s*(?:\(\s*)?(?P<titles>(?:[\"'][^\"'\n]{3,120}?[\"']"
    r"(?:(?:\s*,\s*|\s+and\s+|\s*;\s*)(?=[\"']))?)+)"
    r"|(?:,)?\s*section (?P<num>\d+))?"
)
TITLE = re.compile(r"\"([^\"]+)\"|'([^']+)'")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.M)
BOLD_LEAD = re.compile(r"^\s*(?:[-*]\s+)?\*\*(.+?)\*\*", re.M)


@dataclass(frozen=True)
class Citation:
    source: str  # file and line of the citation
    path: str  # the cited document, relative to docs/
    titles: tuple[str, ...]  # quoted section titles (may be empty)
    number: int | None  # "section N"


def _norm(text: str) -> str:
    return " ".join(text.split())


def _python_texts(text: str) -> list[tuple[int, str]]:
    """The texts of a Python file where a citation may stand, with their first line.

    Adjacent string literals are joined (as Python joins them), and so are comments on
    consecutive lines; each joined text has its whitespace runs made single spaces.
    """
    out: list[tuple[int, str]] = []
    strings: list[str] = []
    comments: list[str] = []
    start = 0
    cstart = 0
    last_comment_line = -2
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):  # pragma: no cover - every file parses
        return [(1, _norm(text))]
    for tok in tokens:
        if tok.type == tokenize.STRING:
            if not strings:
                start = tok.start[0]
            strings.append(_literal_text(tok.string))
            continue
        if tok.type in (tokenize.NL, tokenize.NEWLINE) and strings:
            continue
        if tok.type == tokenize.COMMENT:
            if comments and tok.start[0] != last_comment_line + 1:
                out.append((cstart, _norm(" ".join(comments))))
                comments = []
            if not comments:
                cstart = tok.start[0]
            comments.append(re.sub(r"^#+:?", "", tok.string))
            last_comment_line = tok.start[0]
        if strings:
            out.append((start, _norm("".join(strings))))
            strings = []
    if strings:
        out.append((start, _norm("".join(strings))))
    if comments:
        out.append((cstart, _norm(" ".join(comments))))
    return out


def _literal_text(token: str) -> str:
    """The characters of a string literal as written, quotes and prefix removed.

    Escapes of quotes are undone (``\\'`` is ``'``); f-string fields stay as written.
    """
    body = token.lstrip("rRbBuUfF")
    quote = body[:3] if body[:3] in ('"""', "'''") else body[0]
    inner = body[len(quote) : -len(quote)]
    return inner.replace("\\'", "'").replace('\\"', '"').replace("\\n", " ")


def _paragraphs(text: str) -> list[tuple[int, str]]:
    """The paragraphs of a text file (split at blank lines), with their first line."""
    out, line = [], 1
    for para in re.split(r"(\n\s*\n)", text):
        if para.strip():
            out.append((line + len(para) - len(para.lstrip("\n")), _norm(para)))
        line += para.count("\n")
    return out


def citations_in(text: str, source: str, python: bool) -> list[Citation]:
    """Every citation of ``docs/...md`` in ``text`` (a Python file when ``python``)."""
    texts = _python_texts(text) if python else _paragraphs(text)
    found = []
    for line, chunk in texts:
        for m in CITATION.finditer(chunk):
            titles = tuple(a or b for a, b in TITLE.findall(m.group("titles") or ""))
            num = int(m.group("num")) if m.group("num") else None
            found.append(Citation(f"{source}:{line}", m.group("path"), titles, num))
    return found


def _files():
    for top in SOURCES:
        base = ROOT / top
        if base.is_file():
            yield base
            continue
        for p in sorted(base.rglob("*")):
            if p.suffix not in (".py", ".md", ".sh", "") or not p.is_file():
                continue
            if SKIP_DIRS & set(p.relative_to(ROOT).parts) or p.resolve() == SELF:
                continue
            yield p
    yield ROOT / "README.md"


def all_citations() -> list[Citation]:
    out = []
    for p in _files():
        text = p.read_text(encoding="utf-8", errors="replace")
        out += citations_in(text, str(p.relative_to(ROOT)), python=p.suffix == ".py")
    return out


def headings(path: Path) -> list[str]:
    """The headings of a Markdown file and its paragraphs' bold leads, outside code fences."""
    text = re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.M | re.S)
    return HEADING.findall(text) + BOLD_LEAD.findall(text)


def _plain(heading: str) -> str:
    return re.sub(r"^\d+\.\s+", "", heading.replace("`", "")).strip()


def title_matches(title: str, heading: str) -> bool:
    """Whether ``title`` names ``heading`` (its text, or its start before ':' or ' (')."""
    h, t = _plain(heading), _plain(title)
    return h == t or h.startswith(t + ":") or h.startswith(t + " (")


def problems(cites: list[Citation]) -> list[str]:
    out = []
    for c in cites:
        f = ROOT / "docs" / c.path
        if not f.is_file():
            out.append(f"{c.source}: docs/{c.path} does not exist")
            continue
        hs = headings(f)
        for t in c.titles:
            if not any(title_matches(t, h) for h in hs):
                out.append(f'{c.source}: docs/{c.path} has no heading "{t}"')
        if c.number is not None and not any(re.match(rf"{c.number}\.\s", h) for h in hs):
            out.append(f"{c.source}: docs/{c.path} has no section {c.number}")
    return out


CITES = all_citations()


def test_the_citations_are_found():
    # the code cites the research logs by file and heading in many places
    assert len(CITES) > 100
    assert sum(bool(c.titles) for c in CITES) > 50


def test_every_citation_resolves():
    bad = problems(CITES)
    assert not bad, "citations of the docs that resolve to no file or heading:\n" + "\n".join(bad)


@pytest.mark.parametrize(
    "source, python, expected",
    [
        (
            'x = "see docs/a/b.md, \\"The pooled bound\\""\n',
            True,
            ("a/b.md", ("The pooled bound",), None),
        ),
        (
            "msg = (\n    'read (docs/validation/lira.md, \"The frequentist '\n"
            "    'companion\")'\n)\n",
            True,
            ("validation/lira.md", ("The frequentist companion",), None),
        ),
        (
            '# as docs/x.md, "A mode the\n# chains missed" says\n',
            True,
            ("x.md", ("A mode the chains missed",), None),
        ),
        (
            '"""Text (``docs/validation/gdp.md`` section 9)."""\n',
            True,
            ("validation/gdp.md", (), 9),
        ),
        ('See `docs/a.md`, "One" and "Two".\n', False, ("a.md", ("One", "Two"), None)),
        ("see docs/a.md; then more\n", False, ("a.md", (), None)),
    ],
)
def test_the_reader_finds_each_form(source, python, expected):
    (c,) = citations_in(source, "t", python)
    assert (c.path, c.titles, c.number) == expected


def test_a_wrong_citation_is_reported(tmp_path, monkeypatch):
    cites = [
        Citation("t:1", "validation/lira.md", ("No such heading",), None),
        Citation("t:2", "no_such_file.md", (), None),
        Citation("t:3", "validation/lira.md", (), 99),
    ]
    bad = problems(cites)
    assert len(bad) == 3 and "no heading" in bad[0] and "does not exist" in bad[1]
    assert "section 99" in bad[2]


def test_title_matching():
    assert title_matches("The pooled bound", "The pooled bound: error rates over all targets")
    assert not title_matches("The pooled bound", "The pooled bound over the most exposed targets")
    assert title_matches("What the audit shows", "6. What the audit shows (`audit_claim`)")
