"""ODP infrastructure: CDK constructs (one concern per module), the stage, the pipelines.

Importing this package does not import aws_cdk: :mod:`odp.operations.smoke` runs in the pipeline's
post-deploy step with boto3 only.
"""
