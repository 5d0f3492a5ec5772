"""What a maintainer expects around the kit: its licences, complete package metadata, a version
with a changelog entry, every import declared, the package's two layers (the runtime a kernel
imports, the tools a maintainer runs) as docs/maintaining.md maps them, and pre-commit hooks
that pass."""
from __future__ import annotations

import ast
import re
import shlex
import subprocess
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet

from workshop.tools import lockfile, paths
from workshop.tools import notebooks as nbs

ROOT = paths.ROOT
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_licences_are_there_and_say_which_is_which():
    mit = (ROOT / "LICENSE").read_text()
    assert mit.startswith("MIT License") and "Copyright (c) 20" in mit
    cc = (ROOT / "LICENSES" / "CC-BY-4.0.txt").read_text()
    assert cc.startswith("Creative Commons Attribution 4.0 International") and len(cc) > 15000
    notice = (ROOT / "NOTICE").read_text()
    assert "Apache License, Version 2.0" in notice and "The JAX Authors" in notice
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Licence and credit", 1)[1].split("\n## ", 1)[0]
    for says in ("MIT", "CC BY 4.0", "Apache", "NOTICE", "LICENSE"):
        assert says in section, f"the README's licence section does not say {says}"


def test_metadata_is_complete():
    assert PROJECT["license"] == "MIT"
    assert set(PROJECT["license-files"]) >= {"LICENSE", "LICENSES/*", "NOTICE"}
    assert PROJECT["readme"] == "README.md" and PROJECT["urls"]
    assert PROJECT["description"]
    # what scripts/setup, doctor and the README accept: 3.12 to 3.15, from their first release
    from workshop.tools.doctor import PYTHONS
    claimed = SpecifierSet(PROJECT["requires-python"])
    assert all(f"{a}.{b}.{p}" in claimed for a, b in PYTHONS for p in (0, 9))
    assert not any(v in claimed for v in ("3.11.9", "3.16.0"))
    assert [(3, m) for m in range(10, 20) if f"3.{m}.0" in claimed] == list(PYTHONS)


def test_the_version_has_a_changelog_entry():
    version = PROJECT["version"]
    assert re.fullmatch(r"20\d\d\.(1[0-2]|[1-9])\.[1-9]\d*", version), \
        f"{version}: YEAR.MONTH.N, the Nth release of that month"
    log = (ROOT / "CHANGELOG.md").read_text()
    first = re.search(r"^## (\S+) · (\d{4}-\d{2}-\d{2})$", log, re.M)
    assert first and first.group(1) == version, \
        f"CHANGELOG.md's first entry should be “## {version} · YYYY-MM-DD”"
    entry = log[first.end():].split("\n## ", 1)[0]
    for reader in ("Presenters", "Readers", "Attendees", "Maintainers"):
        assert f"### {reader}" in entry, f"the {version} entry says nothing for {reader}"


def _third_party_imports(files) -> dict[str, set[str]]:
    """{distribution: {file, ...}} for every module the files import that is not the
    standard library, the kit itself, or a local test module."""
    local = {p.stem for p in (ROOT / "tests").rglob("*.py")} | {"workshop"} | {
        p.name for p in (ROOT / "tests").iterdir() if p.is_dir()}   # tests/wrong_answers
    dists = packages_distributions()
    out: dict[str, set[str]] = {}
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top in sys.stdlib_module_names or top in local:
                    continue
                for dist in dists.get(top, [f"(no distribution for {top})"]):
                    out.setdefault(lockfile.canon(dist), set()).add(paths.short(path))
    return out


def _declared(*groups: str) -> set[str]:
    names = list(PROJECT["dependencies"])
    for g in groups:
        names += PROJECT["optional-dependencies"][g]
    return {lockfile.canon(re.split(r"[\[<>=!~; ]", n, maxsplit=1)[0]) for n in names} \
        - {"jax-core-workshop"}


