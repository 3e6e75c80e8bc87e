"""The YAML loader: lines kept, every problem collected, limits enforced before the work."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.errors import ConfigError
from orchestrator.experiments import limits
from orchestrator.experiments.yamlsource import load_yaml, problems_error

from ..conftest import write


def test_lines_and_merged_values_keep_the_anchor_lines(tmp_path: Path) -> None:
    doc = load_yaml(write(tmp_path / "e.yaml", "a: &a\n  x: 1\n  y: [2]\nb:\n  <<: *a\n  y: 3\n"))
    assert doc.data == {"a": {"x": 1, "y": [2]}, "b": {"x": 1, "y": 3}}
    assert doc.line_of(("b", "x")) == 2  # merged: where it was written
    assert doc.line_of(("b", "y")) == 6  # written out: wins over the merged one
    assert doc.problems == []


def test_problems_are_collected_not_the_first_only(tmp_path: Path) -> None:
    doc = load_yaml(write(tmp_path / "e.yaml",
                          'a: !foo 1\nb: "x\\0"\nc: 1\nc: 2\nd: !!float nope\n'))
    assert [(line, path) for line, path, _ in doc.problems] == [
        (1, ("a",)), (2, ("b",)), (4, ("c",)), (5, ("d",))]
    assert doc.data == {"a": None, "b": None, "c": 1, "d": None}


def test_one_problem_is_the_one_line_message_several_a_list() -> None:
    one = problems_error("f.yaml", [(3, ("a", 0), "bad")])
    assert (str(one), one.line, one.path) == ("f.yaml:3 at a[0]: bad", 3, "a[0]")
    many = problems_error("f.yaml", [(5, ("b",), "worse"), (3, ("a",), "bad"),
                                     (3, ("a", 1), "bad")])  # one anchored value, two aliases
    assert str(many) == "f.yaml: 2 problems:\n  f.yaml:3 at a: bad\n  f.yaml:5 at b: worse"
    assert (many.line, many.path) == (3, "a")


@pytest.mark.parametrize(("text", "words"), [
    ("a: &a [*a]\n", "recursive alias: the value anchored at line 1 contains itself"),
    ("[" * (limits.MAX_DEPTH + 1) + "]" * (limits.MAX_DEPTH + 1), "nested more than 32"),
    ("a: [" + "1, " * limits.MAX_VALUES + "1]\n", f"more than {limits.MAX_VALUES} values"),
    ("a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
     "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c,"
     " *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c,"
     " *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c,"
     " *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c,"
     " *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c,"
     " *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n", "with every alias expanded"),
])
def test_limits_and_recursion_are_refused(tmp_path: Path, text: str, words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        load_yaml(write(tmp_path / "e.yaml", text))


def test_the_file_is_read_once_and_bounded(tmp_path: Path) -> None:
    path = tmp_path / "e.yaml"
    path.write_bytes(b"a: 1\r\n" + b"#" * limits.MAX_FILE_BYTES)
    with pytest.raises(ConfigError, match="larger than 1 MiB"):
        load_yaml(path)
    path.write_bytes(b"a: 1\r\nb: \xff\n")
    with pytest.raises(ConfigError, match=r"e.yaml:2: cannot read: 'utf-8' codec"):
        load_yaml(path)
    path.write_bytes(b"a: 1\r\n")
    assert load_yaml(path).text == "a: 1\r\n"  # as read, for the store


def test_a_date_is_its_text(tmp_path: Path) -> None:
    """No field takes a date; `title: 2024-01-01` means the text, not a datetime."""
    assert load_yaml(write(tmp_path / "e.yaml", "title: 2024-01-01\n")).data == {
        "title": "2024-01-01"}


def test_keys_are_names_as_written(tmp_path: Path) -> None:
    """YAML 1.1 makes `no:` False and `1:` 1; an experiment or a variable named so is meant."""
    doc = load_yaml(write(tmp_path / "e.yaml", "no: 1\n1: 2\n~: 3\n[a]: 4\n"))
    assert doc.data == {"no": 1, "1": 2, "~": 3}
    assert [what for _line, _path, what in doc.problems] == ["mapping keys must be strings"]
