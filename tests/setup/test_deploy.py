"""deploy/: the students' image and the course's JupyterHub on Kubernetes, checked without either.

No container engine or cluster runs here, so these tests check what the files say: hadolint
passes on deploy/Dockerfile; the image starts from a dated docker-stacks build, installs
pyproject.toml's pins, copies neither solutions/ nor grading/ and ends as the notebook user;
deploy/z2jh/config.yaml runs that image with the resources the notebooks were measured with
and serves nbgrader's exchange by the ngshare of deploy/ngshare/values.yaml, and holds no
secret. Jupyter and nbgrader themselves then read the configuration files laid out as the
image lays them out: students get the Assignment List and Validate, instructors Formgrader
on their course, and nbgrader's exchange is ngshare wherever the hub says where it is.
"""

import importlib.util
import os
import re
import subprocess
import sys
import tomllib
import types
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml
from dockerfile_parse import DockerfileParser
from jupyter_core.paths import jupyter_config_path, jupyter_path
from jupyter_server.extension.config import ExtensionConfigManager
from jupyterlab_server.config import get_static_page_config
from traitlets.config import Application

from grader.running.sandbox import Limits
from tests.conftest import REPO

DEPLOY = REPO / "deploy"

# design.md, Budgets: every time budget of the notebooks holds on 2 CPU cores.
BUDGET_CORES = 2
# Measured when deploy/ was written: the heaviest solution notebook's kernel at full size
# (05_masked_attention, /usr/bin/time around nbconvert --execute) and a fresh JupyterLab server.
HEAVIEST_KERNEL_BYTES = 1_006_588 * 1024
SERVER_BYTES = 124 * 1024**2

ROLE_EXTENSIONS = ("formgrader", "course_list", "assignment_list", "validate_assignment")
ROLE_PLUGINS = ("formgrader", "create-assignment", "course-list", "assignment-list",
                "validate-assignment")


def dockerfile() -> DockerfileParser:
    return DockerfileParser(path=str(DEPLOY / "Dockerfile"), env_replace=False)


def instructions(name: str) -> list[str]:
    """The values of the Dockerfile's instructions called ``name``, in order."""
    return [line["value"] for line in dockerfile().structure if line["instruction"] == name]


def copies() -> list[tuple[list[str], str]]:
    """Each COPY of the Dockerfile as (its sources in the repository, its destination)."""
    result = []
    for value in instructions("COPY"):
        *sources, destination = [word for word in value.split() if not word.startswith("--")]
        result.append((sources, destination))
    return result


def in_repository(image_path: str) -> Path:
    """The repository's file or folder that the image holds at ``image_path`` (its COPYs)."""
    for sources, destination in copies():
        inside = os.path.relpath(image_path, destination)
        if len(sources) == 1 and not inside.startswith(".."):
            return REPO / sources[0] / inside
    raise ValueError(f"the image copies nothing to {image_path}")


def read_yaml(path: Path) -> dict:
    with open(path, encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def hub() -> dict:
    return read_yaml(DEPLOY / "z2jh" / "config.yaml")


def ngshare() -> dict:
    return read_yaml(DEPLOY / "ngshare" / "values.yaml")


def project() -> dict:
    with open(REPO / "pyproject.toml", "rb") as handle:
        return tomllib.load(handle)["project"]


def exact_pins(text: str) -> dict[str, str]:
    """{name: version} of every ``name==version`` in ``text``."""
    return dict(re.findall(r"([A-Za-z0-9_.\-]+)==([0-9][^\s\"'&]*)", text))


def kubespawner_bytes(value: int | str) -> int:
    """Memory as KubeSpawner reads it: bytes, or a number with K, M, G or T (powers of 1024)."""
    if isinstance(value, int):
        return value
    number, unit = re.fullmatch(r"([0-9.]+)([KMGT])", value).groups()
    return int(float(number) * 1024 ** ("KMGT".index(unit) + 1))


def instructors_override() -> dict:
    """The spawner override of the hub's group "instructors"."""
    overrides = hub()["hub"]["config"]["KubeSpawner"]["group_overrides"].values()
    (override,) = [o["spawner_override"] for o in overrides if "instructors" in o["groups"]]
    return override


def role_folders(role: str) -> list[Path]:
    """The repository's folders on a ``role``'s JUPYTER_CONFIG_PATH in the image, first first."""
    environment = (dockerfile().envs if role == "student"
                   else instructors_override()["environment"])
    return [in_repository(path) for path in environment["JUPYTER_CONFIG_PATH"].split(":")]


@pytest.fixture
def as_role(monkeypatch, tmp_path):
    """Point Jupyter's config path at a role's folders (and an empty user folder)."""

    def use(role: str) -> None:
        monkeypatch.setenv("JUPYTER_CONFIG_PATH", os.pathsep.join(map(str, role_folders(role))))
        monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path))

    return use


