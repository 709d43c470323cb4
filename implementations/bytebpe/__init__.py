"""tokconf's own byte-level BPE, layered as minbpe is (seed 002/003).

base (bytes, merges, the quirk hook) -> patterns (pre-split regexes) -> model (training,
specials) -> ranks (rank mode over published vocabularies) and ltr (the deliberately
wrong left-to-right variant) -> adapters (what the registry builds).
"""
