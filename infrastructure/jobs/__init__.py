"""Jobs: the Spark jobs of every job kind (the Glue job family base, the File Processor, dataset and streaming jobs)
and the state machines that run them; ``engines/``: where a job runs."""
