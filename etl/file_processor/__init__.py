"""The File Processor: landed CDC files of a batch of tables -> one Hudi commit per table (see its README.md)."""
