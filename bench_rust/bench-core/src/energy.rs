//! The energy block of mm mode (`--energy SECONDS`, docs/LINES.md): the GPU's idle power first,
//! then matmuls back to back for at least SECONDS (5 s or more: NVML's total-energy counter, in
//! mJ, moves every ~100 ms), every counter read aligned to one of its updates (polled until it
//! changes), one `... energy (nvml): J.JJJ J, N runs, DUR` line and one `# energy ... idle W W
//! over DUR, net J J[, busy F]` line (net = joules less idle power times the block's time; busy =
//! runs x one matmul's kernel time / the block's time). The twin of bench_py's
//! `bench_core/energy.py`: the same steps, so the two programs' joules are of the same kind.
//! Only CUDA builds link the NVML binding (nvml-wrapper, which loads libnvidia-ml.so.1 at run
//! time, so the binary still starts where no NVIDIA driver is installed); where NVML cannot
//! answer, a `note:` on stderr and no line. The alignment ([`measure`]) is plain logic over a
//! [`Meter`], unit-tested with a fake counter in every build.

// Without CUDA only the tests reach the measuring code (NVML is linked with CUDA alone).
#![cfg_attr(not(feature = "cuda"), allow(dead_code))]

use std::time::Duration;

use burn::prelude::{Device, Tensor};

use crate::args::DeviceName;
use crate::format::fmt_duration;
use crate::smclock::SmClock;
use crate::Failure;

/// The matmuls of the block, their device and how long the block must last.
// Read only by the NVML code, which exists in CUDA builds alone.
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
pub(crate) struct Block<'a> {
    pub device: &'a Device,
    pub label: &'a str,
    /// `LABEL SHAPE matmul`
    pub prefix: &'a str,
    pub a: &'a Tensor<2>,
    pub b: &'a Tensor<2>,
    /// Output side M of the [M, M] result (a is [M, N]).
    pub m: usize,
    pub min: Duration,
    /// One matmul's kernel time, for the busy share: the median of the queued windows whose
    /// start event waited (the stream held: each is the kernel alone), where half or more did.
    pub kernel: Option<Duration>,
}

fn note(prefix: &str, what: &str) {
    eprintln!("note: {prefix} energy (nvml): {what}; no energy line");
}

/// Matmuls per sync: ~100 (the clock and the counter are checked at each sync), fewer when
/// the results kept alive until the sync would pass 1 GiB (burn's Fusion skips work whose
/// output is dropped unread, so every result of a batch lives until its sync).
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
pub(crate) fn batch_size(m: usize) -> usize {
    let bytes = (m * m * std::mem::size_of::<f32>()).max(1);
    ((1usize << 30) / bytes).clamp(1, 100)
}

/// Shorter blocks get a note: one ~100 ms counter step is then over 2% of the block.
pub(crate) const MIN_BLOCK: Duration = Duration::from_secs(5);
/// Idle power is measured over at least this long, just before the block.
pub(crate) const IDLE: Duration = Duration::from_secs(1);
/// NVML's counter moves every ~100 ms: this long without a change at one end is a fault.
pub(crate) const TICK_GIVE_UP: Duration = Duration::from_secs(2);
/// Beyond SECONDS: a block whose counter has not moved by then never will.
pub(crate) const BLOCK_GIVE_UP: Duration = Duration::from_secs(10);
/// Between two counter reads while waiting for it to move.
const POLL: Duration = Duration::from_micros(500);

/// The counter and the clock the block is measured with (NVML and `Instant` in the program;
/// a fake in the tests).
pub(crate) trait Meter {
    /// The total-energy counter in mJ, or why it cannot be read.
    fn read_mj(&mut self) -> Result<u64, String>;
    /// Monotonic time since any fixed start.
    fn now(&mut self) -> Duration;
    fn sleep(&mut self, d: Duration);
}

/// What one aligned block measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Reading {
    pub millijoules: u64,
    pub runs: usize,
    pub wall: Duration,
    /// The idle interval's energy and length, both between two counter updates.
    pub idle_mj: u64,
    pub idle: Duration,
}

impl Reading {
    pub fn idle_watts(&self) -> Option<f64> {
        (self.idle_mj > 0 && !self.idle.is_zero())
            .then(|| self.idle_mj as f64 / 1000.0 / self.idle.as_secs_f64())
    }

    /// Joules less idle power over the block's time (negative where the block drew less).
    pub fn net_joules(&self) -> Option<f64> {
        self.idle_watts()
            .map(|w| self.millijoules as f64 / 1000.0 - w * self.wall.as_secs_f64())
    }

