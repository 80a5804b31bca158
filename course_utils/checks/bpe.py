"""Diagnostic checks for the bpe notebook's test cells."""

__all__: list[str] = []
