"""docs/validation/index.md's tables name tests that exist, run in the stage named, and assert
in the direction the claim is worded.

The page maps each claim of the docs to the tests that back it, in Markdown tables whose header
has the columns ``claim``, ``test`` and ``stage`` (other tables of the page are not claim
tables and are left alone). For every row of every claim table this file checks:

1. **Each reference resolves.** References are the backticked spans of the ``test`` cell:

   * ``tests/dir/test_x.py::name``: a full path and a test;
   * ``...::name``: a test of the test file named last before it (in this row or a row above
     in the same table);
   * ``test_y.py::name``: a test of a file in the folder of the test file named last;
   * a file alone (``tests/dir/test_x.py``, ``test_y.py``): the file's tests;
   * ``name`` is ``test_f`` or ``TestC::test_m`` (a method of a ``Test...`` class), maybe with
     a parametrization id (``test_f[case]``; the id is not checked) or a ``*`` pattern
     (``test_f_*``, which must match at least one test).

   A test is a module-level ``def test_...`` or a ``test_...`` method of a module-level
   ``Test...`` class, read from the file's syntax tree (no test module is imported). Other
   files with a folder (``benchmarks/x.py``, ``tests/reference/overdispersed.py``) must exist
   and are not checked further. Refused: a test file with a folder not written from the root
   (``gdp/test_joint.py``), a bare ``test_...`` name without ``::`` (write ``...::test_...``),
   a test named in a file that is no test module, and a row that names no test at all.

2. **The stage.** The ``stage`` cell is one or more of ``main`` (the fast suite,
   ``-m "not slow"``), ``stat.`` (CI's statistical stage, ``-m statistical``) and ``-m slow``
   (long runs that CI does not run), separated by ``;``, each optionally followed by a remark in
   parentheses. A test's markers are its decorators', its class's (decorators and
   ``pytestmark``) and its module's ``pytestmark``; a parametrized test's cases may carry more
   (``pytest.param(..., marks=...)``), read as marks *some* cases carry. A test runs

   * in ``main`` if it is not always marked ``slow``;
   * in ``stat.`` if it (or some case) is marked ``statistical`` and, for those cases, ``slow``
     (the project's rule, enforced at collection by ``tests/conftest.py``);
   * in ``-m slow`` if it (or some case) is marked ``slow`` and it is not always marked
     ``statistical`` (those would run in CI, not only under ``-m slow``).

   A file reference runs in a stage if at least one of its tests does.

   **Several stages in a row**: the ``test`` cell is split the same way, at each ``;`` outside
   parentheses, into groups, and the groups that name a test are counted. When there are as many
   such groups as stages, the rows' wording reads them in order ("the reduced check (...); the
   bound against scipy: ..." with ``stat.; main``): each group's tests must run in its own
   stage. Otherwise (one group whose parametrized cases run in different stages, as in
   ``stat. (binomial); -m slow (...)``) each test must run in at least one of the row's stages.

3. **The direction of the wording.** A claim worded as an upper limit or a lower limit must be
   backed by an assertion in that direction. The vocabulary, searched in the ``claim`` cell only
   (a row with an empty claim cell continues the claim above it and inherits its words):

   * upper limit (a count or bound held below something): ``never above``, ``never lies
     above``, ``not above``, ``at most``, ``no ... above`` and ``neither ... above`` (up to
     eight words between, in one clause);
   * lower limit: ``cover``, ``covers``, ``covered``, ``at least``.

   Rows without these words are not checked for direction. For a row with such a word, at least
   one test of the row's first reference group (the check the claim rests on; the later groups
   are companions: the bound against scipy, the sentences) must contain an assertion in the
   direction: an ``assert`` statement, or ``numpy.testing.assert_array_less`` (an upper limit on
   its first argument), in the test's body or in a function of the same module it calls
   (transitively). A comparison ``a < b`` or ``a <= b`` is an upper limit and ``a > b``,
   ``a >= b`` a lower limit, on its left operand as written; ``== `` does not count. When the
   left operand is a number and the right one is not (``31 <= covered``), the comparison is read
   from the right (a lower limit on ``covered``); the middle operand of a chain
   (``lo <= k <= hi``) is limited both ways; ``not`` reverses.

This is a necessary condition, not a proof: it catches a claim whose test was dropped, renamed,
moved, or moved to another stage, and a worded limit that no assertion of its test states in
that direction. It does not follow helpers imported from other modules
(``tests._support.mc_error``), and most statistical tests assert their reach (a lower limit)
besides their property, so it cannot tell which assertion backs the words. The unit tests at
the end feed the checker small tables and test files with one defect each and assert that it
reports it.
"""

