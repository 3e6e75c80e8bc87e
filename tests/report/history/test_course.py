"""Each figure's course over the committed H200 sweeps, judged step by step as compare judges a
figure, one family over the whole history: no change point anywhere there, none inside the A/A
pair. The real change (three CPU sweeps, the third slowed) is test_ci_recipe's."""

from __future__ import annotations

from orchestrator.report.compare import verdicts
from orchestrator.report.compare.rows import key_fields
from orchestrator.report.history.course import History, figure_key
from orchestrator.stats import intervals

from .conftest import H200


def test_each_figure_has_its_course_over_the_sweeps(h200_history: History) -> None:
    courses = h200_history.courses
    assert len(courses) > 150
    long = [c for c in courses if len(c.points) >= 4]
    assert long, "no figure followed over four sweeps"
    for c in courses:
        assert [p.sweep for p in c.points] == sorted({p.sweep for p in c.points})
        assert [(s.before, s.after) for s in c.steps] == \
            [(a.sweep, b.sweep) for a, b in zip(c.points, c.points[1:], strict=False)]
    # a steady figure of the methods experiment, over the A/A pair: 3+ processes a side
    aa = [s for c in courses for s in c.steps if (s.before, s.after) == (3, 4)]
    assert any(s.row.basis.startswith("processes 3/3") for s in aa)


def test_no_change_point_in_the_h200_history_nor_its_aa_pair(h200_history: History) -> None:
    assert h200_history.change_points() == []
    aa = [s.row.verdict for c in h200_history.courses for s in c.steps if s.after == 4]
    assert aa and not {"slower", "faster"} & set(aa)
    assert {"inconclusive", "same"} <= set(aa)


def test_the_family_is_every_judged_step_of_the_history(h200_history: History) -> None:
    rows = [s.row for c in h200_history.courses for s in c.steps if s.row.p_value is not None]
    expected = intervals.CORRECTIONS["holm"]([r.p_value for r in rows])
    assert [r.p_holm for r in rows] == expected
    # a step's own p-value is compare's for the same two sides' figure
    assert len(rows) > len([r for r in rows if r.p_holm == r.p_value])


def test_a_step_is_compares_verdict_of_the_two_sweeps(h200_history: History) -> None:
    """The A/A step's figures against `compare a b`: the same ratios and uncorrected p-values
    (the correction differs: compare's family is one step, the history's all of them)."""
    a, b = (h200_history.sweeps[i].side for i in (3, 4))
    mine = {c.figure: s.row for c in h200_history.courses for s in c.steps if s.after == 4}
    theirs = {r.figure: r for r in verdicts.compare(a, b).rows if r.verdict}
    common = set(mine) & set(theirs)
    assert len(common) > 30
    for name in common:
        assert mine[name].ratio == theirs[name].ratio
        assert mine[name].p_value == theirs[name].p_value


def test_a_figures_key_is_compares_key_and_its_experiment(h200_history: History) -> None:
    c = h200_history.courses[0]
    assert len(c.key) == len(key_fields()) + 1
    row = c.points[-1].row
    assert figure_key(row) == c.key and c.key[-1] == row["experiment"]


def test_every_h200_store_marks_only_the_machines_real_change(
        every_h200_history: History) -> None:
    """Nine sweeps, 770-odd judged steps in one family: the one change point set is the known
    real change of the first-call A/A (docs/STATISTICS.md: JAX on the CPU 1.5-1.7x slower in
    every process of the second sweep), which compare alone also finds; the `methods` A/A pair
    (h200-aa-2026-12-03) has none."""
    h = every_h200_history
    names = [s.spec.split("@")[0] for s in h.sweeps]
    aa = (names.index(str(H200[3])), names.index(str(H200[4])))
    first_call = len(names) - 1
    points = h.change_points()
    assert points, "the first-call A/A's real change was not marked"
    for c, s in points:
        assert s.after == first_call and s.row.verdict == "slower", (c.figure, s)
        assert c.figure.startswith("jax cpu") and 1.3 < s.row.ratio < 2.0
    assert not [s for c in h.courses for s in c.steps if (s.before, s.after) == aa and s.changed]
    said = {str(x) for x in h.changes[(points[0][1].before, first_call)]}
    assert any(x.startswith("sweep (complete or not): complete → incomplete") for x in said)
