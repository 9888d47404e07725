"""Access: the consumers' side: the Glue catalog databases, Lake Formation, the Athena workgroups and queries."""