from __future__ import annotations

import ast
import fnmatch
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
INDEX = ROOT / "docs" / "validation" / "index.md"

STAGES = ("main", "stat.", "-m slow")
#: the vocabulary of the direction check: (direction, label, pattern on the claim cell)
WORDS: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    ("upper", "never above", re.compile(r"\bnever (?:lies )?above\b", re.I)),
    ("upper", "not above", re.compile(r"\bnot above\b", re.I)),
    ("upper", "at most", re.compile(r"\bat most\b", re.I)),
    ("upper", "no ... above", re.compile(r"\bno\b(?:\s+[^\s,;:.]+){0,8}?\s+above\b", re.I)),
    ("upper", "neither ... above", re.compile(r"\bneither\b(?:\s+[^\s,;:.]+){0,8}?\s+above\b")),
    ("lower", "covers", re.compile(r"\bcover(?:s|ed)?\b", re.I)),
    ("lower", "at least", re.compile(r"\bat least\b", re.I)),
)
DIRECTION_TEXT = {"upper": "an upper limit (< or <=)", "lower": "a lower limit (> or >=)"}

_SPAN = re.compile(r"`([^`]+)`")
_TEST_PATH = re.compile(r"^(?P<path>(?:[\w.-]+/)*[\w.-]+\.py)(?:::(?P<name>.+))?$")
_CONT = re.compile(r"^\.\.\.::(?P<name>.+)$")
_NAME = re.compile(r"^(?:Test\w*::)?test\w*\*?\w*(?:\[[^\]]*\])?$")
_BARE_TEST = re.compile(r"^(?:Test\w*::)?test_\w*(?:\[[^\]]*\])?$")


# --------------------------------------------------------------------------------------------
# the page


@dataclass(frozen=True)
class Ref:
    """A reference to a test file (``name`` None) or to tests of it (``name``, maybe a
    pattern)."""

    written: str
    path: str  # relative to the root
    name: str | None


@dataclass
class Row:
    line: int
    claim: str  # the claim cell, or the claim above for a continuation row
    test_cell: str
    stage_cell: str
    groups: list[list[Ref]] = field(default_factory=list)  # per ';'-group, test refs only
    others: list[str] = field(default_factory=list)  # non-test paths (must exist)
    malformed: bool = False  # a span that is no reference form was reported

    def label(self) -> str:
        claim = " ".join(self.claim.split())
        short = claim if len(claim) <= 70 else claim[:67] + "..."
        return f"line {self.line} ({short!r})"


def _cells(line: str) -> list[str]:
    """The cells of a Markdown table line (``|`` inside backticks does not split)."""
    body = line.strip()
    body = body[1:] if body.startswith("|") else body
    body = body[:-1] if body.endswith("|") else body
    cells, cur, tick = [], [], False
    for ch in body:
        if ch == "`":
            tick = not tick
        if ch == "|" and not tick:
            cells.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    cells.append("".join(cur).strip())
    return cells


def _split_top(text: str) -> list[str]:
    """``text`` split at each ``;`` outside parentheses and backticks."""
    parts, cur, depth, tick = [], [], 0, False
    for ch in text:
        if ch == "`":
            tick = not tick
        elif not tick and ch == "(":
            depth += 1
        elif not tick and ch == ")":
            depth = max(depth - 1, 0)
        if ch == ";" and depth == 0 and not tick:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p.strip() for p in parts]


def _strip_remarks(text: str) -> str:
    """``text`` without its parenthesized remarks (nested ones too)."""
    out, depth = [], 0
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(depth - 1, 0)
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def parse_stages(cell: str) -> list[str]:
    """The stages of a ``stage`` cell, in order; ValueError for a part that names none."""
    stages = []
    for part in _split_top(cell):
        word = " ".join(_strip_remarks(part).replace("`", "").split())
        if word not in STAGES:
            raise ValueError(f"stage {part!r} is not one of {', '.join(STAGES)}")
        stages.append(word)
    return stages


