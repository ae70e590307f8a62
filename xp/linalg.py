"""The linear algebra extension, ``xp.linalg`` (being written)."""
