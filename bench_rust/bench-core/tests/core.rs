use std::ffi::OsString;
use std::time::Duration;

use bench_core::args::{parse, parse_energy, Args, DeviceName, Mode, Parsed, WarmupKind, USAGE};
use bench_core::format::{
    duration_table_tsv, energy_line, fmt_duration, samples_line, summarize, summary_line,
    DEVICE_TIME_QUEUED, DURATION_TABLE_NS,
};
use bench_core::npy::{npy_f32_bytes, parse_npy_header};
use bench_core::window::no_window_note;
use bench_core::{arch_note, precision_line};

fn ns(n: u64) -> String {
    fmt_duration(Duration::from_nanos(n))
}

#[test]
fn durations_units_and_rounding() {
    assert_eq!(ns(0), "0.000ns");
    assert_eq!(ns(1), "1.000ns");
    assert_eq!(ns(791), "791.000ns");
    assert_eq!(ns(999), "999.000ns");
    assert_eq!(ns(1_000), "1.000µs");
    assert_eq!(ns(28_166), "28.166µs");
    assert_eq!(ns(999_999), "999.999µs");
    assert_eq!(ns(1_000_000), "1.000ms");
    assert_eq!(ns(1_118_000), "1.118ms");
    assert_eq!(ns(1_000_499), "1.000ms");
    // Exact ties round to even (Rust 1.95), anything above a tie rounds up.
    assert_eq!(ns(1_000_500), "1.000ms");
    assert_eq!(ns(1_001_500), "1.002ms");
    assert_eq!(ns(1_000_501), "1.001ms");
    assert_eq!(ns(21_637_500), "21.638ms");
    assert_eq!(ns(21_638_500), "21.638ms");
    assert_eq!(ns(1_000_000_000), "1.000s");
    assert_eq!(ns(3_600_000_000), "3.600s");
    assert_eq!(ns(1_000_499_999), "1.000s");
    assert_eq!(ns(1_000_500_000), "1.000s");
    assert_eq!(ns(1_000_500_001), "1.001s");
    assert_eq!(ns(2_001_500_000), "2.002s");
    assert_eq!(fmt_duration(Duration::from_secs(3600)), "3600.000s");
}

#[test]
fn durations_carry() {
    // Rounding carries into the integer part; it does not switch to the next unit.
    assert_eq!(ns(999_999_500), "1000.000ms");
    assert_eq!(ns(999_999_499), "999.999ms");
    assert_eq!(ns(1_999_500), "2.000ms");
    assert_eq!(ns(9_999_500), "10.000ms");
    assert_eq!(ns(1_999_500_000), "2.000s");
    assert_eq!(ns(9_999_500_000), "10.000s");
}

#[test]
fn duration_table_is_complete_and_matches_committed_file() {
    let tsv = duration_table_tsv();
    assert_eq!(tsv.lines().count(), DURATION_TABLE_NS.len());
    assert!(DURATION_TABLE_NS.len() >= 55);
    let units: Vec<&str> = tsv
        .lines()
        .map(|l| {
            l.split('\t')
                .nth(1)
                .unwrap()
                .trim_start_matches(|c: char| c.is_ascii_digit() || c == '.')
        })
        .collect();
    for unit in ["ns", "µs", "ms", "s"] {
        assert!(units.contains(&unit), "no {unit} row");
    }
    let committed = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/data/durations.tsv"
    );
    match std::fs::read_to_string(committed) {
        Ok(c) => assert_eq!(
            c, tsv,
            "tests/data/durations.tsv is stale: regenerate with the durations_tsv example"
        ),
        Err(e) => eprintln!("skipped comparison with {committed}: {e}"),
    }
}