def test_the_readmes_short_install_names_the_locks_versions():
    # "or just: pip install jax==… jaxlib==… ml-dtypes==…" (the attendee-venv test installs
    # exactly that): the lock's versions, so an attendee's kernel is the kit's where it counts
    from workshop.tools import lockfile
    pins = lockfile.pins()
    want = " ".join(f"{name}=={pins[name]}" for name in ("jax", "jaxlib", "ml-dtypes"))
    for doc in ("README.md", "environment/README.md"):
        assert want in (ROOT / doc).read_text(), f"{doc} does not say {want}"


def test_every_import_is_declared_and_locked():
    # the package: the runtime (an attendee's `pip install`) plus the `build` and `hub` extras;
    # the tests: the `dev` extra as well. Every declared name is in the lock, so setup installs it.
    package = _third_party_imports(sorted((ROOT / "workshop").rglob("*.py")))
    missing = {d: sorted(f)[:3] for d, f in package.items()
               if d not in _declared("build", "hub")}
    assert not missing, f"imported by the package, not declared in pyproject.toml: {missing}"
    tests = _third_party_imports(sorted((ROOT / "tests").rglob("*.py")))
    missing = {d: sorted(f)[:3] for d, f in tests.items()
               if d not in _declared("build", "hub", "dev")}
    assert not missing, f"imported by the tests, not declared in the dev extra: {missing}"
    unlocked = _declared("build", "hub", "dev") - set(lockfile.pins())
    assert not unlocked, f"declared but not in environment/requirements.lock: {unlocked}"


def test_the_runtime_is_only_what_a_kernel_needs():
    # an attendee installs the runtime alone (tests/test_attendee_venv.py runs every lab so):
    # the browser, the PDF tools and the server are the build's
    runtime = _declared()
    assert not runtime & {"playwright", "pypdf", "psutil", "jupyterlab", "nbconvert", "pytest"}


PACKAGE = ROOT / "workshop"
TOOLS = PACKAGE / "tools"
# what only the tools use: a kernel that imported the runtime has none of them
TOOLS_ONLY = {"nbformat", "nbclient", "nbconvert", "jupyter_server", "jupyterlab",
              "jupyterlab_rise", "playwright", "pypdf", "psutil"}


