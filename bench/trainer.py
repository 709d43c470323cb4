"""Training speed: tokconf's trainer against Hugging Face ``tokenizers``' BpeTrainer.

Each trainer runs in its own fresh process, single-threaded (``RAYON_NUM_THREADS=1``,
``TOKENIZERS_PARALLELISM=false`` for HF, whose thread pool is fixed when it starts), on
the same text with the same settings: the cl100k_base/GPT-4 pre-split pattern, 256
single bytes, merges of pairs seen at least twice, ``merges`` merges. The time is the CPU
time of the training call alone (reading the text and importing are left out; with one
thread, CPU time is the time the work takes, whatever else the machine is doing).

    python bench/trainer.py ours|hf MERGES MEGABYTES      # one child: prints one JSON line
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

__all__ = ["compare", "training_text"]

HERE = Path(__file__).resolve().parent


def training_text(limit: int) -> list[str]:
    """pydoc topics, then the standard library's top-level .py files, up to ``limit`` bytes."""
    from pydoc_data.topics import topics

    texts = list(topics.values())
    size = sum(len(t.encode("utf-8")) for t in texts)
    for path in sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py")):
        if size >= limit:
            break
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        texts.append(text)
        size += len(text.encode("utf-8"))
    return texts


def _child(which: str, merges: int, limit: int) -> dict[str, object]:
    texts = training_text(limit)
    size = sum(len(t.encode("utf-8")) for t in texts)
    if which == "ours":
        from implementations.bytebpe.model import train

        started = time.process_time()
        model = train(texts, vocab_size=256 + merges, pattern_name="gpt4")
        seconds = time.process_time() - started
        made = len(model.merges)
    else:
        from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers

        from implementations.bytebpe.patterns import GPT4_PATTERN
        from implementations.hf.convert import oniguruma_pattern

        tokenizer = Tokenizer(models.BPE())
        tokenizer.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(oniguruma_pattern(GPT4_PATTERN)), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ])
        trainer = trainers.BpeTrainer(vocab_size=256 + merges, min_frequency=2, show_progress=False,
                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), special_tokens=[])
        started = time.process_time()
        tokenizer.train_from_iterator(texts, trainer=trainer)
        seconds = time.process_time() - started
        made = tokenizer.get_vocab_size() - 256
    return {"trainer": which, "seconds": seconds, "merges": made, "bytes": size}


def compare(*, merges: int = 10_000, limit: int = 1_000_000) -> dict[str, object]:
    """Both trainers, each in a fresh single-threaded process; ours / HF is the ratio."""
    env = dict(os.environ, RAYON_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false")
    out: dict[str, dict[str, object]] = {}
    for which in ("hf", "ours"):
        proc = subprocess.run([sys.executable, str(HERE / "trainer.py"), which, str(merges), str(limit)],
                              capture_output=True, text=True, env=env, cwd=HERE.parent, check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"trainer child {which} failed: {proc.stderr.strip()[-2000:]}")
        out[which] = json.loads(proc.stdout.strip().split("\n")[-1])
    ours, hf = out["ours"], out["hf"]
    return {
        "bytes": ours["bytes"], "merges_asked": merges, "ours_merges": ours["merges"], "hf_merges": hf["merges"],
        "ours_s": round(float(ours["seconds"]), 3), "hf_s": round(float(hf["seconds"]), 3),
        "ratio_to_hf": round(float(ours["seconds"]) / float(hf["seconds"]), 2), "threads": 1,
    }


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parent))
    print(json.dumps(_child(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))))
