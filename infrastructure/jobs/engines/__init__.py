"""Engines: where a job runs (Glue, EMR Serverless and its image)."""
