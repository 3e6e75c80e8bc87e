//! The profile window of mm mode (`--profile-window`, docs/LINES.md): one more block of `--reps`
//! matmuls, each kept alive until its `device.sync()`, between the CUDA profiler API's
//! `cuProfilerStart` and `cuProfilerStop`, so that a profiler started with
//! `--profile-from-start off` (Nsight Compute's profile runs) sees exactly these kernels and
//! not device init, the inputs, autotune or the read-back's `sum`. Prints nothing: the
//! profiler's output is the figure. Only CUDA builds link the call (cudarc's driver API, the
//! same cudarc cubecl-cuda uses, loaded at run time); elsewhere a `note:` on stderr.

use burn::prelude::{Device, Tensor};

use crate::args::DeviceName;
use crate::Failure;

/// The matmuls of the window and their device.
// Read only by the CUDA code.
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
pub(crate) struct Window<'a> {
    pub device: &'a Device,
    pub label: &'a str,
    pub a: &'a Tensor<2>,
    pub b: &'a Tensor<2>,
    pub reps: usize,
}

/// The note printed where no CUDA profiler API exists (Flex, Metal, Vulkan).
pub fn no_window_note(label: &str) -> String {
    format!("note: --profile-window: no CUDA profiler API on {label}; no window marked")
}

/// Runs the window on `dev` (CUDA only; elsewhere the note).
pub(crate) fn run(dev: DeviceName, w: &Window) -> Result<(), Failure> {
    if dev != DeviceName::Cuda {
        eprintln!("{}", no_window_note(w.label));
        return Ok(());
    }
    #[cfg(feature = "cuda")]
    {
        cuda::run(w)
    }
    #[cfg(not(feature = "cuda"))]
    {
        // Unreachable in practice: without the feature the CUDA device fails at init.
        eprintln!("{}", no_window_note(w.label));
        Ok(())
    }
}

#[cfg(feature = "cuda")]
mod cuda {
    use cudarc::driver::result::{ctx, device, init, primary_ctx, DriverError};
    use cudarc::driver::{profiler_start, profiler_stop};

    use super::Window;
    use crate::Failure;

    fn failed(label: &str, what: &str, e: DriverError) -> Failure {
        Failure::run(format!("{label}: --profile-window: {what} failed: {e:?}"))
    }

    /// Makes device 0's primary context current on this (the calling) thread.
    ///
    /// Why: `cuProfilerStart`/`cuProfilerStop` act on the calling thread's current context. burn
    /// never makes one current here: cubecl-cuda 0.11.3 opens the device on its own server
    /// thread (cubecl-common-0.11.3/src/device/handle/channel.rs spawns it), where it retains
    /// device 0's *primary* context and sets it current (cubecl-cuda-0.11.3/src/runtime.rs:
    /// 115-121, `primary_ctx::retain` + `ctx::set_current`), and every launch uses that context
    /// (compute/context.rs:155-159). cubecl exposes neither the context nor a profiler call, so
    /// this thread retains the same primary context (one per device: retaining it again returns
    /// that context, refcount + 1) and makes it current. `Device::cuda(0)` is ordinal 0.
    /// The reference is kept for the rest of the process (cubecl holds its own anyway).
    fn primary_context_current(label: &str) -> Result<(), Failure> {
        init().map_err(|e| failed(label, "cuInit", e))?;
        let dev = device::get(0).map_err(|e| failed(label, "cuDeviceGet(0)", e))?;
        // SAFETY: `dev` comes from `device::get`; the retained primary context is valid for
        // the process (never released here), so making it current is sound.
        unsafe {
            let c = primary_ctx::retain(dev)
                .map_err(|e| failed(label, "cuDevicePrimaryCtxRetain", e))?;
            ctx::set_current(c).map_err(|e| failed(label, "cuCtxSetCurrent", e))?;
        }
        Ok(())
    }

    pub(super) fn run(w: &Window) -> Result<(), Failure> {
        let sync = |what: &str| {
            w.device.sync().map_err(|e| {
                Failure::run(format!(
                    "{}: sync failed (--profile-window, {what}): {e}",
                    w.label
                ))
            })
        };
        // Everything queued by earlier blocks runs (and ends) before the window opens.
        sync("before the window")?;
        primary_context_current(w.label)?;
        profiler_start().map_err(|e| failed(w.label, "cuProfilerStart", e))?;
        let body = || -> Result<(), Failure> {
            for _ in 0..w.reps {
                // Kept alive until its sync: burn's Fusion skips work whose output is dropped.
                let c = w.a.clone().matmul(w.b.clone());
                sync("in the window")?;
                drop(c);
            }
            Ok(())
        };
        let r = body();
        // Stopped even when a sync failed, so a profiler is never left collecting.
        let stopped = profiler_stop().map_err(|e| failed(w.label, "cuProfilerStop", e));
        r?;
        stopped
    }
}
