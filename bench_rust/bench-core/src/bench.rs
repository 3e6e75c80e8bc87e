//! The three modes: `mm` (timing methods), `warm` (the warm-up puzzle), `accuracy` (.npy dump).

use std::hint::black_box;
use std::time::{Duration, Instant};

use burn::prelude::{Device, Tensor, TensorData};
use burn::tensor::{read_sync, ProfileDuration, ProfileOptions, TimingMethod};

use crate::args::{Args, DeviceName, Mode, WarmupKind};
use crate::energy::{self, Block};
use crate::format::{fmt_duration, samples_line, summarize, summary_line, DEVICE_TIME_QUEUED};
use crate::window::{self, Window};
use crate::{catch, flex_label, header_line, npy, one_line, precision_line, Failure};

fn not_compiled(dev: DeviceName, hint: &str) -> Failure {
    Failure::run(format!(
        "device {} is not compiled into this build ({hint})",
        dev.as_str()
    ))
}

/// The device and its label. GPU devices are lazy: nothing touches the hardware here.
fn make_device(dev: DeviceName) -> Result<(Device, String), Failure> {
    match dev {
        DeviceName::Flex => {
            #[cfg(feature = "flex")]
            return Ok((Device::flex(), flex_label()));
            #[cfg(not(feature = "flex"))]
            return Err(not_compiled(dev, "burn feature flex is off"));
        }
        DeviceName::Cuda => {
            #[cfg(feature = "cuda")]
            return Ok((Device::cuda(0usize), "cuda".into()));
            #[cfg(not(feature = "cuda"))]
            return Err(not_compiled(dev, "build exec-gpu with --features cuda"));
        }
        DeviceName::Metal => {
            #[cfg(feature = "metal")]
            return Ok((
                Device::metal(burn::prelude::DeviceKind::DefaultDevice),
                "metal".into(),
            ));
            #[cfg(not(feature = "metal"))]
            return Err(not_compiled(dev, "build exec-gpu with --features metal"));
        }
        DeviceName::Vulkan => {
            #[cfg(feature = "vulkan")]
            return Ok((
                Device::vulkan(burn::prelude::DeviceKind::DefaultDevice),
                "vulkan".into(),
            ));
            #[cfg(not(feature = "vulkan"))]
            return Err(not_compiled(dev, "build exec-gpu with --features vulkan"));
        }
    }
}

fn sync(device: &Device, label: &str, what: &str) -> Result<(), Failure> {
    device
        .sync()
        .map_err(|e| Failure::run(format!("{label}: sync failed ({what}): {e}")))
}

/// Creates the device and makes it usable: a one-element tensor uploaded and read back.
/// Panics inside burn/cubecl (no driver, no GPU) become one error line.
fn init_device(dev: DeviceName) -> Result<(Device, String, Duration), Failure> {
    let t = Instant::now();
    let (device, label) = make_device(dev)?;
    let l = label.clone();
    let device = catch(&format!("{l}: device init failed"), move || {
        let x = Tensor::<1>::from_data(TensorData::new(vec![0.0f32], [1]), &device);
        x.try_into_data()
            .map_err(|e| Failure::run(format!("{l}: device init failed: {e}")))?;
        sync(&device, &l, "device init")?;
        Ok(device)
    })?;
    Ok((device, label, t.elapsed()))
}

/// Deterministic pseudo-random values in [-1, 1) (xorshift64*), so that runs are repeatable.
fn pseudo_random(len: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            s ^= s >> 12;
            s ^= s << 25;
            s ^= s >> 27;
            let r = s.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 40; // 24 bits
            (r as f32) / (1u64 << 23) as f32 - 1.0
        })
        .collect()
}

/// Inputs a [M, N] and b [N, M] on the device, created and synced before any timing.
fn inputs(
    device: &Device,
    label: &str,
    (m, n): (usize, usize),
) -> Result<(Tensor<2>, Tensor<2>), Failure> {
    let a = Tensor::<2>::from_data(TensorData::new(pseudo_random(m * n, 1), [m, n]), device);
    let b = Tensor::<2>::from_data(TensorData::new(pseudo_random(n * m, 2), [n, m]), device);
    sync(device, label, "creating the inputs")?;
    Ok((a, b))
}

