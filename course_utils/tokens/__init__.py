"""Text into tokens (notebook 03).

The BPE token learner and segmenter, byte-level BPE, GPT-4's pre-tokenizer.
"""