#[test]
fn summary_min_and_median() {
    let d = |v: &[u64]| {
        v.iter()
            .map(|&n| Duration::from_nanos(n))
            .collect::<Vec<_>>()
    };
    let s = summarize(&d(&[5, 1, 3])).unwrap();
    assert_eq!(
        (s.min, s.median),
        (Duration::from_nanos(1), Duration::from_nanos(3))
    );
    // Even count: mean of the two middle values, rounded down to the ns.
    let s = summarize(&d(&[4, 1, 2, 9])).unwrap();
    assert_eq!(s.median, Duration::from_nanos(3));
    let s = summarize(&d(&[1, 2, 3, 4])).unwrap();
    assert_eq!(s.median, Duration::from_nanos(2)); // 2.5 -> 2
    let twenty: Vec<u64> = (1..=20).map(|i| i * 1000).collect();
    let s = summarize(&d(&twenty)).unwrap();
    assert_eq!(s.median, Duration::from_nanos(10_500)); // (10th + 11th) / 2
    assert!(summarize(&[]).is_none());
    assert_eq!(
        summary_line("flex 4x4 matmul", "no sync", &d(&[28_166, 35_458])).unwrap(),
        "flex 4x4 matmul no sync, 2 runs: min 28.166µs median 31.812µs"
    );
    assert_eq!(
        samples_line("flex 4x4 matmul", "with sync", &d(&[28_166, 1_500_000_000])),
        "# samples flex 4x4 matmul with sync: 0.000028166 1.5"
    );
}

fn args(v: &[&str]) -> Result<Parsed, bench_core::Failure> {
    parse(v.iter().map(OsString::from))
}

fn run_args(v: &[&str]) -> Args {
    match args(v) {
        Ok(Parsed::Run(a)) => a,
        other => panic!("{v:?}: {other:?}"),
    }
}

fn usage_error(v: &[&str]) -> String {
    match args(v) {
        Err(f) => {
            assert_eq!(f.code, 2, "{v:?}");
            f.message
        }
        other => panic!("{v:?} should fail: {other:?}"),
    }
}

#[test]
fn argument_defaults() {
    let a = run_args(&[]);
    assert_eq!(a.device, DeviceName::Flex);
    assert_eq!(a.mode, Mode::Mm);
    assert_eq!(a.shape, (1024, 1024));
    assert_eq!(a.reps, 20);
    assert!(!a.samples);
    assert_eq!(a.shape_str(), "1024x1024");
    let a = run_args(&["--mode", "accuracy", "--out", "/tmp/x"]);
    assert_eq!(a.shape, (256, 256));
    let a = run_args(&["--mode=warm"]);
    assert_eq!((a.warmup, a.timed_runs), (WarmupKind::Dropped, 3));
}

#[test]
fn argument_values() {
    let a = run_args(&[
        "--device",
        "cuda",
        "--shape",
        "512x128",
        "--reps=7",
        "--samples",
    ]);
    assert_eq!(
        (a.device, a.shape, a.reps, a.samples),
        (DeviceName::Cuda, (512, 128), 7, true)
    );
    let a = run_args(&[
        "--mode",
        "warm",
        "--warmup",
        "kept",
        "--timed-runs",
        "5",
        "--device=metal",
    ]);
    assert_eq!(
        (a.warmup, a.timed_runs, a.device),
        (WarmupKind::Kept, 5, DeviceName::Metal)
    );
    assert_eq!(run_args(&["--device", "vulkan"]).device, DeviceName::Vulkan);
    assert_eq!(args(&["--help"]).unwrap(), Parsed::Help);
    assert_eq!(args(&["--reps", "3", "-h"]).unwrap(), Parsed::Help);
}

#[test]
fn argument_errors() {
    assert!(usage_error(&["--device", "mps"]).contains("unknown device 'mps'"));
    assert!(usage_error(&["--mode", "fast"]).contains("unknown mode"));
    assert!(usage_error(&["--shape", "1024"]).contains("bad --shape"));
    assert!(usage_error(&["--shape", "0x4"]).contains("bad --shape"));
    assert!(usage_error(&["--shape", "4x-1"]).contains("bad --shape"));
    assert!(usage_error(&["--reps", "0"]).contains("bad --reps"));
    assert!(usage_error(&["--reps"]).contains("needs a value"));
    assert!(usage_error(&["--samples=1"]).contains("takes no value"));
    assert!(usage_error(&["--bogus"]).contains("unknown argument"));
    assert!(usage_error(&["--threads", "8"]).contains("RAYON_NUM_THREADS"));
    assert!(usage_error(&["--warmup", "kept"]).contains("warm only"));
    assert!(usage_error(&["--mode", "warm", "--warmup", "maybe"]).contains("unknown --warmup"));
    assert!(usage_error(&["--out", "x"]).contains("accuracy only"));
    assert!(usage_error(&["--mode", "accuracy"]).contains("needs --out"));
}

