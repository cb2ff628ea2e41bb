"""The benchmark harness behind tools/bench/bench.py (Python 3 standard library only)."""