/// On CUDA, once the device is open: its compute capability, which decides whether cubecl may
/// use TF32 (the header line, printed before device init, cannot know it).
#[cfg(feature = "cuda")]
fn arch_note(dev: DeviceName, device: &Device, label: &str) {
    if dev != DeviceName::Cuda {
        return;
    }
    if let Some(note) = device
        .identity()
        .and_then(|id| crate::arch_note(label, &id.name, &id.fingerprint))
    {
        eprintln!("{note}");
    }
}

#[cfg(not(feature = "cuda"))]
fn arch_note(_dev: DeviceName, _device: &Device, _label: &str) {}

pub(crate) fn run(args: &Args) -> Result<(), Failure> {
    println!("{}", header_line());
    println!("{}", precision_line(args.device));
    let (device, label, init) = init_device(args.device)?;
    if args.mode != Mode::Accuracy {
        println!("{label}: device init {}", fmt_duration(init));
    }
    arch_note(args.device, &device, &label);
    match args.mode {
        Mode::Mm => mm(args, &device, &label),
        Mode::Warm => warm(args, &device, &label),
        Mode::Accuracy => accuracy(args, &device, &label),
    }
}

struct Printer {
    prefix: String,
    samples: bool,
}

impl Printer {
    fn summary(&self, method: &str, runs: &[Duration]) {
        if let Some(line) = summary_line(&self.prefix, method, runs) {
            println!("{line}");
            if self.samples {
                println!("{}", samples_line(&self.prefix, method, runs));
            }
        }
    }
}

/// Device-timer windows: the durations that read a time, how many read none, and whether any
/// window used a device clock (false on Flex: burn then measures wall clock between two syncs).
struct Windows {
    times: Vec<Duration>,
    no_time: usize,
    device_clock: bool,
}

fn profile_runs(
    args: &Args,
    device: &Device,
    label: &str,
    a: &Tensor<2>,
    b: &Tensor<2>,
    flush: bool,
) -> Result<Windows, Failure> {
    let mut w = Windows {
        times: Vec::with_capacity(args.reps),
        no_time: 0,
        device_clock: false,
    };
    let options = if flush {
        ProfileOptions::default().flush()
    } else {
        ProfileOptions::default()
    };
    for _ in 0..args.reps {
        let (out, d): (Tensor<2>, ProfileDuration) = device
            .profile_with(options, || a.clone().matmul(b.clone()))
            .map_err(|e| Failure::run(format!("{label}: profile failed: {e}")))?;
        if d.timing_method() == TimingMethod::Device {
            w.device_clock = true;
        }
        match read_sync(d.resolve()) {
            Some(ticks) => w.times.push(ticks.duration()),
            None => w.no_time += 1,
        }
        drop(out);
    }
    sync(device, label, "after the profile runs")?;
    Ok(w)
}

/// Side of the square filler matmul that holds the stream in the queued device time.
/// 4096³ multiply-adds (~137 GFLOP): ~1-2 ms on an H200 in TF32, far longer than the host needs
/// to queue the timed matmul (tens of µs); on small GPUs it only costs time.
const FILLER: usize = 4096;