def parse_rows(text: str, problems: list[str]) -> list[Row]:
    """The rows of every claim table of ``text``, their references resolved to paths.

    Problems of form (an unknown reference form, a continuation with nothing before it) are
    appended to ``problems``.
    """
    rows: list[Row] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if not (lines[i].lstrip().startswith("|") and i + 1 < len(lines)):
            i += 1
            continue
        header = [c.lower() for c in _cells(lines[i])]
        if not re.match(r"^\s*\|?\s*:?-{3,}", lines[i + 1]):
            i += 1
            continue
        j = i + 2
        if not {"claim", "test", "stage"} <= set(header):
            while j < len(lines) and lines[j].lstrip().startswith("|"):
                j += 1
            i = j
            continue
        c_claim, c_test, c_stage = (header.index(k) for k in ("claim", "test", "stage"))
        last_path: str | None = None
        claim = ""
        while j < len(lines) and lines[j].lstrip().startswith("|"):
            cells = _cells(lines[j])
            cells += [""] * (len(header) - len(cells))
            claim = cells[c_claim] or claim
            row = Row(j + 1, claim, cells[c_test], cells[c_stage])
            for group_text in _split_top(row.test_cell):
                group: list[Ref] = []
                for span in _SPAN.findall(group_text):
                    span = span.strip()
                    ref, last_path, problem = _reference(span, last_path)
                    if problem:
                        problems.append(f"{row.label()}: `{span}`: {problem}")
                        row.malformed = True
                    elif ref is None:
                        continue
                    elif isinstance(ref, str):
                        row.others.append(ref)
                    else:
                        group.append(ref)
                if group:
                    row.groups.append(group)
            rows.append(row)
            j += 1
        i = j
    return rows


def _reference(span: str, last: str | None) -> tuple[Ref | str | None, str | None, str | None]:
    """(the reference or other path or None, the new last test file, a problem or None)."""
    m = _CONT.match(span)
    if m:
        if last is None:
            return None, last, "'...' with no test file named before it in this table"
        return Ref(span, last, m.group("name")), last, None
    m = _TEST_PATH.match(span)
    if m:
        path, name = m.group("path"), m.group("name")
        base = path.rsplit("/", 1)[-1]
        if not base.startswith("test_"):
            # a benchmark, a reference module, a source file: it must exist, it is no test
            if name is not None:
                return None, last, "names a test in a file that is not a test module"
            return (path if "/" in path else None), last, None
        if path.startswith("tests/"):
            full = path
        elif "/" in path:
            return None, last, "a test file with a folder is written from the root (tests/...)"
        elif last is None:
            return None, last, "a file relative to the last one, with none named before it"
        else:
            full = f"{last.rsplit('/', 1)[0]}/{path}"
        if name is not None and not _NAME.match(name):
            return None, full, f"{name!r} is not a test name (test_..., Test...::test_...)"
        return Ref(span, full, name), full, None
    if _BARE_TEST.match(span):
        return None, last, "a test name without its file: write `...::" + span + "`"
    return None, last, None


# --------------------------------------------------------------------------------------------
# the test files


@dataclass
class Case:
    name: str  # "test_f" or "TestC::test_m"
    node: ast.FunctionDef | ast.AsyncFunctionDef
    cls: ast.ClassDef | None
    always: frozenset[str]  # markers every case carries
    some: frozenset[str]  # markers some parametrized cases carry


