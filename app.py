#!/usr/bin/env python3
"""CDK entry point: every environment's stage and one pipeline per branch (``-c branch=`` picks one).

The CDK CLI passes cdk.json's context (feature flags, ``-c branch=``) through the environment.
"""

from infrastructure.application import build_app, new_app

build_app(new_app()).synth()
