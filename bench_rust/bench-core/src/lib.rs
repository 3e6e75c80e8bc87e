//! All benchmark code of the timing chapter, shared by the three binaries `exec-gpu`,
//! `exec-cpu` and `exec-amx`, which differ only in the burn features they compile in.
//! The printed lines and the command line follow `docs/LINES.md`.
//!
//! # Where the autotune cache lives (cubecl 0.11.3, pulled by burn 0.22.1)
//!
//! cubecl keeps autotune results (and compiled kernels) in one database file,
//! `<root>/<name>.db` (`cubecl-environment-0.11.3/src/environment.rs:208-233`), with
//! `<name>` = `default` unless `CUBECL_ENVIRONMENT` (or `[environment] name`) says otherwise.
//! `<root>` comes from the first `cubecl.toml`/`CubeCL.toml` (or `[cubecl]` in
//! `burn.toml`/`Burn.toml`) found walking up from the current directory
//! (`cubecl-runtime-0.11.3/src/config/base.rs:54-70`,
//! `cubecl-environment-0.11.3/src/config/mod.rs:170-196`), key `[environment] path`, default
//! `"target"`: `<outermost folder holding a Cargo.toml, walking up from the process's current
//! working directory>/target/environment`; with no Cargo.toml above the cwd,
//! `$XDG_CACHE_HOME/cubecl` or `~/.cache/cubecl` (also on macOS)
//! (`cubecl-environment-0.11.3/src/persistence/root.rs:41-105`). Deleting that
//! `target/environment` folder makes the next run cold. No environment variable sets the path;
//! `CUBECL_AUTOTUNE_CACHE=0` keeps autotune results in memory only (config/base.rs:177-194).
//! Compiled kernels go there too only with `[compilation] cache = true` (default false).
//! The Flex device does not use cubecl and has no such cache.

use std::ffi::OsString;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Mutex;

pub mod args;
mod bench;
mod energy;
pub mod format;
pub mod npy;
pub mod queued;
mod smclock;
pub mod window;

/// The burn version this crate is pinned to (`burn = "=0.22.1"` in Cargo.toml).
pub const BURN_VERSION: &str = "0.22.1";

/// An expected failure: one `error: ...` line on stderr and this exit code.
#[derive(Debug)]
pub struct Failure {
    pub code: i32,
    pub message: String,
}

impl Failure {
    /// Exit status 1: the run could not be done (device, sync, I/O).
    pub fn run(message: impl Into<String>) -> Self {
        Failure {
            code: 1,
            message: one_line(&message.into()),
        }
    }
    /// Exit status 2: bad arguments.
    pub fn usage(message: impl Into<String>) -> Self {
        Failure {
            code: 2,
            message: one_line(&message.into()),
        }
    }
}

/// Collapses a multi-line message (burn's errors carry `\nCaused by:\n ...`) into one line.
pub fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The burn features compiled into this build, in a fixed order. `default` stands for burn's
/// default features (which, with `flex`, also turn on burn-flex's std, simd and rayon).
pub fn burn_features() -> Vec<&'static str> {
    let mut f = Vec::new();
    let flags = [
        (cfg!(feature = "burn-default"), "default"),
        (cfg!(feature = "std"), "std"),
        (cfg!(feature = "flex"), "flex"),
        (cfg!(feature = "simd"), "simd"),
        (cfg!(feature = "rayon"), "rayon"),
        (cfg!(feature = "cuda"), "cuda"),
        // cubecl-cuda's `cpp` feature, always on with `cuda` here: kernels are compiled by
        // NVRTC from CUDA C++ (cubecl's LLVM backend is not built, see bench_rust/README.md).
        (cfg!(feature = "cuda"), "cuda-nvrtc"),
        (cfg!(feature = "metal"), "metal"),
        (cfg!(feature = "vulkan"), "vulkan"),
        (cfg!(feature = "x86-v4"), "x86-v4"),
        (cfg!(feature = "apple-amx"), "apple-amx"),
        (cfg!(feature = "accelerate"), "accelerate"),
    ];
    for (on, name) in flags {
        if on {
            f.push(name);
        }
    }
    f
}

