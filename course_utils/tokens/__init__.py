"""Text into tokens (notebook 03).

The BPE token learner and segmenter (bpe), GPT-4's pre-tokenizer (pre_tokenizer), the
merge loop of byte-level BPE (byte_merges), the byte-level tokenizer with tiktoken's API
(byte_bpe, tiktoken_arguments) and GPT-4's tokenizer offline (cl100k).
"""
