//! Thin entry point: all code is in `bench-core`; this crate only picks burn features.
fn main() {
    std::process::exit(bench_core::main_with_args(std::env::args_os().skip(1)));
}
