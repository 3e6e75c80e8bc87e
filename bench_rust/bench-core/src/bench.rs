//! The three modes: `mm` (timing methods), `warm` (the warm-up puzzle), `accuracy` (.npy dump).

use std::hint::black_box;
use std::time::{Duration, Instant};

use burn::prelude::{Device, Tensor, TensorData};
use burn::tensor::{read_sync, ProfileDuration, ProfileOptions, TimingMethod};

use crate::args::{Args, DeviceName, Mode, WarmupKind};
use crate::energy::{self, Block};
use crate::format::{fmt_duration, samples_line, summarize, summary_line, DEVICE_TIME_QUEUED};
use crate::queued;
use crate::smclock::{self, SmClock};
use crate::window::{self, Window};
use crate::{backend_line, catch, flex_label, header_line, npy, one_line, precision_line, Failure};

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
    if let Some(line) = backend_line(args.device) {
        println!("{line}");
    }
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

/// The outcome of one queued window: its time (None: read as no time) and its lead (see
/// `queued.rs`: how long after the end event was queued the GPU reached the start event).
struct QueuedRun {
    time: Option<Duration>,
    lead: Option<i128>,
    /// Host time from the filler's flush to the return of `profile_with` (the window's enqueue).
    window_enqueue: Duration,
    device_clock: bool,
}

/// One run of the queued procedure with `k` filler matmuls of the timed inputs themselves.
///
/// Why this filler (issue 24): the former 4096x4096 filler (~200 MB of operands) pushed `a`
/// and `b` out of L2, which PyTorch's spin kernel (no memory at all) does not; the same filler
/// in PyTorch adds 4.1 µs (7%). A filler of a few KB cannot hold the stream under burn: each
/// launch costs the host more than a tiny kernel costs the GPU, so no backlog builds. `a @ b`
/// itself reads exactly the timed inputs (they enter the window hot in L2, as in PyTorch's
/// queued run, where the previous run's matmul read them) and costs the GPU more than the
/// host (H200 1024²: ~37 µs on the device, ~3 µs to queue), so `k` of them hold the stream;
/// their outputs (`k` buffers of M x M, alive until the run's sync, since Fusion skips work
/// whose output is dropped unread) are the only other memory touched. Flushing first matters:
/// Fusion would otherwise run the still-queued fillers *inside* the window.
fn queued_once(
    device: &Device,
    label: &str,
    a: &Tensor<2>,
    b: &Tensor<2>,
    k: usize,
) -> Result<QueuedRun, Failure> {
    let t0 = Instant::now();
    let fillers: Vec<Tensor<2>> = (0..k).map(|_| a.clone().matmul(b.clone())).collect();
    device
        .flush()
        .map_err(|e| Failure::run(format!("{label}: flush failed (queued device time): {e}")))?;
    let flushed = t0.elapsed();
    let (out, d): (Tensor<2>, ProfileDuration) = device
        .profile_with(ProfileOptions::default().flush(), || {
            a.clone().matmul(b.clone())
        })
        .map_err(|e| Failure::run(format!("{label}: profile failed (queued): {e}")))?;
    // profile_with(.. .flush()) returns once the end event is recorded (queued.rs)
    let enqueued = t0.elapsed();
    let device_clock = d.timing_method() == TimingMethod::Device;
    let ticks = read_sync(d.resolve());
    sync(device, label, "queued device time")?;
    drop(out);
    drop(fillers);
    Ok(QueuedRun {
        time: ticks.as_ref().map(|t| t.duration()),
        lead: ticks.map(|t| queued::lead_ns(t.start_duration_since(t0), enqueued)),
        window_enqueue: enqueued.saturating_sub(flushed),
        device_clock,
    })
}

