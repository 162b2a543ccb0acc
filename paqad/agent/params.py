"""Declared request parameters: one declaration gives both the in-band validation and the JSON
Schema the MCP server publishes, so the two doors cannot drift apart.

Validation is strict on purpose: requests come from a program, and a silent coercion
(``"5"`` → 5, ``true`` → 1, ``1.0`` → 1) hides a caller's bug. Unknown parameters are refused
by name, so a typo (``top-n``) is an error rather than a default.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from paqad.errors import UsageError

if TYPE_CHECKING:
    from paqad.jsontypes import JSONObject

#: A checked parameter's value: what a parameter of kind str, int, float or bool holds, or None.
Scalar = str | int | float | bool | None

_JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean"}
_ARTICLE = {str: "a string", int: "an integer", float: "a number", bool: "a boolean"}


class ParamError(UsageError, ValueError):
    """A request parameter is missing, of the wrong type or out of range (code ``bad_params``)."""


@dataclass(frozen=True)
class Param:
    name: str
    kind: type  # str | int | float | bool
    description: str
    required: bool = False
    default: Scalar = None
    minimum: float | None = None
    maximum: float | None = None
    max_length: int | None = None
    choices: tuple[str, ...] | None = None

    def check(self, value: object) -> Scalar:
        """``value`` if it fits this parameter, else ParamError naming the parameter and the rule."""
        if value is None and not self.required:
            return self.default
        if not _is_kind(value, self.kind):
            raise ParamError(f"{self.name} must be {_ARTICLE[self.kind]}, got {_type_name(value)}")
        if isinstance(value, str):
            self._check_text(value)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            self._check_number(value)
        return value if isinstance(value, (str, int, float, bool)) else None  # always the former: _is_kind passed

    def _check_text(self, value: str) -> None:
        if self.max_length is not None and len(value) > self.max_length:
            raise ParamError(f"{self.name} is {len(value)} characters; at most {self.max_length}")
        if self.choices is not None and value not in self.choices:
            raise ParamError(f"{self.name} must be one of {', '.join(self.choices)}; got {value[:40]!r}")
        if self.required and not value.strip():
            raise ParamError(f"{self.name} is empty")
        if "\x00" in value:
            raise ParamError(f"{self.name} contains a NUL character")

    def _check_number(self, value: float) -> None:
        if self.minimum is not None and value < self.minimum:
            raise ParamError(f"{self.name} must be at least {_num(self.minimum)}; got {_short(value)}")
        if self.maximum is not None and value > self.maximum:
            raise ParamError(f"{self.name} must be at most {_num(self.maximum)}; got {_short(value)}")

    def schema(self) -> JSONObject:
        out: JSONObject = {"type": _JSON_TYPES[self.kind], "description": self.description}
        for key, value in (("minimum", self.minimum), ("maximum", self.maximum), ("maxLength", self.max_length), ("default", self.default)):
            if value is not None:
                out[key] = value
        if self.choices is not None:
            out["enum"] = list(self.choices)
        if self.kind is str and self.required:
            out["minLength"] = 1
        return out


def validate(params: tuple[Param, ...], raw: Mapping[str, object], reserved: tuple[str, ...] = ()) -> dict[str, Scalar]:
    """The declared parameters of one request, checked and with defaults filled in."""
    known = {p.name for p in params}
    unknown = sorted(k for k in raw if k not in known and k not in reserved)
    if unknown:
        allowed = ", ".join(sorted(known)) or "none"
        raise ParamError(f"unknown parameter {unknown[0][:60]!r}; this action takes: {allowed}")
    out = {}
    for p in params:
        if p.required and raw.get(p.name) is None:
            raise ParamError(f"{p.name} is required")
        out[p.name] = p.check(raw.get(p.name))
    return out


def schema(params: tuple[Param, ...]) -> JSONObject:
    """The JSON Schema of an action's parameters (an MCP tool's ``inputSchema``)."""
    return {
        "type": "object",
        "properties": {p.name: p.schema() for p in params},
        "required": [p.name for p in params if p.required],
        "additionalProperties": False,
    }


def _is_kind(value: object, kind: type) -> bool:
    if kind is bool:
        return isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return isinstance(value, kind)


def _type_name(value: object) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null", int: "an integer", float: "a number"}
    return names.get(type(value), type(value).__name__)


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _short(value: float) -> str:
    """A number short enough for a one-line error (``str`` of a huge int is slow, or refused)."""
    if isinstance(value, int) and value.bit_length() > 64:
        return f"a number of about {int(value.bit_length() * 0.30103)} digits"
    return str(value)[:24]
