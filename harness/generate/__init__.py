"""Generation: the inputs no case file holds, and making findings small.

- :mod:`~harness.generate.strategies`: named hypothesis strategies and the
  ``dev``/``ci``/``nightly`` profiles;
- :mod:`~harness.generate.pattern_parse`: a tokenizer's split regex read into its
  alternatives, quantifiers, classes and literals;
- :mod:`~harness.generate.unicode_edges`: the characters that stand for a class (its
  Unicode edges, version edges, case-folding partners);
- :mod:`~harness.generate.pattern_inputs`: inputs for every alternative, boundary,
  quantifier bound and class edge of a pattern, and the matching hypothesis strategy;
- :mod:`~harness.generate.long_pieces`: single pre-tokens of 1 to 4,096 bytes;
- :mod:`~harness.generate.steer`: inputs built from tokens a run has not produced yet;
- :mod:`~harness.generate.pools`: the generated inputs of one encoding, in order;
- :mod:`~harness.generate.pool_cache`: their random mixtures kept on disk under a
  derandomized profile;
- :mod:`~harness.generate.budget`: how many generated inputs each adapter gets;
- :mod:`~harness.generate.shrink`: the deterministic shrinking algorithm;
- :mod:`~harness.generate.minimise`: what "still fails" means for a finding.
"""
