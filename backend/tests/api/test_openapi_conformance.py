"""Schemathesis against a real server on the fake model: the OpenAPI schema describes what the API really does."""

import re
import subprocess
import sys

from bench.lib import ROOT
from bench.lib.server import serve_in_process


def test_schemathesis_finds_no_failure_in_any_operation(tmp_path):
    env = {"RAG_LLM_BACKEND": "fake", "RAG_DATA_DIR": str(tmp_path / "data"), "RAG_FAKE_TOKENS_PER_SECOND": "0"}
    with serve_in_process(env) as (url, _):
        run = subprocess.run(
            [sys.executable, "-m", "schemathesis.cli", "run", f"{url}/openapi.json", "--checks", "all"]
            + ["--max-examples", "25", "--seed", "1", "--no-color"],
            cwd=ROOT,  # reads schemathesis.toml
            capture_output=True,
            text=True,
            timeout=600,
        )
    summary = run.stdout[run.stdout.rfind("SUMMARY") :]
    print(summary)
    assert run.returncode == 0, run.stdout[-6000:]
    every_operation = re.search(r"Selected: (\d+)/\1\s+Tested: \1\b", summary)  # all of them, none skipped
    assert every_operation and int(every_operation.group(1)) >= 20, summary
    assert re.search(r"(\d+) generated, \1 passed", summary), summary
