"""The whole-file map: every function and class of the installed file, at its real line."""
from __future__ import annotations

import ast
import importlib
import inspect
import re

import pytest

from workshop import ClaimFailed, file_map, filemap, palette


@pytest.mark.parametrize("module", ["jax._src.cache_key", "jax._src.linear_util",
                                    "jax._src.interpreters.batching", "jax._src.tree_util"])
def test_every_function_and_class_is_on_the_map_at_its_line(module):
    m = file_map(module, part=(1, 2))   # the entries are the whole file's, whatever the part
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
        row = re.search(rf">{e.line}</span> (▶ )?(?:{re.escape(filemap.CLASS)})?"
                        rf"{re.escape(e.name)}<", page)
        assert row and bool(row.group(1)) == (e.name in m.reads), e.name


def test_a_class_read_in_part_lists_its_methods():
    m = file_map("jax._src.core", reads=["Tracer.__bool__"], within=("Trace", "Tracer"),
                 part=(2, 2))
    shown = [e.name for e in m._shown()]
    assert "Tracer.__bool__" in shown and sum(n.startswith("Tracer.") for n in shown) > 10
    assert not any(n.startswith("Trace.") for n in shown), "an unread class stays folded"


def test_a_read_the_file_does_not_define_fails_the_run():
    with pytest.raises(ClaimFailed, match="cache_key.py defines no get_the_key"):
        file_map("jax._src.cache_key", reads=["get", "get_the_key"])


def test_a_long_file_fails_without_parts_and_its_parts_cover_it_once():
    with pytest.raises(ClaimFailed, match=r"pjit.py: \d+ rows do not fit one slide .* in 4 parts"):
        file_map("jax._src.pjit")
    whole = [e.name for e in file_map("jax._src.pjit", part=(1, 4)).entries
             if e.depth == 0]
    seen = []
    for k in range(1, 5):
        m = file_map("jax._src.pjit", reads=["pjit_staging_rule"], part=(k, 4))
        rows = m._shown()
        assert 0 < len(rows) <= 32
        assert m.scope[0] == rows[0].line and m.scope[1] >= rows[-1].line
        assert f"part {k} of 4: lines {m.scope[0]}–{m.scope[1]}" in m.summary()
        assert f"stroke='{palette.TEXT}'" in m._strip()       # where the part sits in the file
        assert "this part" in m._legend()                   # and the legend says so
        seen += [e.name for e in rows]
    assert seen == whole                              # every row once, in file order
    assert "▶" in str(next(file_map("jax._src.pjit", reads=["pjit_staging_rule"], part=(k, 4))
                            for k in range(1, 5) if "pjit_staging_rule" in
                            [e.name for e in file_map("jax._src.pjit", part=(k, 4))._shown()]))


def test_a_part_keeps_a_class_with_its_methods():
    for k in (1, 2):
        m = file_map("jax._src.core", reads=["Tracer.__bool__"], within=("Tracer", "Tracer"),
                     part=(k, 2))
        names = [e.name for e in m._shown()]
        assert all(n == "Tracer" or n.startswith("Tracer.") for n in names)
        assert ("Tracer" in names) == (k == 1) and len(names) <= 32
    with pytest.raises(ClaimFailed, match="core.py defines no Tracr"):
        file_map("jax._src.core", within=("Tracr", "Trace"))
    with pytest.raises(ClaimFailed, match="k runs from 1 to n"):
        file_map("jax._src.cache_key", part=(3, 2))


def test_within_maps_only_that_stretch():
    m = file_map("jax._src.core", reads=["Trace"], within=("Trace", "EvalTrace"))
    lines = [e.line for e in m._shown()]
    names = {e.name for e in m._shown()}
    trace, evaltrace = (next(e for e in m.entries if e.name == n) for n in ("Trace", "EvalTrace"))
    assert {"Trace", "EvalTrace"} <= names and "Tracer.__bool__" not in names
    assert m.scope == (trace.line, evaltrace.end) and lines == sorted(lines)
    assert "Var" not in names and "Primitive" not in names
    assert m.summary().endswith(f"Trace … EvalTrace: lines {m.scope[0]}–{m.scope[1]}")


