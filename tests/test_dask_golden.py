"""``snapshot`` and ``gate`` with ``--executor dask``: the local executor's golden and changes.

A deterministic corpus of 3,000 short documents (:mod:`tests.dask_corpus`, about 2,600
distinct, so six chunks of 500) over tiktoken and minbpe (cl100k_base). Real clusters:
the embedded ``LocalCluster`` of ``--jobs 2`` worker processes, and a module-wide one of
two workers for ``--scheduler``; real ``tokconf`` subprocesses. Goldens are compared
through :func:`read_golden` (inputs, texts, every outcome), not as gzip bytes: the
header's ``created`` differs.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

distributed = pytest.importorskip("distributed")

from harness.golden.format import GoldenWriter, read_golden  # noqa: E402
from harness.outcomes import Outcome  # noqa: E402
from tests.dask_corpus import write_corpus  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ADAPTERS = ["--impl", "tiktoken:cl100k_base", "--impl", "minbpe:cl100k_base"]
INPUTS = ["--no-cases", "--no-generated", "--quiet"]


def tokconf(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=600)


def contents(path: Path) -> tuple[Any, list[tuple[str, str, dict[str, Any]]]]:
    """The header without its timestamp, and every input with its outcomes, in file order."""
    header, inputs = read_golden(path)
    adapters = [(a.name, a.encoding, a.library, a.version, a.provider, a.attributes) for a in header.adapters]
    return ((adapters, header.vocabularies, header.inputs, header.tool_version),
            [(item.source, item.text, item.outcomes) for item in inputs])


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    return write_corpus(tmp_path_factory.mktemp("corpus") / "golden.jsonl", 3_000, seed=17)


@pytest.fixture(scope="module")
def local_golden(corpus: Path, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("local") / "local.tokconf"
    done = tokconf("snapshot", *ADAPTERS, *INPUTS, "--corpus", str(corpus), "-o", str(path))
    assert done.returncode == 0, done.stderr
    return path


@pytest.fixture(scope="module")
def cluster():
    import logging

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=logging.ERROR) as local:
        yield local


def test_an_embedded_cluster_writes_the_local_golden(corpus: Path, local_golden: Path, tmp_path: Path) -> None:
    path = tmp_path / "dask.tokconf"
    done = tokconf("snapshot", *ADAPTERS, *INPUTS, "--corpus", str(corpus), "-o", str(path),
                   "--executor", "dask", "--jobs", "2")
    assert done.returncode == 0, done.stderr
    expected = contents(local_golden)
    assert len(expected[1]) > 2_000  # several chunks of 500: their order is what is tested
    assert contents(path) == expected
    assert done.stdout.startswith(f"wrote {path}: {len(expected[1])} inputs x 2 adapter(s)")


def test_chunks_come_back_in_input_order(corpus: Path, cluster, tmp_path: Path) -> None:
    """The first chunk of 20 holds long texts (seconds of work), the other 30 short documents:
    the other worker finishes chunks behind it first, and the golden is still the local one's."""
    import itertools
    from dataclasses import replace

    from harness.cli.selection_args import SelectionArgs
    from harness.golden.inputs import Input, corpus_inputs
    from harness.golden.snapshot import build_adapters, write_snapshot
    from harness.registry import default_registry
    from harness.scale.golden_chunks import DaskRecords

    inputs = [Input(f"long:{n}", "x" * 60_000 + str(n)) for n in range(20)]
    inputs += list(itertools.islice(corpus_inputs([str(corpus)]), 600))
    selected = build_adapters(default_registry(), ["tiktoken:cl100k_base", "minbpe:cl100k_base"])
    spec = replace(SelectionArgs(), impl=tuple(sorted(selected.calls)))
    here, there = tmp_path / "here.tokconf", tmp_path / "there.tokconf"
    try:
        write_snapshot(str(here), selected, inputs, options={})
        with DaskRecords(spec=spec, scheduler=cluster.scheduler_address, workers=2, chunk=20) as records:
            assert write_snapshot(str(there), selected, inputs, options={}, records=records) == 620
            assert records.chunks == 31
    finally:
        selected.close()
    assert contents(there) == contents(here)


def test_gate_on_a_cluster_passes_on_an_unchanged_golden(local_golden: Path, cluster) -> None:
    done = tokconf("gate", str(local_golden), "--quiet", "--executor", "dask", "--scheduler", cluster.scheduler_address)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "result: no change against the golden" in done.stdout


def _tampered(golden: Path, target: Path, *, at: tuple[int, ...]) -> list[str]:
    """A copy of ``golden`` whose inputs numbered ``at`` have other tiktoken ``encode_ordinary`` IDs."""
    header, inputs = read_golden(golden)
    changed = []
    with GoldenWriter(target, header) as writer:
        for item in inputs:
            outcomes = {a: dict(p) for a, p in item.outcomes.items()}
            if item.number in at:
                assert outcomes["tiktoken:cl100k_base"]["encode_ordinary"].is_ok
                outcomes["tiktoken:cl100k_base"]["encode_ordinary"] = Outcome.ok((1, 2, 3))
                changed.append(item.source)
            writer.add(item.source, item.text, outcomes)
    return changed


def test_gate_on_a_cluster_lists_the_local_gates_changes(local_golden: Path, cluster, tmp_path: Path) -> None:
    target = tmp_path / "tampered.tokconf"
    sources = _tampered(local_golden, target, at=(17, 1_234, 2_345))  # in chunks 1, 3 and 5 of 500
    local = tokconf("gate", str(target), "--json")
    dask = tokconf("gate", str(target), "--json", "--executor", "dask", "--scheduler", cluster.scheduler_address)
    assert (local.returncode, dask.returncode) == (1, 1), dask.stderr
    assert json.loads(dask.stdout) == json.loads(local.stdout)
    data = json.loads(dask.stdout)
    assert data["by_kind"] == {"IDs changed": 3} and data["inputs"] == len(contents(local_golden)[1])
    assert [(c["source"], c["adapter"], c["path"], c["before"]) for c in data["changes"]] == \
        [(source, "tiktoken:cl100k_base", "encode_ordinary", {"ok": [1, 2, 3]}) for source in sources]
    text = tokconf("gate", str(target), "--quiet", "--executor", "dask", "--scheduler", cluster.scheduler_address)
    assert text.returncode == 1
    assert f"[IDs changed] tiktoken:cl100k_base encode_ordinary  {sources[1]}" in text.stdout


def test_a_worker_that_cannot_build_the_adapters_is_an_error(cluster) -> None:
    """A plugin module the workers cannot import: an ExecutorError naming it (the CLI's exit 2),
    never a chunk recorded on fewer adapters."""
    from harness.cli.selection_args import SelectionArgs
    from harness.golden.snapshot import build_adapters
    from harness.registry import default_registry
    from harness.scale.cluster import ExecutorError
    from harness.scale.golden_chunks import DaskRecords

    selected = build_adapters(default_registry(), ["tiktoken:cl100k_base"])
    spec = SelectionArgs(plugin=("client_only_plugin_nowhere:crlf",), impl=("tiktoken:cl100k_base",))
    try:
        with DaskRecords(spec=spec, scheduler=cluster.scheduler_address, workers=2) as records:
            with pytest.raises(ExecutorError, match="Dask worker .*cannot build the adapters.*client_only_plugin_nowhere"):
                list(records(dict(selected.calls), [("one", "a text")]))
    finally:
        selected.close()