@pytest.fixture
def ngshare_exchange(monkeypatch) -> list[str]:
    """A stand-in for the image's ngshare_exchange: the URLs configureExchange was given."""
    urls = []

    def configure_exchange(c, url):
        urls.append(url)
        c.ExchangeFactory.exchange = "ngshare_exchange.Exchange"

    module = types.ModuleType("ngshare_exchange")
    module.configureExchange = configure_exchange
    monkeypatch.setitem(sys.modules, "ngshare_exchange", module)
    return urls


def nbgrader_config(role: str):
    """nbgrader's config in a ``role``'s server, read as nbgrader reads it: nbgrader_config.py
    of each folder of Jupyter's config path, the one of /etc/jupyter last in priority."""
    folders = [*role_folders(role), in_repository("/etc/jupyter/nbgrader_config.py").parent]
    app = Application()
    app.load_config_file("nbgrader_config.py", path=[str(folder) for folder in folders])
    return app.config


# The image


def test_hadolint_finds_nothing_in_the_dockerfile():
    hadolint = Path(sys.executable).parent / "hadolint"
    result = subprocess.run(
        [hadolint, "--no-color", "--config", DEPLOY / "hadolint.yaml", DEPLOY / "Dockerfile"],
        capture_output=True, text=True, check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_image_starts_from_a_docker_stacks_build_pinned_by_date():
    assert re.fullmatch(r"quay\.io/jupyter/[a-z]+-notebook:\d{4}-\d{2}-\d{2}",
                        dockerfile().baseimage)


def test_the_image_installs_the_exact_pins_of_the_lock_file():
    commands = " ".join(instructions("RUN"))
    lock = exact_pins((REPO / "requirements-lock.txt").read_text())
    pinned = exact_pins(commands)
    assert pinned["torch"] == lock["torch"]
    assert "--index-url https://download.pytorch.org/whl/cpu torch==" in commands
    for name in set(pinned) & set(lock):
        assert pinned[name] == lock[name], name
    # Beside PyTorch's CPU build, only the hub's JupyterHub is pinned here: the lock file's
    # pins come with the workbook (pyproject.toml's ranges and its `lab` extra), installed
    # from its copy within the copied lock file.
    assert set(pinned) - set(lock) == {"jupyterhub"}
    (workbook,) = [destination for sources, destination in copies() if "pyproject.toml" in sources]
    workbook = workbook.rstrip("/")
    assert (f'pip install --no-cache-dir -c {workbook}/requirements-lock.txt "{workbook}[lab]" '
            in commands)
    assert re.search(r"ngshare_exchange/archive/[0-9a-f]{40}\.tar\.gz", commands)


def test_the_image_ends_as_the_notebook_user():
    assert instructions("USER")[-1] not in ("root", "0")


def test_the_build_context_holds_what_the_image_copies_and_nothing_else():
    rules = [line.strip() for line in (DEPLOY / "Dockerfile.dockerignore").read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    assert rules[0] == "*"
    kept = {rule[1:] for rule in rules if rule.startswith("!")}
    copied = {source for sources, _ in copies() for source in sources}
    assert kept == copied
    assert all((REPO / source).exists() for source in copied)
    assert not {source.split("/")[0] for source in copied} & {"solutions", "grading", "tests"}


# The hub


def test_the_hub_runs_the_image_of_this_version():
    image = hub()["singleuser"]["image"]
    assert image["name"]
    assert image["tag"] == project()["version"]


def test_each_student_gets_what_the_notebooks_were_measured_with():
    student = hub()["singleuser"]
    assert student["cpu"]["limit"] >= BUDGET_CORES
    assert student["extraEnv"]["OMP_NUM_THREADS"] == str(student["cpu"]["limit"])
    guarantee = kubespawner_bytes(student["memory"]["guarantee"])
    limit = kubespawner_bytes(student["memory"]["limit"])
    assert HEAVIEST_KERNEL_BYTES + SERVER_BYTES <= guarantee <= limit
    assert limit >= Limits().memory_bytes


def test_nbgrader_exchange_is_the_ngshare_service_the_users_can_reach():
    config, values = hub(), ngshare()
    service = urlsplit(config["hub"]["services"]["ngshare"]["url"])
    client = urlsplit(config["singleuser"]["extraEnv"]["NGSHARE_URL"])
    assert (client.hostname, client.port) == (service.hostname, service.port)
    assert client.path == "/services/ngshare"
    assert service.port == values["deployment"]["port"] == 8080  # ngshare's pods listen on 8080
    to_ngshare = {"to": [{"podSelector": {"matchLabels": {"app.kubernetes.io/name": "ngshare"}}}],
                  "ports": [{"port": service.port, "protocol": "TCP"}]}
    assert to_ngshare in config["singleuser"]["networkPolicy"]["egress"]


def test_ngshare_admins_are_the_hubs_instructors():
    instructors = hub()["hub"]["config"]["JupyterHub"]["load_groups"]["instructors"]
    assert instructors
    assert set(ngshare()["ngshare"]["admins"]) == set(instructors)


def keys(tree) -> list[str]:
    """Every key of a YAML tree, at any depth."""
    if isinstance(tree, dict):
        return [*tree, *(key for value in tree.values() for key in keys(value))]
    if isinstance(tree, list):
        return [key for item in tree for key in keys(item)]
    return []


def test_no_secret_is_written_in_the_charts_values():
    for values in (hub(), ngshare()):
        secrets = [key for key in keys(values) if re.search("secret|token|password", key, re.I)
                   and not key.lower().endswith("url")]
        assert not secrets


# Jupyter and nbgrader reading the configuration, by role


def test_the_role_files_name_nbgrader_s_own_extensions():
    for extension in ROLE_EXTENSIONS:
        assert importlib.util.find_spec(f"nbgrader.server_extensions.{extension}"), extension
    lab_extension = next(Path(folder) / "@jupyter" / "nbgrader"
                         for folder in jupyter_path("labextensions")
                         if (Path(folder) / "@jupyter" / "nbgrader").is_dir())
    code = " ".join(path.read_text() for path in (lab_extension / "static").glob("*.js"))
    for plugin in ROLE_PLUGINS:
        assert f'"@jupyter/nbgrader:{plugin}"' in code, plugin


@pytest.mark.parametrize("role, instructor", [("student", False), ("instructor", True)])
def test_jupyter_gives_each_role_its_nbgrader_tools(as_role, role, instructor):
    as_role(role)
    manager = ExtensionConfigManager(read_config_path=jupyter_config_path())
    server = manager.get_jpserver_extensions()
    disabled = get_static_page_config(level="all").get("disabledExtensions", {})
    for extension in ("assignment_list", "validate_assignment"):
        assert server[f"nbgrader.server_extensions.{extension}"] is True
    for extension in ("formgrader", "course_list"):
        assert server[f"nbgrader.server_extensions.{extension}"] is instructor
    for plugin in ("assignment-list", "validate-assignment"):
        assert not disabled.get(f"@jupyter/nbgrader:{plugin}")
    for plugin in ("formgrader", "create-assignment", "course-list"):
        assert bool(disabled.get(f"@jupyter/nbgrader:{plugin}")) is not instructor


def test_a_students_exchange_is_ngshare_where_the_hub_says_where_it_is(monkeypatch,
                                                                        ngshare_exchange):
    url = hub()["singleuser"]["extraEnv"]["NGSHARE_URL"]
    monkeypatch.setenv("NGSHARE_URL", url)
    config = nbgrader_config("student")
    assert ngshare_exchange == [url]
    assert config.CourseDirectory.course_id == "*"


def test_outside_the_hub_the_image_keeps_nbgraders_own_exchange(monkeypatch, ngshare_exchange):
    monkeypatch.delenv("NGSHARE_URL", raising=False)
    config = nbgrader_config("student")
    assert ngshare_exchange == []
    assert "ExchangeFactory" not in config and "course_id" not in config.CourseDirectory


def test_an_instructors_formgrader_works_on_the_cloned_course(monkeypatch, ngshare_exchange):
    monkeypatch.setenv("NGSHARE_URL", hub()["singleuser"]["extraEnv"]["NGSHARE_URL"])
    monkeypatch.setenv("COURSE_DIR", str(REPO))  # the instructor's clone
    config = nbgrader_config("instructor")
    course = Application()
    course.load_config_file("nbgrader_config.py", path=[str(REPO / "grading")])
    assert len(ngshare_exchange) == 1
    assert config.CourseDirectory.root == str(REPO / "grading")
    assert config.CourseDirectory.source_directory == "../solutions"
    assert config.CourseDirectory.course_id == course.config.CourseDirectory.get("course_id", "*")


def test_an_instructor_without_the_clone_gets_the_students_config(monkeypatch, tmp_path,
                                                                   ngshare_exchange):
    monkeypatch.setenv("NGSHARE_URL", hub()["singleuser"]["extraEnv"]["NGSHARE_URL"])
    monkeypatch.setenv("COURSE_DIR", str(tmp_path))
    config = nbgrader_config("instructor")
    assert config.CourseDirectory.course_id == "*"
    assert "root" not in config.CourseDirectory