class ModuleTests:
    """The tests of one file, read from its syntax tree."""

    def __init__(self, path: Path):
        self.tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        self.functions = {
            n.name: n
            for n in self.tree.body
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
        }
        self.assigns: dict[str, ast.expr] = {}
        for n in self.tree.body:
            if isinstance(n, ast.Assign):
                for t in n.targets:
                    if isinstance(t, ast.Name):
                        self.assigns[t.id] = n.value
            elif isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name) and n.value:
                self.assigns[n.target.id] = n.value
        module_marks = _marks_of(self.assigns.get("pytestmark"))
        self.tests: dict[str, Case] = {}
        for n in self.tree.body:
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name.startswith("test"):
                self.tests[n.name] = self._test(n.name, n, None, module_marks)
            elif isinstance(n, ast.ClassDef) and n.name.startswith("Test"):
                cls_marks = set(module_marks)
                for d in n.decorator_list:
                    cls_marks |= _marks_of(d)
                for s in n.body:
                    if isinstance(s, ast.Assign) and any(
                        isinstance(t, ast.Name) and t.id == "pytestmark" for t in s.targets
                    ):
                        cls_marks |= _marks_of(s.value)
                for s in n.body:
                    if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef) and s.name.startswith(
                        "test"
                    ):
                        name = f"{n.name}::{s.name}"
                        self.tests[name] = self._test(name, s, n, cls_marks)

    def _test(self, name, node, cls, inherited) -> Case:
        always, some = set(inherited), set()
        for d in node.decorator_list:
            if _mark_name(d) == "parametrize" and isinstance(d, ast.Call):
                values = d.args[1] if len(d.args) > 1 else None
                for kw in d.keywords:
                    if kw.arg == "argvalues":
                        values = kw.value
                some |= self._case_marks(values, depth=0)
            else:
                always |= _marks_of(d)
        return Case(name, node, cls, frozenset(always), frozenset(some - always))

    def _case_marks(self, expr: ast.expr | None, depth: int) -> set[str]:
        """Markers named in ``marks=`` of the cases in ``expr`` (module names followed)."""
        found: set[str] = set()
        if expr is None or depth > 3:
            return found
        for n in ast.walk(expr):
            if isinstance(n, ast.keyword) and n.arg == "marks":
                found |= _marks_of(n.value)
            elif isinstance(n, ast.Name) and n.id in self.assigns:
                found |= self._case_marks(self.assigns[n.id], depth + 1)
            elif (
                isinstance(n, ast.Call)
                and isinstance(n.func, ast.Name)
                and n.func.id in self.functions
            ):
                found |= self._case_marks(self.functions[n.func.id], depth + 1)  # type: ignore[arg-type]
        return found

    def match(self, name: str) -> list[Case]:
        """The tests ``name`` (maybe with an id or a ``*`` pattern) stands for."""
        base = re.sub(r"\[.*\]$", "", name)
        if "*" in base:
            return [t for k, t in self.tests.items() if fnmatch.fnmatchcase(k, base)]
        return [self.tests[base]] if base in self.tests else []

    # the direction of the assertions

    def limits(self, test: Case) -> set[str]:
        """ "upper" / "lower": the directions of the assertions of ``test`` and of the
        functions of this module it calls."""
        out: set[str] = set()
        seen: set[int] = set()
        todo: list[ast.AST] = [test.node]
        methods = (
            {s.name: s for s in test.cls.body if isinstance(s, ast.FunctionDef)} if test.cls else {}
        )
        while todo:
            fn = todo.pop()
            if id(fn) in seen:
                continue
            seen.add(id(fn))
            for n in ast.walk(fn):
                if isinstance(n, ast.Assert):
                    _directions(n.test, False, out)
                elif isinstance(n, ast.Call):
                    f = n.func
                    if isinstance(f, ast.Name) and f.id in self.functions:
                        todo.append(self.functions[f.id])
                    elif (
                        isinstance(f, ast.Attribute)
                        and isinstance(f.value, ast.Name)
                        and f.value.id in ("self", "cls")
                        and f.attr in methods
                    ):
                        todo.append(methods[f.attr])
                    name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
                    if name == "assert_array_less" and n.args:  # a < b, read as written
                        out.add("lower" if _is_number(n.args[0]) else "upper")
        return out


