"""Slides: every notebook's slide metadata, the release keeps it, and offline decks."""

import json
import re
import shutil
import subprocess
import tomllib
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

import nbformat
import pytest

from grader.outputs.rubrics import is_rubric
from grader.outputs.worked_answers import is_worked_answer
from tests.conftest import REPO
from tools import slide_metadata, slides

SOLUTIONS = sorted((REPO / "solutions").glob("*/*.ipynb"))
NAMES = [path.stem for path in SOLUTIONS]


def slide_type(cell):
    """The cell's slide type as nbconvert and RISE read it: no metadata means "-"."""
    return cell.metadata.get("slideshow", {}).get("slide_type", "-")


def is_answer(cell):
    return cell.metadata.get("nbgrader", {}).get("solution", False)


@pytest.mark.parametrize("path", SOLUTIONS, ids=NAMES)
def test_every_solution_notebook_is_marked_as_slides(path):
    cells = nbformat.read(path, as_version=4).cells
    types = [slide_type(cell) for cell in cells]
    assert types[0] == "slide", "the title is a slide"
    assert set(types) <= {"slide", "subslide", "fragment", "skip", "-"}
    for cell, kind in zip(cells, types, strict=True):
        if cell.cell_type == "markdown" and re.match(r"#{1,2} ", cell.source):
            assert kind == "slide", f"a section is a slide: {cell.source.splitlines()[0]}"
        if is_answer(cell):
            assert kind == "fragment", f"an answer comes on a click: {cell.source[:40]!r}"
        # jupyterlab-slideshow never shows a cell whose type is the string "-"
        assert cell.metadata.get("slideshow", {}).get("slide_type") != "-"
    assert types.count("slide") >= 5 and "fragment" in types
    first_code = next(cell for cell in cells if cell.cell_type == "code")
    assert slide_type(first_code) == "skip" and "get_device()" in first_code.source


@pytest.mark.parametrize("path", SOLUTIONS, ids=NAMES)
def test_slide_metadata_is_what_the_tool_writes(path):
    assert slide_metadata.is_current(path), "run `make slide-metadata`, then `make release`"


@pytest.mark.parametrize("path", SOLUTIONS, ids=NAMES)
def test_the_release_keeps_the_slides(path):
    """...of every cell but the worked answers and rubrics, which the release leaves out."""
    released = REPO / "notebooks" / path.parent.name / path.name
    source = {cell.id: slide_type(cell) for cell in nbformat.read(path, as_version=4).cells
              if not is_worked_answer(cell) and not is_rubric(cell)}
    release = {cell.id: slide_type(cell) for cell in nbformat.read(released, as_version=4).cells}
    assert release == source


RUBRIC = "### A question (`f`, 1 point)\n\n- *Full credit:* $$y = 1$$"


def small_notebook():
    """A notebook with one cell for each rule, and the type each should get."""
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    answer = {"nbgrader": {"solution": True, "grade": False, "grade_id": "f", "locked": False}}
    cells_and_types = [
        (md("# 09 · A title\n\nGoals."), "slide"),
        (code("import torch\n\ndevice = get_device()\nset_seed(0)\nprint(device)"), "skip"),
        (md("## 1. A section"), "slide"),
        (code("x = 1"), "-"),
        (md("A paragraph after code."), "subslide"),
        (md("The argument goes on."), "fragment"),
        (md("### Exercise 1"), "subslide"),
        (code("def f():\n    return 1", metadata=answer), "fragment"),
        (code("assert f() == 1"), "-"),
        (md("A formula:\n\n$$y = f(x)$$"), "subslide"),
        (code("print(f())"), "fragment"),
        (code("import math"), "-"),
        (md("### BEGIN SOLUTION\nA written answer.\n### END SOLUTION", metadata=answer),
         "fragment"),
        (md(RUBRIC, metadata={"tags": ["rubric"]}), "skip"),
        (code("y = 2"), "-"),  # the rules pass over the rubric: no formula above
        (md("## Summary"), "slide"),
    ]
    nb = nbformat.v4.new_notebook(cells=[cell for cell, _ in cells_and_types])
    return nb, [kind for _, kind in cells_and_types]


def test_each_rule_on_a_small_notebook():
    nb, expected = small_notebook()
    assert slide_metadata.slide_types(nb) == expected


