"""The code of the custom resource that stops ODP's EMR Serverless application before CloudFormation updates it
(``handler.py``; its construct: infrastructure/jobs/engines/emr_application_stop.py). Deployed as this folder alone."""
