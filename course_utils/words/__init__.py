"""Words as vectors (notebooks 01 and 02).

One-hot and dense embeddings (embeddings), skip-gram's objective (skipgram), a corpus's
vocabulary (vocabulary), the fast skip-gram trainer (skipgram_training), and how word
vectors are evaluated (word_eval).
"""
