//! The queued device time's proof and filler sizing (docs/LINES.md, `device_time_queued`):
//! pure logic, so it is unit-tested without a GPU (`tests/core.rs`); the GPU loop lives in
//! `bench.rs` (`queued_runs`).
//!
//! # What "the start event waited" means for burn
//!
//! torch asks the start event itself (`start.query()` right after the end event is queued).
//! burn has no such call, but cubecl 0.11.3 places every window on the host clock: a window's
//! `ProfileTicks::start` is an anchor's host `Instant` plus the device's elapsed time from the
//! anchor event to the window's start event (cubecl-server-0.11.3/src/device_events/
//! profiler.rs:239-255, `read`). So per run the program takes `t0` before it queues the
//! filler and `queued` = the time from `t0` until `profile_with` returned (with `.flush()`,
//! burn-fusion returns only once the fusion thread has recorded the end event:
//! burn-fusion-0.22.1/src/backend.rs:97-103, `client.sync(.. profile_end ..)`, and cubecl's
//! `stop` "returns at enqueue time", profiler.rs:90-93). The **lead** is
//! `start_duration_since(t0) - queued`: how long after the end event was queued the GPU
//! reached the start event. The start event waited when the lead is at least [`SLACK`].
//!
//! The anchor's host time is read right after `cuEventSynchronize` returns (profiler.rs:
//! 272-281), so it is late by that wake-up (µs) and every placement with it: a lead is
//! over-stated by that much, never under-stated. [`SLACK`] absorbs it, so the count errs
//! towards "did not wait".

use std::time::Duration;

/// A lead below this counts as "the GPU had (maybe) reached the start event already".
pub const SLACK: Duration = Duration::from_micros(10);

/// The least lead the calibration asks of the filler, whatever the window's own enqueue.
pub const MIN_TARGET: Duration = Duration::from_micros(50);

/// Filler matmuls tried first, and the most ever queued (also bounded by [`FILLER_BYTES`]).
pub const FILLER_START: usize = 2;
pub const FILLER_MAX: usize = 64;
/// The filler outputs, alive until the run's sync, may take this much device memory at most.
pub const FILLER_BYTES: usize = 1 << 30;
/// Calibration rounds (each one run of the whole procedure, never kept).
pub const CALIBRATION_ROUNDS: usize = 8;

/// Signed nanoseconds from the end event's enqueue to the GPU reaching the start event
/// (negative: the GPU was there first). `start_since_t0`: the window's start on the host clock
/// since `t0`; `queued`: `t0` to the return of `profile_with`.
pub fn lead_ns(start_since_t0: Duration, queued: Duration) -> i128 {
    start_since_t0.as_nanos() as i128 - queued.as_nanos() as i128
}

/// The start event waited: the GPU reached it at least [`SLACK`] after the end event was queued.
pub fn waited(lead: Option<i128>) -> bool {
    lead.is_some_and(|l| l >= SLACK.as_nanos() as i128)
}

/// The most filler matmuls of `out_bytes` each that fit [`FILLER_BYTES`] and [`FILLER_MAX`].
pub fn filler_cap(out_bytes: usize) -> usize {
    (FILLER_BYTES / out_bytes.max(1)).clamp(1, FILLER_MAX)
}

/// The lead a calibration round must reach: twice the window's own host enqueue, at least
/// [`MIN_TARGET`] (torch asks its spin for 5x the host's queueing; here the filler already
/// outlasted the window's enqueue once the lead is positive, and twice that is the margin).
pub fn target(window_enqueue: Duration) -> Duration {
    (window_enqueue * 2).max(MIN_TARGET)
}

/// The next filler count after a calibration round, or None when `k` is kept: a round whose
/// lead reached `target` keeps `k`; otherwise `k` doubles up to `cap` (at the cap it is kept,
/// and the per-run proof says how often it was enough).
pub fn next_filler(k: usize, lead: Option<i128>, target: Duration, cap: usize) -> Option<usize> {
    let enough = lead.is_some_and(|l| l >= target.as_nanos() as i128);
    if enough || k >= cap {
        None
    } else {
        Some((k * 2).min(cap))
    }
}

/// `LABEL SHAPE matmul device time (profile_with flush, queued): start event waited in W of N runs`
pub fn proof_line(prefix: &str, method: &str, waited_runs: &[bool]) -> String {
    let w = waited_runs.iter().filter(|w| **w).count();
    format!(
        "{prefix} {method}: start event waited in {w} of {} runs",
        waited_runs.len()
    )
}

/// A lead in words: `+180.250µs` / `-12.000µs` / `no time`.
pub fn lead_words(lead: Option<i128>) -> String {
    match lead {
        None => "no time".into(),
        Some(l) => {
            let d = crate::format::fmt_duration(Duration::from_nanos(l.unsigned_abs() as u64));
            format!("{}{d}", if l < 0 { "-" } else { "+" })
        }
    }
}

/// The stderr note for the runs whose start event did not wait (None if every one did):
/// their indices and leads, so a failed proof is counted and located, not silently kept.
pub fn failed_note(prefix: &str, method: &str, leads: &[Option<i128>]) -> Option<String> {
    let failed: Vec<String> = leads
        .iter()
        .enumerate()
        .filter(|(_, l)| !waited(**l))
        .map(|(i, l)| format!("run {i} lead {}", lead_words(*l)))
        .collect();
    if failed.is_empty() {
        return None;
    }
    Some(format!(
        "note: {prefix} {method}: in {} of {} runs the start event did not wait (the GPU reached \
         it less than {} after the end event was queued, or the run read no time): {}; those \
         runs may hold part of the launch gap (kept in the figure, counted in the proof line)",
        failed.len(),
        leads.len(),
        crate::format::fmt_duration(SLACK),
        failed.join(", ")
    ))
}

/// One calibration round as the note lists it: filler count, window time, lead.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Round {
    pub fillers: usize,
    pub time: Option<Duration>,
    pub lead: Option<i128>,
}

/// The stderr note that says what filler the loop used and why the calibration rounds (the
/// first of which is burn's first queued window) are not kept.
pub fn calibration_note(prefix: &str, method: &str, k: usize, rounds: &[Round]) -> String {
    let listed: Vec<String> = rounds
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let t = r.time.map_or("no time".into(), crate::format::fmt_duration);
            let w = if waited(r.lead) {
                "waited"
            } else {
                "did not wait"
            };
            format!(
                "round {i}: {} fillers, {t}, lead {} ({w})",
                r.fillers,
                lead_words(r.lead)
            )
        })
        .collect();
    format!(
        "note: {prefix} {method}: filler {k} matmuls of the timed inputs per run; calibration \
         rounds, not kept (round 0 is the first queued window): {}",
        listed.join("; ")
    )
}
