"""Compare lists the queued proof (`queued_waited`, a count of runs) as a
plain A/B count, never as a time: no ratio, no verdict, no duration in its cells.

On the committed H200 evidence store (docs/results/h200-2026-12-02/evidence: held runs whose
start event waited in 20 of 20 runs, blocked ones in 0 of 20), compared with itself.
"""

from __future__ import annotations

from orchestrator.report.compare import output as compare_output
from orchestrator.report.compare import verdicts as compare
from orchestrator.report.compare.verdicts import load_side

from ...conftest import PROJECT

EVIDENCE = PROJECT / "docs" / "results" / "h200-2026-12-02" / "evidence"


def test_the_queued_proof_is_a_count_without_a_time_verdict() -> None:
    side = load_side(str(EVIDENCE))
    c = compare.compare(side, load_side(str(EVIDENCE)))
    proofs = [r for r in c.rows if r.stat == "queued_waited"]
    times = [r for r in c.rows if r.stat == "median" and "device time queued" in r.figure]
    assert proofs and times  # both in the store: 256² and 1024², held and blocked
    # the counts as the store holds them (a geometric mean made 20 runs 19.999999999999996)
    assert sorted(r.a for r in proofs) == [0.0, 0.0, 20.0, 20.0]
    for row in proofs:
        assert row.ratio is None and row.p_value is None and not row.verdict, row
        assert row.a_tflops is None
        cell = compare_output.value_cell(row, row.a)
        assert cell in ("0", "20"), cell  # a count, not '20.000ns'
    # the time figure beside it is judged as a time (one value a side here)
    assert all(r.verdict == compare.ONE_VALUE for r in times)
