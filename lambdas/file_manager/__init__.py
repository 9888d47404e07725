"""File Manager: one file_tracker item per S3 object that lands in the staging bucket."""
