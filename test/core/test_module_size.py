"""Every module of the package can be held in one's head: at most ``MAX_LINES`` lines, or its module
docstring says why it is one thing (``COHERENT``, then the reason: docs/explanation/architecture.md)."""
import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "floating_base_control"
MAX_LINES = 400
#: The marker phrase of a longer module's docstring, followed by why splitting it would not help a reader.
COHERENT = "One coherent module:"


def long_modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text()
        if len(text.splitlines()) > MAX_LINES:
            yield path.relative_to(PACKAGE).as_posix(), ast.get_docstring(ast.parse(text)) or ""


def test_long_modules_say_why_they_are_one_thing():
    unexplained = []
    for name, docstring in long_modules():
        reason = docstring.partition(COHERENT)[2].strip()
        if len(reason.split()) < 5:      # the marker and a sentence, not the marker alone
            unexplained.append(name)
    assert unexplained == []