    /// The share of the block the GPU ran kernels: runs x one matmul's kernel time.
    pub fn busy(&self, kernel: Option<Duration>) -> Option<f64> {
        let k = kernel.filter(|k| !k.is_zero())?;
        (!self.wall.is_zero()).then(|| self.runs as f64 * k.as_secs_f64() / self.wall.as_secs_f64())
    }
}

/// Why a block gave no reading (a `note:`, never a failed run).
#[derive(Debug, PartialEq)]
pub(crate) enum NoReading {
    /// The counter did not move within TICK_GIVE_UP at an end (or the whole block's limit).
    Stuck(String),
    /// NVML did not answer.
    Unread(String),
}

/// (time, counter) at the first counter value after the current one: the read lands just
/// after one of NVML's updates, not somewhere in the ~100 ms between two.
fn next_tick<M: Meter>(m: &mut M, end: &str) -> Result<(Duration, u64), NoReading> {
    let first = m.read_mj().map_err(NoReading::Unread)?;
    let give_up = m.now() + TICK_GIVE_UP;
    loop {
        let value = m.read_mj().map_err(NoReading::Unread)?;
        let now = m.now();
        if value != first {
            return Ok((now, value));
        }
        if now >= give_up {
            return Err(NoReading::Stuck(format!(
                "the energy counter did not move in {TICK_GIVE_UP:?} ({end})"
            )));
        }
        m.sleep(POLL);
    }
}

/// A block cut short: a note, or the program's own failure (a sync).
enum Stop {
    Note(NoReading),
    Fail(Failure),
}

impl From<NoReading> for Stop {
    fn from(n: NoReading) -> Self {
        Stop::Note(n)
    }
}

impl From<Failure> for Stop {
    fn from(f: Failure) -> Self {
        Stop::Fail(f)
    }
}

/// Idle power, then batches for at least `min`, every counter read aligned (bench_py's
/// `measure_energy`, step for step). First the GPU idles (synced, nothing queued) from one
/// counter update to the first update at least `idle` later; then the block starts at an
/// update, runs batches (`run_batch` queues a batch and syncs, returning its matmuls) until
/// `min` has passed, and ends at the next update: its wall time spans whole counter steps, so
/// the joules are the energy of exactly that time (the last step's idle tail, at most ~100 ms,
/// is in both). `Err` is the program's own failure (a sync); `Ok(Err(..))` a note.
pub(crate) fn measure<M: Meter>(
    m: &mut M,
    run_batch: &mut dyn FnMut() -> Result<usize, Failure>,
    min: Duration,
    idle: Duration,
) -> Result<Result<Reading, NoReading>, Failure> {
    match steps(m, run_batch, min, idle) {
        Ok(r) => Ok(Ok(r)),
        Err(Stop::Note(why)) => Ok(Err(why)),
        Err(Stop::Fail(f)) => Err(f),
    }
}

fn steps<M: Meter>(
    m: &mut M,
    run_batch: &mut dyn FnMut() -> Result<usize, Failure>,
    min: Duration,
    idle: Duration,
) -> Result<Reading, Stop> {
    let (idle_t0, idle_e0) = next_tick(m, "idle start")?;
    // most of the idle time asleep, then the first update past it
    m.sleep(idle.saturating_sub(TICK_GIVE_UP / 20));
    let (mut idle_t1, mut idle_e1) = (idle_t0, idle_e0);
    while idle_t1 - idle_t0 < idle {
        (idle_t1, idle_e1) = next_tick(m, "idle end")?;
    }
    let (t0, first) = next_tick(m, "block start")?;
    let mut runs = 0usize;
    while m.now() - t0 < min {
        runs += run_batch()?;
        if m.now() - t0 >= min + BLOCK_GIVE_UP {
            let limit = min + BLOCK_GIVE_UP;
            return Err(NoReading::Stuck(format!("the block did not end within {limit:?}")).into());
        }
    }
    let (t1, last) = next_tick(m, "block end")?;
    let (Some(millijoules), Some(idle_mj)) =
        (last.checked_sub(first), idle_e1.checked_sub(idle_e0))
    else {
        let why = format!("the energy counter went back ({first} -> {last} mJ)");
        return Err(NoReading::Stuck(why).into());
    };
    Ok(Reading {
        millijoules,
        runs,
        wall: t1 - t0,
        idle_mj,
        idle: idle_t1 - idle_t0,
    })
}