/// Device time with the launch gap kept out (docs/LINES.md, `device_time_queued`): per run `k`
/// filler matmuls (`queued_once`) are queued and handed to the stream (`device.flush()`, no
/// wait) before the `profile_with(.. .flush())` window opens, so the window's start event sits
/// in the stream behind them, and start event, timed matmul and end event are all queued before
/// the GPU reaches them (nvbench's blocking kernel, from an ordinary op). Nothing in burn 0.22.1
/// or cubecl 0.11.3 drains the stream when a window opens (cubecl-cuda-0.11.3/src/compute/
/// server.rs:360-365, "No drain"); the window opens as a task on the fusion thread, in order
/// with the ops registered before it (burn-fusion-0.22.1/src/backend.rs:64-107). That premise
/// is not trusted: every run's proof is measured (queued.rs) and printed as
/// `start event waited in W of N runs`; failed runs are named in a note.
///
/// `k` is calibrated first, in rounds that are not kept (the first is burn's first queued
/// window, the 363 µs first sample of the H200 sweep): from `FILLER_START`, doubled while a
/// round's lead falls short of twice the window's enqueue (`queued::target`). The note lists
/// every round's window time and lead, so a slow first window is seen as what it is: a lead
/// below zero (the GPU reached the start event before the host had queued the end event, so the
/// window held launch gap) or a long window behind a start event that waited.
fn queued_runs(
    args: &Args,
    device: &Device,
    label: &str,
    a: &Tensor<2>,
    b: &Tensor<2>,
    sm: &mut SmClock,
) -> Result<Queued, Failure> {
    let out_bytes = args.shape.0 * args.shape.0 * std::mem::size_of::<f32>();
    let cap = queued::filler_cap(out_bytes);
    let mut k = queued::FILLER_START.min(cap);
    let mut rounds = Vec::with_capacity(queued::CALIBRATION_ROUNDS);
    for _ in 0..queued::CALIBRATION_ROUNDS {
        let r = queued_once(device, label, a, b, k)?;
        rounds.push(queued::Round {
            fillers: k,
            time: r.time,
            lead: r.lead,
        });
        let next = queued::next_filler(k, r.lead, queued::target(r.window_enqueue), cap);
        // round 0 is always followed by another: it is the first window, whatever its lead
        match next {
            Some(more) => k = more,
            None if rounds.len() > 1 => break,
            None => {}
        }
    }
    let mut w = Windows {
        times: Vec::with_capacity(args.reps),
        no_time: 0,
        device_clock: false,
    };
    let mut leads = Vec::with_capacity(args.reps);
    let mut held = Vec::with_capacity(args.reps);
    let start_mhz = sm.start(); // after the calibration rounds: they are not kept
    for _ in 0..args.reps {
        let r = queued_once(device, label, a, b, k)?;
        w.device_clock |= r.device_clock;
        match r.time {
            Some(t) => {
                w.times.push(t);
                if queued::waited(r.lead) {
                    held.push(t); // the start event waited: the kernel alone, no launch gap
                }
            }
            None => w.no_time += 1,
        }
        leads.push(r.lead);
    }
    let clocks = sm.ends(start_mhz);
    Ok(Queued {
        windows: w,
        leads,
        held,
        fillers: k,
        rounds,
        clocks,
    })
}

/// One matmul's kernel time for the energy block's busy share: the median of the queued windows
/// whose start event waited (the stream held, so each is the kernel alone, without launch gap),
/// where that is at least half of the runs; None otherwise (on the H200 at 1024², 12 to 20 of
/// 20 runs wait, at 256² none: a 256² kernel is shorter than its launch).
fn kernel_time(q: &Queued) -> Option<Duration> {
    let enough = q.windows.device_clock && 2 * q.held.len() >= q.leads.len().max(1);
    enough
        .then(|| summarize(&q.held).map(|s| s.median))
        .flatten()
}

