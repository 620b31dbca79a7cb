"""`wilson eval`: how well the configured model (or the offline rules) serves a person, measured.

Scenarios are data (format.py, docs/eval.md); the built-in suite lives in scenarios/{dev,test}/.
runner.py lives through each one on a fresh home with the simulated clock and records what Wilson
did; scorer.py turns that record into numbers with pure functions (no model grades another);
report.py prints the progress lines and the table and writes the JSON report.
"""
