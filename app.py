#!/usr/bin/env python3
"""CDK entry point: every environment's stage and one pipeline per branch (``-c branch=`` picks one).

The CDK CLI passes cdk.json's context (feature flags, ``-c branch=``) through the environment.
"""

from aws_cdk import App

from infrastructure.application import build_app

build_app(App()).synth()
