"""JSON Schemas of the configuration files, for editors (``make schema`` writes config/schema/)."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel

from odp.config.access import AccessFile
from odp.config.catalog_stacks import CatalogStacksFile
from odp.config.datasets import DatasetFile
from odp.config.models import CadencesFile, EnvironmentsFile, TablesFile
from odp.config.streams import StreamsFile

SCHEMAS: dict[str, type[BaseModel]] = {
    "environments.schema.json": EnvironmentsFile,
    "cadences.schema.json": CadencesFile,
    "tables.schema.json": TablesFile,
    "streams.schema.json": StreamsFile,
    "datasets.schema.json": DatasetFile,
    "access.schema.json": AccessFile,
    "catalog_stacks.schema.json": CatalogStacksFile,
}


def render_schemas() -> dict[str, str]:
    """File name -> JSON text, deterministic so a test can compare it with the committed files."""
    rendered = {}
    for name, model in SCHEMAS.items():
        schema = model.model_json_schema(by_alias=True)
        schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        schema["$id"] = name
        rendered[name] = json.dumps(schema, indent=2, sort_keys=True) + "\n"
    return rendered


def write_schemas(directory: str | Path) -> list[Path]:
    target = Path(directory)
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in render_schemas().items():
        path = target / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written
