"""Plain cells that compare a student's function with the library's, whatever the answer.

Such a cell runs on the blank release and on wrong answers too: it must say what it could
not do and let the notebook go on (nbgrader runs every cell; a student's Run All must
not stop there)::

    with checks.comparing("exercise 5"):
        print("your updated_embeddings agrees:", torch.allclose(updated_embeddings(E, Q, V), ref))
"""

import contextlib

__all__ = ["comparing"]


@contextlib.contextmanager
def comparing(exercises: str):
    """Run the block; if ``exercises`` (e.g. ``"exercise 5"``) is not done yet, print
    ``(finish exercise 5 to compare)``, and if the answer fails, print its error."""
    try:
        yield
    except NotImplementedError:
        print(f"(finish {exercises} to compare)")
    except Exception as error:  # a wrong answer may fail here too: say so, and go on
        print(f"(your code could not be compared: {type(error).__name__}: {error})")