#[test]
fn npy_round_trip() {
    let data: Vec<f32> = (0..6).map(|i| i as f32 * 0.5 - 1.0).collect();
    let bytes = npy_f32_bytes(&[2, 3], &data);
    assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00");
    let h = parse_npy_header(&bytes).unwrap();
    assert_eq!(h.descr, "<f4");
    assert!(!h.fortran_order);
    assert_eq!(h.shape, vec![2, 3]);
    assert_eq!(h.data_offset % 64, 0);
    assert_eq!(bytes[h.data_offset - 1], b'\n');
    assert_eq!(bytes.len(), h.data_offset + 4 * data.len());
    let back: Vec<f32> = bytes[h.data_offset..]
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(back, data);
    // 1-d shapes are written as a one-element tuple.
    let b1 = npy_f32_bytes(&[4], &[1.0, 2.0, 3.0, 4.0]);
    let text = String::from_utf8_lossy(&b1[10..]);
    assert!(text.contains("'shape': (4,)"), "{text}");
    assert_eq!(parse_npy_header(&b1).unwrap().shape, vec![4]);
    assert!(parse_npy_header(b"not numpy at all").is_err());
}

#[test]
fn energy_argument() {
    assert_eq!(run_args(&[]).energy, None);
    assert_eq!(run_args(&["--energy", "0"]).energy, None);
    assert_eq!(run_args(&["--energy=0.0"]).energy, None);
    assert_eq!(
        run_args(&["--energy", "2"]).energy,
        Some(Duration::from_secs(2))
    );
    assert_eq!(
        run_args(&["--device", "cuda", "--energy=0.25"]).energy,
        Some(Duration::from_millis(250))
    );
    assert_eq!(
        parse_energy("1.5").unwrap(),
        Some(Duration::from_millis(1500))
    );
    // 0 is the default, so it is accepted in every mode; a block only in mm mode.
    assert_eq!(run_args(&["--mode", "warm", "--energy", "0"]).energy, None);
    for bad in ["-1", "abc", "", "nan", "inf", "1e9", "2s"] {
        let msg = usage_error(&["--energy", bad]);
        assert!(
            msg.starts_with(&format!("bad --energy '{bad}'")),
            "{bad}: {msg}"
        );
    }
    assert!(usage_error(&["--energy"]).contains("needs a value"));
    assert!(usage_error(&["--mode", "warm", "--energy", "1"]).contains("mm only"));
    assert!(
        usage_error(&["--mode", "accuracy", "--out", "/tmp/x", "--energy", "1"])
            .contains("mm only")
    );
    assert!(USAGE.contains("--energy SECONDS"));
}

#[test]
fn energy_line_format() {
    // NVML counts mJ: the joules are exact, three decimals.
    assert_eq!(
        energy_line(
            "cuda 1024x1024 matmul",
            41_250,
            20_000,
            Duration::from_nanos(1_502_000_000)
        ),
        "cuda 1024x1024 matmul energy (nvml): 41.250 J, 20000 runs, 1.502s"
    );
    assert_eq!(
        energy_line("cuda 64x64 matmul", 7, 100, Duration::from_micros(250_500)),
        "cuda 64x64 matmul energy (nvml): 0.007 J, 100 runs, 250.500ms"
    );
    assert_eq!(
        energy_line(
            "cuda 8192x8192 matmul",
            1_234_000,
            3,
            Duration::from_secs(2)
        ),
        "cuda 8192x8192 matmul energy (nvml): 1234.000 J, 3 runs, 2.000s"
    );
}

