"""Batch Manager: plans one cadence's Glue runs and summarises their outcome for the state machine."""
