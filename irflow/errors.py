"""Exception types raised by irflow.

Every error that can be traced to a line of the user's program carries a `Location`
and prints it first, followed by the offending source text, so the user reads
``model.py:12: h = self.fc(x)`` before the explanation.
"""
from __future__ import annotations

import linecache


class Location:
    """A position in the user's source: file, line and (optionally) column."""

    __slots__ = ("file", "line", "col")

    def __init__(self, file: str, line: int, col: int | None = None):
        self.file = file
        self.line = line
        self.col = col

    def source_line(self) -> str:
        return linecache.getline(self.file, self.line).rstrip("\n")

    def __eq__(self, other) -> bool:
        return (isinstance(other, Location) and self.file == other.file
                and self.line == other.line and self.col == other.col)

    def __hash__(self) -> int:
        return hash((self.file, self.line, self.col))

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" + (f":{self.col}" if self.col is not None else "")

    def __repr__(self) -> str:
        return f"Location({str(self)!r})"

    def describe(self) -> str:
        """``file:line`` followed by the source line and a caret under the column."""
        text = str(self)
        src = self.source_line()
        if src.strip():
            text += f"\n    {src.strip()}"
            if self.col is not None:
                indent = len(src) - len(src.lstrip())
                text += "\n    " + " " * max(self.col - indent, 0) + "^"
        return text


class IrflowError(Exception):
    """Base class of irflow's errors; `loc` names the user's source when known."""

    def __init__(self, message: str, loc: Location | None = None):
        self.message = message
        self.loc = loc
        super().__init__(message)

    def __str__(self) -> str:
        if self.loc is None:
            return self.message
        return f"{self.loc.describe()}\n{self.message}"

    def with_loc(self, loc: Location | None):
        """Attach a location if the error does not have one yet; returns self."""
        if self.loc is None and loc is not None:
            self.loc = loc
        return self


class ShapeError(IrflowError, ValueError):
    """An op got operands whose shapes or dtypes its type rule does not accept."""


class DimMismatch(ShapeError):
    """A type rule needs the symbolic dim `dim` to equal `size`: a static size (a
    ``[N, S1]`` input into a Linear of 784 inputs) or another symbol (two inputs added
    whose batch dims are different symbols). While tracing, `irflow.compile` resolves
    it by fixing the input symbol it names to that size, or to that other symbol, and
    tracing again."""

    def __init__(self, message: str, dim, size, loc: Location | None = None):
        super().__init__(message, loc)
        self.dim = dim
        self.size = size


class UnknownOpError(IrflowError, KeyError):
    """No op of that name is registered."""

    def __str__(self) -> str:  # KeyError would quote the message
        return IrflowError.__str__(self)


class VerificationError(IrflowError):
    """The IR breaks a structural rule (SSA, scoping, terminators, types)."""


class ParseError(IrflowError):
    """The IR text is malformed; the message gives line and column."""


class InputError(IrflowError, ValueError):
    """A value passed to a compiled program does not match its signature."""


class ConversionError(IrflowError):
    """Python code that the frontend cannot turn into IR."""


class SymbolicShapeError(ShapeError, ConversionError):
    """A type rule that cannot decide, while tracing, what it decides for sizes: the
    operands' symbolic sizes (known only when the program runs) fail it where sizes
    would pass (``reshape(x, [-1, 2, 4])`` of an axis of ``D1`` rows). Eager code
    runs; the program does not convert."""


class DTypeError(IrflowError, ValueError):
    """Operands of dtypes that an op does not mix (a float64 input into a float32
    layer's matmul), where Paddle raises a ValueError too."""


class IntegerDivisionByZero(IrflowError, ZeroDivisionError):
    """An integer ``//`` or ``%`` by zero, which Paddle rejects too."""


class SingularMatrixError(IrflowError, ValueError):
    """A matrix that `inverse`, `solve` or `cholesky` cannot factor (singular, or not
    positive definite), where Paddle raises a ValueError too."""


class OutOfRangeError(IrflowError, ValueError):
    """An index outside the range an op accepts (one_hot's classes), a ValueError as
    in Paddle."""


class ArgumentError(IrflowError, TypeError):
    """A compiled function called with arguments its Python signature does not take
    (too many, an unknown keyword), named after the model rather than the converted
    code."""


class LoadError(IrflowError, ValueError):
    """A saved file is missing, damaged, changed after saving, of another format
    version, or not what irflow wrote; the message names the file and the problem.
    Loading never runs code from a file, so a hostile file fails here too."""
