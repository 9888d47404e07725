"""Ingest: file detection and tracking: the tracker tables, the File Manager and Batch Manager Lambdas."""