/// The queued loop's windows, each run's lead, the windows whose start event waited, the filler
/// count and the calibration rounds.
struct Queued {
    windows: Windows,
    leads: Vec<Option<i128>>,
    held: Vec<Duration>,
    fillers: usize,
    rounds: Vec<queued::Round>,
    /// The SM clock at the kept loop's two ends.
    clocks: smclock::Ends,
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
    // The SM clock at each timed block's start and end (NVML, CUDA; outside the timing)
    smclock::with_clock(args.device, device, &p.prefix, |sm| {
        methods(args, device, label, &p, (&a, &b), sm)
    })
}

/// The timed blocks of mm mode after the first call, each between two reads of the SM clock
/// (`sm`: read outside every timed interval; a `# sm clock` line after the block's lines).
fn methods(
    args: &Args,
    device: &Device,
    label: &str,
    p: &Printer,
    (a, b): (&Tensor<2>, &Tensor<2>),
    sm: &mut SmClock,
) -> Result<(), Failure> {
    let is_cpu = args.device == DeviceName::Flex;
    // No sync / with sync: the chapter's loop; `c` stays alive until after the sync.
    let start_mhz = sm.start();
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
    let clocks = sm.ends(start_mhz);
    p.summary("no sync", &nosync);
    p.summary("with sync", &synced);
    for method in ["no sync", "with sync"] {
        sm.print(method, clocks); // one loop: the same clocks for both
    }

    // Device time, with and without flush.
    let start_mhz = sm.start();
    let flushed = profile_runs(args, device, label, a, b, true)?;
    let flushed_clocks = sm.ends(start_mhz);
    let start_mhz = sm.start();
    let unflushed = profile_runs(args, device, label, a, b, false)?;
    let unflushed_clocks = sm.ends(start_mhz);
    // GPU devices only (Flex has no device clock: its windows are wall clock between syncs).
    let queued_w = if is_cpu {
        None
    } else {
        Some(queued_runs(args, device, label, a, b, sm)?)
    };
    if flushed.device_clock || unflushed.device_clock {
        let m = "device time (profile_with flush)";
        p.summary(m, &flushed.times);
        sm.print(m, flushed_clocks);
        if flushed.no_time > 0 {
            eprintln!(
                "note: {} {m}: {} of {} read as no time",
                p.prefix, flushed.no_time, args.reps
            );
        }
        if let Some(q) = queued_w.as_ref().filter(|q| q.windows.device_clock) {
            eprintln!(
                "{}",
                queued::calibration_note(&p.prefix, DEVICE_TIME_QUEUED, q.fillers, &q.rounds)
            );
            p.summary(DEVICE_TIME_QUEUED, &q.windows.times);
            // the proof, always (docs/LINES.md): runs whose start event waited
            let waited: Vec<bool> = q.leads.iter().map(|l| queued::waited(*l)).collect();
            println!(
                "{}",
                queued::proof_line(&p.prefix, DEVICE_TIME_QUEUED, &waited)
            );
            if let Some(note) = queued::failed_note(&p.prefix, DEVICE_TIME_QUEUED, &q.leads) {
                eprintln!("{note}");
            }
            if q.windows.no_time > 0 {
                eprintln!(
                    "note: {} {DEVICE_TIME_QUEUED}: {} of {} read as no time",
                    p.prefix, q.windows.no_time, args.reps
                );
            }
            sm.print(DEVICE_TIME_QUEUED, q.clocks);
        }
        let m = "device time (profile, no flush)";
        println!(
            "{} {m}: {} of {} read as no time",
            p.prefix, unflushed.no_time, args.reps
        );
        p.summary(m, &unflushed.times);
        sm.print(m, unflushed_clocks);
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
    let start_mhz = sm.start();
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
    let clocks = sm.ends(start_mhz);
    p.summary("+ sum().into_scalar()", &readback);
    sm.print("+ sum().into_scalar()", clocks);

    // Profile window: after every other block, before energy (docs/LINES.md).
    if args.profile_window {
        let w = Window {
            device,
            label,
            a,
            b,
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
            a,
            b,
            m: args.shape.0,
            min,
            kernel: queued_w.as_ref().and_then(kernel_time),
        };
        energy::run(args.device, &block, sm)?;
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
