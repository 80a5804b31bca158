"""Benchmarks for ``make bench``: each ``bench_<name>.py`` module has a ``run()`` that
returns ``Row``s comparing the workbook's implementation with its peer."""
