"""The layers import downwards only: contract ← rag, memory, guardrails, llm, store ← graph ← runs ← api."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1]
LOWER = ("rag", "memory", "guardrails", "llm", "store")
ABOVE_LOWER = ("backend.graph", "backend.runs", "backend.api", "backend.streaming", "backend.main")


def imports(path: Path) -> set[str]:
    """Every backend module a file imports."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
    return {n for n in names if n.startswith("backend")}


@pytest.mark.parametrize("layer", LOWER)
def test_nothing_below_the_graph_imports_the_graph_or_anything_above_it(layer):
    wrong = {
        f"{path.relative_to(PACKAGE)} imports {name}"
        for path in (PACKAGE / layer).rglob("*.py")
        for name in imports(path)
        if name.startswith(ABOVE_LOWER)
    }
    assert not wrong


def test_the_contract_imports_nothing_of_the_project_but_itself():
    wrong = {
        f"{path.name} imports {name}"
        for path in (PACKAGE / "contract").rglob("*.py")
        for name in imports(path)
        if not name.startswith("backend.contract")
    }
    assert not wrong
