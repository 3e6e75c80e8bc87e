//! Writes `tests/data/durations.tsv` to stdout: nanoseconds, TAB, Rust's `{:.3?}` of the
//! `Duration`. Run from the repository root:
//!
//!     cargo run --release --manifest-path bench_rust/Cargo.toml -p bench-core \
//!         --example durations_tsv --target-dir build/cargo > tests/data/durations.tsv
fn main() {
    print!("{}", bench_core::format::duration_table_tsv());
}
