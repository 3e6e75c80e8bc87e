"""The harness's figures, one module each (bench/harness.py runs them)."""
