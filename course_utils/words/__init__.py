"""Words as vectors (notebooks 01 and 02).

One-hot and dense embeddings, skip-gram, and how word vectors are evaluated.
"""
