"""reveal.js decks of the solution notebooks that work offline: `python -m tools.slides`.

`make slides` runs it. Each solution notebook becomes ``slides/<notebook>.slides.html``
(nbconvert's naming), made from the outputs the notebook was committed with: nothing is
executed. The decks sit together in ``slides/`` (git-ignored) and load their JavaScript
from ``slides/assets/`` by relative paths, so a deck opens from disk (file://), from a
server of the folder, or from a copy of the folder on another machine, and fetches
nothing from the network. (Decks beside the notebooks would be copied into the student
release by nbgrader.)

The assets are the npm packages of ASSETS, at pinned versions, each unpacked from its
``npm pack`` tarball (the package alone: no dependencies, no install scripts) into
``slides/assets/<package>/``.

The deck is nbconvert's reveal.js template (its white theme: the default imports Google
Fonts) with the course's additions (tools/slides_template/course_slides: no mermaid.js,
figures sized for a projector, steps that start at the top and scroll when they are
taller than the screen, a print view that hides no slide from screen readers), at
1280 × 720 (a 16:9 projector), without prompts. Where slides, steps and fragments begin
comes from the cells' slide metadata (tools/slide_metadata.py).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from nbconvert import SlidesExporter
from traitlets.config import Config

from tools.slide_metadata import solution_notebooks

REPO = Path(__file__).resolve().parent.parent
SLIDES = REPO / "slides"
TEMPLATES = Path(__file__).resolve().parent / "slides_template"

# npm package -> version. nbconvert 7's reveal template is written for reveal.js 4 (its
# default is 4.0.2), renders math with MathJax 2 (it calls MathJax.Hub) and loads reveal.js
# with require.js; html-manager 1.0 shows the widgets of ipywidgets 8 in the state the
# notebook was saved with.
ASSETS = {
    "reveal.js": "4.6.1",
    "mathjax": "2.7.9",
    "requirejs": "2.3.7",
    "@jupyter-widgets/html-manager": "1.0.15",
}

# The files a deck loads, inside the assets folder (reveal.js: the folder, as its prefix).
REVEAL = "reveal.js"
MATHJAX = "mathjax/MathJax.js?config=TeX-AMS_CHTML-full,Safe"
REQUIRE_JS = "requirejs/require.js"
WIDGETS = "@jupyter-widgets/html-manager/dist/embed-amd.js"


def installed_version(package_dir: Path) -> str | None:
    """The version of the npm package unpacked in ``package_dir`` (None if there is none)."""
    try:
        return json.loads((package_dir / "package.json").read_text())["version"]
    except (OSError, ValueError, KeyError):
        return None


def npm_pack(package: str, version: str, destination: Path) -> Path:
    """Download the tarball of ``package@version`` into ``destination``; return its path."""
    if shutil.which("npm") is None:
        raise RuntimeError("npm is missing: `make slides` installs it (Debian's nodejs and npm)")
    result = subprocess.run(
        ["npm", "pack", "--json", "--pack-destination", str(destination), f"{package}@{version}"],
        check=True, capture_output=True, text=True,
    )
    return destination / json.loads(result.stdout)[0]["filename"]


def install_assets(assets_dir: Path = SLIDES / "assets") -> None:
    """Unpack every package of ASSETS at its pinned version into ``assets_dir/<package>``.

    Packages already there at the right version are kept; each new one is unpacked beside
    its place and moved in at once, so that a deck never sees half a package (and two runs
    at once, `make slides` and the tests, agree).
    """
    for package, version in ASSETS.items():
        target = assets_dir / package
        if installed_version(target) == version:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=target.parent, prefix=".unpack-") as scratch:
            with tarfile.open(npm_pack(package, version, Path(scratch))) as tarball:
                tarball.extractall(scratch, filter="data")
            shutil.rmtree(target, ignore_errors=True)
            try:
                os.replace(Path(scratch) / "package", target)
            except OSError:
                if installed_version(target) != version:  # not another run's copy: a failure
                    raise
        print(f"assets: {package}@{version}")


def slides_exporter(assets_url: str) -> SlidesExporter:
    """nbconvert's slides exporter, loading everything from ``assets_url`` (a relative URL)."""
    config = Config()
    config.SlidesExporter.template_name = "course_slides"
    config.SlidesExporter.extra_template_basedirs = [str(TEMPLATES)]
    config.SlidesExporter.reveal_url_prefix = f"{assets_url}/{REVEAL}"
    config.SlidesExporter.reveal_theme = "white"
    config.SlidesExporter.reveal_width = "1280"
    config.SlidesExporter.reveal_height = "720"
    config.SlidesExporter.reveal_number = "h.v"
    config.SlidesExporter.mathjax_url = f"{assets_url}/{MATHJAX}"
    config.SlidesExporter.require_js_url = f"{assets_url}/{REQUIRE_JS}"
    config.SlidesExporter.widget_renderer_url = f"{assets_url}/{WIDGETS}"
    config.SlidesExporter.exclude_input_prompt = True
    config.SlidesExporter.exclude_output_prompt = True
    return SlidesExporter(config=config)


def write_deck(notebook: Path, out_dir: Path = SLIDES, assets_dir: Path | None = None) -> Path:
    """Write the deck of ``notebook`` to ``out_dir/<notebook>.slides.html``; return its path.

    The deck loads its scripts and styles from ``assets_dir`` (default ``out_dir/assets``)
    by a path relative to ``out_dir``.
    """
    assets_dir = out_dir / "assets" if assets_dir is None else assets_dir
    assets_url = Path(os.path.relpath(assets_dir, out_dir)).as_posix()
    body, resources = slides_exporter(assets_url).from_filename(str(notebook))
    out_dir.mkdir(parents=True, exist_ok=True)
    deck = out_dir / f"{notebook.stem}{resources['output_extension']}"
    deck.write_text(body, encoding="utf-8")
    return deck


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path,
                        help="notebooks to convert (default: every solution notebook)")
    parser.add_argument("--out", type=Path, default=SLIDES, help="folder of the decks")
    args = parser.parse_args(argv)
    install_assets(args.out / "assets")
    for notebook in args.notebooks or solution_notebooks():
        start = time.perf_counter()
        deck = write_deck(notebook, args.out)
        print(f"{deck} ({time.perf_counter() - start:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
