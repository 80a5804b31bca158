"""Every function and method of the ``course_utils`` students receive, as a candidate answer.

:func:`shipped_candidates` lists, for each module of the package:

* its module-level functions, private ones too, and what decorators made of them
  (``functools.cache``, ``@checked_plainly``): a student can paste any of them;
* the static and class methods of each class it defines, called on the class;
* the methods of each class it defines that can be built without arguments, called on an
  instance built so (``MiniLMEncoder().embed``);
* the methods of each class that needs arguments, called on an instance built at each
  call from the arguments :data:`ARGUMENTS` declares for it: small values, what to read
  off the call's own inputs (the size of a tensor, a whole number: ``in_kernel.SIZE``,
  ``COUNT``) or what a function makes
  (``in_kernel.made_by``): ``MultiHeadAttention(embed_dim=x.shape[-1], num_heads=2)
  .forward`` for ``split_heads(x, 2)``.

What it skips, and why (:func:`shipped_candidates` returns them, each with its reason):

* special methods (``__init__``, ``__repr__``, ``__call__``...): the object's protocol,
  reached through the class or its instances, never called as an exercise's function;
* properties: they take no argument;
* classes themselves: building an object answers no exercise (each asks for a value);
* what a module imports from elsewhere (torch, NumPy, its sibling modules): listed where
  it is defined, or not shipped;
* the modules of the guards and of the grading kernel (``course_utils.checks.guards``,
  ``course_utils.grading_kernel``, ``course_utils.switches``, and the exercises' rules and
  allowances that the guards read, ``course_utils.exercises.allowance``, and the kernel
  client the students' Jupyter runs, ``course_utils.jupyter``: :data:`MACHINERY`): they act
  on the interpreter, not on an exercise's values (import
  hooks, function modes, the leftovers' baseline, the refusals an answer cell caught), and
  called with an exercise's inputs they change what every later test in the kernel sees (an
  import hook left behind breaks the notebook's next import);
  ``tests/notebooks/test_shipped_answers`` checks that no twin of an exercise is among them.

A candidate *fits* an exercise when it can be called with as many positional arguments as
the exercise's function requires (:func:`fits`): the same number of required parameters,
extra ones with defaults, or fewer required ones and more with defaults, or ``*args``.
"""

import ast
import filecmp
import importlib
import inspect
import pkgutil
import types
from dataclasses import dataclass
from pathlib import Path

from tests.support.in_kernel import COUNT, SIZE, made_by

__all__ = ["ARGUMENTS", "MACHINERY", "Candidate", "Skipped", "fits", "machinery",
           "required_positional", "same_tree", "shipped_candidates"]

MACHINERY = ("course_utils.checks.guards", "course_utils.grading_kernel",
             "course_utils.switches", "course_utils.exercises.allowance",
             "course_utils.jupyter")

# How each class of the package that needs arguments is built for a probe: {argument: a
# value, or what to read off the inputs}, or what makes the whole instance. A class that
# needs arguments and is missing here fails test_shipped_candidates.
_TINY_GPT = made_by("course_utils.models.gpt.GPTConfig", vocab_size=64, block_size=16,
                    d_model=16, n_layers=1, n_heads=2, dim_feedforward=32)
_BLOCK = {"d_model": SIZE, "nhead": COUNT, "dim_feedforward": 32, "dropout": 0.0}
ARGUMENTS: dict[str, dict | tuple] = {
    "course_utils.checks.core.Unfinished": {"exercise": "exercise 1"},
    "course_utils.models.attention.MultiHeadAttention": {"embed_dim": SIZE, "num_heads": COUNT},
    "course_utils.models.transformer.TransformerBlock": _BLOCK,
    "course_utils.models.transformer.DecoderBlock": _BLOCK,
    "course_utils.models.gpt.TinyGPT": {"config": _TINY_GPT},
    # a pass-through: its forward is the runner it holds, called on the block it holds
    "course_utils.models.library_gpt._Handed": {"run_block": made_by("torch.nn.Identity"),
                                                "block": made_by("torch.nn.Identity")},
    "course_utils.models.tiny_world.WordTokenizer": {"text": "the cat sat on the mat"},
    "course_utils.student.OwnNumbers": {"purpose": "probe", "student": None},
    "course_utils.words.word_eval.WordVectors": {
        "words": ("king", "queen"), "vectors": made_by("torch.eye", n=2)},
}


@dataclass(frozen=True)
class Candidate:
    """A function students receive: ``module.qualname``, called on an instance of its class
    when ``built``: built from ``arguments`` (as :data:`ARGUMENTS` says) or without any."""

    module: str
    qualname: str
    built: bool = False
    signature: inspect.Signature | None = None
    arguments: tuple = ()

    @property
    def name(self) -> str:
        """``course_utils.tokens.bpe.corpus_from_text``, ``....MiniLMEncoder().embed``,
        ``....MultiHeadAttention(...).forward``."""
        owner, _, attribute = self.qualname.rpartition(".")
        if self.built:
            return f"{self.module}.{owner}({'...' if self.arguments else ''}).{attribute}"
        return f"{self.module}.{self.qualname}"

    def fits(self, required: int) -> bool:
        """Whether it can be called with ``required`` positional arguments."""
        return fits(self.signature, required)


