"""The suite's xdist groups hold (tests/conftest.py): with `--dist loadgroup` (the default
addopts) a grouped test's id carries its `@group`, which is what sends the whole group to one
worker; pytest 9 lost the suffix pytest-xdist 3.8 sets, and the real programs' group ran on
two workers at once."""

from __future__ import annotations

import pytest


@pytest.mark.xdist_group("group-ids")
def test_a_grouped_test_carries_its_group_in_its_id(request: pytest.FixtureRequest) -> None:
    if getattr(request.config.option, "loadgroup", False):  # under xdist's --dist loadgroup
        assert request.node.nodeid.endswith("@group-ids"), request.node.nodeid
    else:  # -n 0: no suffix, and nothing to distribute
        assert "@" not in request.node.nodeid

