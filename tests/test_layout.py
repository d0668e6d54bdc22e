"""The house as the README's Layout section draws it: what each folder may import, checked on the
source (every `import` statement, also those inside functions), and the packaging that installs
`web/` and `calibration/` under `companion`."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
VALUES = {"state", "errors", "files"}  # companion/<module>.py files, besides setup_file and cli
CORE = {"values", "setup_file"}
# Which parts of ours each part may import (besides itself). The core values import only each
# other, except the setup file, which reads each rule system's own section through its registry.
MAY_IMPORT: dict[str, set[str]] = {
    "values": {"values"},
    "setup_file": {"values", "rules"},
    "cli": {"values", "rules", "commands"},
    "rules": CORE,
    "vision": CORE,
    "calibration": CORE | {"vision"},
    "live": CORE | {"vision", "rules"},
    "web": CORE | {"vision", "rules", "live"},
    "run": CORE | {"vision", "rules", "live", "web"},
    "synth": CORE | {"vision", "rules", "calibration"},  # the calibration board it draws
    "bench": CORE | {"vision", "rules", "calibration", "synth", "live", "run", "web"},
    "commands": CORE | {"vision", "rules", "live", "web", "run", "synth", "bench", "calibration"},
}
# The one place of the product path that may use a test instrument: the demo is a synthetic table.
EXCEPTIONS = {("companion/run/demo.py", "synth")}
NOT_IMPORTED: dict[str, set[str]] = {  # libraries a part must not reach for
    "rules": {"cv2", "numpy", "flask", "waitress"},
    "vision": {"flask", "waitress"},
    "live": {"flask", "waitress"},
    "web": {"cv2", "numpy", "waitress"},
    "calibration": {"flask", "waitress"},
}


def _part_of_file(path: Path) -> str:
    rel = path.relative_to(ROOT).parts
    if rel[0] in ("web", "calibration"):
        return rel[0]
    if len(rel) == 2:  # companion/<module>.py
        name = Path(rel[1]).stem
        return name if name in ("setup_file", "cli") else "values"
    return rel[1]


def _part_of_module(name: str) -> str | None:
    parts = name.split(".")
    if parts[0] in ("web", "calibration"):
        return "top-level " + parts[0]  # never: installed, they are companion.web and companion.calibration
    if parts[0] != "companion" or len(parts) < 2:
        return None
    if parts[1] in VALUES:
        return "values"
    return parts[1]


def _imports(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
        elif isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
    return names


def _sources() -> list[Path]:
    return sorted(p for folder in ("companion", "web", "calibration") for p in (ROOT / folder).rglob("*.py"))


def test_each_part_imports_only_what_the_layout_allows():
    wrong = []
    for path in _sources():
        part = _part_of_file(path)
        rel = path.relative_to(ROOT).as_posix()
        for name in _imports(path):
            target = _part_of_module(name)
            if target is not None and target != part and target not in MAY_IMPORT[part] \
                    and (rel, target) not in EXCEPTIONS:
                wrong.append(f"{rel} ({part}) imports {name}")
            if name.split(".")[0] in NOT_IMPORTED.get(part, set()):
                wrong.append(f"{rel} ({part}) imports {name}")
    assert not wrong, "\n".join(wrong)


def test_the_layout_check_sees_a_wrong_import(tmp_path):
    """The check itself: a rules module importing OpenCV or vision would be caught."""
    fake = ROOT / "companion" / "rules" / "x.py"
    assert _part_of_file(fake) == "rules" and _part_of_module("companion.vision.camera") not in MAY_IMPORT["rules"]
    (tmp_path / "m.py").write_text("def f():\n    from companion.vision import camera\n    import cv2\n")
    assert _imports(tmp_path / "m.py") == ["companion.vision", "cv2"]


def test_tests_import_our_packages_under_companion_only():
    wrong = [f"{p.relative_to(ROOT)} imports {name}" for p in sorted((ROOT / "tests").rglob("*.py"))
             for name in _imports(p) if name.split(".")[0] in ("web", "calibration")]
    assert not wrong, "\n".join(wrong)


def test_every_package_folder_is_installed():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    mapped = {folder: package for package, folder in config["package-dir"].items()}
    found = set()
    for init in (p for folder in ("companion", "web", "calibration") for p in (ROOT / folder).rglob("__init__.py")):
        rel = init.parent.relative_to(ROOT).parts
        if rel[0] in mapped:
            found.add(".".join((mapped[rel[0]],) + rel[1:]))
        elif rel[0] == "companion":
            found.add(".".join(rel))
    assert found == set(config["packages"])


@pytest.mark.parametrize("module", ["companion.web", "companion.calibration"])
def test_web_and_calibration_install_under_companion(module):
    imported = __import__(module, fromlist=["_"])
    assert Path(imported.__file__).parent.name == module.split(".")[1]
