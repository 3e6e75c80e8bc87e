"""data/old_proofs.py: an older bench_py's stderr note read as the queued proof line it stands
for, nothing made up where the old code said nothing (H200 torch output, tests/data/h200)."""

from __future__ import annotations

from orchestrator.data.old_proofs import with_old_proof

from ..conftest import DATA

NOTE = (b"cuda.Event time (queued): in 3 of 20 runs the GPU had reached the start event before "
        b"the end event was queued (the spin ended too soon); those runs may hold part of the "
        b"launch gap\n")


def _stdout() -> str:
    text = (DATA / "h200" / "torch_cuda_fp32.log").read_text()
    return "".join(line for line in text.splitlines(keepends=True)
                   if " start event waited in " not in line)


def test_the_note_becomes_the_proof_line_of_the_queued_figure() -> None:
    out = with_old_proof(_stdout(), NOTE)
    assert out.endswith("cuda 1024x1024 matmul cuda.Event time (queued): start event waited "
                        "in 17 of 20 runs\n")


def test_nothing_is_made_up() -> None:
    text = _stdout()
    assert with_old_proof(text, b"") == text  # the old code's silence is no proof
    assert with_old_proof(text, b"some other warning\n") == text
    proved = text + "cuda 1024x1024 matmul cuda.Event time (queued): start event waited in 20 " \
        "of 20 runs\n"
    assert with_old_proof(proved, NOTE) == proved  # a printed proof wins
