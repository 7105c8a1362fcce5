"""Run records: the metric record, and reading runs that other tools logged (:mod:`chapters.records.formats`)."""
