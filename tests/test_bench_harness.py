"""The benchmark harness (bench/__main__.py): a benchmark that fails says why on the results page, and every
benchmark module it lists answers the harness with its figures."""

from __future__ import annotations

import sys

from bench import __main__ as harness
from bench import memory_recall


def test_a_benchmark_that_raises_is_reported_with_its_exception():
    res = harness.run_one(
        "broken",
        quick=True,
        timeout=60,
        command=[sys.executable, "-c", "raise AssertionError('a scan at 1000 tasks fired 22, not 20')"],
    )
    assert res["figures"] == []
    assert res["error"].startswith("exited 1 without a result: AssertionError: a scan at 1000 tasks fired 22")
    page = harness.results_page(
        {"nproc": 2, "cpu": "x", "memory_gib": 1, "python": "3", "code": "abc123"}, [res], quick=False
    )
    assert "at commit abc123" in page
    assert "Did not run in this run: exited 1 without a result: AssertionError" in page


def test_the_memory_recall_benchmark_is_in_the_harness_with_figures_beside_bm25():
    assert "memory_recall" in harness.BENCHMARKS
    measured = {
        "sqlite 10000": {
            "recall": {"recall@5": 0.9, "recall@10": 1.0, "p50_ms": 2.0, "p99_ms": 9.0},
            "bm25": {"recall@5": 0.4, "recall@10": 0.7, "p50_ms": 1.0, "p99_ms": 5.0},
            "questions": 50,
        },
        "sqlite 100000": {
            "recall": {"recall@5": 0.8, "recall@10": 0.6, "p50_ms": 25.0, "p99_ms": 40.0},
            "bm25": {"recall@5": 0.4, "recall@10": 0.7, "p50_ms": 6.0, "p99_ms": 30.0},
            "questions": 50,
        },
    }
    res = memory_recall.figures(measured)
    verdicts = {f["label"]: (f["value"], f["baseline"], f["ok"]) for f in res["figures"]}
    assert verdicts == {
        "recall@10, sqlite 10000 memories": (1.0, 0.7, True),
        "recall@10, sqlite 100000 memories": (0.6, 0.7, False),
        "recall p50, sqlite 100000 memories": (25.0, 6.0, False),
    }
