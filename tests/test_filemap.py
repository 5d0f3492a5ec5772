"""The whole-file map: every function and class of the installed file, at its real line."""
from __future__ import annotations

import ast
import importlib
import inspect
import re

import pytest

from workshop import ClaimFailed, file_map


@pytest.mark.parametrize("module", ["jax._src.cache_key", "jax._src.linear_util",
                                    "jax._src.interpreters.batching", "jax._src.tree_util"])
def test_every_function_and_class_is_on_the_map_at_its_line(module):
    m = file_map(module)
    mod = importlib.import_module(module)
    by_name = {e.name: e for e in m.entries}
    defined_here = [(n, o) for n, o in vars(mod).items()
                    if (inspect.isfunction(o) or inspect.isclass(o))
                    and getattr(o, "__module__", None) == module
                    and getattr(o, "__qualname__", n) == n]
    assert len(defined_here) > 5
    for name, obj in defined_here:   # independent of the map's own parse: inspect's lines
        try:
            line = inspect.getsourcelines(inspect.unwrap(obj))[1]
        except (OSError, TypeError):
            continue
        assert name in by_name, f"{name} missing from the map of {module}"
        assert by_name[name].line == line, (name, by_name[name].line, line)
    text = open(inspect.getsourcefile(mod)).read()
    n_top = sum(isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))
                for n in ast.parse(text).body)
    assert sum(e.depth == 0 for e in m.entries) >= n_top
    assert m.total == len(text.splitlines())


def test_reads_are_marked_and_counted():
    m = file_map("jax._src.cache_key", reads=["get", "_hash_xla_flags"])
    get = next(e for e in m.entries if e.name == "get")
    flags = next(e for e in m.entries if e.name == "_hash_xla_flags")
    assert m.read_lines() == get.lines + flags.lines
    text = str(m)
    assert f"▶{get.line:5d} get" in text and f"▶{flags.line:5d} _hash_xla_flags" in text
    assert text.count("▶") == 3   # the two rows and the summary's legend
    page = m._repr_html_()
    assert page.count("▶ ") == 2 and "the deck reads 2" in page
    assert page.count("white-space:nowrap") == len(m.entries) == len(m._shown())
    for e in m.entries:   # each row: its line, the mark if read, its name
        row = re.search(rf">{e.line}</span> (▶ )?(?:<i>class</i> )?{re.escape(e.name)}<", page)
        assert row and bool(row.group(1)) == (e.name in m.reads), e.name


def test_a_class_read_in_part_lists_its_methods():
    m = file_map("jax._src.core", reads=["Tracer.__bool__"])
    shown = [e.name for e in m._shown()]
    assert "Tracer.__bool__" in shown and "Tracer.__init__" in shown
    assert not any(n.startswith("Trace.") for n in shown), "an unread class stays folded"


def test_a_read_the_file_does_not_define_fails_the_run():
    with pytest.raises(ClaimFailed, match="cache_key.py defines no get_the_key"):
        file_map("jax._src.cache_key", reads=["get", "get_the_key"])
