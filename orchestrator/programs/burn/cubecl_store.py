"""Read cubecl 0.11.3's environment database (autotune table, tune records) without cubecl.

burn/cubecl knowledge, so it lives in programs/ (burn.py and cubecl_proof.py use it); moved
here from an earlier tested reader, which was checked on the H200 fixture
tests/data/h200/cubecl_env_cold/.

cubecl keeps every cache of an environment in one SQLite-format file written by Turso
(`<root>/target/environment/default.db`), with the live data in `default.db-wal` (Turso never
checkpoints on close) and Turso's own lock file `default.db-tshm` beside it. Rows are
`entries(namespace TEXT, key BLOB, value BLOB, origin INTEGER)`; keys and values are CBOR
written by ciborium from cubecl's serde derives. This module copies the `.db` and `.db-wal`
into a temporary folder (so SQLite replays the WAL there and never touches the live files or
Turso's lock), and decodes the CBOR itself: standard library only.

Layouts (cubecl-runtime 0.11.3 `tune/tune_cache.rs`, `tune/tuner.rs`, `tune/record.rs`):
key   = {"key": <AutotuneKey>, "checksum": str}
value = {"fastest_index": int, "results": [{"outcome": {"Ok": {"name", "index",
        "computation": {mean, median, variance, min, max}}} | {"Err": {...}}}],
        "bounds": ..., "limit": Duration | None};  Duration = {"secs", "nanos"}
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import struct
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

SCHEMA_VERSION = "3"
AUTOTUNE = "autotune/"
SESSIONS = "records/v1/sessions"
TUNE_RECORDS = "records/v1/autotune"

Row = tuple[str, bytes, bytes, int]


class StoreError(Exception):
    """A cubecl environment database that is missing or not one this reader knows."""


# --- CBOR (RFC 8949), the subset ciborium writes plus indefinite lengths and tags ---------


class _Cbor:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def take(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise StoreError(f"truncated CBOR at byte {self.pos} (wanted {n} more)")
        chunk = self.data[self.pos : self.pos + n]
        self.pos += n
        return chunk

    def argument(self, info: int) -> int | None:
        if info < 24:
            return info
        if info in (24, 25, 26, 27):
            return int.from_bytes(self.take(1 << (info - 24)), "big")
        if info == 31:
            return None  # indefinite length
        raise StoreError(f"bad CBOR additional info {info} at byte {self.pos - 1}")

    def item(self) -> Any:
        head = self.take(1)[0]
        major, info = head >> 5, head & 0x1F
        if major == 7:
            return self.simple(info)
        arg = self.argument(info)
        if major in (0, 1, 6) and arg is None:
            raise StoreError(f"indefinite length on CBOR major type {major}")
        if major == 0:
            return arg
        if major == 1:
            return -1 - arg  # type: ignore[operator]
        if major in (2, 3):
            raw = self.chunks(major) if arg is None else self.take(arg)
            return raw if major == 2 else raw.decode("utf-8")
        if major == 4:
            return self.array(arg)
        if major == 5:
            return self.map(arg)
        return self.tagged(arg)  # type: ignore[arg-type]

    def simple(self, info: int) -> Any:
        known = {20: False, 21: True, 22: None, 23: None}
        if info in known:
            return known[info]
        if info == 25:
            return struct.unpack(">e", self.take(2))[0]
        if info == 26:
            return struct.unpack(">f", self.take(4))[0]
        if info == 27:
            return struct.unpack(">d", self.take(8))[0]
        if info == 31:
            return _BREAK
        raise StoreError(f"unsupported CBOR simple value {info}")

    def chunks(self, major: int) -> bytes:
        parts = []
        while (part := self.item()) is not _BREAK:
            parts.append(part.encode() if major == 3 else part)
        return b"".join(parts)

    def array(self, count: int | None) -> list[Any]:
        if count is not None:
            return [self.item() for _ in range(count)]
        items = []
        while (item := self.item()) is not _BREAK:
            items.append(item)
        return items

    def map(self, count: int | None) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        while count is None or len(out) < count:
            key = self.item()
            if key is _BREAK:
                break
            out[_hashable(key)] = self.item()
        return out

    def tagged(self, tag: int) -> Any:
        value = self.item()
        if tag in (2, 3) and isinstance(value, bytes):  # bignums (u128/i128)
            number = int.from_bytes(value, "big")
            return number if tag == 2 else -1 - number
        return value


_BREAK = object()


def _hashable(key: Any) -> Any:
    if isinstance(key, (list, dict)):
        return json.dumps(key, sort_keys=True, default=str)
    return key


def decode_cbor(data: bytes) -> Any:
    """The one CBOR item in `data`; trailing bytes are an error."""
    reader = _Cbor(data)
    value = reader.item()
    if reader.pos != len(data):
        raise StoreError(f"{len(data) - reader.pos} trailing bytes after the CBOR item")
    return value


# --- the database ----------------------------------------------------------------------


def database_file(path: Path, name: str = "default") -> Path:
    """`path` itself if it is a file, else `<path>/<name>.db` (a `target/environment` dir)."""
    db = path / f"{name}.db" if path.is_dir() else path
    if not db.is_file():
        raise StoreError(f"{db}: no cubecl environment database here")
    return db


@contextmanager
def _snapshot(db: Path) -> Iterator[sqlite3.Connection]:
    with tempfile.TemporaryDirectory(prefix="cubecl-store-") as tmp:
        copy = Path(tmp) / db.name
        shutil.copyfile(db, copy)
        wal = db.with_name(db.name + "-wal")
        if wal.is_file():
            shutil.copyfile(wal, copy.with_name(copy.name + "-wal"))
        connection = sqlite3.connect(copy)
        try:
            yield connection
        finally:
            connection.close()


def read_rows(path: Path, prefix: str = "") -> list[Row]:
    """Every `(namespace, key, value, origin)` row whose namespace starts with `prefix`."""
    db = database_file(path)
    try:
        with _snapshot(db) as connection:
            found = connection.execute("SELECT v FROM meta WHERE k = 'schema_version'").fetchone()
            if found is None or found[0] != SCHEMA_VERSION:
                raise StoreError(f"{db}: schema {found}, this reader knows {SCHEMA_VERSION}")
            rows = connection.execute(
                "SELECT namespace, key, value, origin FROM entries "
                "WHERE substr(namespace, 1, ?) = ? ORDER BY namespace, key",
                (len(prefix), prefix),
            ).fetchall()
    except sqlite3.DatabaseError as err:
        raise StoreError(f"{db}: not a readable cubecl database ({err})") from err
    return [(ns, bytes(key), bytes(value), origin) for ns, key, value, origin in rows]


def content_digest(path: Path, prefix: str = AUTOTUNE) -> str:
    """SHA-256 of the rows under `prefix`: equal before and after = nothing was stored."""
    digest = hashlib.sha256()
    for namespace, key, value, origin in read_rows(path, prefix):
        for part in (namespace.encode(), key, value, str(origin).encode()):
            digest.update(len(part).to_bytes(8, "big") + part)
    return digest.hexdigest()


# --- autotune entries ------------------------------------------------------------------


def duration_ns(value: Any) -> int | None:
    """A serde `Duration` (`{"secs", "nanos"}`) in nanoseconds; `None` stays `None`."""
    if value is None:
        return None
    return int(value["secs"]) * 1_000_000_000 + int(value["nanos"])


def _result(raw: dict[str, Any]) -> dict[str, Any]:
    outcome = raw["outcome"]
    if "Ok" in outcome:
        ok = outcome["Ok"]
        times = {f"{k}_ns": duration_ns(v) for k, v in ok["computation"].items()}
        return {"ok": True, "name": ok["name"], "index": ok["index"], **times}
    err = outcome["Err"]
    kind, detail = next(iter(err.items())) if isinstance(err, dict) else (str(err), None)
    name = detail.get("name") if isinstance(detail, dict) else None
    return {"ok": False, "error": kind, "name": name, "detail": detail}


def decode_entry(
    namespace: str, key_raw: bytes, value_raw: bytes, origin: int
) -> dict[str, Any]:
    """One autotune row decoded: key, winner (by `fastest_index`), every result."""
    parts = namespace.split("/", 3)
    if len(parts) != 4:
        raise StoreError(f"unexpected autotune namespace {namespace!r}")
    key, value = decode_cbor(key_raw), decode_cbor(value_raw)
    results = [_result(r) for r in value["results"]]
    fastest = value["fastest_index"]
    winner = next((r for r in results if r["ok"] and r["index"] == fastest), None)
    return {
        "namespace": namespace,
        "cubecl_version": parts[1],
        "device": parts[2],
        "operation": parts[3],
        "key": key["key"],
        "key_text": json.dumps(key["key"], sort_keys=True, separators=(",", ":")),
        "checksum": key["checksum"],
        "fastest_index": fastest,
        "winner": winner["name"] if winner else None,
        "winner_median_ns": winner["median_ns"] if winner else None,
        "winner_min_ns": winner["min_ns"] if winner else None,
        "measured": sum(r["ok"] for r in results),
        "results": results,
        "limit_ns": duration_ns(value.get("limit")),
        "origin": "local" if origin == 0 else "imported",
        "key_bytes": len(key_raw),
        "value_bytes": len(value_raw),
    }


def read_autotune(path: Path) -> list[dict[str, Any]]:
    """One dict per autotune table entry of the database at `path` (file or folder)."""
    return [decode_entry(*row) for row in read_rows(path, AUTOTUNE)]


def matmul_definition(key: dict[str, Any]) -> dict[str, Any] | None:
    """The `MatmulProblemDefinition` of a plain or fused matmul key, else `None`."""
    if "matmul_key" in key:  # burn-cubecl-fusion's FusedMatmulAutotuneKey
        key = key["matmul_key"]
    definition = key.get("definition")
    return definition if isinstance(definition, dict) and "m" in definition else None


def matmul_entries(
    entries: list[dict[str, Any]], m: int, n: int, k: int, elem: str = "F32"
) -> list[dict[str, Any]]:
    """Entries for an `m x k @ k x n` float matmul of `elem` inputs and output.

    Matches the anchored dims as stored: at the default level `balanced`, powers of two are
    stored as they are (1024 stays 1024); `minimal`/`extensive` store other values.
    """
    want = {"Float": elem}
    found = []
    for entry in entries:
        d = matmul_definition(entry["key"])
        if d and (d["m"], d["n"], d["k"]) == (m, n, k) and all(
            d[f] == want for f in ("elem_lhs", "elem_rhs", "elem_out")
        ):
            found.append(entry)
    return found


# --- records (sessions and tune accounts) ------------------------------------------------


def read_sessions(path: Path) -> list[dict[str, Any]]:
    """Sessions kept: one per process that changed the environment (stored a tune)."""
    return [decode_cbor(value) for _, _, value, _ in read_rows(path, SESSIONS)]


def read_tune_records(path: Path) -> list[dict[str, Any]]:
    """One account per tune: winner, trials (name, wall) in run order, short circuit, wall."""
    records = []
    for _, _, value, _ in read_rows(path, TUNE_RECORDS):
        stamped = decode_cbor(value)
        record = stamped["record"]
        records.append({
            "session": stamped["stamp"]["session"],
            "table": record["table"],
            "key": record["entry"]["key"],
            "checksum": record["entry"]["checksum"],
            "winner": record["winner"],
            "trials": [
                {"name": t["name"], "wall_ns": duration_ns(t["wall"])} for t in record["trials"]
            ],
            "short_circuit": record["short_circuit"],
            "wall_ns": duration_ns(record["wall"]),
            "stored": record["stored"],
            "plan": record.get("plan", []),
        })
    return records
