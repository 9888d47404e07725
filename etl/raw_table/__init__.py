"""The raw tables' write (File Processor and streaming micro-batch): etl/raw_table/README.md."""
