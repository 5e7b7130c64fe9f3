"""The packages' imports point one way: benchmarks → lsp_server → model, and no module of
ours reaches itself through others. A function-level import counts as much as one at the
top: a circle through a lazy import is still two modules that each need the other."""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("benchmarks", "lsp_server", "model")


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(tree: ast.AST, package: str) -> set[str]:
    """Every module name an import statement in ``tree`` may load, resolved against ``package``."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def import_graph() -> dict[str, set[str]]:
    files = {_module_name(path): path for package in PACKAGES for path in (ROOT / package).rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        graph[name] = {target for target in _imported(ast.parse(path.read_text()), package)
                       if target in files and target != name}
    return graph


def test_no_module_imports_itself_through_others() -> None:
    graph = import_graph()
    try:
        tuple(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as error:
        raise AssertionError(f"an import circle: {' → '.join(error.args[1])}") from None


def test_the_model_knows_nothing_of_the_server_or_the_benchmarks() -> None:
    reaching_out = {(name, target) for name, targets in import_graph().items() if name.startswith("model")
                    for target in targets if target.split(".")[0] in ("lsp_server", "benchmarks")}
    assert reaching_out == set()


def test_only_the_command_line_of_the_server_knows_the_benchmarks() -> None:
    reaching_out = {name for name, targets in import_graph().items() if name.startswith("lsp_server")
                    and any(target.split(".")[0] == "benchmarks" for target in targets)}
    assert reaching_out <= {"lsp_server.cli"}