@dataclass(frozen=True)
class Skipped:
    """Something of the package that is no candidate, and why."""

    name: str
    why: str


def shipped_candidates(package: str = "course_utils") -> tuple[list[Candidate], list[Skipped]]:
    """(candidates, skipped) of every module of ``package`` (imported from this environment)."""
    root = importlib.import_module(package)
    modules = [root] + [importlib.import_module(info.name) for info in
                        pkgutil.walk_packages(root.__path__, f"{package}.")]
    candidates, skipped = [], []
    for module in modules:
        if machinery(module.__name__):
            skipped.append(Skipped(module.__name__, "the guards' or the grading kernel's"))
            continue
        for name, value in vars(module).items():
            if isinstance(value, type) and value.__module__ == module.__name__:
                found, left = _of_class(module.__name__, value)
                candidates += found
                skipped += left
            elif _defined_function(value, module.__name__):
                candidates.append(Candidate(module.__name__, name,
                                            signature=_signature(value)))
    return candidates, skipped


def machinery(module: str) -> bool:
    """Whether ``module`` is part of :data:`MACHINERY` (skipped: see the module's docstring)."""
    return any(module == name or module.startswith(f"{name}.") for name in MACHINERY)


def _defined_function(value, module: str) -> bool:
    """Whether ``value`` is a function ``module`` defines (decorated or not)."""
    if isinstance(value, type) or not callable(value):
        return False
    function = inspect.unwrap(value)
    return isinstance(function, types.FunctionType) and function.__module__ == module


def _of_class(module: str, cls: type) -> tuple[list[Candidate], list[Skipped]]:
    """The candidates and the skipped methods of ``cls``, its own methods only."""
    arguments = _arguments(module, cls)
    candidates, skipped = [], []
    for name, attribute in vars(cls).items():
        qualname = f"{cls.__qualname__}.{name}"
        where = f"{module}.{qualname}"
        if isinstance(attribute, (staticmethod, classmethod)):
            candidates.append(Candidate(module, qualname,
                                        signature=_signature(getattr(cls, name))))
        elif isinstance(attribute, property):
            skipped.append(Skipped(where, "a property: it takes no argument"))
        elif not isinstance(attribute, types.FunctionType):
            continue
        elif name.startswith("__") and name.endswith("__"):
            skipped.append(Skipped(where, "a special method: the object's protocol"))
        elif arguments is None:
            skipped.append(Skipped(where, f"{cls.__name__} needs arguments to be built, and "
                                          "ARGUMENTS does not say which"))
        else:
            signature = _signature(attribute)
            if signature is not None:
                signature = signature.replace(parameters=list(signature.parameters.values())[1:])
            candidates.append(Candidate(module, qualname, built=True, signature=signature,
                                        arguments=arguments))
    return candidates, skipped


def _arguments(module: str, cls: type) -> tuple | None:
    """How ``cls`` is built: () without arguments (by its signature: nothing is built
    here), else its :data:`ARGUMENTS` as a tuple, None when it has none."""
    signature = _signature(cls)
    if signature is not None and fits(signature, 0):
        return ()
    declared = ARGUMENTS.get(f"{module}.{cls.__qualname__}")
    return tuple(declared.items()) if isinstance(declared, dict) else declared


def _signature(value) -> inspect.Signature | None:
    try:
        return inspect.signature(value)
    except (TypeError, ValueError):  # a builtin without a signature: callable with none known
        return None


def fits(signature: inspect.Signature | None, required: int) -> bool:
    """Whether a callable of ``signature`` takes ``required`` positional arguments."""
    if signature is None:
        return False
    try:
        signature.bind(*range(required))
    except TypeError:
        return False
    return True


def required_positional(answer_cell: str, name: str) -> int | None:
    """How many positional arguments the function ``name`` of ``answer_cell`` (its source)
    requires; None when the cell defines no such function (a value exercise)."""
    for node in ast.parse(answer_cell).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            positional = node.args.posonlyargs + node.args.args
            return len(positional) - len(node.args.defaults)
    return None


def same_tree(one: Path, other: Path) -> list[str]:
    """The files (relative paths) that differ between the folders ``one`` and ``other``,
    or are in one of them only; ``__pycache__`` folders left out."""
    comparison = filecmp.dircmp(one, other, ignore=["__pycache__"])
    return sorted(_differences(comparison, Path()))


def _differences(comparison: filecmp.dircmp, where: Path) -> list[str]:
    _, mismatch, errors = filecmp.cmpfiles(comparison.left, comparison.right,
                                           comparison.common_files, shallow=False)
    found = [str(where / name) for name in
             (*comparison.left_only, *comparison.right_only, *mismatch, *errors)]
    for name, sub in comparison.subdirs.items():
        found += _differences(sub, where / name)
    return found
