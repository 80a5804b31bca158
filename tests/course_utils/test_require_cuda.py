"""`make test-gpu` stops with a clear message, before running anything, without CUDA."""

import subprocess
import sys

import pytest
import torch

from tests.conftest import REPO
from tools import require_cuda


@pytest.fixture
def build(monkeypatch):
    """Pretend torch is the build given (cuda, hip) and sees ``devices`` devices."""

    def pretend(cuda=None, hip=None, devices=0):
        monkeypatch.setattr(torch.version, "cuda", cuda)
        monkeypatch.setattr(torch.version, "hip", hip)
        monkeypatch.setattr(torch.cuda, "is_available", lambda: devices > 0)

    return pretend


def test_a_cpu_build_is_named_with_the_way_out(build):
    build()
    assert require_cuda.missing() == (
        f"torch {torch.__version__} is built for the CPU only: install a CUDA build of "
        'torch as the README says ("A GPU")'
    )


def test_a_cuda_build_without_a_device_says_where_to_look(build, monkeypatch):
    build(cuda="12.8")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert require_cuda.missing() == (
        f"torch {torch.__version__} is built for CUDA 12.8 but finds no device (is there a "
        "GPU, and its driver? nvidia-smi lists them, CUDA_VISIBLE_DEVICES='')"
    )


@pytest.mark.parametrize("kind", [{"cuda": "12.8"}, {"hip": "6.4"}], ids=["cuda", "rocm"])
def test_a_gpu_build_with_a_device_passes(build, kind):
    build(**kind, devices=1)
    assert require_cuda.missing() is None


def test_no_torch_at_all(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` raises ImportError
    assert require_cuda.missing().startswith("torch is not installed in this environment")


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_make_test_gpu_without_cuda_fails_before_running_anything():
    done = subprocess.run(["make", "--no-print-directory", "test-gpu"], cwd=REPO,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode != 0
    assert "No CUDA device, so nothing was run: torch" in done.stderr
    assert "pytest" not in done.stdout + done.stderr and "pip" not in done.stdout
