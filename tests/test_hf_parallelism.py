"""Hugging Face ``tokenizers`` is called without its thread pool unless the user asked for
it (implementations/hf/__init__.py): the same under every ``--jobs``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROBE = ("import os, implementations.hf.adapters as a; from harness.registry import default_registry; "
         "default_registry().get('hf:gpt2').encode_batch(['a b', 'c'] * 4); print(os.environ['TOKENIZERS_PARALLELISM'])")


@pytest.mark.parametrize(("given", "expected"), [(None, "false"), ("true", "true"), ("false", "false")])
def test_the_thread_pool_is_off_unless_the_user_set_it(given: str | None, expected: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "TOKENIZERS_PARALLELISM"}
    if given is not None:
        env["TOKENIZERS_PARALLELISM"] = given
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == expected