/// `# energy LABEL SHAPE matmul energy (nvml): idle W.WWW W over DUR, net J.JJJ J[, busy F]`
/// (busy only where one matmul's kernel time is known); None without an idle power.
pub(crate) fn more_line(prefix: &str, r: &Reading, kernel: Option<Duration>) -> Option<String> {
    let (watts, net) = (r.idle_watts()?, r.net_joules()?);
    let busy = r
        .busy(kernel)
        .map(|b| format!(", busy {b:.3}"))
        .unwrap_or_default();
    Some(format!(
        "# energy {prefix} energy (nvml): idle {watts:.3} W over {}, net {net:.3} J{busy}",
        fmt_duration(r.idle)
    ))
}

/// The NVML device of the CUDA device `device`: by the PCI bus id cubecl read from the driver
/// (`cuDeviceGetPCIBusId`, cubecl-cuda-0.11.3/src/runtime.rs:497-521), the key cubecl's own
/// NVML counter uses (cubecl-monitoring-0.11.3/src/gpu_utilization/nvml.rs:19-25), so
/// CUDA_VISIBLE_DEVICES reordering cannot pick another card; NVML index 0 (with a note that
/// starts `note: WHAT:`) only when cubecl has no bus id. `Err`: why there is none. Shared by
/// the energy block and the SM clock (smclock.rs).
#[cfg(feature = "cuda")]
pub(crate) fn nvml_device<'n>(
    nvml: &'n nvml_wrapper::Nvml,
    device: &Device,
    what: &str,
) -> Result<nvml_wrapper::Device<'n>, String> {
    let pci = device
        .identity()
        .and_then(|id| id.physical)
        .and_then(|p| p.pci_address);
    match pci {
        Some(addr) => nvml
            .device_by_pci_bus_id(addr.to_string())
            .map_err(|e| format!("no NVML device at the CUDA device's PCI bus id {addr} ({e})")),
        None => {
            eprintln!(
                "note: {what}: cubecl reports no PCI bus id for the CUDA device; NVML device 0 \
                 is read"
            );
            nvml.device_by_index(0)
                .map_err(|e| format!("NVML device 0 not found ({e})"))
        }
    }
}

/// Runs the block on `dev`; NVML answers for CUDA devices only. `sm` reads the SM clock at
/// the block's two ends (its `# sm clock ... energy (nvml)` line follows the energy lines).
pub(crate) fn run(dev: DeviceName, block: &Block, sm: &mut SmClock) -> Result<(), Failure> {
    if dev != DeviceName::Cuda {
        note(
            block.prefix,
            &format!(
                "NVML reads NVIDIA GPUs through CUDA only, not the {} device",
                dev.as_str()
            ),
        );
        return Ok(());
    }
    #[cfg(feature = "cuda")]
    {
        nvml::run(block, sm)
    }
    #[cfg(not(feature = "cuda"))]
    {
        // Unreachable in practice: without the feature the CUDA device fails at init.
        let _ = sm;
        note(
            block.prefix,
            "this build has no CUDA (NVML is only linked with --features cuda)",
        );
        Ok(())
    }
}

#[cfg(feature = "cuda")]
mod nvml {
    use std::time::{Duration, Instant};

    use burn::prelude::Tensor;
    use nvml_wrapper::error::NvmlError;
    use nvml_wrapper::{Device as NvmlDevice, Nvml as NvmlLib};

    use super::{
        batch_size, measure, more_line, note, nvml_device, Block, Meter, NoReading, IDLE, MIN_BLOCK,
    };
    use crate::format::energy_line;
    use crate::smclock::SmClock;
    use crate::Failure;

    fn sync(block: &Block) -> Result<(), Failure> {
        block
            .device
            .sync()
            .map_err(|e| Failure::run(format!("{}: sync failed (energy block): {e}", block.label)))
    }

    /// NVML's counter and the host's monotonic clock.
    struct Nvml<'d, 'n> {
        gpu: &'d NvmlDevice<'n>,
        start: Instant,
    }

    impl Meter for Nvml<'_, '_> {
        fn read_mj(&mut self) -> Result<u64, String> {
            self.gpu.total_energy_consumption().map_err(|e| match e {
                NvmlError::NotSupported => "this GPU has no total-energy counter".to_string(),
                e => format!("reading the total-energy counter failed ({e})"),
            })
        }

        fn now(&mut self) -> Duration {
            self.start.elapsed()
        }

        fn sleep(&mut self, d: Duration) {
            std::thread::sleep(d)
        }
    }

