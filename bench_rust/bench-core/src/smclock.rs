//! The SM clock at the start and end of each timed block of mm mode (docs/LINES.md, "SM clock
//! per timed block"): one NVML read right before a block's first timed call and one right after
//! its last (outside every timed interval: a read is a driver call of some µs), printed after
//! the block's summary as `# sm clock LABEL SHAPE matmul METHOD: start N MHz, end N MHz`, so a
//! figure taken while the clock ramped or was held down can be told apart. The twin of
//! bench_py's `bench_core/smclock.py`. Only CUDA builds link NVML (nvml-wrapper, loaded at run
//! time, as the energy block); the NVML device is the one cubecl opened, matched by PCI bus id
//! (`energy::nvml_device`). Where NVML cannot answer, one `note:` on stderr and no lines (the
//! figures are unchanged); off CUDA (Flex, Metal, Vulkan) no lines and no note, as bench_py
//! off CUDA. The reading logic is plain code over a reader closure, unit-tested with a fake
//! clock in every build.

use burn::prelude::Device;

use crate::args::DeviceName;

/// Reads the SM clock in MHz, or says why it cannot.
pub(crate) type ReadMhz<'a> = Box<dyn FnMut() -> Result<u32, String> + 'a>;

/// NVML gives MHz; anything above this is not a clock (bench_py's bound).
const MAX_MHZ: u32 = 100_000;

/// The SM clock of the timed device, or nothing (`read()` is then always None).
pub(crate) struct SmClock<'a> {
    read: Option<ReadMhz<'a>>,
    /// `LABEL SHAPE matmul`, for the lines and the note.
    prefix: String,
}

/// A block's clock at its two ends (either None where it could not be read).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Ends {
    pub start: Option<u32>,
    pub end: Option<u32>,
}

impl<'a> SmClock<'a> {
    /// A clock that reads nothing (off CUDA, or NVML unavailable).
    pub fn none(prefix: &str) -> SmClock<'static> {
        SmClock {
            read: None,
            prefix: prefix.to_string(),
        }
    }

    // Only CUDA builds read NVML (and the tests a fake).
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    pub fn new(prefix: &str, read: ReadMhz<'a>) -> Self {
        SmClock {
            read: Some(read),
            prefix: prefix.to_string(),
        }
    }

    /// The clock now; None where it cannot be read. A failing read is noted once and ends
    /// the reading for the rest of the run (NVML stopped answering: no more lines, never a
    /// failed run); a value beyond any clock is None, the reads go on.
    pub fn read(&mut self) -> Option<u32> {
        let read = self.read.as_mut()?;
        match read() {
            Ok(mhz) => (mhz <= MAX_MHZ).then_some(mhz),
            Err(why) => {
                eprintln!("{}", no_lines_note(&self.prefix, &why));
                self.read = None;
                None
            }
        }
    }

    /// The start of a block: read right before its first timed call.
    pub fn start(&mut self) -> Option<u32> {
        self.read()
    }

    /// The end of a block begun at `start`: read right after its last timed call.
    pub fn ends(&mut self, start: Option<u32>) -> Ends {
        Ends {
            start,
            end: self.read(),
        }
    }

    /// Prints the block's `# sm clock` line, where both ends were read.
    pub fn print(&self, method: &str, ends: Ends) {
        if let Some(line) = clock_line(&self.prefix, method, ends) {
            println!("{line}");
        }
    }
}

/// `# sm clock LABEL SHAPE matmul METHOD: start N MHz, end N MHz`; None unless both were read.
pub(crate) fn clock_line(prefix: &str, method: &str, ends: Ends) -> Option<String> {
    let (start, end) = (ends.start?, ends.end?);
    Some(format!(
        "# sm clock {prefix} {method}: start {start} MHz, end {end} MHz"
    ))
}

/// The one note where the SM clock cannot be read.
pub(crate) fn no_lines_note(prefix: &str, why: &str) -> String {
    format!("note: {prefix} sm clock (nvml): {why}; no `# sm clock` lines")
}

/// Runs `f` with the SM clock of `device` (NVML, CUDA builds and the CUDA device only; a clock
/// that reads nothing elsewhere). NVML stays open while `f` runs.
pub(crate) fn with_clock<T>(
    dev: DeviceName,
    device: &Device,
    prefix: &str,
    f: impl FnOnce(&mut SmClock) -> T,
) -> T {
    if dev != DeviceName::Cuda {
        return f(&mut SmClock::none(prefix));
    }
    #[cfg(feature = "cuda")]
    {
        nvml::with_clock(device, prefix, f)
    }
    #[cfg(not(feature = "cuda"))]
    {
        // Unreachable in practice: without the feature the CUDA device fails at init.
        let _ = device;
        eprintln!(
            "{}",
            no_lines_note(
                prefix,
                "this build has no CUDA (NVML is only linked with --features cuda)"
            )
        );
        f(&mut SmClock::none(prefix))
    }
}

