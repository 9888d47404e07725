"""``python -m sandbox.job_process`` and spark-submit's primary resource (sandbox/job_process/__init__.py)."""

from sandbox.job_process import main

main()
