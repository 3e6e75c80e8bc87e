//! Command line (docs/LINES.md, "Common arguments of both programs"), parsed by hand.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use crate::Failure;

pub const USAGE: &str = "\
usage: exec-{gpu,cpu,amx} [--device DEV] [--mode MODE] [--shape MxN] [--reps N] [--samples]
                          [--warmup KIND] [--timed-runs K] [--out DIR] [--energy SECONDS]
                          [--profile-window]

  --device DEV      flex | cuda | metal | vulkan (default flex; GPU devices need the build's
                    cargo feature)
  --mode MODE       mm | warm | accuracy (default mm)
  --shape MxN       a is [M, N], b is [N, M]; default 1024x1024 (accuracy: 256x256)
  --reps N          timed runs per method in mm mode, default 20
  --samples         mm mode: after each summary line print its `# samples` line (seconds)
  --warmup KIND     warm mode: dropped | kept (default dropped)
  --timed-runs K    warm mode: timed runs after the warm-up, default 3
  --out DIR         accuracy mode (required): folder for a.npy, b.npy, c.npy
  --energy SECONDS  mm mode: after everything else, run matmuls back to back for at least
                    SECONDS and print the energy NVML counted (CUDA builds; elsewhere a note
                    on stderr); default 0: no energy block
  --profile-window  mm mode, cuda: after every other block but energy, one more block of
                    --reps matmuls, each synced, between the CUDA profiler API's start and
                    stop (cuProfilerStart/cuProfilerStop), so that a profiler started with
                    --profile-from-start off (ncu) sees only those kernels; prints nothing
                    (elsewhere a note on stderr)
  -h, --help        this text

Threads come from RAYON_NUM_THREADS (builds with rayon). Exit status: 0 ok, 1 run failed,
2 bad arguments; errors are one `error: ...` line on stderr.
";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceName {
    Flex,
    Cuda,
    Metal,
    Vulkan,
}