/// Device time with the launch gap kept out (docs/LINES.md, `device_time_queued`): per run a
/// filler matmul is queued and handed to the stream (`device.flush()`, no wait) before the
/// `profile_with(.. .flush())` window opens, so the window's start event sits in the stream
/// behind the filler, and start event, timed matmul and end event are all queued before the GPU
/// reaches them (nvbench's blocking kernel, from an ordinary op). Nothing in burn 0.22.1 or
/// cubecl 0.11.3 drains the stream when a window opens (cubecl-cuda-0.11.3/src/compute/
/// server.rs:360-383, "No drain"); the window opens as a task on the fusion thread, in order
/// with the ops registered before it (burn-fusion-0.22.1/src/backend.rs:64-107).
/// Flushing first matters: Fusion would otherwise run the still-queued filler *inside* the
/// window, or fuse it with what follows. The filler's key is autotuned by a warm-up before the
/// loop (the timed matmul's by the blocks before), so no autotune runs in a window.
fn queued_runs(
    args: &Args,
    device: &Device,
    label: &str,
    a: &Tensor<2>,
    b: &Tensor<2>,
) -> Result<Windows, Failure> {
    let n = FILLER * FILLER;
    let fa = Tensor::<2>::from_data(
        TensorData::new(pseudo_random(n, 3), [FILLER, FILLER]),
        device,
    );
    let fb = Tensor::<2>::from_data(
        TensorData::new(pseudo_random(n, 4), [FILLER, FILLER]),
        device,
    );
    let warm = fa.clone().matmul(fb.clone());
    sync(device, label, "filler warm-up")?;
    drop(warm);
    let mut w = Windows {
        times: Vec::with_capacity(args.reps),
        no_time: 0,
        device_clock: false,
    };
    let flush = |what: &str| {
        device
            .flush()
            .map_err(|e| Failure::run(format!("{label}: flush failed ({what}): {e}")))
    };
    for _ in 0..args.reps {
        // Kept alive until after the sync: Fusion skips work whose output is dropped unread.
        let filler = fa.clone().matmul(fb.clone());
        flush("queued device time, filler")?;
        let (out, d): (Tensor<2>, ProfileDuration) = device
            .profile_with(ProfileOptions::default().flush(), || {
                a.clone().matmul(b.clone())
            })
            .map_err(|e| Failure::run(format!("{label}: profile failed (queued): {e}")))?;
        if d.timing_method() == TimingMethod::Device {
            w.device_clock = true;
        }
        match read_sync(d.resolve()) {
            Some(ticks) => w.times.push(ticks.duration()),
            None => w.no_time += 1,
        }
        sync(device, label, "queued device time")?;
        drop(out);
        drop(filler);
    }
    Ok(w)
}

fn mm(args: &Args, device: &Device, label: &str) -> Result<(), Failure> {
    let is_cpu = args.device == DeviceName::Flex;
    let p = Printer {
        prefix: format!("{label} {} matmul", args.shape_str()),
        samples: args.samples,
    };
    let (a, b) = inputs(device, label, args.shape)?;

    // First call: time at return and after sync (on the CPU the two are the same call).
    let t = Instant::now();
    let c = a.clone().matmul(b.clone());
    let returned = t.elapsed();
    sync(device, label, "first call")?;
    let after = t.elapsed();
    drop(c);
    if is_cpu {
        println!("{} first call: {}", p.prefix, fmt_duration(after));
    } else {
        println!(
            "{} first call: returned {}, after sync {}",
            p.prefix,
            fmt_duration(returned),
            fmt_duration(after)
        );
    }

    // No sync / with sync: the chapter's loop; `c` stays alive until after the sync.
    let mut nosync = Vec::with_capacity(args.reps);
    let mut synced = Vec::with_capacity(args.reps);
    for _ in 0..args.reps {
        let t = Instant::now();
        let c = a.clone().matmul(b.clone());
        nosync.push(t.elapsed());
        sync(device, label, "with sync")?;
        synced.push(t.elapsed());
        drop(c);
    }
    p.summary("no sync", &nosync);
    p.summary("with sync", &synced);

    // Device time, with and without flush.
    let flushed = profile_runs(args, device, label, &a, &b, true)?;
    let unflushed = profile_runs(args, device, label, &a, &b, false)?;
    // GPU devices only (Flex has no device clock, and a 4096² filler would only cost time).
    let queued = if is_cpu {
        None
    } else {
        Some(queued_runs(args, device, label, &a, &b)?)
    };
    if flushed.device_clock || unflushed.device_clock {
        let m = "device time (profile_with flush)";
        p.summary(m, &flushed.times);
        if flushed.no_time > 0 {
            eprintln!(
                "note: {} {m}: {} of {} read as no time",
                p.prefix, flushed.no_time, args.reps
            );
        }
        if let Some(q) = queued.as_ref().filter(|q| q.device_clock) {
            p.summary(DEVICE_TIME_QUEUED, &q.times);
            if q.no_time > 0 {
                eprintln!(
                    "note: {} {DEVICE_TIME_QUEUED}: {} of {} read as no time",
                    p.prefix, q.no_time, args.reps
                );
            }
        }
        let m = "device time (profile, no flush)";
        println!(
            "{} {m}: {} of {} read as no time",
            p.prefix, unflushed.no_time, args.reps
        );
        p.summary(m, &unflushed.times);
    } else {
        // Flex has no device clock: burn's profile falls back to wall clock between two syncs.
        // Not a device time, so not printed as one (docs/LINES.md); a note on stderr instead.
        let s = |w: &Windows| match summarize(&w.times) {
            Some(s) => format!(
                "min {} median {} ({} of {} read as no time)",
                fmt_duration(s.min),
                fmt_duration(s.median),
                w.no_time,
                args.reps
            ),
            None => format!("{} of {} read as no time", w.no_time, args.reps),
        };
        eprintln!(
            "note: {}: no device clock; burn's profile measured wall clock between syncs: \
             with flush {}, no flush {}",
            p.prefix,
            s(&flushed),
            s(&unflushed)
        );
    }

    // Read back one number: a sync too.
    let mut readback = Vec::with_capacity(args.reps);
    for _ in 0..args.reps {
        let t = Instant::now();
        let c = a.clone().matmul(b.clone());
        let s: f32 = c
            .sum()
            .try_into_scalar::<f32>()
            .map_err(|e| Failure::run(format!("{label}: read-back failed: {e}")))?;
        readback.push(t.elapsed());
        black_box(s);
    }
    p.summary("+ sum().into_scalar()", &readback);

    // Profile window: after every other block, before energy (docs/LINES.md).
    if args.profile_window {
        let w = Window {
            device,
            label,
            a: &a,
            b: &b,
            reps: args.reps,
        };
        window::run(args.device, &w)?;
    }

    // Energy: its own block, after everything else (docs/LINES.md).
    if let Some(min) = args.energy {
        let block = Block {
            device,
            label,
            prefix: &p.prefix,
            a: &a,
            b: &b,
            m: args.shape.0,
            min,
        };
        energy::run(args.device, &block)?;
    }
    Ok(())
}

