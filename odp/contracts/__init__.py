"""Every job argument, metric name and ASL substitution, declared once (see odp/contracts/README.md)."""
