"""Imports a script of examples/ by its path, for the tests that run it.

Under Bazel the script is a data dependency of the test, in the runfiles
tree; run by hand from the source tree, it is found there.
"""

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

__all__ = ["load_example"]


def load_example(name: str) -> ModuleType:
    """Imports ``examples/<name>.py`` as a module called ``name``. The
    examples folder goes on ``sys.path`` first, so that an example imports
    another (``from logging_mode import LoggingMode``) as when it runs as a
    script."""
    root = Path(os.environ.get("TEST_SRCDIR", "")) / os.environ.get(
        "TEST_WORKSPACE", "")
    path = root / "examples" / f"{name}.py"
    if not path.exists():  # run outside Bazel, from the source tree
        path = Path(__file__).resolve().parents[2] / "examples" / f"{name}.py"
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
