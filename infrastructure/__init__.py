"""ODP infrastructure: the CDK app in layers (foundation, ingest, jobs, access, operations), the stage composing
them, the pipelines (infrastructure/README.md). Nothing here imports Spark or ``etl``
(tests/unit/test_import_boundaries.py).
"""
