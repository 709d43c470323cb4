"""minbpe's merge recovery over published ranks (seed 001): recovery, integer tokenizer,
adapters."""