    pub(super) fn run(block: &Block, sm: &mut SmClock) -> Result<(), Failure> {
        let nvml = match NvmlLib::init() {
            Ok(n) => n,
            Err(e) => {
                note(block.prefix, &format!("NVML not available ({e})"));
                return Ok(());
            }
        };
        let what = format!("{} energy (nvml)", block.prefix);
        let gpu = match nvml_device(&nvml, block.device, &what) {
            Ok(gpu) => gpu,
            Err(why) => {
                note(block.prefix, &why);
                return Ok(());
            }
        };
        if block.min < MIN_BLOCK {
            eprintln!(
                "note: {} energy (nvml): --energy {:?} is shorter than {MIN_BLOCK:?}, a counter \
                 step (~100 ms) is over 2% of the block",
                block.prefix, block.min
            );
        }
        let batch = batch_size(block.m);
        let mut run_batch = || -> Result<usize, Failure> {
            // every result lives until the sync: burn's Fusion skips work whose output is
            // dropped unread
            let outs: Vec<Tensor<2>> = (0..batch)
                .map(|_| block.a.clone().matmul(block.b.clone()))
                .collect();
            sync(block)?;
            drop(outs);
            Ok(batch)
        };
        sync(block)?; // nothing queued: the idle interval is idle
        let mut meter = Nvml {
            gpu: &gpu,
            start: Instant::now(),
        };
        let start_mhz = sm.start(); // before the idle part, as bench_py
        let measured = measure(&mut meter, &mut run_batch, block.min, IDLE)?;
        let clocks = sm.ends(start_mhz);
        match measured {
            Ok(r) => {
                println!(
                    "{}",
                    energy_line(block.prefix, r.millijoules, r.runs, r.wall)
                );
                if let Some(line) = more_line(block.prefix, &r, block.kernel) {
                    println!("{line}");
                }
                sm.print("energy (nvml)", clocks);
            }
            Err(NoReading::Stuck(why) | NoReading::Unread(why)) => note(block.prefix, &why),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{batch_size, measure, more_line, Meter, NoReading, Reading, IDLE};
    use crate::Failure;

    const STEP_NS: u64 = 100_000_000; // NVML's counter moves every 100 ms

    /// A GPU drawing `idle_w` watts, `busy_w` while a batch runs; its counter (mJ) moves every
    /// 100 ms, each read costs 20 µs, a batch `batch_ns`.
    struct Fake {
        t: u64,
        idle_w: f64,
        busy_w: f64,
        batch_ns: u64,
        busy: Vec<(u64, u64)>,
        stuck_after: Option<u64>,
        unread: bool,
    }

    impl Fake {
        fn new() -> Self {
            Fake {
                // starts between two updates, as a real block does
                t: 37_000_000,
                idle_w: 120.0,
                busy_w: 600.0,
                batch_ns: 10_000_000,
                busy: Vec::new(),
                stuck_after: None,
                unread: false,
            }
        }

        fn energy_mj(&self, t: u64) -> u64 {
            let busy_ns: u64 = self
                .busy
                .iter()
                .map(|&(a, b)| b.min(t).saturating_sub(a))
                .sum();
            let j =
                self.idle_w * t as f64 / 1e9 + (self.busy_w - self.idle_w) * busy_ns as f64 / 1e9;
            (j * 1000.0) as u64
        }

        fn batch(&mut self) -> Result<usize, Failure> {
            self.busy.push((self.t, self.t + self.batch_ns));
            self.t += self.batch_ns;
            Ok(100)
        }
    }

    impl Meter for Fake {
        fn read_mj(&mut self) -> Result<u64, String> {
            if self.unread {
                return Err("no permission".into());
            }
            self.t += 20_000;
            let step = self.t / STEP_NS * STEP_NS;
            let frozen = self.stuck_after.map_or(step, |s| step.min(s));
            Ok(self.energy_mj(frozen))
        }

        fn now(&mut self) -> Duration {
            Duration::from_nanos(self.t)
        }

        fn sleep(&mut self, d: Duration) {
            self.t += d.as_nanos() as u64;
        }
    }

    fn block(fake: &mut Fake, min: Duration) -> Result<Result<Reading, NoReading>, Failure> {
        let cell = std::cell::RefCell::new(std::mem::replace(fake, Fake::new()));
        let mut meter = Shared(&cell);
        let mut run = || cell.borrow_mut().batch();
        let out = measure(&mut meter, &mut run, min, IDLE);
        *fake = cell.into_inner();
        out
    }

    /// The fake shared by the meter and the batch closure.
    struct Shared<'a>(&'a std::cell::RefCell<Fake>);

    impl Meter for Shared<'_> {
        fn read_mj(&mut self) -> Result<u64, String> {
            self.0.borrow_mut().read_mj()
        }
        fn now(&mut self) -> Duration {
            self.0.borrow_mut().now()
        }
        fn sleep(&mut self, d: Duration) {
            self.0.borrow_mut().sleep(d)
        }
    }