/// Threads of rayon's global pool (RAYON_NUM_THREADS), 1 in a build without rayon.
pub fn rayon_threads() -> usize {
    #[cfg(feature = "rayon")]
    {
        rayon::current_num_threads()
    }
    #[cfg(not(feature = "rayon"))]
    {
        1
    }
}

/// `burn 0.22.1, features [std, flex], rayon threads 1`
pub fn header_line() -> String {
    format!(
        "burn {}, features [{}], rayon threads {}",
        BURN_VERSION,
        burn_features().join(", "),
        rayon_threads()
    )
}

/// What the build knows of its f32 matmul arithmetic, for `--device dev`; printed right after
/// [`header_line`], before device init (docs/LINES.md):
///
/// - `burn precision fp32` on Flex: the gemm crate multiplies and accumulates in f32.
/// - `burn precision unknown (REASON)` on cubecl devices: cubecl's autotune picks the matmul
///   kernel at run time, so the program cannot know whether it ran on TF32 tensor cores.
///   On CUDA (cubecl-cuda 0.11.3, cubek-matmul 0.3.1, burn-cubecl 0.22.1):
///   * cubecl-cuda-0.11.3/src/runtime.rs:261-264 registers `FloatKind::TF32` as a supported
///     type when the compute capability is >= 80;
///   * cubek-matmul-0.3.1/src/multi_level/definition/blueprint.rs:88-114 (`adjust_dtypes`)
///     turns f32 inputs into tf32 stage and register types for every tile matmul that needs
///     an accelerator (cmma / mma), whenever the device supports tf32;
///   * burn-cubecl-0.22.1/src/kernel/matmul/tune/base.rs:42-68 checks tensor-core support on
///     those promoted types, and 102-118 gives the `accelerated` group the top priority for a
///     large general matmul, so the tensor-core (TF32) kernels are benchmarked first.
///   Without autotune, cubek's default strategy tries `SimpleCyclicCmma` first
///   (cubek-matmul-0.3.1/src/strategy.rs:74-98). No environment variable, config key or API
///   of these crates turns the promotion off (see bench_rust/README.md, "Matmul precision").
///   cubecl-wgpu (Metal, Vulkan) registers no TF32 type, but its kernel is still autotune's
///   choice. The compute capability is only known once the device is open, so the header
///   cannot name it; a `note:` after device init does (CUDA).
pub fn precision_line(device: args::DeviceName) -> String {
    use args::DeviceName;
    match device {
        DeviceName::Flex => "burn precision fp32".into(),
        DeviceName::Cuda => "burn precision unknown (cubecl's autotune picks the kernel; \
                             cubecl enables TF32 tensor cores on sm >= 80)"
            .into(),
        DeviceName::Metal | DeviceName::Vulkan => {
            "burn precision unknown (cubecl's autotune picks the kernel; \
             cubecl-wgpu registers no TF32)"
                .into()
        }
    }
}

/// `note: cuda: NVIDIA H200, sm 90: ...` from cubecl's device identity (its fingerprint is
/// `ptx_sm{major}{minor}`, cubecl-cuda-0.11.3/src/runtime.rs:205); `None` for another form.
pub fn arch_note(label: &str, name: &str, fingerprint: &str) -> Option<String> {
    let sm: u32 = fingerprint.strip_prefix("ptx_sm")?.parse().ok()?;
    let what = if sm >= 80 {
        "cubecl may run f32 matmuls on TF32 tensor cores (it enables TF32 on sm >= 80)"
    } else {
        "cubecl enables no TF32 below sm 80"
    };
    Some(format!("note: {label}: {name}, sm {sm}: {what}"))
}

/// The cubecl-cuda version this crate pins (`cubecl-cuda = "=0.11.3"` in Cargo.toml), the one
/// burn 0.22.1 pulls.
pub const CUBECL_CUDA_VERSION: &str = "0.11.3";

/// The provenance line of the CUDA backend, printed after the precision line when the device
/// is `cuda` (docs/LINES.md, "Header lines of the arithmetic"):
/// `burn backend cubecl-cuda 0.11.3, compiler nvrtc (...)`. This build's cubecl-cuda compiles
/// kernels as CUDA C++ with NVRTC at run time (its `cpp` feature, turned on by bench-core's
/// `cuda`), because cubecl-llvm is patched out (a stub: its LLVM compiler always fails), so
/// no kernel of this build comes from cubecl's LLVM backend (bench_rust/README.md). `None` for
/// any other device, and in a build without the `cuda` feature.
pub fn backend_line(device: args::DeviceName) -> Option<String> {
    (device == args::DeviceName::Cuda && cfg!(feature = "cuda")).then(cuda_backend_line)
}