def _mark_name(node: ast.expr) -> str | None:
    """``slow`` for ``pytest.mark.slow`` / ``mark.slow`` / ``pytest.mark.slow(...)``."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute) and (
        (isinstance(node.value, ast.Attribute) and node.value.attr == "mark")
        or (isinstance(node.value, ast.Name) and node.value.id == "mark")
    ):
        return node.attr
    return None


def _marks_of(expr: ast.expr | None) -> set[str]:
    """The markers in ``expr``: one mark, or marks in lists, tuples, conditionals."""
    if expr is None:
        return set()
    name = _mark_name(expr)
    if name is not None:
        return {name}
    out: set[str] = set()
    if isinstance(expr, ast.List | ast.Tuple | ast.Set):
        for e in expr.elts:
            out |= _marks_of(e)
    elif isinstance(expr, ast.IfExp):
        out |= _marks_of(expr.body) | _marks_of(expr.orelse)
    elif isinstance(expr, ast.BinOp):
        out |= _marks_of(expr.left) | _marks_of(expr.right)
    return out


def _is_number(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        node = node.operand
    return isinstance(node, ast.Constant) and isinstance(node.value, int | float)


_UPPER_OPS = (ast.Lt, ast.LtE)
_LOWER_OPS = (ast.Gt, ast.GtE)


def _directions(node: ast.expr, negated: bool, out: set[str]) -> None:
    """Add to ``out`` the directions of the comparisons in an asserted expression."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        _directions(node.operand, not negated, out)
        return
    if isinstance(node, ast.Compare):
        operands = [node.left, *node.comparators]
        chain = len(node.ops) > 1
        for k, op in enumerate(node.ops):
            if isinstance(op, _UPPER_OPS):
                d = "upper"
            elif isinstance(op, _LOWER_OPS):
                d = "lower"
            else:
                continue
            left, right = operands[k], operands[k + 1]
            flip = negated
            if chain and k == 0:
                flip = not flip  # read from the middle operand: lo <= x is a lower limit on x
            elif _is_number(left) and not _is_number(right):
                flip = not flip  # 31 <= covered: a lower limit on covered
            out.add({"upper": "lower", "lower": "upper"}[d] if flip else d)
        for child in operands:
            _directions(child, negated, out)
        return
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.expr):
            _directions(child, negated, out)


# --------------------------------------------------------------------------------------------
# the check


def stage_runs(test: Case, stage: str) -> bool:
    """Whether (some case of) ``test`` runs in ``stage``."""
    possible = test.always | test.some
    if stage == "main":
        return "slow" not in test.always
    if stage == "stat.":
        return "statistical" in possible and "slow" in possible
    return "slow" in possible and "statistical" not in test.always


def _describe(test: Case) -> str:
    marks = sorted(test.always)
    some = sorted(test.some)
    text = f"markers {marks}" if marks else "no markers"
    return text + (f", some cases {some}" if some else "")


def check(text: str, root: Path) -> list[str]:
    """Every problem of the claim tables of ``text`` (a page like docs/validation/index.md)
    against the tests under ``root``; empty when the page and the tests agree."""
    problems: list[str] = []
    rows = parse_rows(text, problems)
    modules: dict[str, ModuleTests | None] = {}

    def module(path: str) -> ModuleTests | None:
        if path not in modules:
            p = root / path
            modules[path] = ModuleTests(p) if p.is_file() else None
        return modules[path]

    for row in rows:
        where = row.label()
        for other in row.others:
            if not (root / other).is_file():
                problems.append(f"{where}: `{other}` does not exist")
        if not row.groups:
            if not row.malformed:
                problems.append(f"{where}: names no test (cell: {row.test_cell!r})")
            continue
        try:
            stages = parse_stages(row.stage_cell)
        except ValueError as err:
            problems.append(f"{where}: {err}")
            stages = []
        in_order = len(stages) == len(row.groups)
        resolved: list[list[tuple[Ref, ModuleTests, list[Case]]]] = []
        for g, group in enumerate(row.groups):
            resolved.append([])
            for ref in group:
                mod = module(ref.path)
                if mod is None:
                    problems.append(f"{where}: `{ref.written}`: no file {ref.path}")
                    continue
                tests = list(mod.tests.values()) if ref.name is None else mod.match(ref.name)
                if not tests:
                    what = "no tests" if ref.name is None else f"no test {ref.name!r}"
                    problems.append(f"{where}: `{ref.written}`: {ref.path} has {what}")
                    continue
                resolved[g].append((ref, mod, tests))
                if not stages:
                    continue
                wanted = [stages[g]] if in_order else stages
                if ref.name is None or "*" in ref.name:
                    ok = any(stage_runs(t, s) for t in tests for s in wanted)
                    if not ok:
                        problems.append(
                            f"{where}: `{ref.written}`: none of its tests runs in stage "
                            f"{' or '.join(wanted)}"
                        )
                else:
                    t = tests[0]
                    node = f"{ref.path}::{t.name}"
                    shown = f"`{ref.written}`" + ("" if ref.written == node else f" ({node})")
                    if not any(stage_runs(t, s) for s in wanted):
                        problems.append(
                            f"{where}: {shown} has {_describe(t)}: it does not run in stage "
                            f"{' or '.join(wanted)}"
                        )
        for direction, label, pattern in WORDS:
            if not pattern.search(row.claim) or not resolved or not resolved[0]:
                continue
            if not any(direction in mod.limits(t) for _, mod, tests in resolved[0] for t in tests):
                names = ", ".join(f"`{r.written}`" for r, _, _ in resolved[0])
                problems.append(
                    f"{where}: the claim says {label!r}, but no test of {names} asserts "
                    f"{DIRECTION_TEXT[direction]}"
                )
    return problems


