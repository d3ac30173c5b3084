"""What a benchmark hands back: short aligned tables (or Markdown) on stdout and every figure as JSON."""

import argparse
import json
import math
import os
import platform
import sys
from pathlib import Path
from typing import Any

from bench.lib import ROOT

RESULTS = ROOT / "bench" / "results"


def progress(text: str) -> None:
    """One progress line on stderr (the report goes to stdout)."""
    print(f"  .. {text}", file=sys.stderr, flush=True)


def ms(seconds: float | None) -> str:
    """Seconds as milliseconds text, '-' for None."""
    return "-" if seconds is None else f"{seconds * 1000:,.1f} ms"


def secs(seconds: float | None) -> str:
    """Seconds with two decimals, '-' for None."""
    return "-" if seconds is None else f"{seconds:.2f} s"


def num(value: float | None, unit: str = "", digits: int = 1) -> str:
    """A number with a unit, '-' for None."""
    return "-" if value is None else f"{value:,.{digits}f}{unit}"


def times(value: float | None, digits: int = 1) -> str:
    """A ratio as 'N.Nx', '-' for None."""
    return num(value, "x", digits)


def pct(share: float | None) -> str:
    """A share (0..1) as a percentage with one decimal, '-' for None."""
    return "-" if share is None else f"{100 * share:.1f}%"


def count(hits: int, total: int) -> str:
    """'hits/total (NN%)', or '-' when there is nothing to count."""
    return f"{hits}/{total} ({100 * hits / total:.0f}%)" if total else "-"


def table(title: str, headers: list[str], rows: list[list[Any]], markdown: bool = False) -> str:
    """A titled table: columns aligned (first left, others right), or Markdown for pasting into the README."""
    cells = [[str(c) for c in row] for row in [headers, *rows]]
    if markdown:
        lines = ["| " + " | ".join(row).replace("\n", " ") + " |" for row in cells]
        rule = "|" + "|".join("---" if i == 0 else "---:" for i in range(len(headers))) + "|"
        return "\n".join([f"#### {title}", "", lines[0], rule, *lines[1:]])
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    rule = "  ".join("-" * w for w in widths)
    lines = [
        "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True)))
        for row in cells
    ]
    return "\n".join([title, rule, lines[0], rule, *lines[1:]])


def add_output_args(parser: argparse.ArgumentParser, name: str) -> None:
    """--json (default bench/results/<name>.json) and --markdown, the options every benchmark has."""
    parser.add_argument("--json", type=Path, default=RESULTS / f"{name}.json", help="where to write every figure")
    parser.add_argument("--markdown", action="store_true", help="print the tables as Markdown")


def finite(value: Any) -> Any:
    """The results with NaN and infinities as None, so the JSON is standard."""
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return None if isinstance(value, float) and not math.isfinite(value) else value


def write_json(path: Path, results: dict) -> Path:
    """Write the results (with the host they ran on) as indented JSON; returns the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {"host": host(), **results}
    path.write_text(json.dumps(finite(payload), indent=2, ensure_ascii=False, default=str) + "\n")
    return path


def load() -> str:
    """The 1-minute load average and the core count, for a note on noise."""
    return f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"


def host() -> dict[str, Any]:
    """Cores, load average, Python and platform, for judging how noisy the figures are."""
    return {
        "cores": os.cpu_count(),
        "load_average": os.getloadavg()[0],
        "python": platform.python_version(),
        "platform": f"{platform.system()} {platform.machine()}",
    }


def publish(text: str, results: dict, path: Path) -> None:
    """Print the report, write the JSON and say where it went."""
    print(text)
    print(f"\nJSON written to {write_json(path, results)}")