/// The chapter's warm-up puzzle: one warm-up without sync (result dropped or kept alive
/// unread), then K timed runs each ending in a sync.
fn warm(args: &Args, device: &Device, label: &str) -> Result<(), Failure> {
    let (a, b) = inputs(device, label, args.shape)?;
    let kind = args.warmup.as_str();
    let kept = if args.warmup == WarmupKind::Kept {
        Some(a.clone().matmul(b.clone())) // kept alive, never synced or read
    } else {
        let _ = a.clone().matmul(b.clone()); // dropped right away
        None
    };
    for i in 0..args.timed_runs {
        let t = Instant::now();
        let c = a.clone().matmul(b.clone());
        sync(device, label, "timed run")?;
        println!(
            "warm-up {kind}, timed run {i}: after sync {}",
            fmt_duration(t.elapsed())
        );
        drop(c);
    }
    drop(kept);
    Ok(())
}

/// a[i, j] = sin(i*N + j), b[i, j] = cos(i*M + j), both evaluated in f32; c = a @ b.
pub(crate) fn accuracy_inputs((m, n): (usize, usize)) -> (Vec<f32>, Vec<f32>) {
    let a = (0..m * n).map(|k| (k as f32).sin()).collect();
    let b = (0..n * m).map(|k| (k as f32).cos()).collect();
    (a, b)
}

fn accuracy(args: &Args, device: &Device, label: &str) -> Result<(), Failure> {
    let (m, n) = args.shape;
    let dir = args.out.as_ref().expect("checked by the parser");
    let (a_host, b_host) = accuracy_inputs((m, n));
    let a = Tensor::<2>::from_data(TensorData::new(a_host.clone(), [m, n]), device);
    let b = Tensor::<2>::from_data(TensorData::new(b_host.clone(), [n, m]), device);
    let c = a
        .matmul(b)
        .try_into_data()
        .map_err(|e| Failure::run(format!("{label}: read-back failed: {e}")))?
        .try_into_vec::<f32>()
        .map_err(|e| Failure::run(format!("{label}: read-back failed: {e:?}")))?;
    std::fs::create_dir_all(dir)
        .map_err(|e| Failure::run(format!("cannot create {}: {e}", dir.display())))?;
    for (name, shape, data) in [
        ("a.npy", [m, n], &a_host),
        ("b.npy", [n, m], &b_host),
        ("c.npy", [m, m], &c),
    ] {
        let path = dir.join(name);
        npy::write_npy_f32(&path, &shape, data).map_err(|e| {
            Failure::run(format!(
                "cannot write {}: {}",
                path.display(),
                one_line(&e.to_string())
            ))
        })?;
    }
    println!(
        "{label} {} matmul accuracy: wrote {}",
        args.shape_str(),
        dir.display()
    );
    Ok(())
}
