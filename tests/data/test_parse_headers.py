"""parse.headers_of gives the headers a whole parse gives, on every stdout we captured from the
real programs (the committed stores' runs, the chapter's listings and seed) and on lines made to
tempt it."""

from __future__ import annotations

import sqlite3

from orchestrator.data.parse import headers_of, parse_text

from ..conftest import PROJECT

DATA = PROJECT / "tests" / "data"


def _stdouts() -> list[str]:
    texts = [(DATA / name).read_text(encoding="utf-8")
             for name in ("chapter_listings.log", "chapter_seed.txt")]
    for store in sorted((PROJECT / "docs" / "results").rglob("results.sqlite")):
        db = sqlite3.connect(f"file:{store}?mode=ro&immutable=1", uri=True)
        try:
            texts += [bytes(s).decode("utf-8", "replace") for (s,) in db.execute(
                "SELECT stdout FROM runs WHERE typeof(stdout) = 'blob'")]
        finally:
            db.close()
    return texts


def test_the_headers_of_every_captured_stdout() -> None:
    texts = _stdouts()
    whole = [parse_text(t).headers for t in texts]
    assert len(texts) > 500 and sum(map(bool, whole)) > 400  # torch's, burn's and jax's runs
    assert {"torch", "burn", "jax"} <= {h.kind for found in whole for h in found}
    for text, headers in zip(texts, whole, strict=True):
        assert headers_of(text) == headers


def test_lines_that_only_look_like_headers() -> None:
    text = "\n".join([
        "torch 2.11.0+cu130, threads 16",
        "torch cpu 1024x1024 matmul sync, 20 runs: min 1.000ms median 1.100ms",  # a figure
        "  \x1b[1mtor\x1b[0mch BLAS_INFO=mkl",  # an escape inside the name
        "### torch, threads 4",
        "burn not a header at all",
        "torch precision fp32",
    ])
    assert headers_of(text) == parse_text(text).headers
    assert [h.line_no for h in headers_of(text)] == [h.line_no for h in parse_text(text).headers]
    assert len(headers_of(text)) >= 2
