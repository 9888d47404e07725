"""The base of every job contract: the Glue argument list, the parser, the DefaultArguments, the per-run
arguments and the required names, all derived from the fields' ``Glue`` declarations.

A contract is a frozen dataclass deriving :class:`JobContract`; each field that is a job argument is
``Annotated[<type>, Glue(name, description), ...]``. Arguments shared by several jobs are declared
here once (``Environment``, ``TableIds``, ``RawRoot``, ``CatalogSync``, ``TableConfigTable``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Annotated, Any, Self, get_args, get_origin, get_type_hints

from odp.contracts.arguments import Argument, Glue, JobArgumentError, NonEmpty, PerRun

Environment = Annotated[str, Glue("odp_environment", "the ODP environment the job belongs to (dev, prod, ...)")]
TableIds = Annotated[tuple[str, ...], Glue("odp_table_ids", "the tables the run writes", of="table ids")]
RawRoot = Annotated[
    str,
    Glue(
        "odp_raw_root",
        "s3://raw-bucket (file:// locally): tables live at <raw_root>/<database>/<table>",
        strip_slash=True,
    ),
]
LeaseSeconds = Annotated[int, Glue("odp_lease_seconds", "how long a run's lease on a table or dataset holds")]
TableConfigTable = Annotated[str, Glue("odp_table_config", "the table_config DynamoDB table")]
CatalogSync = Annotated[bool, Glue("odp_catalog_sync", "Hudi meta sync to the Glue Data Catalog (off locally)")]


@dataclass(frozen=True)
class LedgerTables:
    """The run ledger's tables (odp.tracker.ledger.RunLedger): processing_tracker and processing_tracker_history."""

    tracker: str
    history: str


Ledger = Annotated[
    LedgerTables,
    Glue("odp_ledger_{}", "the run ledger's tables: each run's summary (tracker) and its history row (history)"),
]
NO_LEDGER = LedgerTables("", "")  # a job run that records no run and takes no lease (a local run)
Canary = Annotated[
    bool,
    Glue(
        "odp_canary",
        "harmless mode (the post-deploy canary): reach every service the job needs, read-only, write nothing, exit",
    ),
    PerRun,
]


@cache
def contract_arguments(contract: type) -> tuple[Argument, ...]:
    """Every Glue argument of a contract dataclass, in field order (a group field gives one per member)."""
    hints = get_type_hints(contract, include_extras=True)
    arguments: list[Argument] = []
    for field in dataclasses.fields(contract):
        hint = hints[field.name]
        if get_origin(hint) is not Annotated:
            continue
        kind, *metadata = get_args(hint)
        glue = next((item for item in metadata if isinstance(item, Glue)), None)
        if glue is None:
            continue
        common = {
            "field": field.name,
            "glue": glue,
            "per_run": any(item is PerRun for item in metadata),
            "non_empty": any(item is NonEmpty for item in metadata),
        }
        if dataclasses.is_dataclass(kind):
            # a group with a default (an instance of the group) is optional, member by member
            group = None if field.default is dataclasses.MISSING else field.default
            arguments += [
                Argument(
                    glue.name.format(member.name),
                    member=member.name,
                    kind=str,
                    required=group is None,
                    default=None if group is None else getattr(group, member.name),
                    **common,
                )
                for member in dataclasses.fields(kind)
            ]
        else:
            required = field.default is dataclasses.MISSING
            default = None if required else field.default
            arguments.append(Argument(glue.name, member=None, kind=kind, required=required, default=default, **common))
    return tuple(arguments)