def test_setup_is_skipped_only_when_it_only_sets_up():
    assert slide_metadata.only_sets_up("import numpy as np\nnp.set_printoptions(precision=3)")
    assert not slide_metadata.only_sets_up("import torch\nx = torch.ones(3)\nprint(x)")
    assert not slide_metadata.only_sets_up("")


def test_the_tool_writes_only_slide_types_and_is_idempotent(tmp_path):
    nb, expected = small_notebook()
    nb.cells[3].metadata["slideshow"] = {"slide_type": "-"}  # as a UI may have written it
    path = tmp_path / "09_small" / "09_small.ipynb"
    path.parent.mkdir()
    nbformat.write(nb, path)
    assert not slide_metadata.is_current(path)

    assert slide_metadata.apply(path) is True
    assert slide_metadata.apply(path) is False
    assert slide_metadata.is_current(path)
    written = nbformat.read(path, as_version=4)
    assert [slide_type(cell) for cell in written.cells] == expected
    for before, after in zip(nb.cells, written.cells, strict=True):
        assert after.source == before.source
        assert after.get("outputs") == before.get("outputs")
        assert after.metadata.get("nbgrader") == before.metadata.get("nbgrader")
        assert "slideshow" not in after.metadata or slide_type(after) != "-"


def test_the_live_slideshow_extra_is_pinned():
    with open(REPO / "pyproject.toml", "rb") as handle:
        extra = tomllib.load(handle)["project"]["optional-dependencies"]["slides"]
    assert extra and all(re.fullmatch(r"[A-Za-z0-9_.\-]+==[0-9][0-9A-Za-z.]*", r) for r in extra)
    assert not any(r.startswith(("jupyterlab-rise", "jupyterlab-mathjax3")) for r in extra)


class LoadedURLs(HTMLParser):
    """The URLs an HTML page loads: script src, link href, and scripts and styles named in
    inline scripts (require([...]), import, a widget renderer's address)."""

    ASSET = re.compile(r"""["']([^"'\s]+\.(?:m?js|css)(?:\?[^"'\s]*)?)["']""")

    def __init__(self):
        super().__init__()
        self.urls, self._in_script = [], False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "script":
            self._in_script = True
            if attrs.get("src"):
                self.urls.append(attrs["src"])
        if tag == "link" and attrs.get("href"):
            self.urls.append(attrs["href"])

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_script = False

    def handle_data(self, data):
        if self._in_script:
            self.urls.extend(self.ASSET.findall(data))


def css_imports(css_text):
    """The addresses a style sheet imports or loads (@import, url()), data: URLs aside."""
    found = re.findall(r"""(?:@import\s+(?:url\()?|url\()\s*["']?([^"')\s;]+)""", css_text)
    return [url for url in found if not url.startswith("data:")]


def local_file(url, base: Path) -> Path:
    """The file a relative URL names from ``base``; fails on an absolute or remote one."""
    parts = urlsplit(url)
    assert not parts.scheme and not parts.netloc and not url.startswith("/"), url
    return (base / parts.path).resolve()


def assert_local_and_present(url, base: Path):
    """The URL is relative and names a file, and so does everything a style sheet loads."""
    path = local_file(url, base)
    assert path.is_file(), url
    if path.suffix == ".css":
        for loaded in css_imports(path.read_text()):
            assert_local_and_present(loaded, path.parent)


@pytest.fixture(scope="module")
def assets():
    """The decks' JavaScript, unpacked once into slides/assets (as `make slides` does)."""
    if shutil.which("npm") is None:
        pytest.skip("npm is missing: `make test` installs it as root (Debian's nodejs, npm)")
    slides.install_assets()
    return slides.SLIDES / "assets"


def test_a_deck_loads_only_local_files_that_exist(assets, tmp_path):
    notebook = REPO / "solutions" / "04_alpha3_by_hand" / "04_alpha3_by_hand.ipynb"
    deck = slides.write_deck(notebook, tmp_path, assets_dir=assets)
    assert deck == tmp_path / "04_alpha3_by_hand.slides.html"
    html = deck.read_text()

    parser = LoadedURLs()
    parser.feed(html)
    names = {Path(urlsplit(url).path).name for url in parser.urls}
    assert {"reveal.js", "MathJax.js", "require.js", "embed-amd.js", "reveal.css"} <= names
    for url in parser.urls:
        assert_local_and_present(url, deck.parent)
    assert "application/vnd.jupyter.widget-state+json" in html  # the saved widgets
    assert "Why divide by" in html and "softmax_scale_slider" in html


