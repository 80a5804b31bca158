"""Sphinx configuration of the workbook's documentation (``make docs``).

Pages are MyST Markdown. The build is offline (no intersphinx, no remote images) and strict:
``make docs`` runs with warnings as errors and ``nitpicky``, and tests/notebooks/test_docs.py also
follows every internal link of the built pages. ``_ext/workbook_notebooks.py`` reads the
working times and points of the calendar from the solution notebooks.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "_ext"))

project = "Embeddings, attention and transformers: a course workbook"
author = "the embeddings workbook maintainers"
copyright = f"2026, {author}. Code: MIT; text and notebooks: CC BY-SA 4.0"

extensions = ["myst_parser", "workbook_notebooks"]
# Where workbook_notebooks reads the notebooks from (a test builds a copy of docs/ with -D).
workbook_solutions = str(Path(__file__).resolve().parents[1] / "solutions")
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build", "README.md"]
root_doc = "index"
language = "en"

# Strict: a reference that does not resolve is a warning, and make docs fails on warnings.
nitpicky = True
# Links to a page's section as [text](page.md#section-title), and $math$ as in the notebooks.
myst_heading_anchors = 3
myst_enable_extensions = ["dollarmath", "deflist"]

html_theme = "alabaster"
html_title = "Embeddings workbook"
html_static_path = ["_static"]
html_css_files = ["workbook.css"]
pygments_style = "default"
html_show_sourcelink = False
# WCAG 2.1 AA (tests/browser/test_accessibility.py): the footer's grey darkened to 7:1 on white
# (alabaster's #888 is 3.5:1), and code on white, where Pygments' default colours reach 4.5:1
# (on alabaster's beige some do not).
html_theme_options = {"show_relbars": True, "footer_text": "#555", "pre_bg": "#ffffff"}