# --------------------------------------------------------------------------------------------
# the page as it is


def test_every_row_names_tests_that_exist_in_their_stage_and_assert_its_direction():
    problems = check(INDEX.read_text(encoding="utf-8"), ROOT)
    assert not problems, "docs/validation/index.md:\n" + "\n".join(problems)


def test_the_page_has_claim_tables():
    # a parser that found nothing would pass the check above
    problems: list[str] = []
    rows = parse_rows(INDEX.read_text(encoding="utf-8"), problems)
    assert len(rows) >= 40 and sum(len(g) for r in rows for g in r.groups) >= 60
    assert {s for r in rows for s in parse_stages(r.stage_cell)} == set(STAGES)
    worded = [r for r in rows if any(p.search(r.claim) for _, _, p in WORDS)]
    assert len(worded) >= 10


# --------------------------------------------------------------------------------------------
# the checker catches what it should


FAKE_STAT = """\
import pytest

pytestmark = [pytest.mark.slow, pytest.mark.statistical]


def _count_above(draws, truth):
    return sum(d > truth for d in draws)


def test_never_above():
    n_above = _count_above([0.1, 0.2], 1.0)
    assert n_above <= 1


def test_covers():
    covered = 39
    assert 31 <= covered


def test_asserts_upward_only():
    ceiling, truth = 2.0, 1.0
    assert ceiling >= truth


def test_equal_only():
    assert 1 + 1 == 2
"""

FAKE_MAIN = """\
import pytest


@pytest.mark.slow
def test_long():
    assert 1 < 2


@pytest.mark.parametrize("k", [pytest.param(1, marks=pytest.mark.statistical), 2])
@pytest.mark.slow
def test_cases(k):
    assert k > 0


class TestGroup:
    def test_quick(self):
        assert self._check(3)

    def _check(self, k):
        assert not k > 5
        return True


def test_quick_upper():
    assert [1, 2] < [3]


@pytest.mark.statistical
def test_statistical_only():
    assert 1 < 2
"""


@pytest.fixture
def fake_root(tmp_path):
    (tmp_path / "tests" / "stat").mkdir(parents=True)
    (tmp_path / "tests" / "stat" / "test_claims.py").write_text(FAKE_STAT, encoding="utf-8")
    (tmp_path / "tests" / "stat" / "test_other.py").write_text(FAKE_MAIN, encoding="utf-8")
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "benchmarks" / "study.py").write_text("", encoding="utf-8")
    return tmp_path


def _table(*rows: str) -> str:
    return "\n".join(["# page", "", "| claim | test | stage |", "|---|---|---|", *rows, ""])


GOOD = _table(
    "| the claim is never above the truth | `tests/stat/test_claims.py::test_never_above` "
    "| stat. |",
    "| intervals cover: at least 31 of 40 | `...::test_covers`; `test_other.py::TestGroup::"
    "test_quick` (fast; `benchmarks/study.py`) | stat.; main |",
    "| | `...::test_cases[1]`, `...::test_long` | stat. (case 1); `-m slow` (the rest) |",
    "| a file and a pattern | `tests/stat/test_other.py`; `test_claims.py::test_*` | main; stat. |",
    "| no count above its bound | `test_other.py::TestGroup::test_quick` | main |",
)


