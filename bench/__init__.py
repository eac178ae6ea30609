"""Benchmarks: ``python -m bench`` runs every ``bench_*.py`` here (medians and ratios, never pass/fail)."""