/// The text of [`backend_line`] for a CUDA build.
pub fn cuda_backend_line() -> String {
    format!(
        "burn backend cubecl-cuda {CUBECL_CUDA_VERSION}, compiler nvrtc (CUDA C++ compiled at \
         run time; cubecl-llvm patched out: no LLVM backend)"
    )
}

/// The label of the Flex device in this build: `flex(template)` (no burn default features:
/// exec-cpu), `flex` (exec-gpu), `flex+x86-v4` / `flex+apple-amx` / `flex+accelerate` (exec-amx).
pub fn flex_label() -> String {
    let mut l = String::from(if cfg!(feature = "burn-default") {
        "flex"
    } else {
        "flex(template)"
    });
    if cfg!(feature = "x86-v4") {
        l.push_str("+x86-v4");
    }
    if cfg!(feature = "apple-amx") {
        l.push_str("+apple-amx");
    }
    if cfg!(feature = "accelerate") {
        // burn's `accelerate` reaches only the ndarray backend: Flex runs the same code as
        // without it, but the build is a different one, so the label says so.
        l.push_str("+accelerate");
    }
    l
}

static PANICS: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Replaces the panic hook: panics (in any thread, e.g. inside burn/cubecl while a GPU
/// initializes) are recorded, not printed, so that the caller reports one `error:` line.
/// With BENCH_PANIC_VERBOSE=1 the default hook still prints them (message and, per
/// RUST_BACKTRACE, a backtrace). RUST_BACKTRACE alone does not, since it is often set globally.
fn install_quiet_panic_hook() {
    let verbose = std::env::var_os("BENCH_PANIC_VERBOSE").is_some_and(|v| v == "1");
    let default = panic::take_hook();
    panic::set_hook(Box::new(move |info| {
        let msg = info
            .payload_as_str()
            .unwrap_or("(non-string panic payload)");
        let at = info
            .location()
            .map(|l| {
                // ~/.cargo/registry/src/index.crates.io-HASH/CRATE-VER/src/x.rs -> CRATE-VER/src/x.rs
                let f = l.file();
                let f = f.find("/registry/src/").map_or(f, |i| {
                    let rest = &f[i + "/registry/src/".len()..];
                    rest.split_once('/').map_or(rest, |(_, r)| r)
                });
                format!(" (at {f}:{})", l.line())
            })
            .unwrap_or_default();
        if let Ok(mut p) = PANICS.lock() {
            p.push(format!("{msg}{at}"));
        }
        if verbose {
            default(info);
        }
    }));
}

/// The first panic recorded by the quiet hook, one line.
pub(crate) fn first_panic() -> String {
    PANICS
        .lock()
        .ok()
        .and_then(|p| p.first().cloned())
        .map(|s| one_line(&s))
        .unwrap_or_else(|| "unknown panic".into())
}

/// Runs `f`, turning a panic into a [`Failure`] (exit 1) whose message starts with `what`.
pub(crate) fn catch<T>(what: &str, f: impl FnOnce() -> Result<T, Failure>) -> Result<T, Failure> {
    match panic::catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(_) => Err(Failure::run(format!("{what}: {}", first_panic()))),
    }
}

/// The whole program: parse `args` (without the program name), run, return the exit status.
pub fn main_with_args<I: IntoIterator<Item = OsString>>(args: I) -> i32 {
    let parsed = match args::parse(args) {
        Ok(args::Parsed::Help) => {
            print!("{}", args::USAGE);
            return 0;
        }
        Ok(args::Parsed::Run(a)) => a,
        Err(f) => {
            eprintln!("error: {} (see --help)", f.message);
            return f.code;
        }
    };
    install_quiet_panic_hook();
    match catch("panic", || bench::run(&parsed)) {
        Ok(()) => 0,
        Err(f) => {
            eprintln!("error: {}", f.message);
            f.code
        }
    }
}
