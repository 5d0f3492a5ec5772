"""SECURITY.md and the tests stay in step: every test it names exists, and every threat names at
least one. The test files are read (their syntax tree), never collected or run: this is cheap."""
from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

from workshop.tools import paths

DOC = paths.ROOT / "SECURITY.md"
# a test as pytest names it, without parameters: tests/test_x.py::test_y (or ::TestZ::test_y)
NODE = re.compile(r"`(tests/[\w/]+\.py)::(\w+(?:::\w+)?)`")


def threats(text: str) -> dict[str, list[tuple[str, str]]]:
    """{each `### ` heading under `## Threats`: the tests its text names}."""
    if "\n## Threats\n" not in text:
        return {}
    section = text.split("\n## Threats\n", 1)[1].split("\n## ", 1)[0]
    parts = re.split(r"^### (.+)$", section, flags=re.M)[1:]
    return {title: NODE.findall(body) for title, body in zip(parts[::2], parts[1::2])}


@functools.cache
def defined_tests(path: Path) -> set[str]:
    """The test functions a test file defines, as pytest names them after the file's `::`."""
    found = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and \
                node.name.startswith("test"):
            found.add(node.name)
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            found |= {f"{node.name}::{f.name}" for f in node.body
                      if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)
                      and f.name.startswith("test")}
    return found


def problems(text: str, root: Path) -> list[str]:
    """What is out of step between a SECURITY.md's text and the test files under `root`."""
    found = threats(text)
    said = [] if found else ["no threat (a `### ` heading) under `## Threats`"]
    said += [f"{title}: names no test" for title, named in found.items() if not named]
    for file, name in sorted(set(NODE.findall(text))):   # in a threat's list or anywhere else
        path = root / file
        if not path.is_file():
            said.append(f"{file}::{name}: no such test file")
        elif name not in defined_tests(path):
            said.append(f"{file}::{name}: {file} has no such test")
    return said


def test_every_threat_names_a_test_and_every_test_named_exists():
    found = threats(DOC.read_text(encoding="utf-8"))
    assert len(found) >= 10, list(found)
    assert problems(DOC.read_text(encoding="utf-8"), paths.ROOT) == []


def test_a_threat_without_a_test_and_a_test_that_is_gone_are_caught(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text(
        "def test_here():\n    pass\n\n\nclass TestGroup:\n    def test_in(self):\n"
        "        pass\n\n\ndef helper_test_not():\n    pass\n")
    text = ("# Security\n\n## Threats\n\n### T1. Kept out\n\n*Tests*:\n"
            "- `tests/test_a.py::test_here`\n- `tests/test_a.py::TestGroup::test_in`\n\n"
            "### T2. Renamed\n\n- `tests/test_a.py::test_renamed`\n\n"
            "### T3. Said, not proven\n\nNo test.\n\n## Reporting\n\n"
            "`tests/test_gone.py::test_x` and `tests/test_a.py::helper_test_not`\n")
    assert problems(text, tmp_path) == [
        "T3. Said, not proven: names no test",
        "tests/test_a.py::helper_test_not: tests/test_a.py has no such test",
        "tests/test_a.py::test_renamed: tests/test_a.py has no such test",
        "tests/test_gone.py::test_x: no such test file"]
    assert problems("# Security\n\nnothing\n", tmp_path) == [
        "no threat (a `### ` heading) under `## Threats`"]
