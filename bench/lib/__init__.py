"""Helpers every benchmark shares: statistics, the app runner, the SSE client, llama.cpp timings, the report."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_DOCS = ROOT / "data" / "documents"
DATASETS = ROOT.parent / "shared" / "datasets"  # public data read in place, never copied into the repository
