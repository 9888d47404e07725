"""ODP Spark code: CDC files of landed tables -> Hudi tables (see etl/README.md).

Empty on purpose: importing a module of ``etl`` loads only what that module needs (an entry point loads Spark
when it runs, not when it is imported).
"""
