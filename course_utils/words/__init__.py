"""Words as vectors (notebook 02).

Skip-gram's noise words and subsampling (skipgram), a corpus's vocabulary (vocabulary),
the fast skip-gram trainer (skipgram_training), and how word vectors are evaluated
(word_eval).
"""