    #[test]
    fn batches_stay_under_a_gibibyte() {
        assert_eq!(batch_size(64), 100);
        assert_eq!(batch_size(1024), 100); // 100 x 4 MiB
        assert_eq!(batch_size(4096), 16); // 64 MiB each
        assert_eq!(batch_size(16384), 1); // 1 GiB each: one at a time
        assert_eq!(batch_size(65536), 1);
    }

    #[test]
    fn idle_power_first_then_a_block_of_whole_counter_steps() {
        let mut fake = Fake::new();
        let r = block(&mut fake, Duration::from_secs(5)).unwrap().unwrap();
        // idle: from one update to the first update >= 1 s later: whole steps of 120 W
        let watts = r.idle_watts().unwrap();
        assert!((watts - 120.0).abs() < 0.1, "{watts}");
        assert!(
            r.idle >= IDLE && r.idle < IDLE + Duration::from_millis(101),
            "{:?}",
            r.idle
        );
        // the block: starts and ends just after an update, so it spans whole steps
        let steps = r.wall.as_nanos() as f64 / STEP_NS as f64;
        assert!((steps - steps.round()).abs() < 0.01, "{:?}", r.wall);
        assert!(r.wall >= Duration::from_secs(5), "{:?}", r.wall);
        assert_eq!(r.runs % 100, 0);
        // every batch fell inside the block: net = 480 W over the busy time
        let busy_s = r.runs as f64 / 100.0 * 0.010;
        let net = r.net_joules().unwrap();
        assert!(
            (net - 480.0 * busy_s).abs() < 0.5,
            "net {net}, busy {busy_s} s"
        );
        let busy = r.busy(Some(Duration::from_micros(100))).unwrap();
        assert!((busy - busy_s / r.wall.as_secs_f64()).abs() < 1e-9);
        assert!(busy > 0.95 && busy <= 1.0, "{busy}");
        assert_eq!(r.busy(None), None);
    }

    #[test]
    fn a_counter_that_never_moves_is_a_note() {
        let mut fake = Fake::new();
        fake.stuck_after = Some(0);
        let out = block(&mut fake, Duration::from_secs(5)).unwrap();
        let Err(NoReading::Stuck(why)) = out else {
            panic!("{out:?}")
        };
        assert!(
            why.contains("did not move") && why.contains("idle start"),
            "{why}"
        );
    }

    #[test]
    fn a_counter_that_stops_during_the_block_is_a_note() {
        let mut fake = Fake::new();
        fake.stuck_after = Some(3 * STEP_NS * 10); // 3 s: after the idle part
        let out = block(&mut fake, Duration::from_secs(5)).unwrap();
        let Err(NoReading::Stuck(why)) = out else {
            panic!("{out:?}")
        };
        assert!(why.contains("block end"), "{why}");
    }

    #[test]
    fn an_unreadable_counter_is_a_note_and_a_failed_sync_a_failure() {
        let mut fake = Fake::new();
        fake.unread = true;
        let out = block(&mut fake, Duration::from_secs(5)).unwrap();
        assert_eq!(out, Err(NoReading::Unread("no permission".into())));
        let mut meter = Fake::new();
        let mut fail = || -> Result<usize, Failure> { Err(Failure::run("sync failed")) };
        assert!(measure(&mut meter, &mut fail, Duration::from_secs(5), IDLE).is_err());
    }

    #[test]
    fn the_second_line_reads_as_bench_pys() {
        let r = Reading {
            millijoules: 41_250,
            runs: 20_000,
            wall: Duration::from_millis(5102),
            idle_mj: 121_616,
            idle: Duration::from_millis(1003),
        };
        let line = more_line(
            "cuda 1024x1024 matmul",
            &r,
            Some(Duration::from_micros(250)),
        );
        assert_eq!(
            line.as_deref(),
            Some(
                "# energy cuda 1024x1024 matmul energy (nvml): idle 121.252 W over 1.003s, \
                 net -577.379 J, busy 0.980"
            )
        );
        let no_busy = more_line("cuda 1024x1024 matmul", &r, None).unwrap();
        assert!(no_busy.ends_with("J") && !no_busy.contains("busy"));
        let no_idle = Reading { idle_mj: 0, ..r };
        assert_eq!(more_line("x", &no_idle, None), None);
    }
}
