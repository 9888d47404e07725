"""The ODP Lambda functions: the File Manager (registers landed files) and the Batch Manager (plans Glue runs).

Handlers are thin: they parse the event, delegate to a small class whose DynamoDB tables are
injected, and return. Nothing here creates an AWS client at import time.
"""
