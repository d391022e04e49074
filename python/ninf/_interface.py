"""What a server serves: ninf.functions() and ninf.describe(name).

The interface comes from libninf (Ninf_binding_describe, as JSON), the
same one every call is checked against. Its dimension expressions are the
wire's prefix-order trees; this module prints them ("a[n][lda]") and
evaluates them on a call's IN integers, which is how ``out="alloc"`` knows
the shape of the arrays it allocates. libninf evaluates the same trees
again for the call itself and refuses an array that is too small, so a
mistake here is caught there, never sent.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

from . import _ninf

# Binding strength of each operator for printing (higher binds tighter),
# and its spelling in the IDL (idl/, docs/idl.md).
_BINARY = {
    "OR": (2, "||"), "AND": (3, "&&"),
    "EQ": (4, "=="), "NE": (4, "!="),
    "LT": (5, "<"), "LE": (5, "<="), "GT": (5, ">"), "GE": (5, ">="),
    "ADD": (6, "+"), "SUB": (6, "-"),
    "MUL": (7, "*"), "DIV": (7, "/"), "MOD": (7, "%"),
    "POW": (9, "^"),
}
_UNARY = {"NEG": "-", "NOT": "!"}
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1

Node = Tuple[str, int]


class ExpressionError(ValueError):
    """A dimension that cannot be evaluated (division by zero, overflow)."""


def _trunc_div(a: int, b: int) -> int:
    # C's division truncates toward zero; Python's // floors.
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _checked(x: int) -> int:
    if not _INT64_MIN <= x <= _INT64_MAX:
        raise ExpressionError("overflows 64 bits")
    return x


def _binary(op: str, a: int, b: int) -> int:
    if op == "ADD":
        return _checked(a + b)
    if op == "SUB":
        return _checked(a - b)
    if op == "MUL":
        return _checked(a * b)
    if op in ("DIV", "MOD"):
        if b == 0:
            raise ExpressionError("division by zero")
        q = _checked(_trunc_div(a, b))
        return q if op == "DIV" else a - b * q
    if op == "POW":
        if b < 0:
            raise ExpressionError("negative exponent")
        if abs(a) >= 2 and b >= 64:
            raise ExpressionError("overflows 64 bits")
        return _checked(a ** b)
    if op == "LT":
        return int(a < b)
    if op == "LE":
        return int(a <= b)
    if op == "GT":
        return int(a > b)
    if op == "GE":
        return int(a >= b)
    if op == "EQ":
        return int(a == b)
    if op == "NE":
        return int(a != b)
    if op == "AND":
        return int(bool(a) and bool(b))
    if op == "OR":
        return int(bool(a) or bool(b))
    raise ExpressionError(f"unknown operator {op}")


class Expression:
    """A dimension or CalcOrder expression: prefix-order nodes."""

    def __init__(self, nodes: Sequence[Sequence], names: Sequence[str]):
        self.nodes: List[Node] = [(str(op), int(v)) for op, v in nodes]
        self._names = list(names)

    def __bool__(self) -> bool:
        return bool(self.nodes)

    def evaluate(self, values: Sequence[int]) -> int:
        """The value for the parameters' values (indexed as the params)."""
        pos = 0

        # As libninf's EvalExpr: a COND walks both branches to keep the
        # position but evaluates only the taken one (the other may divide
        # by zero); `live` False only walks.
        def walk(live: bool) -> int:
            nonlocal pos
            op, v = self.nodes[pos]
            pos += 1
            if op == "CONST":
                return v
            if op == "PARAM":
                return int(values[v]) if live else 0
            if op in _UNARY:
                a = walk(live)
                if not live:
                    return 0
                return int(not a) if op == "NOT" else _checked(-a)
            if op == "COND":
                c = walk(live)
                yes = walk(live and bool(c))
                no = walk(live and not c)
                return yes if c else no
            a = walk(live)
            b = walk(live)
            return _binary(op, a, b) if live else 0

        return walk(True)

    def __str__(self) -> str:
        pos = 0

        def walk() -> Tuple[str, int]:
            nonlocal pos
            op, v = self.nodes[pos]
            pos += 1
            if op == "CONST":
                return str(v), 10
            if op == "PARAM":
                name = self._names[v] if 0 <= v < len(self._names) else f"${v}"
                return name, 10
            if op in _UNARY:
                text, level = walk()
                return _UNARY[op] + (text if level >= 8 else f"({text})"), 8
            if op == "COND":
                c, cl = walk()
                a, _ = walk()
                b, _ = walk()
                return f"{c if cl > 1 else '(' + c + ')'} ? {a} : {b}", 1
            level, word = _BINARY.get(op, (0, op))
            a, al = walk()
            b, bl = walk()
            # Left-associative, except '^' which is right-associative.
            right_assoc = op == "POW"
            left = a if al > level or (al == level and not right_assoc) else f"({a})"
            right = b if bl > level or (bl == level and right_assoc) else f"({b})"
            sep = "" if op == "POW" else " "
            return f"{left}{sep}{word}{sep}{right}", level

        return walk()[0] if self.nodes else ""

    def __repr__(self) -> str:
        return f"Expression({str(self)!r})"


