"""ODP's domain core: configuration, trackers, naming and the job contract. Imports no Spark, no CDK."""