def test_the_strip_has_a_legend_in_its_own_colours():
    whole = file_map("jax._src.linear_util", reads=["cache"])
    legend = whole._legend()
    for colour, words in [(palette.MARK_STRIP, "read (▶)"), (palette.CLASS_STRIP, "a class"),
                          (palette.STRIP, "the rest")]:
        assert f"background:{colour}" in legend and words in legend
        assert f"fill='{colour}'" in whole._strip() or colour == palette.CLASS_STRIP
    assert "this part" not in legend                # a whole-file map has no part outlined
    assert legend in whole._repr_html_()


def _rows(m) -> list[str]:
    """The map's rows as the slide shows them (its HTML's text), one string each."""
    page = m._repr_html_()
    return [re.sub(r"<[^>]+>", "", r).replace("&#x27;", "'").replace("&gt;", ">")
            .replace("&lt;", "<").replace("&amp;", "&")
            for r in re.findall(r"title='[^']*'>(.*?)</div>", page)]


def test_a_row_fits_its_column_and_a_long_role_is_cut_at_a_whole_parameter_or_word():
    # deck 02's map of core.py: its column held 47 characters at 20 px and the browser cut
    # three rows mid-signature ("delta:…", "primitiv…"); now each row fits and a role is cut
    # after a whole parameter or word (the browser test measures the same on the slide)
    m = file_map("jax._src.core", within=("Jaxpr", "Literal"),
                 reads=["Jaxpr", "jaxprs_in_params", "JaxprEqn", "Var", "Literal"])
    roles = {e.line: e.role for e in m._shown()}
    column = filemap._row_chars(2)
    cut = 0
    for row in _rows(m):
        number, rest = row.split(" ", 1)
        assert filemap.ROW_FIXED + len(rest) <= column, row
        role = roles[int(number)]
        if role and role not in row:
            cut += 1
            assert row.endswith(("…", "…)")), row
            kept = row[row.find(role[:4]):].removesuffix("…)").removesuffix("…").rstrip(", ")
            assert role[:4] in row and role.startswith(kept), (row, role)
            assert role[len(kept)] in ",. )", f"cut mid-word: {row!r} of {role!r}"
    assert cut >= 2   # the map does cut (new_jaxpr_eqn's seven parameters)


def test_a_role_reads_as_prose_without_sphinx_roles():
    # tree_util's docstrings say "Alias of :func:`jax.tree.map`": the map printed the role raw
    m = file_map("jax._src.tree_util", part=(1, 2))   # (the entries are the whole file's)
    assert ":func:`" in filemap.source_file("jax._src.tree_util").read_text(), \
        "tree_util no longer has a :func: role to read"
    assert any(e.role.startswith("Alias of jax.") for e in m.entries)
    assert not any(re.search(r":\w+:`|``", e.role) for e in m.entries)
    assert filemap._plain("Alias of :func:`jax.tree.map` on :class:`~jax.Array` ``x``.") == \
        "Alias of jax.tree.map on Array x."


def test_counts_say_one_class_and_one_method():
    # "1 classes", "0 methods" and "+1 methods" were in the reading handouts' maps
    one = filemap.Entry("Store", "class", 1, 9, "", 0)
    m = filemap.FileMap("jax/_src/x.py", 10, [one, filemap.Entry("Store.get", "method", 3, 4,
                                                                   "", 1)], {"Store.get"})
    assert m.summary().startswith("jax/_src/x.py · 10 lines · 1 class · 1 method ·")
    assert "function" not in m.summary()   # none: not "0 functions"
    m.reads = set()
    assert "+1 method<" in m._repr_html_() and "methods" not in m._repr_html_()
