"""Sparse linear algebra, ``xp.sparse.linalg`` (being written)."""
