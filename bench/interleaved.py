"""Timing of several kinds of call, interleaved call by call, each call
alone in a transaction that is then rolled back (untimed): what the
benchmarks run in ``odoo-bin shell`` share (bench/executor_overhead.py,
bench/orm_operation_log.py)."""
import statistics
import time


def one_call(cr, fn) -> float:
    """ms of one call of ``fn``, then ``cr`` rolled back (untimed)."""
    started = time.perf_counter()
    fn()
    elapsed = (time.perf_counter() - started) * 1000
    cr.rollback()
    return elapsed


def rounds_of(cr, kinds: dict, rounds: int, calls: int, warmup: int) -> list[dict]:
    """``[{kind: median ms per call}]``, one dict per round of ``calls``
    calls of each kind of ``kinds`` (name -> function), after ``warmup``
    calls of each; kinds are interleaved call by call, so a machine's slow
    moments fall on all alike."""
    for _ in range(warmup):
        for fn in kinds.values():
            one_call(cr, fn)
    single = {name: [] for name in kinds}
    for _ in range(rounds * calls):
        for name, fn in kinds.items():
            single[name].append(one_call(cr, fn))
    return [{name: statistics.median(values[i * calls:(i + 1) * calls]) for name, values in single.items()}
            for i in range(rounds)]
