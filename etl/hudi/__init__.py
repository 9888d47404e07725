"""The one Hudi write layer of every job: target description, options, timeline reads, the commit-once routine."""