@dataclass(frozen=True)
class Param:
    """One parameter of a remote function, as the IDL declares it."""
    name: str
    mode: str        # "IN", "OUT", "INOUT" or "WORK"
    type: str        # IDL type: "int", "double", "dcomplex", "string", ...
    pointer: bool    # declared `T *name` (an OUT scalar such as info)
    dims: Tuple[Expression, ...]  # outermost first, as the IDL writes them

    @property
    def is_array(self) -> bool:
        return bool(self.dims)

    @property
    def dtype(self) -> Optional[str]:
        """numpy's name for the element type ("float64"); None for strings."""
        return _ninf.dtypes.get(self.type)

    def __str__(self) -> str:
        if self.pointer:
            return f"{self.mode} {self.type} *{self.name}"
        return f"{self.mode} {self.type} {self.name}" + "".join(f"[{d}]" for d in self.dims)


@dataclass(frozen=True)
class Function:
    """A remote function's interface (ninf.describe)."""
    name: str
    module: str
    description: str
    language: str    # "C" or "Fortran": how the server calls the routine
    backend: str     # "" or "MPI"
    params: Tuple[Param, ...]
    calc_order: Optional[Expression]

    @property
    def signature(self) -> str:
        """"dgesv(IN int n, ..., INOUT double a[n][lda], ...)"."""
        return f"{self.name}({', '.join(map(str, self.params))})"

    def __str__(self) -> str:
        text = self.signature
        if self.description:
            text += f"\n  {self.description}"
        if self.calc_order:
            text += f"\n  CalcOrder {self.calc_order}"
        return text

    def extents(self, index: int, values: Sequence[int]) -> Tuple[int, ...]:
        """The dimensions of array parameter `index` for a call whose
        parameters have `values`, outermost first."""
        return tuple(d.evaluate(values) for d in self.params[index].dims)


def _function(data: dict) -> Function:
    names = [p["name"] for p in data["params"]]
    params = tuple(
        Param(p["name"], p["mode"], p["type"], bool(p["pointer"]),
              tuple(Expression(d, names) for d in p["dims"]))
        for p in data["params"])
    order = Expression(data["calc_order"], names)
    return Function(data["name"], data["module"], data["description"],
                    data["language"], data["backend"], params, order or None)


def functions(server: Optional[str] = None) -> List[str]:
    """The names of the functions `server` ("host:port"; None: the default
    server) serves, sorted. Raises ninf.Error when it cannot be asked."""
    return json.loads(_ninf.functions(server))


def describe(name: str, server: Optional[str] = None) -> Function:
    """The interface of function `name` on `server` (None: the default
    server). Raises ninf.Error (code NINF_ERR_FUNCTION_NOT_FOUND for a name
    the server does not serve)."""
    return _function(json.loads(_ninf.describe(name, server)))
