"""Hugging Face ``tokenizers``: conversion of ``.tiktoken`` ranks, the ``hf:`` adapters and
any ``tokenizer.json`` (``hf-json:``)."""

import os

# tokenizers' own thread pool (rayon) is off unless the user set TOKENIZERS_PARALLELISM:
# batch answers are the same either way; a conformance run's batches are small, and the
# pool cost more than it saved (0.05 ms against 0.03 ms for a batch of eight short texts
# here, and on the user's path under load 4.4 s for 4,393 calls); and after a fork
# (``--jobs``) tokenizers turns it off itself, so a run now calls it the same way under
# every --jobs. Read at each call, so setting it before the first batch is enough.
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