def _module(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(source: str, module: str, package: bool) -> set[str]:
    """Every module name the source imports, anywhere in it (a function's lazy import too),
    relative imports made absolute; `from X import a` counts X and X.a."""
    out = set()
    for base, names in _import_statements(source, module, package):
        out |= {base} | {f"{base}.{n}" for n in names}
    return out


def _import_statements(source: str, module: str, package: bool):
    """(module, names) for each import anywhere in the source, relative ones made absolute:
    `import a.b` gives ('a.b', []), `from ..x import y, z` ('workshop.x', ['y', 'z'])."""
    here = module if package else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            yield from ((a.name, []) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = here.split(".")[: len(here.split(".")) - (node.level - 1)]
                base = ".".join(up + ([node.module] if node.module else []))
            yield base, [a.name for a in node.names]


def _runtime_files() -> list[Path]:
    return [p for p in sorted(PACKAGE.rglob("*.py")) if TOOLS not in p.parents]


def test_the_runtime_never_imports_the_tools():
    # the checker itself: each way a runtime module could reach the tools is seen
    for src in ("from .tools import cli", "from . import tools", "import workshop.tools.env",
                "def f():\n    from .tools.builder import execute"):
        assert any(m.startswith("workshop.tools") for m in _imports(src, "workshop.show", False))
    assert any(m.startswith("workshop.tools")
               for m in _imports("from ..tools import env", "workshop.labs.j1", False))
    reach = {paths.short(p): sorted(m for m in _imports(p.read_text(encoding="utf-8"), _module(p),
                                                        p.name == "__init__.py")
                                  if m == "workshop.tools" or m.startswith("workshop.tools."))
             for p in _runtime_files() if p.name != "__main__.py"}   # (the command's door)
    assert {k: v for k, v in reach.items() if v} == {}


def test_no_deck_or_lab_cell_imports_the_tools():
    # an attendee's kernel has the runtime alone (`pip install -e .`): a cell that reached for
    # the tools (their nbformat, their paths) would fail there
    reach = {}
    for nb in nbs.all_notebooks() + sorted((ROOT / "exercises").glob("*.ipynb")):
        for i, cell in enumerate(nbs.read(nb).cells):
            if cell.cell_type != "code":
                continue
            code = "\n".join("" if ln.lstrip().startswith(("%", "!")) else ln
                             for ln in cell.source.splitlines())
            got = {m for m in _imports(code, "__main__", False) if m.startswith("workshop.tools")}
            got |= {"workshop.tools"} if re.search(r"from workshop import [^\n]*\btools\b",
                                                   code) else set()
            if got:
                reach[f"{paths.short(nb)} cell {i}"] = sorted(got)
    assert reach == {}


def test_a_kernel_of_the_runtime_loads_none_of_the_tools():
    code = ("import workshop; workshop.setup()\n"
            "import workshop.phasemap, workshop.jitcache\n"
            "from workshop.labs import j1, j2, j3, j4, l2, l5\n"
            "import sys; print(' '.join(sorted(sys.modules)))\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       cwd=ROOT)
    assert p.returncode == 0, p.stderr
    loaded = set(p.stdout.split())
    assert "workshop.labs.l5" in loaded and "jax" in loaded
    assert sorted(m for m in loaded if m.startswith("workshop.tools")) == []
    assert sorted({m.split(".")[0] for m in loaded} & TOOLS_ONLY) == []


def test_the_runtime_imports_only_its_declared_dependencies():
    runtime = _third_party_imports(_runtime_files())
    assert set(runtime) <= _declared(), \
        {d: sorted(f)[:3] for d, f in runtime.items() if d not in _declared()}
    # and each declared one is used: ipykernel makes the venv a kernel, and rich is what
    # jax.debug.visualize_array_sharding draws with (J4, deck 06); neither is imported by name
    assert _declared() - set(runtime) == {"ipykernel", "rich"}
    assert not _declared() & {lockfile.canon(n) for n in TOOLS_ONLY}


def _graph() -> dict[str, set[str]]:
    """{module: the package's modules it imports, anywhere in it}. `from . import x` is an edge
    to the module x where there is one (not to the package it sits in)."""
    files = {_module(p): p for p in sorted(PACKAGE.rglob("*.py"))}
    graph = {}
    for name, path in files.items():
        edges = set()
        for base, names in _import_statements(path.read_text(encoding="utf-8"), name,
                                              path.name == "__init__.py"):
            subs = {f"{base}.{n}" for n in names} & set(files)
            edges |= subs if names and len(subs) == len(names) else subs | {base}
        graph[name] = {e for e in edges if e in files and e != name}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles: each strongly connected group of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_package_has_no_import_cycle():
    # the checker itself: a circle of two, and one of three, are found; a chain is not
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []
    graph = _graph()
    assert graph["workshop.tools.builder.report"] >= {"workshop.tools.builder.execute"}
    assert _cycles(graph) == [], "modules that import each other (lazily or not)"


def _code_lines(node) -> int:
    """A function's lines, from its `def` to its last, its docstring aside."""
    n = node.end_lineno - node.lineno + 1
    first = node.body[0] if node.body else None
    if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)):
        n -= first.end_lineno - first.lineno + 1
    return n


def test_no_function_in_the_package_is_over_60_lines():
    # a function a reader can hold in view: steps over 60 lines are split into named steps
    # (a docstring, with its Args and example, is documentation and does not count)
    long = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                    and _code_lines(node) > 60:
                long[f"{paths.short(path)}:{node.lineno} {node.name}"] = _code_lines(node)
    assert long == {}


def _mapped() -> dict[str, list[str]]:
    """docs/maintaining.md's package map: {layer: [file, ...]} from its two tables (a bare
    `name.py` after a path is in that path's folder)."""
    text = (ROOT / "docs" / "maintaining.md").read_text(encoding="utf-8")
    section = text[text.index("### The package map"):text.index("## The notebook rules")]
    layers, layer = {}, None
    for line in section.splitlines():
        if line.startswith("**The runtime**"):
            layer = layers.setdefault("runtime", [])
        elif line.startswith("**The tools**"):
            layer = layers.setdefault("tools", [])
        elif line.startswith("| `") and layer is not None:
            folder = ""
            for name in re.findall(r"`([^`]+\.py)`", line.split("|")[1]):
                name = name if "/" in name else f"{folder}/{name}"
                folder = name.rpartition("/")[0]
                layer.append(name)
    return layers


def test_the_package_map_in_maintaining_lists_every_module_in_its_layer():
    layers = _mapped()
    listed = layers["runtime"] + layers["tools"]
    assert len(listed) == len(set(listed)), "a module is listed twice"
    # a lab's checks, `workshop/labs/<id>.py`, are mapped by the row that names that pattern
    labs = {f"workshop/labs/{p.stem.split('-')[0].lower()}.py" for p in nbs.lab_sources()}
    assert "workshop/labs/<id>.py" in listed
    listed = [f for f in listed if f != "workshop/labs/<id>.py"] + sorted(labs)
    want = {paths.short(p) for p in PACKAGE.rglob("*.py")
            if not (p.name == "__init__.py" and ast.get_docstring(ast.parse(p.read_text()))
                    and len(ast.parse(p.read_text()).body) == 1)}
    assert set(listed) == want, (f"missing from the map: {sorted(want - set(listed))}; "
                                 f"no such module: {sorted(set(listed) - want)}")
    assert all(not f.startswith("workshop/tools/") for f in layers["runtime"])
    assert all(f.startswith("workshop/tools/") for f in layers["tools"])


def _hooks():
    import yaml
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
    return [h for repo in config["repos"] for h in repo["hooks"]]


def test_pre_commit_runs_ruff_fmt_and_labs_with_the_kits_venv():
    entries = {h["id"]: h["entry"] for h in _hooks()}
    assert entries == {
        "ruff": ".venv/bin/ruff check --force-exclude",
        "notebooks-normalised": ".venv/bin/python -m workshop fmt --check",
        "attendee-copies-current": ".venv/bin/python -m workshop labs --check"}
    assert all(h["language"] == "system" for h in _hooks()), "no hook environment to download"


def test_one_recipe_installs_the_hooks_everywhere_it_is_written():
    # the config's comment, CONTRIBUTING and the guide say the same command (they disagreed)
    recipe = ".venv/bin/uv tool run pre-commit install"
    for doc in (".pre-commit-config.yaml", "CONTRIBUTING.md", "docs/maintaining.md"):
        text = (ROOT / doc).read_text()
        found = set(re.findall(r"`([^`]*pre-commit install[^`]*)`", text))
        assert found == {recipe}, f"{doc} says {found or 'nothing'}, not {recipe}"


@pytest.mark.parametrize("hook", _hooks(), ids=lambda h: h["id"])
def test_each_pre_commit_hook_passes_on_the_kit(hook):
    # as `pre-commit run --all-files` runs it, with this venv's tools (the hooks name .venv's;
    # in a clean clone they are the same), over the folders the lint always covered
    cmd = shlex.split(hook["entry"])
    cmd[0] = str(Path(sys.executable).with_name(Path(cmd[0]).name))
    files = ["workshop", "tests", "decks", "exercises"] if hook.get("pass_filenames", True) else []
    p = subprocess.run(cmd + files, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
