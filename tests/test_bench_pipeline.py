"""The pipeline benchmark (bench/pipeline.py): the CPU of one message at a time is set beside the replay of those
same messages' statements, which holds a realtime stimulus' four write transactions each and replays cleanly."""

from __future__ import annotations

from bench import pipeline


def test_the_replay_beside_the_cpu_figure_is_of_the_same_one_at_a_time_messages():
    sql = pipeline.measure_sql(burst=3, samples=4)
    # its row, its claim, its results and its delivery (docs/storage.md), for each of the four messages
    assert sql["loop_write_transactions_per_stimulus"] == 4.0
    assert sql["loop_statements_per_stimulus"] >= 8  # and the run's reads, BEGIN and COMMIT with them
    # a statement that failed in the replay would make the baseline lighter than the work it stands for
    assert sql["loop_failed_statements"] == 0
    assert sql["loop_threads_failed_statements"] == 0
    # the caller's row, the cortex lane's run and the channel's delivery, each on the connection of its thread
    assert sql["loop_threads"] == 3
    assert sql["failed_statements"] == 0


def test_the_profile_names_the_functions_and_threads_a_stimulus_cpu_goes_to():
    shown = pipeline.profile(samples=5).splitlines()
    functions, threads = shown[2:-1], shown[-1]
    assert len(functions) == pipeline.PROFILE_TOP
    # the statements themselves are among the costliest, as the replay beside the CPU figure assumes
    assert any("sqlite3.Connection" in line for line in functions)
    # the cortex lane does most of the work; the caller, the thalamus and the channel theirs
    assert threads.split(": ", 1)[1].startswith("CortexActor")
    assert all(name in threads for name in ("MainThread", "ThalamusActor", "TimedRepl"))
