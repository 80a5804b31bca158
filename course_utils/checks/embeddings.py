"""Diagnostic checks for the embeddings notebook's test cells."""

__all__: list[str] = []
