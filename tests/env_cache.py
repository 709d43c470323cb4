"""The cache of other releases' environments that the network tests share.

Kept between sessions (``TOKCONF_TEST_ENV_CACHE`` or ``~/.cache/tokconf-test-envs``), and
shared by test files that the suite's worker processes run at the same time: both
``tests/test_envs.py`` and ``tests/test_release_ladder.py`` make ``tiktoken-0.9.0``. Two
workers that both saw it missing would both ``tokconf env add`` it, and the second add
fails on the first's folder. :func:`environments` looks and makes under one lock.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path

ENV_CACHE = Path(os.environ.get("TOKCONF_TEST_ENV_CACHE", Path.home() / ".cache" / "tokconf-test-envs"))
REPO = Path(__file__).resolve().parents[1]


def environments(requirements: dict[str, str]) -> dict[str, str]:
    """Make each ``name -> requirement`` in the cache unless it is there, under the cache's
    lock; one made by a tokconf that did not install what the library's API needs (numpy:
    no ``api_requirements`` in its listing) is made again. Returns the environment
    variables that point tokconf at the cache."""
    ENV_CACHE.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "TOKCONF_CACHE_DIR": str(ENV_CACHE)}
    with open(ENV_CACHE / ".test-lock", "w", encoding="ascii") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        listed = {e["name"]: e for e in json.loads(_tokconf("env", "list", "--json", env=env).stdout)["environments"]}
        for name, requirement in requirements.items():
            made = listed.get(name)
            if made is not None and "api_requirements" not in made:
                assert _tokconf("env", "remove", name, env=env).returncode == 0
                made = None
            if made is None:
                done = _tokconf("env", "add", requirement, "--quiet", env=env)
                assert done.returncode == 0, done.stdout + done.stderr
    return env


def _tokconf(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True, text=True, cwd=REPO, env=env)
