"""One Glue job argument: its declaration (``Glue`` metadata on a contract field) and its text form.

A contract field is ``Annotated[<type>, Glue(name, description), ...]``; the field's type says how the
text is read and written (``str``, ``int`` whole number >= 1, ``float`` >= 0, ``bool`` true/false,
``Literal`` one of its values, ``tuple[str, ...]`` a JSON list of non-empty strings, never evaluated).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal, get_args, get_origin


class JobArgumentError(ValueError):
    """A job argument is missing or malformed; the message names it."""


@dataclass(frozen=True)
class Glue:
    """How one contract field travels as a Glue job argument.

    ``name`` is the argument without the leading ``--``; for a group field (a dataclass of strings such
    as the tracker table names) it is a pattern whose ``{}`` is each member's name.
    """

    name: str
    description: str
    unit: str = ""  # whole numbers: said in the message, "a whole number of seconds"
    of: str = ""  # JSON lists: what the items are, said in the message
    strip_slash: bool = False  # a root location: the trailing "/" is dropped


class PerRun:
    """Marker: the argument is passed per run (glue:startJobRun Arguments), not in DefaultArguments."""


class NonEmpty:
    """Marker: a JSON list argument needs at least one item."""


@dataclass(frozen=True)
class Argument:
    """One Glue argument of a contract, derived from a field's declaration."""

    name: str  # without "--"
    field: str
    member: str | None  # the group member it fills (tracker_tables.file_tracker), None for a plain field
    kind: Any  # the type its text is read as
    glue: Glue
    required: bool
    default: Any = None  # of an optional argument
    per_run: bool = False
    non_empty: bool = False

    def parse(self, raw: str) -> Any:
        """The value of the argument's (non-blank) text.

        Raises:
            JobArgumentError: the text is not a value of the argument's type; the message names the argument.
        """
        text = raw.strip()
        if self.kind is bool:
            return self._flag(text)
        if self.kind is int:
            return self._whole_number(text)
        if self.kind is float:
            return self._number(text)
        if get_origin(self.kind) is Literal:
            return self._choice(text)
        if get_origin(self.kind) is tuple:
            return self._names(text)
        return text.rstrip("/") if self.glue.strip_slash else text

    def render(self, value: Any) -> str:
        """The argument's text for a value (the inverse of :meth:`parse`)."""
        if self.kind is bool:
            return "true" if value else "false"
        if get_origin(self.kind) is tuple:
            return json.dumps(list(value))
        return str(value)

    def _error(self, must: str) -> JobArgumentError:
        return JobArgumentError(f"job argument --{self.name} must {must}")

    def _flag(self, text: str) -> bool:
        if text.lower() not in ("true", "false"):
            raise self._error(f"be true or false, got {text!r}")
        return text.lower() == "true"

    def _whole_number(self, text: str) -> int:
        try:
            value = int(text)
        except ValueError as error:
            unit = f" of {self.glue.unit}" if self.glue.unit else ""
            raise self._error(f"be a whole number{unit}, got {text!r}") from error
        if value < 1:
            raise self._error(f"be at least 1, got {value}")
        return value

    def _number(self, text: str) -> float:
        try:
            value = float(text)
        except ValueError as error:
            raise self._error(f"be a number, got {text!r}") from error
        if value < 0:
            raise self._error(f"not be negative, got {value}")
        return value

    def _choice(self, text: str) -> str:
        choices = get_args(self.kind)
        for choice in choices:
            if text.lower() == str(choice).lower():
                return choice
        raise self._error(f"be {' or '.join(choices)}, got {text!r}")

    def _names(self, text: str) -> tuple[str, ...]:
        of = f" of {self.glue.of}" if self.glue.of else ""
        try:
            value = json.loads(text)
        except json.JSONDecodeError as error:
            raise self._error(f"be a JSON list{of}, got {text!r}") from error
        if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
            raise self._error(f"be a JSON list of strings, got {text!r}")
        if self.non_empty and not value:
            raise self._error(f"be a non-empty JSON list{of}")
        return tuple(dict.fromkeys(value))  # a repeated name counts once
