"""Sanity checks before you train: four cheap tests that catch bugs no loss curve will explain.

See :mod:`chapters.sanity.checks`; ``clinic sanity`` runs them all.
"""
