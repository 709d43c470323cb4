"""Tokenizers straight from someone's source file or notebook: spec, loading, notebooks,
adapter."""
