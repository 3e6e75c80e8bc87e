//! The energy block of mm mode (`--energy SECONDS`, docs/LINES.md): matmuls run back to back
//! for at least SECONDS, NVML's total-energy counter (mJ) read before and after, one
//! `... energy (nvml): J.JJJ J, N runs, DUR` line. Only CUDA builds link the NVML binding
//! (nvml-wrapper, which loads libnvidia-ml.so.1 at run time, so the binary still starts where
//! no NVIDIA driver is installed); where NVML cannot answer, a `note:` on stderr and no line.

use std::time::Duration;

use burn::prelude::{Device, Tensor};

use crate::args::DeviceName;
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

/// Runs the block on `dev`; NVML answers for CUDA devices only.
pub(crate) fn run(dev: DeviceName, block: &Block) -> Result<(), Failure> {
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
        nvml::run(block)
    }
    #[cfg(not(feature = "cuda"))]
    {
        // Unreachable in practice: without the feature the CUDA device fails at init.
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
    use nvml_wrapper::{Device as NvmlDevice, Nvml};

    use super::{batch_size, note, Block};
    use crate::format::energy_line;
    use crate::Failure;

    /// Gives up (note, no line) when the counter has not moved after this long beyond SECONDS.
    const STUCK_AFTER: Duration = Duration::from_secs(10);

    /// The NVML device of the CUDA device: by the PCI bus id cubecl read from the driver
    /// (`cuDeviceGetPCIBusId`, cubecl-cuda-0.11.3/src/runtime.rs:497-521), the key cubecl's own
    /// NVML counter uses (cubecl-monitoring-0.11.3/src/gpu_utilization/nvml.rs:19-25), so
    /// CUDA_VISIBLE_DEVICES reordering cannot pick another card; NVML index 0 (with a note)
    /// only when cubecl has no bus id.
    fn pick<'n>(nvml: &'n Nvml, block: &Block) -> Option<NvmlDevice<'n>> {
        let pci = block
            .device
            .identity()
            .and_then(|id| id.physical)
            .and_then(|p| p.pci_address);
        let found = match pci {
            Some(addr) => nvml.device_by_pci_bus_id(addr.to_string()).map_err(|e| {
                format!("no NVML device at the CUDA device's PCI bus id {addr} ({e})")
            }),
            None => {
                eprintln!(
                    "note: {} energy (nvml): cubecl reports no PCI bus id for the CUDA device; \
                     NVML device 0 is read",
                    block.prefix
                );
                nvml.device_by_index(0)
                    .map_err(|e| format!("NVML device 0 not found ({e})"))
            }
        };
        found.map_err(|what| note(block.prefix, &what)).ok()
    }

    fn counter(gpu: &NvmlDevice, prefix: &str) -> Option<u64> {
        gpu.total_energy_consumption()
            .map_err(|e| {
                let why = match e {
                    NvmlError::NotSupported => "this GPU has no total-energy counter".to_string(),
                    e => format!("reading the total-energy counter failed ({e})"),
                };
                note(prefix, &why)
            })
            .ok()
    }

    fn sync(block: &Block) -> Result<(), Failure> {
        block
            .device
            .sync()
            .map_err(|e| Failure::run(format!("{}: sync failed (energy block): {e}", block.label)))
    }

    pub(super) fn run(block: &Block) -> Result<(), Failure> {
        let nvml = match Nvml::init() {
            Ok(n) => n,
            Err(e) => {
                note(block.prefix, &format!("NVML not available ({e})"));
                return Ok(());
            }
        };
        let Some(gpu) = pick(&nvml, block) else {
            return Ok(());
        };
        let batch = batch_size(block.m);
        sync(block)?;
        let start = Instant::now();
        let Some(before) = counter(&gpu, block.prefix) else {
            return Ok(());
        };
        let mut runs = 0usize;
        let (wall, after) = loop {
            let outs: Vec<Tensor<2>> = (0..batch)
                .map(|_| block.a.clone().matmul(block.b.clone()))
                .collect();
            runs += batch;
            sync(block)?;
            let wall = start.elapsed();
            drop(outs);
            if wall < block.min {
                continue;
            }
            // The counter is only read once the time is up: the GPU idles while it is read.
            let Some(now) = counter(&gpu, block.prefix) else {
                return Ok(());
            };
            if now != before {
                break (wall, now);
            }
            if wall >= block.min + STUCK_AFTER {
                note(
                    block.prefix,
                    &format!("the energy counter did not move in {wall:.3?} ({runs} runs)"),
                );
                return Ok(());
            }
        };
        let Some(mj) = after.checked_sub(before) else {
            note(
                block.prefix,
                &format!("the energy counter went back ({before} -> {after} mJ)"),
            );
            return Ok(());
        };
        println!("{}", energy_line(block.prefix, mj, runs, wall));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::batch_size;

    #[test]
    fn batches_stay_under_a_gibibyte() {
        assert_eq!(batch_size(64), 100);
        assert_eq!(batch_size(1024), 100); // 100 x 4 MiB
        assert_eq!(batch_size(4096), 16); // 64 MiB each
        assert_eq!(batch_size(16384), 1); // 1 GiB each: one at a time
        assert_eq!(batch_size(65536), 1);
    }
}
