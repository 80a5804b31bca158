r"""GPT-4's pre-tokenizer: the regex of cl100k_base.

The pattern cuts text into chunks (a word with its leading space, a run of up to three
digits, a run of punctuation, whitespace); byte-level BPE then merges inside each chunk.
Its classes are Unicode ones (``\p{L}`` a letter of any script, ``\p{N}`` a number), which
Python's own ``re`` does not have: ``regex.findall(CL100K_PATTERN, text)`` gives the chunks
(the ``regex`` package), as ``tiktoken`` and Hugging Face ``tokenizers`` cut them.
"""

# GPT-4's pre-tokenizer: contractions, a letter run with one optional leading non-letter,
# 1-3 digits, punctuation runs with a leading space, newlines, other whitespace.
CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