#[test]
fn precision_lines() {
    assert_eq!(precision_line(DeviceName::Flex), "burn precision fp32");
    for dev in [DeviceName::Cuda, DeviceName::Metal, DeviceName::Vulkan] {
        let line = precision_line(dev);
        assert!(line.starts_with("burn precision unknown ("), "{line}");
        assert!(line.ends_with(')') && !line.contains('\n'), "{line}");
        assert!(line.contains("autotune"), "{line}");
    }
    assert_eq!(
        precision_line(DeviceName::Cuda),
        "burn precision unknown (cubecl's autotune picks the kernel; \
         cubecl enables TF32 tensor cores on sm >= 80)"
    );
}

#[test]
fn arch_notes() {
    assert_eq!(
        arch_note("cuda", "NVIDIA H200", "ptx_sm90").unwrap(),
        "note: cuda: NVIDIA H200, sm 90: cubecl may run f32 matmuls on TF32 tensor cores \
         (it enables TF32 on sm >= 80)"
    );
    assert!(arch_note("cuda", "Tesla T4", "ptx_sm75")
        .unwrap()
        .ends_with("sm 75: cubecl enables no TF32 below sm 80"));
    assert!(arch_note("cuda", "x", "hip-kernel_gfx1151").is_none());
    assert!(arch_note("cuda", "x", "ptx_smXY").is_none());
}

#[test]
fn profile_window_argument() {
    assert!(!run_args(&[]).profile_window);
    assert!(run_args(&["--profile-window"]).profile_window);
    let a = run_args(&["--device", "cuda", "--profile-window", "--reps", "20"]);
    assert!(a.profile_window);
    assert_eq!((a.device, a.reps, a.mode), (DeviceName::Cuda, 20, Mode::Mm));
    // A flag: no value, and mm mode only (as --energy).
    assert!(usage_error(&["--profile-window=1"]).contains("takes no value"));
    assert_eq!(
        usage_error(&["--mode", "warm", "--profile-window"]),
        "--profile-window applies to --mode mm only"
    );
    assert!(
        usage_error(&["--mode", "accuracy", "--out", "/tmp/x", "--profile-window"])
            .contains("mm only")
    );
    assert!(USAGE.contains("--profile-window"));
    assert!(USAGE.contains("cuProfilerStart"));
    assert_eq!(
        no_window_note("metal"),
        "note: --profile-window: no CUDA profiler API on metal; no window marked"
    );
}

#[test]
fn queued_device_time_line() {
    let runs: Vec<Duration> = [58_100u64, 57_900, 58_300, 58_000]
        .iter()
        .map(|&n| Duration::from_nanos(n))
        .collect();
    assert_eq!(
        summary_line("cuda 1024x1024 matmul", DEVICE_TIME_QUEUED, &runs).unwrap(),
        "cuda 1024x1024 matmul device time (profile_with flush, queued), 4 runs: \
         min 57.900µs median 58.050µs"
    );
    assert_eq!(
        samples_line("cuda 1024x1024 matmul", DEVICE_TIME_QUEUED, &runs[..2]),
        "# samples cuda 1024x1024 matmul device time (profile_with flush, queued): \
         0.0000581 0.0000579"
    );
    // The chapter's method stays a prefix of its own, so the two lines never read as one.
    assert!(DEVICE_TIME_QUEUED.starts_with("device time (profile_with flush"));
    assert_ne!(DEVICE_TIME_QUEUED, "device time (profile_with flush)");
}

// ---- the queued window's proof (queued.rs) -------------------------------------------------

use bench_core::queued::{
    calibration_note, failed_note, filler_cap, lead_ns, lead_words, next_filler, proof_line,
    target, waited, Round, FILLER_MAX, SLACK,
};
use bench_core::{backend_line, cuda_backend_line};

