"""Helpers the tests share (importable modules; fixtures stay in conftest.py files)."""
