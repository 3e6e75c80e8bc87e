//! Durations as printed (Rust's own `{:.3?}` of `std::time::Duration`) and run summaries.

use std::time::Duration;

/// `{:.3?}`: `791.000ns`, `28.166µs` (U+00B5), `1.118ms`, `3.600s`, `0.000ns`.
pub fn fmt_duration(d: Duration) -> String {
    format!("{d:.3?}")
}

/// Minimum and median of a set of runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Summary {
    pub min: Duration,
    /// The middle value of the sorted runs; for an even count the mean of the two middle ones
    /// (of 20 runs: the 10th and 11th), rounded down to the nanosecond.
    pub median: Duration,
}

pub fn summarize(runs: &[Duration]) -> Option<Summary> {
    if runs.is_empty() {
        return None;
    }
    let mut v = runs.to_vec();
    v.sort_unstable();
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        let lo = v[n / 2 - 1].as_nanos();
        let hi = v[n / 2].as_nanos();
        let mid = lo + (hi - lo) / 2;
        Duration::new((mid / 1_000_000_000) as u64, (mid % 1_000_000_000) as u32)
    };
    Some(Summary { min: v[0], median })
}

/// The queued device time's METHOD (dataset method `device_time_queued`): burn's
/// `profile_with(.. .flush())` window opened behind a filler matmul, so the launch gap is kept out.
pub const DEVICE_TIME_QUEUED: &str = "device time (profile_with flush, queued)";

/// `LABEL SHAPE matmul METHOD, N runs: min DUR median DUR` (None for no runs).
pub fn summary_line(prefix: &str, method: &str, runs: &[Duration]) -> Option<String> {
    let s = summarize(runs)?;
    Some(format!(
        "{prefix} {method}, {} runs: min {} median {}",
        runs.len(),
        fmt_duration(s.min),
        fmt_duration(s.median)
    ))
}

/// `# samples LABEL SHAPE matmul METHOD: S1 S2 ...` in seconds (Rust's `{}` of f64), in run order.
pub fn samples_line(prefix: &str, method: &str, runs: &[Duration]) -> String {
    let s: Vec<String> = runs
        .iter()
        .map(|d| format!("{}", d.as_secs_f64()))
        .collect();
    format!("# samples {prefix} {method}: {}", s.join(" "))
}

/// `LABEL SHAPE matmul energy (nvml): J.JJJ J, N runs, DUR`: NVML counts millijoules, so the
/// joules are printed exactly, three decimals, from the integer mJ difference.
pub fn energy_line(prefix: &str, millijoules: u64, runs: usize, wall: Duration) -> String {
    format!(
        "{prefix} energy (nvml): {}.{:03} J, {runs} runs, {}",
        millijoules / 1000,
        millijoules % 1000,
        fmt_duration(wall)
    )
}

/// Nanosecond counts covering every unit, rounding and carry case of `{:.3?}`; the rows of
/// `tests/data/durations.tsv` (written by `cargo run --example durations_tsv`).
pub const DURATION_TABLE_NS: &[u64] = &[
    // ns: printed exactly, three zero decimals
    0,
    1,
    7,
    42,
    500,
    791,
    999,
    // µs: exact (three decimals = whole ns), unit boundary at 1000 ns
    1_000,
    1_001,
    1_010,
    1_375,
    10_875,
    28_166,
    99_999,
    100_000,
    999_999,
    // ms: rounding of the 4th..6th decimal digits (exact ties to even) and carries
    1_000_000,
    1_000_001,
    1_000_499,
    1_000_500,
    1_000_501,
    1_001_499,
    1_001_500,
    1_002_500,
    1_118_000,
    1_999_499,
    1_999_500,
    9_999_500,
    16_118_000,
    21_637_499,
    21_637_500,
    21_638_500,
    99_999_499,
    99_999_500,
    108_038_000,
    999_999_000,
    999_999_499,
    999_999_500,
    999_999_999,
    // s: rounding of the 4th..9th decimal digits (exact ties to even) and carries
    1_000_000_000,
    1_000_000_001,
    1_000_499_999,
    1_000_500_000,
    1_000_500_001,
    1_999_499_999,
    1_999_500_000,
    2_000_500_000,
    2_001_500_000,
    3_600_000_000,
    3_843_000_000,
    9_999_499_999,
    9_999_500_000,
    59_999_500_000,
    99_999_500_000,
    999_999_500_000,
    3_600_000_000_000,
    86_400_123_456_789,
    u32::MAX as u64,
    // more ties and plain rounding
    1_234_499,
    1_234_500,
    12_345_678,
    123_456_789,
    1_234_567_890,
    18_446_744_073_709_551_615, // u64::MAX ns
];

/// The content of `tests/data/durations.tsv`: `nanoseconds<TAB>{:.3?}` per row, `\n` ends.
pub fn duration_table_tsv() -> String {
    let mut s = String::new();
    for &ns in DURATION_TABLE_NS {
        s.push_str(&format!(
            "{ns}\t{}\n",
            fmt_duration(Duration::from_nanos(ns))
        ));
    }
    s
}