#[test]
fn queued_lead_is_start_minus_enqueue() {
    let us = Duration::from_micros;
    assert_eq!(lead_ns(us(300), us(100)), 200_000);
    assert_eq!(lead_ns(us(100), us(300)), -200_000);
    // a lead under SLACK (the anchor's wake-up) is not a proof; no time is not one either
    assert!(waited(Some(SLACK.as_nanos() as i128)));
    assert!(!waited(Some(SLACK.as_nanos() as i128 - 1)));
    assert!(!waited(Some(-5)));
    assert!(!waited(None));
    assert_eq!(lead_words(Some(180_250)), "+180.250µs");
    assert_eq!(lead_words(Some(-12_000)), "-12.000µs");
    assert_eq!(lead_words(None), "no time");
}

#[test]
fn queued_proof_counts_every_run() {
    let p = "cuda 1024x1024 matmul";
    let leads = [Some(200_000), Some(-3_000), None, Some(9_999), Some(50_000)];
    let w: Vec<bool> = leads.iter().map(|l| waited(*l)).collect();
    assert_eq!(
        proof_line(p, DEVICE_TIME_QUEUED, &w),
        "cuda 1024x1024 matmul device time (profile_with flush, queued): start event waited in \
         2 of 5 runs"
    );
    let note = failed_note(p, DEVICE_TIME_QUEUED, &leads).unwrap();
    assert!(note.starts_with(
        "note: cuda 1024x1024 matmul device time (profile_with flush, \
                              queued): in 3 of 5 runs the start event did not wait"
    ));
    assert!(note.contains("run 1 lead -3.000µs, run 2 lead no time, run 3 lead +9.999µs;"));
    assert_eq!(failed_note(p, DEVICE_TIME_QUEUED, &[Some(20_000)]), None);
}

#[test]
fn queued_filler_calibration() {
    let us = Duration::from_micros;
    // at least 50 µs, else twice the window's enqueue
    assert_eq!(target(us(10)), us(50));
    assert_eq!(target(us(40)), us(80));
    // short of the target: double, up to the cap; reached, or at the cap: keep
    assert_eq!(next_filler(2, Some(-1_000), us(50), 64), Some(4));
    assert_eq!(next_filler(2, None, us(50), 64), Some(4));
    assert_eq!(next_filler(48, Some(0), us(50), 64), Some(64));
    assert_eq!(next_filler(64, Some(0), us(50), 64), None);
    assert_eq!(next_filler(4, Some(50_000), us(50), 64), None);
    // 1 GiB of filler outputs at most: 1024² f32 = 4 MiB (64 fit), 16384² = 1 GiB (1)
    assert_eq!(filler_cap(1024 * 1024 * 4), FILLER_MAX);
    assert_eq!(filler_cap(16384 * 16384 * 4), 1);
    assert_eq!(filler_cap(32768 * 32768 * 4), 1);
    let rounds = [
        Round {
            fillers: 2,
            time: Some(us(363)),
            lead: Some(-250_000),
        },
        Round {
            fillers: 4,
            time: Some(us(38)),
            lead: Some(120_000),
        },
    ];
    assert_eq!(
        calibration_note("cuda 1024x1024 matmul", DEVICE_TIME_QUEUED, 4, &rounds),
        "note: cuda 1024x1024 matmul device time (profile_with flush, queued): filler 4 matmuls \
         of the timed inputs per run; calibration rounds, not kept (round 0 is the first queued \
         window): round 0: 2 fillers, 363.000µs, lead -250.000µs (did not wait); round 1: 4 \
         fillers, 38.000µs, lead +120.000µs (waited)"
    );
}

#[test]
fn cuda_backend_provenance_line() {
    assert_eq!(
        cuda_backend_line(),
        "burn backend cubecl-cuda 0.11.3, compiler nvrtc (CUDA C++ compiled at run time; \
         cubecl-llvm patched out: no LLVM backend)"
    );
    // only a CUDA build on the cuda device prints it (these tests build without `cuda`)
    assert_eq!(backend_line(DeviceName::Flex), None);
    if !cfg!(feature = "cuda") {
        assert_eq!(backend_line(DeviceName::Cuda), None);
    }
}
