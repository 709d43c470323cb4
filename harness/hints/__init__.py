"""What an error message adds to the error: where it was raised, and what was meant.

Pure helpers with no import from the rest of the engine, so the contract modules at the
top of ``harness/`` (the registry) can use them: :mod:`.raise_site` names the file and
line of a raise, :mod:`.suggest` answers an unknown name with the closest known ones.
"""
