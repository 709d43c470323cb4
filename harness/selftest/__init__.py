"""The mutation score: deliberately faulty tiktoken wrappers the default checks must catch.

- :mod:`~harness.selftest.mutant`: the base (tiktoken's cl100k_base exactly, but for
  one fault), a rank BPE with knobs for merge faults;
- :mod:`~harness.selftest.faults_text`: faults in pre-tokenization and merging;
- :mod:`~harness.selftest.faults_api`: faults in special tokens, decoding, batching,
  error handling and the API;
- :mod:`~harness.selftest.score`: running them as ``tokconf run`` would, and the score.

``tokconf selftest`` prints it; ``tests/test_selftest.py`` fails CI when it drops.
"""
