"""`python -m bench` lists the benchmarks; `python -m bench <name> [options]` runs one (as python -m bench.<name>)."""

import ast
import importlib
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent


def benchmarks() -> dict[str, str]:
    """Benchmark name -> the first line of its docstring: every module of bench/ with a main(), read unimported."""
    found = {}
    for path in sorted(PACKAGE.glob("[!_]*.py")):
        tree = ast.parse(path.read_text())
        if any(isinstance(node, ast.FunctionDef) and node.name == "main" for node in tree.body):
            found[path.stem] = (ast.get_docstring(tree) or "").split("\n")[0]
    return found


def listing(found: dict[str, str]) -> str:
    """One line per benchmark, names aligned."""
    width = max(map(len, found), default=0)
    lines = [f"  {name.ljust(width)}  {line}" for name, line in found.items()]
    return "\n".join(["benchmarks (run one with: ./scripts/bench <name> [--help]):", *lines])


def main(argv: list[str]) -> int:
    """List the benchmarks, or run the one named with the rest of the arguments."""
    found = benchmarks()
    if not argv or argv[0] in ("-h", "--help"):
        print(listing(found))
        return 0
    if argv[0] not in found:
        print(f"no benchmark named {argv[0]!r}\n{listing(found)}", file=sys.stderr)
        return 2
    return importlib.import_module(f"bench.{argv[0]}").main(argv[1:]) or 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
