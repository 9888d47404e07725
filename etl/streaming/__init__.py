"""The streaming path: DynamoDB changes through Kinesis into the same Hudi tables (see README.md)."""
