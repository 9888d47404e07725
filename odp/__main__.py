"""``python -m odp``: the operator's command line (see "Operating ODP" in the README).

Against AWS: ``--env dev`` (credentials and region from the usual chain, ``--region`` to choose).
Against the sandbox: ``--sandbox <lake folder>`` (or ``ODP_SANDBOX_LAKE``), with ``--staging <folder>``
(or ``ODP_SANDBOX_STAGING``) for the commands that read staged files or run the job.
Every command that changes something prints its plan and changes nothing without ``--yes``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from odp.operations.backend import AwsBackend, OperationError, OperatorBackend
from odp.operations.commands import (
    Plan,
    plan_backfill,
    plan_lease_release,
    plan_quarantine,
    plan_release,
    plan_replay,
    plan_retry,
)
from odp.operations.status import (
    cadence_tables,
    ledger_view,
    render_cadence,
    render_ledger,
    render_table,
    render_unmatched,
    table_view,
    unmatched,
    unmatched_line,
)

SANDBOX_BACKEND = "sandbox.operator"  # loaded by name: odp never imports the sandbox


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m odp",
        description="Operate ODP: status, retry, files, leases; smoke and canary (the post-deploy checks).",
    )
    target = parser.add_mutually_exclusive_group()
    target.add_argument("--env", default=os.environ.get("ODP_ENVIRONMENT"), help="AWS environment (dev, test, prod)")
    target.add_argument("--sandbox", type=Path, default=os.environ.get("ODP_SANDBOX_LAKE"), help="sandbox lake folder")
    parser.add_argument("--staging", type=Path, default=os.environ.get("ODP_SANDBOX_STAGING"), help="sandbox staging")
    parser.add_argument("--region", help="AWS region (default: from the environment)")
    parser.add_argument("--staging-bucket", help="AWS: the staging bucket (replay, backfill)")
    commands = parser.add_subparsers(dest="command", required=True)

    status = commands.add_parser("status", help="a table's or a cadence's pending files, lease, last run, quarantine")
    which = status.add_mutually_exclusive_group(required=True)
    which.add_argument("--table", help="table id <source>.<schema>.<table>")
    which.add_argument("--cadence", help="cadence name")
    which.add_argument("--unmatched", action="store_true", help="prefixes whose files no entry or rule takes")
    which.add_argument(
        "--all", action="store_true", help="every batch table, streamed table and dataset with its last run"
    )

    def changing(name: str, help_text: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help_text)
        sub.add_argument("--yes", action="store_true", help="do it (without: print the plan only)")
        return sub

    changing("retry", "run the File Processor for a table now").add_argument("table")
    changing("replay", "rebuild a table from scratch from its staged and processed files").add_argument("table")
    changing("backfill", "apply a new table's files already in staging").add_argument("table")
    file_parser = commands.add_parser("file", help="quarantine or release one file")
    file_commands = file_parser.add_subparsers(dest="file_command", required=True)
    for name, help_text in (("quarantine", "set a landed file aside"), ("release", "make a quarantined file landed")):
        sub = file_commands.add_parser(name, help=help_text)
        sub.add_argument("table")
        sub.add_argument("key", help="its staging key")
        sub.add_argument("--yes", action="store_true", help="do it (without: print the plan only)")
        if name == "quarantine":
            sub.add_argument("--reason", required=True, help="why (kept on the file)")
    lease = commands.add_parser("lease", help="release a stuck lease")
    lease_commands = lease.add_subparsers(dest="lease_command", required=True)
    release = lease_commands.add_parser("release", help="remove a table's lease if the named run still holds it")
    release.add_argument("table")
    release.add_argument("--holder", required=True, help="the lease owner shown by status")
    release.add_argument("--yes", action="store_true", help="do it (without: print the plan only)")
    return parser


@contextmanager
def open_backend(args: argparse.Namespace) -> Iterator[OperatorBackend]:
    """The AWS backend, or the sandbox's (moto over the lake folder, saved as it changes).

    Raises:
        OperationError: neither --env nor --sandbox given.
    """
    if args.sandbox is not None:
        module = importlib.import_module(SANDBOX_BACKEND)
        with module.sandbox_backend(Path(args.sandbox), Path(args.staging) if args.staging else None) as backend:
            yield backend
        return
    if not args.env:
        raise OperationError("say where: --env <environment> (AWS) or --sandbox <lake folder>")
    yield AwsBackend(args.env, staging_bucket=args.staging_bucket, region=args.region)


def _plan(backend: OperatorBackend, args: argparse.Namespace) -> Plan:
    if args.command == "retry":
        return plan_retry(backend, args.table)
    if args.command == "replay":
        return plan_replay(backend, args.table)
    if args.command == "backfill":
        return plan_backfill(backend, args.table)
    if args.command == "file" and args.file_command == "quarantine":
        return plan_quarantine(backend, args.table, args.key, args.reason)
    if args.command == "file":
        return plan_release(backend, args.table, args.key)
    return plan_lease_release(backend, args.table, args.holder)


def run(args: argparse.Namespace, out: Any = None) -> int:
    """One command; returns the exit code (0 done or planned, 2 refused)."""
    out = out if out is not None else sys.stdout
    now = datetime.now(UTC)
    with open_backend(args) as backend:
        if args.command == "status":
            if args.unmatched:
                print(render_unmatched(unmatched(backend), now), file=out)
                return 0
            if args.all:
                print(render_ledger(*ledger_view(backend)), file=out)
                return 0
            if args.table:
                print(render_table(table_view(backend, args.table), now), file=out)
            else:
                views = [table_view(backend, t) for t in cadence_tables(backend, args.cadence)]
                print(render_cadence(args.cadence, views, now), file=out)
            print(unmatched_line(unmatched(backend)), file=out)
            return 0
        plan = _plan(backend, args)
        print(plan.render(), file=out)
        if not plan.changes_something:
            return 0
        if not args.yes:
            print("nothing changed: run again with --yes to do this", file=out)
            return 0
        for line in plan.apply():
            print(f"done: {line}", file=out)
        return 0


# The post-deploy steps, run by the pipeline after each deploy (and by an operator): their own arguments.
RUNTIME_CHECKS = {
    "smoke": "odp.operations.smoke",
    "canary": "odp.operations.canary",
    "lake-grants": "odp.operations.lake_grants",
}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in RUNTIME_CHECKS:
        return importlib.import_module(RUNTIME_CHECKS[argv[0]]).main(argv[1:])
    args = _parser().parse_args(argv)
    try:
        return run(args)
    except OperationError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
