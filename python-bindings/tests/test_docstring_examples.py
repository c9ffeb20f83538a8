"""Every public item of the package has a docstring with an example, and every example runs.

The public items: the names of ``reproject_rs.__all__`` and ``reproject_rs.mosaicking.__all__``
(the exception classes included), and the public methods and properties of the classes among
them. The examples are doctests, run here on every module that holds one.
"""

import doctest
import importlib
import inspect

import pytest

import reproject_rs
import reproject_rs.mosaicking

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE | doctest.IGNORE_EXCEPTION_DETAIL

MODULES = [
    "reproject_rs",
    "reproject_rs._core",
    "reproject_rs._high_level",
    "reproject_rs._lazy",
    "reproject_rs._warmup",
    "reproject_rs.mosaicking",
    "reproject_rs.mosaicking._coadd",
    "reproject_rs.mosaicking._wcs_helpers",
]


def public_items():
    """(qualified name, text holding its example, whether that text is its own docstring)
    of every public item."""
    for package in (reproject_rs, reproject_rs.mosaicking):
        for name in package.__all__:
            if name == "__version__":
                continue
            item = getattr(package, name)
            qualified = f"{package.__name__}.{name}"
            if not (callable(item) or inspect.isclass(item)):
                # A constant carries no docstring of its own: its package's has the example,
                # in lines that name it.
                lines = (package.__doc__ or "").splitlines()
                yield qualified, "\n".join(line for line in lines if name in line), False
                continue
            yield qualified, item.__doc__, True
            if inspect.isclass(item) and not issubclass(item, BaseException):
                for attr, member in vars(item).items():
                    # Slots are attributes: the class's docstring tells them.
                    if not attr.startswith("_") and not inspect.ismemberdescriptor(member):
                        yield f"{qualified}.{attr}", member.__doc__, True


@pytest.mark.parametrize(
    "name, doc", [item[:2] for item in public_items()], ids=[item[0] for item in public_items()]
)
def test_every_public_item_has_an_example(name, doc):
    assert doc and ">>>" in doc, f"{name}: no example in its docstring"


@pytest.mark.parametrize("name", MODULES)
def test_the_examples_run(name, capsys):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=FLAGS)
    report = capsys.readouterr().out
    assert result.attempted > 0 and result.failed == 0, report


def test_the_examples_are_found():
    """Every example counted above is run by test_the_examples_run (no public item's
    docstring lives in a module that list misses)."""
    finder = doctest.DocTestFinder()
    found = set()
    for name in MODULES:
        for test in finder.find(importlib.import_module(name)):
            if test.examples:
                found.add(test.docstring)
    missing = [
        name
        for name, doc, own in public_items()
        if own and doc and ">>>" in doc and doc not in found
    ]
    assert not missing, f"examples no listed module runs: {missing}"
