"""Tested helpers for the workbook on embeddings, attention and transformers.

One module per idea; the notebooks import what they need, for example
``from course_utils.models.attention import MultiHeadAttention``.
"""
