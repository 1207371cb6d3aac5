"""The README and the manual, checked statically (no bpy): every link resolves (the file exists,
and an anchor names a heading of its page), the README stays a short page, and the operator names
the docs give next to an operator id are that operator's ``bl_label``."""

import ast
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = ["README.md"] + sorted(f"docs/{name}" for name in os.listdir(os.path.join(ROOT, "docs"))
                              if name.endswith(".md"))
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _text(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return f.read()


def slug(heading):
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path):
    text = re.sub(r"```.*?```", "", _text(path), flags=re.S)
    return {slug(m.group(1)) for m in re.finditer(r"^#+ (.+)$", text, flags=re.M)}


@pytest.mark.parametrize("page", DOCS)
def test_every_link_resolves(page):
    text = re.sub(r"```.*?```", "", _text(page), flags=re.S)
    broken = []
    for target in _LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        resolved = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
        if not os.path.exists(os.path.join(ROOT, resolved)):
            broken.append(target)
        elif anchor and resolved.endswith(".md") and anchor not in anchors(resolved):
            broken.append(target)
    assert broken == []


def test_the_readme_is_a_short_page_that_links_every_manual_page():
    readme = _text("README.md")
    assert len(readme.splitlines()) <= 250
    linked = {os.path.normpath(target.partition("#")[0]) for target in _LINK.findall(readme)}
    assert set(DOCS[1:]) <= linked


def operator_labels():
    """``{bl_idname: bl_label}`` of every operator class in ``operators/``."""
    labels = {}
    for name in os.listdir(os.path.join(ROOT, "operators")):
        if not name.endswith(".py"):
            continue
        for node in ast.walk(ast.parse(_text(f"operators/{name}"))):
            if isinstance(node, ast.ClassDef):
                values = {target.id: statement.value.value for statement in node.body
                          if isinstance(statement, ast.Assign)
                          for target in statement.targets if isinstance(target, ast.Name)
                          and isinstance(statement.value, ast.Constant)}
                if "bl_idname" in values:
                    labels[values["bl_idname"]] = values.get("bl_label")
    return labels


def test_the_operator_names_in_the_docs_are_their_labels():
    """A table row that names an operator (its first cell) and gives its id (``dqik.…`` in its
    second) names it by its ``bl_label``: one name for the button, F3 search, the undo history
    and the docs."""
    labels = operator_labels()
    wrong = []
    for page in DOCS:
        lines = _text(page).splitlines() + [""]
        for line, after in zip(lines, lines[1:]):
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            header = after.strip().startswith("|---")
            if len(cells) > 2 and not header and re.fullmatch(r"`dqik\.\w+`", cells[1]):
                idname = cells[1].strip("`")
                if labels.get(idname) != cells[0]:
                    wrong.append((page, cells[0], idname, labels.get(idname)))
    assert wrong == []


def test_the_zip_ships_no_page_whose_links_point_outside_it():
    """The README links the manual in ``docs/``, which the extension zip leaves out: so the zip
    leaves the README out too (``blender_manifest.toml``), and ships the LICENSE."""
    manifest = _text("blender_manifest.toml")
    assert '"/README.md"' in manifest and '"/docs/"' in manifest
    assert "LICENSE" not in manifest and os.path.exists(os.path.join(ROOT, "LICENSE"))