def test_a_consistent_table_passes(fake_root):
    assert check(GOOD, fake_root) == []


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        # a test that does not exist, a file that does not exist, a pattern that matches nothing
        ("| x | `tests/stat/test_claims.py::test_gone` | stat. |", "has no test 'test_gone'"),
        ("| x | `tests/stat/test_moved.py::test_covers` | stat. |", "no file tests/stat/test_mo"),
        ("| x | `tests/stat/test_claims.py::test_z*` | stat. |", "has no test 'test_z*'"),
        ("| x | `tests/stat/test_claims.py::TestGroup::test_quick` | main |", "no test 'TestGroup"),
        ("| x | `...::test_covers` | stat. |", "no test file named before it"),
        ("| x | `test_claims.py::test_covers` | stat. |", "with none named before it"),
        ("| x | `test_covers` | stat. |", "write `...::test_covers`"),
        ("| x | `stat/test_claims.py::test_covers` | stat. |", "written from the root"),
        ("| x | `benchmarks/study.py::test_covers` | stat. |", "not a test module"),
        ("| x | the stress rows | stat. |", "names no test"),
        ("| x | `tests/stat/test_claims.py`, `benchmarks/gone.py` | stat. |", "does not exist"),
        # the stage: a marker missing, a stage that is not one, stages in order
        ("| x | `tests/stat/test_claims.py::test_covers` | main |", "does not run in stage main"),
        ("| x | `tests/stat/test_other.py::test_long` | stat. |", "does not run in stage stat."),
        (
            "| x | `tests/stat/test_other.py::test_statistical_only` | stat. |",
            "has markers ['statistical']: it does not run in stage stat.",
        ),
        (
            "| x | `tests/stat/test_other.py::TestGroup::test_quick` | `-m slow` |",
            "does not run in stage -m slow",
        ),
        ("| x | `tests/stat/test_claims.py::test_covers` | stat. (main); CI |", "is not one of"),
        (
            "| x | `tests/stat/test_claims.py::test_covers`; `test_other.py::test_quick_upper` "
            "| main; stat. |",
            "does not run in stage main",
        ),
        ("| x | `tests/stat/test_claims.py` | main |", "none of its tests runs in stage main"),
        # the direction of the words
        (
            "| the claim is never above the truth | `tests/stat/test_claims.py::test_covers` "
            "| stat. |",
            "the claim says 'never above', but no test of `tests/stat/test_claims.py::"
            "test_covers` asserts an upper limit",
        ),
        (
            "| the bound is not above eps | `tests/stat/test_claims.py::test_asserts_upward_only` "
            "| stat. |",
            "the claim says 'not above'",
        ),
        (
            "| at most 9 of 80 | `tests/stat/test_claims.py::test_equal_only` | stat. |",
            "the claim says 'at most'",
        ),
        (
            "| no interval above the truth | `tests/stat/test_claims.py::test_covers` | stat. |",
            "the claim says 'no ... above'",
        ),
        (
            "| the intervals cover the truth | `tests/stat/test_claims.py::test_never_above` "
            "| stat. |",
            "the claim says 'covers'",
        ),
        (
            "| at least 31 cover | `tests/stat/test_other.py::test_quick_upper` | main |",
            "the claim says 'at least'",
        ),
    ],
)
def test_each_defect_is_reported(fake_root, row, expected):
    problems = check(_table(row), fake_root)
    assert any(expected in p for p in problems), problems
    assert all(p.startswith("line 5 (") for p in problems), problems


def test_a_continuation_row_inherits_the_claim_and_the_file(fake_root):
    text = _table(
        "| the intervals cover the truth | `tests/stat/test_claims.py::test_covers` | stat. |",
        "| | `...::test_never_above` | stat. |",
    )
    (problem,) = check(text, fake_root)
    assert problem.startswith("line 6 ('the intervals cover the truth')")
    assert "the claim says 'covers'" in problem


def test_directions_as_read():
    def read(src):
        out: set[str] = set()
        _directions(ast.parse(src, mode="eval").body, False, out)
        return out

    assert read("n_above <= 9") == {"upper"}
    assert read("covered >= 31") == {"lower"}
    assert read("31 <= covered") == {"lower"}
    assert read("0.85 <= cov <= 0.95") == {"upper", "lower"}
    assert read("not (n > 9)") == {"upper"}
    assert read("np.all(claims < truth)") == {"upper"}
    assert read("k == 0 and x is None") == set()


def test_table_parsing():
    assert _cells("| a `x | y` | b |") == ["a `x | y`", "b"]
    assert _split_top("`a`(1; 2); b") == ["`a`(1; 2)", "b"]
    assert parse_stages("stat. (binomial); `-m slow` (7 min; 45 min)") == ["stat.", "-m slow"]
    assert parse_stages("stat. (short: main)") == ["stat."]
