"""Every file the documentation and the package's docstrings and comments name exists."""
import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: A path with a folder (``control/shape.py``, ``test/core/test_lie.py``), a test module, or a launch file.
PATH = re.compile(r"(?<![\w./<-])((?:[\w.-]+/)+[\w.-]+\.(?:py|md|urdf|yaml|npz|xml|txt|in|png)|test_\w+\.py"
                  r"|\w+\.launch\.py)(?![\w/])")
#: Where a path may be relative to; what a run writes (out/) or a user's own file are not ours to check.
BASES = (ROOT, ROOT / "floating_base_control", ROOT / "docs", ROOT / "test")
NOT_OURS = ("out/", "http", "/tmp/", "~/", "my_", "your_", "path/to/",
            "panda_description/")      # inside example-robot-data


def documents():
    """``(file, text)``: the README and docs/, and the docstrings and comments of the package."""
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")),
                 *sorted((ROOT / "examples").glob("*.py"))]:
        yield path, path.read_text()
    for path in sorted((ROOT / "floating_base_control").rglob("*.py")):
        source = path.read_text()
        nodes = [n for n in ast.walk(ast.parse(source))
                 if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))]
        yield path, "\n".join([ast.get_docstring(n) or "" for n in nodes] + re.findall(r"#.*", source))


def exists(name, document):
    if "/" not in name:          # a test module or a launch file: somewhere in its folder
        return any(ROOT.glob(f"test/**/{name}")) or (ROOT / "launch" / name).exists()
    return any((base / name).exists() for base in (*BASES, document.parent))


def test_every_path_named_in_docs_and_docstrings_exists():
    missing = [f"{document.relative_to(ROOT)}: {name}" for document, text in documents()
               for name in sorted(set(PATH.findall(text)))
               if not name.startswith(NOT_OURS) and not exists(name, document)]
    assert missing == []


#: A Markdown link or image: ``[text](target)``.
LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_every_relative_link_of_the_markdown_resolves():
    """Links between pages (``[the ROS 2 interface](../reference/ros.md)``) resolve from the page."""
    pages = [ROOT / "README.md", ROOT / "examples" / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    broken = [f"{page.relative_to(ROOT)}: {target}" for page in pages if page.exists()
              for target in LINK.findall(page.read_text())
              if not re.match(r"[a-z]+:|#", target) and not (page.parent / target.partition("#")[0]).exists()]
    assert broken == []
