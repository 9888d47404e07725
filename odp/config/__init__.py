"""Typed configuration: models, loading and validation, DynamoDB items, the Configuration Manager."""

from odp.config.loader import ConfigError, ConfigIssue, OdpConfig, load_config
from odp.config.models import (
    Cadence,
    Environment,
    SourceFormat,
    TableConfig,
    TableMode,
    TableType,
    table_id,
)

__all__ = [
    "Cadence",
    "ConfigError",
    "ConfigIssue",
    "Environment",
    "OdpConfig",
    "SourceFormat",
    "TableConfig",
    "TableMode",
    "TableType",
    "load_config",
    "table_id",
]
