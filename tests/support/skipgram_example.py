"""The lectures' hand-worked skip-gram windows (seed 002, (11.14)), shared by the tests of
the check and of the trainer."""

SENTENCE = "This is a sample sentence".split()
# the windows of "This is a sample sentence" with c = 2, by hand
SAMPLE_PAIRS_C2 = [
    ("This", "is"), ("This", "a"),
    ("is", "This"), ("is", "a"), ("is", "sample"),
    ("a", "This"), ("a", "is"), ("a", "sample"), ("a", "sentence"),
    ("sample", "is"), ("sample", "a"), ("sample", "sentence"),
    ("sentence", "a"), ("sentence", "sample"),
]  # fmt: skip
