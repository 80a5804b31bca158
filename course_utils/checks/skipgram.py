"""Diagnostic checks for the skipgram notebook's test cells."""

__all__: list[str] = []
