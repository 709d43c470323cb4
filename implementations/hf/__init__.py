"""Hugging Face ``tokenizers``: conversion of ``.tiktoken`` ranks, the ``hf:`` adapters and
any ``tokenizer.json`` (``hf-json:``)."""
