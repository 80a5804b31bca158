"""Text into tokens (notebook 03 and the language models of 06 and 09).

The corpus C of the token learner (bpe), character-level BPE on real text learned by
Hugging Face ``tokenizers`` (bpe), byte-level BPE with GPT-4's pre-tokenizer (byte_bpe,
pre_tokenizer) and GPT-4's tokenizer offline (cl100k): the BPE itself is always the
library's, ``tokenizers``' learner or ``tiktoken``'s encoder.
"""