def plain_arguments(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """Resolved job arguments by name, with or without the leading ``--`` in the input."""
    return {str(name).removeprefix("--"): value for name, value in arguments.items()}


def _blank(value: Any) -> bool:
    return value is None or str(value).strip() == ""


def missing_error(names: list[str]) -> JobArgumentError:
    """The error for required arguments that are absent or blank."""
    if len(names) == 1:
        return JobArgumentError(f"job argument --{names[0]} is required")
    return JobArgumentError(f"job argument(s) {', '.join(f'--{name}' for name in names)} required")


class JobContract:
    """Derived behaviour of a contract dataclass (see the module docstring)."""

    @classmethod
    def arguments(cls) -> tuple[Argument, ...]:
        return contract_arguments(cls)

    @classmethod
    def argument_names(cls) -> tuple[str, ...]:
        """Every argument the job takes, in the order getResolvedOptions is asked for them."""
        return tuple(argument.name for argument in cls.arguments())

    @classmethod
    def required_names(cls) -> tuple[str, ...]:
        return tuple(argument.name for argument in cls.arguments() if argument.required)

    @classmethod
    def optional_names(cls) -> tuple[str, ...]:
        return tuple(argument.name for argument in cls.arguments() if not argument.required)

    @classmethod
    def resolvable_names(cls, argv: Iterable[str]) -> list[str]:
        """What getResolvedOptions is asked for: the required names and the optional ones present in ``argv``
        (getResolvedOptions fails on a name it is asked for and not given)."""
        given = set(argv)
        return [a.name for a in cls.arguments() if a.required or f"--{a.name}" in given]

    @classmethod
    def glue_name(cls, field: str, member: str | None = None) -> str:
        """The Glue argument name (without ``--``) of a field, or of a member of a group field.

        Raises:
            KeyError: the contract has no such argument.
        """
        for argument in cls.arguments():
            if (argument.field, argument.member) == (field, member):
                return argument.name
        raise KeyError(f"{cls.__name__} has no job argument for {field}{'.' + member if member else ''}")

    @classmethod
    def option(cls, field: str, member: str | None = None) -> str:
        """The argument's key in Glue Arguments and on the command line: ``--`` + :meth:`glue_name`.

        Raises:
            KeyError: the contract has no such argument.
        """
        return f"--{cls.glue_name(field, member)}"

    @classmethod
    def from_arguments(cls, arguments: Mapping[str, Any]) -> Self:
        """Build from resolved arguments (names with or without ``--``); a blank optional one takes its default.

        Raises:
            JobArgumentError: an argument is missing or malformed; the message names it.
        """
        plain = plain_arguments(arguments)
        missing = [a.name for a in cls.arguments() if a.required and _blank(plain.get(a.name))]
        if missing:
            raise missing_error(missing)
        values: dict[str, Any] = {}
        groups: dict[str, dict[str, str]] = {}
        for argument in cls.arguments():
            raw = plain.get(argument.name)
            value = argument.default if _blank(raw) else argument.parse(str(raw))
            if argument.member is None:
                values[argument.field] = value
            else:
                groups.setdefault(argument.field, {})[argument.member] = value
        hints = get_type_hints(cls)
        values |= {field: hints[field](**members) for field, members in groups.items()}
        return cls(**values)

    @classmethod
    def render(cls, values: Mapping[str, Any], *, per_run: bool | None = None) -> dict[str, str]:
        """Glue arguments (keys with the leading ``--``) of field values; ``per_run`` True/False keeps only
        the per-run/static ones, and an absent optional field takes its default.

        Raises:
            TypeError: a value for a field that is no such argument, or a required one is missing.
        """
        chosen = [a for a in cls.arguments() if per_run is None or a.per_run is per_run]
        unknown = set(values) - {a.field for a in chosen}
        missing = sorted({a.field for a in chosen if a.required and a.field not in values})
        if unknown or missing:
            raise TypeError(f"{cls.__name__} arguments: unknown {sorted(unknown)}, missing {missing}")
        rendered: dict[str, str] = {}
        for argument in chosen:
            if argument.member is None:
                value = values.get(argument.field, argument.default)
            elif argument.field in values:
                value = getattr(values[argument.field], argument.member)
            else:
                value = argument.default  # the member's value in the group's default
            rendered[f"--{argument.name}"] = argument.render(value)
        return rendered

    @classmethod
    def canary_arguments(cls) -> dict[str, str]:
        """The Arguments of the post-deploy canary's run of a job whose contract declares ``canary: Canary``.

        Raises:
            TypeError: the contract has no canary argument.
        """
        return cls.render({"canary": True}, per_run=True)

    @classmethod
    def static_arguments(cls, **values: Any) -> dict[str, str]:
        """The Glue job's DefaultArguments (keys with the leading ``--``): every argument not passed per run."""
        return cls.render(values, per_run=False)

    def to_arguments(self) -> dict[str, str]:
        """All arguments, as a Glue run sees them (static merged with per run; keys with the leading ``--``)."""
        fields = {argument.field for argument in self.arguments()}
        return self.render({field: getattr(self, field) for field in fields})
