"""Attention and the models built from it (notebooks 04 to 09).

Scaled dot-product and linear attention, transformer blocks, a tiny GPT, MiniLM,
and the tiny world that 09's models are trained on.
"""
