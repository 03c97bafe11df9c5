"""One ordering in the package, [Mishra2023]'s ``[omega; v]``: Pinocchio's ``[v; omega]`` is reordered only in
``conventions.py``, and only the control tick's compiled kernels (and the buffers they fill) work in it; the
modules below say so, and docs/reference/conventions.md lists the same ones."""
import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "floating_base_control"
#: The edge: the one module that reorders (SWAP and the functions named after it).
EDGE = "conventions.py"
#: Modules whose code works in Pinocchio's order, and why.
PINOCCHIO_ORDER = {
    "lie.py": "the compiled SE(3) kernels on 4x4 poses (the observer's tick)",
    "kinematics.py": "Workspace: the buffers the tick's kernels fill",
    "dynamics/rel_fast.py": "the tick's REL kernels on Pinocchio's CRBA and CC forces",
    "estimation/observer_equations.py": "the observer's kernels (eqs. 37-42, 51)",
    "estimation/prediction.py": "the prediction's history of twists",
    "estimation/observer.py": "the observer's state, which its kernels update in place",
    "robots/orbital/controller.py": "the tick, which passes the kernels' vectors on",
    "analysis/reconstruction.py": "the compiled integrator of eq. 9 on Pinocchio's CRBA and connection",
    "planning/holonomy.py": "the holonomy's compiled kernels on Pinocchio's CRBA and connection",
    "robots/hopper/coordinates.py": "the hopper's coordinate kernels on Pinocchio's CRBA and connection",
    "robots/hopper/controller.py": "the hopper's step, which passes CRBA's matrix and the connection to them",
}
#: Modules that name an order like Pinocchio's for another reason.
OTHER_ORDERS = {
    "analysis/integrability.py": "[Saccon2017]'s curvature is ordered [v; omega]",
    "ros/params.py": "the joints' order (depth-first), not a twist's",
}
PINOCCHIO_PHRASE = re.compile(r"\[v; ?omega\]|\[force; ?moment\]|Pinocchio's order")


def modules():
    return {path.relative_to(PACKAGE).as_posix(): path.read_text() for path in sorted(PACKAGE.rglob("*.py"))}


def kernels(tree):
    """The functions of ``tree`` decorated with ``@kernel(...)`` (compiled: they cannot call conventions)."""
    return [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)
            and any(isinstance(d, ast.Call) and getattr(d.func, "id", None) == "kernel" for d in node.decorator_list)]


def test_only_the_edge_and_compiled_kernels_use_the_swap():
    """``SWAP`` and ``SWAP_BOTH`` are defined in conventions.py; elsewhere only a compiled kernel indexes with
    them (where a call of a conventions function would not compile)."""
    offenders = []
    for name, text in modules().items():
        if name == EDGE:
            continue
        tree = ast.parse(text)
        inside = {id(node) for k in kernels(tree) for node in ast.walk(k)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and node.id in ("SWAP", "SWAP_BOTH") and id(node) not in inside:
                offenders.append(f"{name}:{node.lineno}")
            if isinstance(node, ast.Attribute) and node.attr in ("SWAP", "SWAP_BOTH"):
                offenders.append(f"{name}:{node.lineno}")
    assert offenders == []


def _halves(node):
    """``(base, half)`` of a subscript ``base[3:]`` (``"upper"``) or ``base[:3]`` (``"lower"``), else None."""
    if not (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice)):
        return None
    s = node.slice
    bound = lambda b: b.value if isinstance(b, ast.Constant) else None     # noqa: E731
    if bound(s.lower) == 3 and bound(s.upper) in (None, 6) and s.step is None:
        return ast.unparse(node.value), "upper"
    if s.lower is None and bound(s.upper) == 3 and s.step is None:
        return ast.unparse(node.value), "lower"
    return None


def test_no_module_swaps_the_halves_by_hand():
    """No ``(x[3:], x[:3])`` outside conventions.py: a reordering written out is one the edge does not know."""
    offenders = []
    for name, text in modules().items():
        if name == EDGE:
            continue
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.Tuple, ast.List)):
                parts = [_halves(e) for e in node.elts]
                for a, b in zip(parts, parts[1:]):
                    if a and b and a[0] == b[0] and {a[1], b[1]} == {"upper", "lower"}:
                        offenders.append(f"{name}:{node.lineno}")
    assert offenders == []


def test_only_the_kernels_speak_pinocchios_order():
    speaking = {name for name, text in modules().items() if PINOCCHIO_PHRASE.search(text)}
    assert speaking - {EDGE} - set(PINOCCHIO_ORDER) - set(OTHER_ORDERS) == set()


def test_the_conventions_page_lists_the_modules_in_pinocchios_order():
    page = (PACKAGE.parent / "docs" / "reference" / "conventions.md").read_text()
    missing = [name for name in (EDGE, *PINOCCHIO_ORDER) if f"`{name}`" not in page]
    assert missing == []
    assert all((PACKAGE / name).exists() for name in PINOCCHIO_ORDER)
