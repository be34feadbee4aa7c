"""The import hook of the runner: Paddle's module names resolve to irflow's modules.

``paddle`` is `irflow`, and ``paddle.X.Y`` is ``irflow.X.Y``. Each is a `PaddleModule`,
a view of the irflow module under the Paddle name: attribute reads go to the irflow
module (so ``paddle.nn.Linear is irflow.nn.Linear`` and ``isinstance`` checks hold),
and a name irflow lacks raises `UnsupportedPaddleAPI` naming the Paddle API. The views
are new module objects, so irflow's own modules are never changed; writes land on the
view. A Paddle module irflow has no counterpart for raises `UnsupportedPaddleModule`.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import types

ROOT = "paddle"
TARGET = "irflow"


class UnsupportedPaddleAPI(AttributeError):
    """A Paddle API that irflow does not provide (an AttributeError, so that
    ``hasattr`` and ``getattr(..., default)`` work as for any missing attribute)."""


class UnsupportedPaddleModule(ModuleNotFoundError):
    """A Paddle module that irflow does not provide."""


def irflow_name(paddle_name: str) -> str:
    return TARGET + paddle_name[len(ROOT):]


class PaddleModule(types.ModuleType):
    """An irflow module seen under its Paddle name."""

    def __init__(self, name: str, target: types.ModuleType) -> None:
        super().__init__(name, target.__doc__)
        self.__dict__["_irflow_module"] = target
        for attr in ("__file__", "__path__", "__all__"):
            if hasattr(target, attr):
                self.__dict__[attr] = getattr(target, attr)

    def __getattr__(self, attr: str):
        target = self.__dict__["_irflow_module"]
        try:
            value = getattr(target, attr)
        except AttributeError:
            if attr.startswith("__"):
                raise
            raise UnsupportedPaddleAPI(
                f"{self.__name__}.{attr}: irflow does not provide this Paddle API yet "
                f"(docs/api.md lists what it provides)") from None
        if isinstance(value, types.ModuleType) and value.__name__.startswith(TARGET + "."):
            # A submodule: its Paddle view, so that errors below it name Paddle's path.
            return importlib.import_module(ROOT + value.__name__[len(TARGET):])
        return value

    def __dir__(self):
        return sorted(set(dir(self.__dict__["_irflow_module"])) | set(self.__dict__))

    def __repr__(self) -> str:
        return f"<module '{self.__name__}' (irflow's {self._irflow_module.__name__})>"


class _Loader(importlib.abc.Loader):
    def __init__(self, target: types.ModuleType) -> None:
        self.target = target

    def create_module(self, spec):
        return PaddleModule(spec.name, self.target)

    def exec_module(self, module) -> None:
        """Nothing to run: the irflow module is already imported."""


class PaddleFinder(importlib.abc.MetaPathFinder):
    """Finds ``paddle`` and ``paddle.*`` as irflow's modules (first on
    ``sys.meta_path``, in the runner's process only)."""

    def find_spec(self, fullname: str, path=None, target=None):
        if fullname != ROOT and not fullname.startswith(ROOT + "."):
            return None
        name = irflow_name(fullname)
        try:
            found = importlib.util.find_spec(name)
        except ModuleNotFoundError:  # a parent is missing too
            found = None
        if found is None:
            raise UnsupportedPaddleModule(
                f"No module named '{fullname}': irflow does not provide this Paddle "
                f"module yet (docs/api.md lists what it provides)", name=fullname)
        module = importlib.import_module(name)
        return importlib.machinery.ModuleSpec(fullname, _Loader(module),
                                              is_package=hasattr(module, "__path__"))
