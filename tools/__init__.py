"""The instructors' tools: slide metadata for the solution notebooks, reveal.js decks, and
the student edition (what students receive).

Run from the repository's root with the course's venv, e.g. `.venv/bin/python -m tools.slides`
(the Makefile's `slide-metadata` and `slides` targets do).
"""