impl DeviceName {
    pub fn as_str(self) -> &'static str {
        match self {
            DeviceName::Flex => "flex",
            DeviceName::Cuda => "cuda",
            DeviceName::Metal => "metal",
            DeviceName::Vulkan => "vulkan",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Mm,
    Warm,
    Accuracy,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WarmupKind {
    Dropped,
    Kept,
}

impl WarmupKind {
    pub fn as_str(self) -> &'static str {
        match self {
            WarmupKind::Dropped => "dropped",
            WarmupKind::Kept => "kept",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Args {
    pub device: DeviceName,
    pub mode: Mode,
    /// (M, N): a is [M, N], b is [N, M].
    pub shape: (usize, usize),
    pub reps: usize,
    pub samples: bool,
    pub warmup: WarmupKind,
    pub timed_runs: usize,
    pub out: Option<PathBuf>,
    /// `--energy SECONDS`: the energy block's minimum length; `None` for 0 (no block).
    pub energy: Option<Duration>,
    /// `--profile-window`: mark one block of `reps` matmuls for an external profiler (CUDA).
    pub profile_window: bool,
}

impl Args {
    /// `MxN` as printed.
    pub fn shape_str(&self) -> String {
        format!("{}x{}", self.shape.0, self.shape.1)
    }
}

#[derive(Debug, PartialEq, Eq)]
pub enum Parsed {
    Run(Args),
    Help,
}

pub fn parse_shape(s: &str) -> Result<(usize, usize), Failure> {
    let bad = || Failure::usage(format!("bad --shape '{s}' (expected MxN, e.g. 1024x1024)"));
    let (m, n) = s.split_once('x').ok_or_else(bad)?;
    let m: usize = m.parse().map_err(|_| bad())?;
    let n: usize = n.parse().map_err(|_| bad())?;
    if m == 0 || n == 0 {
        return Err(bad());
    }
    Ok((m, n))
}

/// `--energy SECONDS`: a finite number >= 0 (`0` = no energy block), at most a day.
pub fn parse_energy(s: &str) -> Result<Option<Duration>, Failure> {
    let bad = || {
        Failure::usage(format!(
            "bad --energy '{s}' (expected seconds >= 0, e.g. 2 or 0.5; 0 = no energy block)"
        ))
    };
    let secs: f64 = s.trim().parse().map_err(|_| bad())?;
    if !secs.is_finite() || !(0.0..=86_400.0).contains(&secs) {
        return Err(bad());
    }
    Ok((secs > 0.0).then(|| Duration::from_secs_f64(secs)))
}

fn parse_count(opt: &str, s: &str) -> Result<usize, Failure> {
    match s.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(Failure::usage(format!(
            "bad {opt} '{s}' (expected a whole number >= 1)"
        ))),
    }
}

/// Parses the arguments (without the program name). `--opt value` and `--opt=value` both work.
pub fn parse<I: IntoIterator<Item = OsString>>(args: I) -> Result<Parsed, Failure> {
    let mut device = DeviceName::Flex;
    let mut mode = Mode::Mm;
    let mut shape = None;
    let mut reps = 20;
    let mut samples = false;
    let mut warmup = None;
    let mut timed_runs = None;
    let mut out = None;
    let mut energy = None;
    let mut profile_window = false;

    let mut it = args.into_iter();
    while let Some(raw) = it.next() {
        let raw = raw
            .into_string()
            .map_err(|a| Failure::usage(format!("argument is not UTF-8: {a:?}")))?;
        let (opt, inline) = match raw.split_once('=') {
            Some((o, v)) if o.starts_with("--") => (o.to_string(), Some(v.to_string())),
            _ => (raw.clone(), None),
        };
        let takes_value = matches!(
            opt.as_str(),
            "--device"
                | "--mode"
                | "--shape"
                | "--reps"
                | "--warmup"
                | "--timed-runs"
                | "--out"
                | "--energy"
                | "--threads"
        );
        let value = if takes_value {
            match inline {
                Some(v) => v,
                None => it
                    .next()
                    .ok_or_else(|| Failure::usage(format!("{opt} needs a value")))?
                    .into_string()
                    .map_err(|a| Failure::usage(format!("argument is not UTF-8: {a:?}")))?,
            }
        } else {
            if inline.is_some() {
                return Err(Failure::usage(format!("{opt} takes no value")));
            }
            String::new()
        };
        match opt.as_str() {
            "-h" | "--help" => return Ok(Parsed::Help),
            "--device" => {
                device = match value.as_str() {
                    "flex" => DeviceName::Flex,
                    "cuda" => DeviceName::Cuda,
                    "metal" => DeviceName::Metal,
                    "vulkan" => DeviceName::Vulkan,
                    other => {
                        return Err(Failure::usage(format!(
                            "unknown device '{other}' (expected flex, cuda, metal or vulkan)"
                        )))
                    }
                }
            }
            "--mode" => {
                mode = match value.as_str() {
                    "mm" => Mode::Mm,
                    "warm" => Mode::Warm,
                    "accuracy" => Mode::Accuracy,
                    other => {
                        return Err(Failure::usage(format!(
                            "unknown mode '{other}' (expected mm, warm or accuracy)"
                        )))
                    }
                }
            }
            "--shape" => shape = Some(parse_shape(&value)?),
            "--reps" => reps = parse_count("--reps", &value)?,
            "--samples" => samples = true,
            "--profile-window" => profile_window = true,
            "--warmup" => {
                warmup = Some(match value.as_str() {
                    "dropped" => WarmupKind::Dropped,
                    "kept" => WarmupKind::Kept,
                    other => {
                        return Err(Failure::usage(format!(
                            "unknown --warmup '{other}' (expected dropped or kept)"
                        )))
                    }
                })
            }
            "--timed-runs" => timed_runs = Some(parse_count("--timed-runs", &value)?),
            "--out" => {
                if value.is_empty() {
                    return Err(Failure::usage("--out needs a folder"));
                }
                out = Some(PathBuf::from(value))
            }
            "--energy" => energy = parse_energy(&value)?,
            "--threads" => return Err(Failure::usage(
                "--threads is for the torch program; burn's threads come from RAYON_NUM_THREADS",
            )),
            other => return Err(Failure::usage(format!("unknown argument '{other}'"))),
        }
    }

    if mode != Mode::Warm && (warmup.is_some() || timed_runs.is_some()) {
        return Err(Failure::usage(
            "--warmup and --timed-runs apply to --mode warm only",
        ));
    }
    if mode != Mode::Accuracy && out.is_some() {
        return Err(Failure::usage("--out applies to --mode accuracy only"));
    }
    if mode != Mode::Mm && energy.is_some() {
        return Err(Failure::usage("--energy applies to --mode mm only"));
    }
    if mode != Mode::Mm && profile_window {
        return Err(Failure::usage("--profile-window applies to --mode mm only"));
    }
    if mode == Mode::Accuracy && out.is_none() {
        return Err(Failure::usage("--mode accuracy needs --out DIR"));
    }
    let shape = shape.unwrap_or(if mode == Mode::Accuracy {
        (256, 256)
    } else {
        (1024, 1024)
    });
    Ok(Parsed::Run(Args {
        device,
        mode,
        shape,
        reps,
        samples,
        warmup: warmup.unwrap_or(WarmupKind::Dropped),
        timed_runs: timed_runs.unwrap_or(3),
        out,
        energy,
        profile_window,
    }))
}
