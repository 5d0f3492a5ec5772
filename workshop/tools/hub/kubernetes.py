"""`python -m workshop kubernetes`: deploy/kubernetes/values.yaml's copy of the hub's login
written from hub/login.py, so the chart's hub runs the file `scripts/hub` runs. The chart mounts
a file given in the values (hub.extraFiles: a file's text under `stringData`), so the values
hold the module's text, byte for byte; tests/test_hub_kubernetes.py fails while they differ.
Only that block of values.yaml is rewritten: its comments and the rest stay as written."""
from __future__ import annotations

from pathlib import Path

from .. import errors, paths

VALUES = paths.ROOT / "deploy" / "kubernetes" / "values.yaml"
LOGIN = Path(__file__).with_name("login.py")
KEY = "workshop-login"   # the file's key under hub.extraFiles


def with_login(values: str, module: str) -> str:
    """`values` (values.yaml's text) with hub.extraFiles.KEY.stringData's block holding
    `module`'s text: the block runs from `stringData: |` to the first line indented less."""
    lines = values.splitlines(keepends=True)
    try:
        at = lines.index(f"    {KEY}:\n")
        at += next(i for i, line in enumerate(lines[at:]) if line.strip() == "stringData: |")
    except (ValueError, StopIteration):
        raise errors.KitError(f"{paths.short(VALUES)} has no hub.extraFiles.{KEY}.stringData "
                              "block to write the login into") from None
    indent = " " * (len(lines[at]) - len(lines[at].lstrip()) + 2)
    end = at + 1
    while end < len(lines) and (not lines[end].strip() or lines[end].startswith(indent)):
        end += 1
    while end > at + 1 and not lines[end - 1].strip():   # the blank lines after the block
        end -= 1
    block = [indent + line if line.strip() else "\n" for line in module.splitlines(True)]
    return "".join(lines[:at + 1] + block + lines[end:])


def main() -> int:
    old = VALUES.read_text(encoding="utf-8")
    new = with_login(old, LOGIN.read_text(encoding="utf-8"))
    if new != old:
        VALUES.write_text(new, encoding="utf-8")
    print(f"kubernetes: {paths.short(VALUES)} holds {paths.short(LOGIN)} "
          f"({'written' if new != old else 'already'})")
    return 0
