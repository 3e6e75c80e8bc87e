"""How a program's builds are named and drawn, one part of its `Program` (`Program.naming`).

The chapter's row names of its CPU builds (`build_names`, `build_prefixes`), the `builds:`
entry a label implies (`label_builds`, `expected_build`), a log's accuracy words as the stored
label (`accuracy_labels`, `accuracy_label`), the labels of builds that run one thread whatever
is asked, and its marker and colours in every plot (report/styles.py). The program's own name
and title stay on the Program: they are its identity, not its builds'.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Naming:
    """A program's build names, labels and plot style; the default: none of its own."""

    # CPU build labels -> the chapter's row names ('flex' -> 'burn Flex, default features'),
    # and label prefix -> row-name prefix ('flex+' -> 'burn Flex + ')
    build_names: Mapping[str, str] = field(default_factory=dict)
    build_prefixes: Mapping[str, str] = field(default_factory=dict)
    # CPU build label -> the `builds` entry it implies ('flex' -> 'default'); a label with one
    # of `build_prefixes` implies the rest of it ('flex+x86-v4' -> 'x86-v4')
    label_builds: Mapping[str, str] = field(default_factory=dict)
    # labels of builds that run one thread whatever is asked (burn's template: no rayon)
    one_thread_labels: tuple[str, ...] = ()
    # an accuracy line's build words as a log prints them -> the stored label ('flex
    # template' -> 'flex(template)'); a word with a `build_prefixes` key's stem, +rest
    accuracy_labels: Mapping[str, str] = field(default_factory=dict)
    # how its builds look in every plot (report/styles.py): one marker for the framework, one
    # colour per build label it knows (any other label gets a colour from its name's hash)
    plot_marker: str = "D"
    plot_colors: Mapping[str, str] = field(default_factory=dict)

    def expected_build(self, label: str) -> str | None:
        """The build a CPU label of this program implies; None: not one of its labels."""
        if label in self.label_builds:
            return self.label_builds[label]
        return next((label.removeprefix(p) for p in self.build_prefixes if label.startswith(p)),
                    None)

    def accuracy_label(self, words: str) -> str | None:
        """A log's accuracy build words ('flex template', 'flex x86-v4') as the store's label
        ('flex(template)', 'flex+x86-v4'); None: not one of its builds' words."""
        if words in self.accuracy_labels:
            return self.accuracy_labels[words]
        for prefix in self.build_prefixes:  # 'flex+' -> a log's 'flex x86-v4'
            stem = prefix.rstrip("+") + " "
            if words.startswith(stem):
                return prefix + words.removeprefix(stem)
        return None
