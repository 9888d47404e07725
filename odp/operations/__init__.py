"""Operating ODP: the planning functions behind ``python -m odp`` (status, retry, quarantine / release a
file, replay, backfill, release a stuck lease), over the tracker repositories and an
:class:`~odp.operations.backend.OperatorBackend` (AWS, or the sandbox's lake folder)."""