def test_a_deck_keeps_the_worked_answers_and_skips_the_rubrics(tmp_path):
    """The instructor's deck shows the worked answers the release leaves out, not the
    rubrics, which are for the course staff (no assets needed to look)."""
    nb, kinds = small_notebook()
    for cell, kind in zip(nb.cells, kinds, strict=True):
        slide_metadata.set_slide_type(cell, None if kind == "-" else kind)
    nb.cells.insert(9, nbformat.v4.new_markdown_cell(
        "Worked: f returns one.", metadata={"tags": ["worked-answer"]}))
    path = tmp_path / "09_small.ipynb"
    nbformat.write(nb, path)
    deck = slides.write_deck(path, tmp_path / "slides").read_text()
    assert "Worked: f returns one." in deck and "A formula:" in deck
    assert "A question" not in deck and "A written answer." in deck


class InlineScripts(HTMLParser):
    """The text of every inline <script> of a page."""

    def __init__(self):
        super().__init__()
        self.scripts, self._open = [], None

    def handle_starttag(self, tag, attrs):
        if tag == "script" and not dict(attrs).get("src"):
            self._open = []

    def handle_data(self, data):
        if self._open is not None:
            self._open.append(data)

    def handle_endtag(self, tag):
        if tag == "script" and self._open is not None:
            self.scripts.append("".join(self._open))
            self._open = None


# Runs a deck's script (stdin) in Node with stand-ins for require.js, reveal.js and the page:
# four slides, all marked hidden as reveal.js's print view leaves them, and the address's
# query string from argv[1]. Prints what each slide is marked with after "pdf-ready".
PRINT_VIEW = """
const script = require("fs").readFileSync(0, "utf8");
const slides = [0, 1, 2, 3].map(() => ({attrs: {hidden: "", "aria-hidden": "true"},
    removeAttribute(name) { delete this.attrs[name]; }}));
const listeners = {};
globalThis.window = {location: {search: process.argv[1]}};
globalThis.document = {
    querySelectorAll: s => /\\.pdf-page\\b.*\\bsection\\b/.test(s) ? slides : []};
const Reveal = {configure() {}, on(type, listener) { listeners[type] = listener; }};
globalThis.require = (modules, callback) => callback(Reveal);
eval(script);
(listeners["pdf-ready"] || (() => {}))();
console.log(JSON.stringify(slides.map(slide => slide.attrs)));
"""


def test_a_decks_print_view_marks_no_slide_hidden(tmp_path):
    """reveal.js 4.6.1's print view (?print-pdf, which prints a deck and which the browser
    tests check for accessibility) shows every slide, each on its page, yet leaves all but
    the first marked hidden and aria-hidden, with their cells still taking the keyboard's
    focus. The deck's own script unmarks them once the pages are laid out, and only there."""
    if shutil.which("node") is None:
        pytest.skip("Node.js is missing: `make test` installs it as root (Debian's nodejs)")
    nb, kinds = small_notebook()
    for cell, kind in zip(nb.cells, kinds, strict=True):
        slide_metadata.set_slide_type(cell, None if kind == "-" else kind)
    path = tmp_path / "09_small.ipynb"
    nbformat.write(nb, path)
    parser = InlineScripts()
    parser.feed(slides.write_deck(path, tmp_path / "slides").read_text())
    found = [s for s in parser.scripts if "pdf-ready" in s]
    assert len(found) == 1, "the deck has no script for reveal.js's print view"
    script = found[0]

    def marks_after_pdf_ready(query):
        result = subprocess.run(["node", "-e", PRINT_VIEW, query], input=script,
                                capture_output=True, text=True, check=True)
        return json.loads(result.stdout)

    assert marks_after_pdf_ready("?print-pdf") == [{}] * 4
    assert marks_after_pdf_ready("") == [{"hidden": "", "aria-hidden": "true"}] * 4