#[cfg(feature = "cuda")]
mod nvml {
    use burn::prelude::Device;
    use nvml_wrapper::enum_wrappers::device::Clock;
    use nvml_wrapper::error::NvmlError;
    use nvml_wrapper::Nvml;

    use super::{no_lines_note, SmClock};
    use crate::energy::nvml_device;

    pub(super) fn with_clock<T>(
        device: &Device,
        prefix: &str,
        f: impl FnOnce(&mut SmClock) -> T,
    ) -> T {
        let nvml = match Nvml::init() {
            Ok(n) => n,
            Err(e) => {
                eprintln!(
                    "{}",
                    no_lines_note(prefix, &format!("NVML not available ({e})"))
                );
                return f(&mut SmClock::none(prefix));
            }
        };
        let gpu = match nvml_device(&nvml, device, &format!("{prefix} sm clock (nvml)")) {
            Ok(gpu) => gpu,
            Err(why) => {
                eprintln!("{}", no_lines_note(prefix, &why));
                return f(&mut SmClock::none(prefix));
            }
        };
        let read = move || {
            gpu.clock_info(Clock::SM).map_err(|e| match e {
                NvmlError::NotSupported => "this GPU does not report its SM clock".to_string(),
                e => format!("reading the SM clock failed ({e})"),
            })
        };
        let mut clock = SmClock::new(prefix, Box::new(read));
        f(&mut clock)
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::rc::Rc;

    use super::{clock_line, no_lines_note, Ends, SmClock};

    const PREFIX: &str = "cuda 1024x1024 matmul";

    /// A clock that gives `values` in turn, then fails (counting every call).
    fn fake(values: Vec<Result<u32, String>>, calls: Rc<Cell<usize>>) -> SmClock<'static> {
        let mut values = values.into_iter();
        SmClock::new(
            PREFIX,
            Box::new(move || {
                calls.set(calls.get() + 1);
                values.next().unwrap_or_else(|| Err("no more".into()))
            }),
        )
    }

    #[test]
    fn a_block_reads_both_ends_and_prints_bench_pys_line() {
        let calls = Rc::new(Cell::new(0));
        let mut sm = fake(vec![Ok(1980), Ok(1755)], calls.clone());
        let start = sm.start();
        let ends = sm.ends(start);
        assert_eq!(
            ends,
            Ends {
                start: Some(1980),
                end: Some(1755)
            }
        );
        assert_eq!(calls.get(), 2);
        assert_eq!(
            clock_line(PREFIX, "with sync", ends).as_deref(),
            Some("# sm clock cuda 1024x1024 matmul with sync: start 1980 MHz, end 1755 MHz")
        );
        assert_eq!(
            clock_line(PREFIX, "device time (profile_with flush, queued)", ends).as_deref(),
            Some(
                "# sm clock cuda 1024x1024 matmul device time (profile_with flush, queued): \
                 start 1980 MHz, end 1755 MHz"
            )
        );
    }

    #[test]
    fn a_failing_read_stops_the_reading_and_leaves_no_line() {
        let calls = Rc::new(Cell::new(0));
        let mut sm = fake(vec![Ok(1980), Err("GPU is lost".into())], calls.clone());
        let start = sm.start();
        let ends = sm.ends(start);
        assert_eq!(
            ends,
            Ends {
                start: Some(1980),
                end: None
            }
        );
        assert_eq!(clock_line(PREFIX, "no sync", ends), None);
        // noted once: NVML is not asked again
        assert_eq!(sm.read(), None);
        assert_eq!(sm.read(), None);
        assert_eq!(calls.get(), 2);
        assert_eq!(
            no_lines_note(PREFIX, "GPU is lost"),
            "note: cuda 1024x1024 matmul sm clock (nvml): GPU is lost; no `# sm clock` lines"
        );
    }

    #[test]
    fn a_value_beyond_any_clock_is_no_reading_and_the_reads_go_on() {
        let calls = Rc::new(Cell::new(0));
        let mut sm = fake(vec![Ok(u32::MAX), Ok(1980), Ok(0)], calls.clone());
        assert_eq!(sm.read(), None);
        assert_eq!(sm.read(), Some(1980));
        assert_eq!(sm.read(), Some(0));
        assert_eq!(calls.get(), 3);
    }

    #[test]
    fn no_clock_reads_nothing() {
        let mut sm = SmClock::none(PREFIX);
        let start = sm.start();
        assert_eq!(
            sm.ends(start),
            Ends {
                start: None,
                end: None
            }
        );
        assert_eq!(clock_line(PREFIX, "with sync", sm.ends(None)), None);
    }
}
