"""Checked mode, in one place (docs/checked.md).

- :mod:`.emitted`: the mode's switch and the checks xp emits in it (imported by the indexing
  functions, so it stays light: no checkify);
- :mod:`.running`: ``xp.checked(f)``, which runs ``f`` under JAX's ``checkify`` and raises the failed
  checks as xp's errors (imported on first use of ``xp.checked``).

Nothing is imported here, so that importing :mod:`.emitted` does not import :mod:`.running`.
"""
