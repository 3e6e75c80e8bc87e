//! **Stub** of `cubecl-llvm` 0.11.3: the public API that `cubecl-cuda` 0.11.3 names, without
//! LLVM.
//!
//! # Why it exists
//!
//! `cubecl-cuda` 0.11.3 always depends on `cubecl-llvm` (feature `nvptx`), whatever backend it
//! is told to use. The real crate's build script (through `tracel-llvm-bundler` 23.1.0-4)
//! downloads a prebuilt LLVM 23.1 from `github.com/tracel-ai/tracel-llvm/releases`, so the CUDA
//! build fails on a machine that reaches crates.io but not github.com. `bench_rust/Cargo.toml`
//! puts this crate in its place with `[patch.crates-io]`.
//!
//! # Only with cubecl-cuda's `cpp` backend
//!
//! This crate is only ever used with `cubecl-cuda`'s `cpp` feature on (bench-core's `cuda`
//! feature enables it), which makes `CudaBackend::Cpp` the default: kernels are transpiled to
//! CUDA C++ by `cubecl-cpp` and compiled by NVRTC, as `cubecl-cuda` did before 0.11. With that
//! backend `cubecl-cuda` uses from here only [`PtxVersion`](nvptx::ptx_version::PtxVersion)
//! (the real code, for its compilation options and cache namespace) and the types of its
//! `CudaCompiler::Llvm` variant. [`PlironCompiler::compile`] always returns a
//! [`CompilationError`]; [`restrict_features`](shared::lowered_features::restrict_features) is
//! the real code, though `cubecl-cuda` calls it only when the LLVM backend is selected.
//!
//! # Origin and licence
//!
//! `src/nvptx/ptx_version.rs` is copied verbatim from cubecl-llvm 0.11.3
//! (crates.io, `src/nvptx/ptx_version.rs`), and `src/shared/lowered_features.rs` verbatim from
//! its `src/shared/lowered_features.rs` without the two test modules at its end (they need the
//! LLVM backend's offline kernels). The type definitions below follow
//! cubecl-llvm 0.11.3's `src/shared/base.rs` and `src/target.rs`, reduced to what cubecl-cuda
//! uses. cubecl is © Nathaniel Simard & CubeCL Framework Contributors, MIT OR Apache-2.0
//! (`LICENSE-MIT`, `LICENSE-APACHE`); this crate is under the same terms.

#[cfg(feature = "nvptx")]
pub mod nvptx {
    //! NVPTX target: only the PTX version table.

    pub mod ptx_version;
}

pub mod shared {
    //! What the real crate's `shared` module offers to runtimes: the feature narrowing.

    #[cfg(any(feature = "amdgpu", feature = "nvptx"))]
    pub mod lowered_features;
}

use cubecl_core::ir::amd::GfxArch;
#[cfg(feature = "nvptx")]
use cubecl_core::ir::nvidia::SmArch;
use cubecl_core::prelude::KernelDefinition;
use cubecl_environment::backtrace::BackTrace;
use cubecl_runtime::compiler::{CompilationError, Compiler};
use cubecl_runtime::kernel::BufferIOAttr;

/// What the stub answers to every compilation.
pub const NOT_AVAILABLE: &str = "the LLVM backend is not available in this build \
    (cubecl-llvm stub); cubecl-cuda runs its CUDA C++/NVRTC backend";

/// LLVM compilation targets (as in cubecl-llvm 0.11.3's `target.rs`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LlvmTarget {
    #[default]
    Cpu,
    #[cfg(feature = "nvptx")]
    Nvptx,
}

impl LlvmTarget {
    /// Whether the target provides a hardware launch grid.
    pub fn is_gpu(self) -> bool {
        !matches!(self, LlvmTarget::Cpu)
    }
}

/// The LLVM compiler. Here it compiles nothing: [`Compiler::compile`] always fails.
#[derive(Clone, Debug, Default)]
pub struct PlironCompiler {
    pub target: LlvmTarget,
}

/// Compilation options, with the fields of cubecl-llvm 0.11.3 (none of them is read here).
#[derive(Clone, Debug, Default)]
pub struct PlironOptions {
    /// Minimum CPU buffer alignment, including view offsets. Must be a power of two.
    /// `None` makes no alignment promise.
    pub cpu_buffer_alignment: Option<u32>,
    /// AMDGPU architecture, or `None` for other targets.
    pub arch: Option<GfxArch>,
    /// CPU f16 evaluation precision.
    pub f16_evaluation: cubecl_runtime::config::compilation::F16Evaluation,
    /// NVPTX architecture, or `None` for other targets.
    #[cfg(feature = "nvptx")]
    pub sm_arch: Option<SmArch>,
    /// PTX version to emit, or `None` for the oldest the architecture accepts.
    #[cfg(feature = "nvptx")]
    pub ptx_version: Option<nvptx::ptx_version::PtxVersion>,
    /// Pass scalars and static metadata in the kernel parameter block.
    /// The host must use the same layout.
    pub grid_constants: bool,
}

/// Compiled PTX module (never produced by the stub).
#[cfg(feature = "nvptx")]
#[derive(Clone, Debug)]
pub struct NvptxModule {
    /// NUL-terminated PTX assembly.
    pub ptx: Vec<core::ffi::c_char>,
    /// Kernel entry point symbol.
    pub entrypoint: String,
    /// IR for logging and cache keys.
    pub ir: String,
    /// Shared memory required per launch, in bytes.
    pub shared_memory_size: usize,
    /// Buffer access modes in binding order.
    pub io: Vec<BufferIOAttr>,
}

/// Compiled kernel artifact (never produced by the stub). The real crate also has a CPU JIT
/// variant; without it this enum would have no variant at all in a build without `nvptx`.
#[derive(Clone, Debug)]
pub enum PlironArtifact {
    #[cfg(feature = "nvptx")]
    NvptxCode(NvptxModule),
    /// Stands in for the real crate's other variants; never constructed.
    #[doc(hidden)]
    Unavailable,
}

impl core::fmt::Display for PlironArtifact {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            #[cfg(feature = "nvptx")]
            PlironArtifact::NvptxCode(module) => write!(f, "{}", module.ir),
            PlironArtifact::Unavailable => f.write_str(NOT_AVAILABLE),
        }
    }
}

impl Compiler for PlironCompiler {
    type Representation = PlironArtifact;
    type CompilationOptions = PlironOptions;

    fn buffer_io(repr: &Self::Representation) -> Option<Vec<BufferIOAttr>> {
        match repr {
            #[cfg(feature = "nvptx")]
            PlironArtifact::NvptxCode(module) => Some(module.io.clone()),
            PlironArtifact::Unavailable => None,
        }
    }

    fn compile(
        &mut self,
        _kernel: KernelDefinition,
        _compilation_options: &Self::CompilationOptions,
    ) -> Result<Self::Representation, CompilationError> {
        Err(CompilationError::Generic {
            reason: NOT_AVAILABLE.to_string(),
            backtrace: BackTrace::capture(),
        })
    }

    fn extension(&self) -> &'static str {
        match self.target {
            LlvmTarget::Cpu => "plir",
            #[cfg(feature = "nvptx")]
            LlvmTarget::Nvptx => "ll",
        }
    }

    fn lang_tag(&self) -> &'static str {
        match self.target {
            LlvmTarget::Cpu => "mlir",
            #[cfg(feature = "nvptx")]
            LlvmTarget::Nvptx => "llvm",
        }
    }
}
