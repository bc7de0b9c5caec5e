//! The command lines of pip, CMake and `llama-server`, as pure functions of the configuration.

use std::ffi::OsString;
use std::path::Path;

use crate::config::ServerOptions;
use crate::pins::LLAMA_CPP_PYTHON;

/// The x86 instruction-set extensions the CPU backend is compiled for.
///
/// The build is not `GGML_NATIVE` (a native build on a CPU that advertises AMX but faults on it
/// crashes), so each extension is switched on only when the building machine has it; AMX is
/// always off. The server binary stays in the cache of the machine that built it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct CpuFeatures {
    /// AVX.
    pub(crate) avx: bool,
    /// AVX2.
    pub(crate) avx2: bool,
    /// FMA.
    pub(crate) fma: bool,
    /// F16C.
    pub(crate) f16c: bool,
    /// BMI2.
    pub(crate) bmi2: bool,
    /// AVX-512 F, CD, VL, DQ and BW (ggml's `GGML_AVX512` needs all five).
    pub(crate) avx512: bool,
}

impl CpuFeatures {
    /// The features of the machine this runs on (all off on non-x86 machines).
    pub(crate) fn detect() -> Self {
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        {
            Self {
                avx: std::arch::is_x86_feature_detected!("avx"),
                avx2: std::arch::is_x86_feature_detected!("avx2"),
                fma: std::arch::is_x86_feature_detected!("fma"),
                f16c: std::arch::is_x86_feature_detected!("f16c"),
                bmi2: std::arch::is_x86_feature_detected!("bmi2"),
                avx512: std::arch::is_x86_feature_detected!("avx512f")
                    && std::arch::is_x86_feature_detected!("avx512cd")
                    && std::arch::is_x86_feature_detected!("avx512vl")
                    && std::arch::is_x86_feature_detected!("avx512dq")
                    && std::arch::is_x86_feature_detected!("avx512bw"),
            }
        }
        #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
        {
            Self::default()
        }
    }
}

/// `ON` or `OFF`.
fn on_off(on: bool) -> &'static str {
    if on { "ON" } else { "OFF" }
}

/// pip's flags that keep it quiet and non-interactive, and make it check every download against
/// the hashes of the requirements file (see `pins.rs`).
const PIP_QUIET: &[&str] = &[
    "--disable-pip-version-check",
    "--no-input",
    "--progress-bar",
    "off",
    "--require-hashes",
];

/// `python -m pip download` of the `llama-cpp-python` sdist (never a wheel) pinned in the
/// requirements file `requirements`, into `dest`.
///
/// pip prepares the sdist's metadata in an isolated environment; `--only-binary cmake,ninja`
/// keeps it from compiling CMake itself for that.
pub(crate) fn pip_download_sdist(requirements: &Path, dest: &Path) -> Vec<OsString> {
    let mut args: Vec<OsString> = ["-m", "pip", "download"].map(OsString::from).into();
    args.extend(PIP_QUIET.iter().map(OsString::from));
    args.extend(
        [
            "--no-deps",
            "--no-binary",
            LLAMA_CPP_PYTHON,
            "--only-binary",
            "cmake,ninja",
            "--dest",
        ]
        .map(OsString::from),
    );
    args.push(dest.into());
    args.push("--requirement".into());
    args.push(requirements.into());
    args
}

/// `python -m pip install --target dest` of the wheels pinned in the requirements file
/// `requirements` (CMake and Ninja, or the model).
pub(crate) fn pip_install_wheels(requirements: &Path, dest: &Path) -> Vec<OsString> {
    let mut args: Vec<OsString> = ["-m", "pip", "install"].map(OsString::from).into();
    args.extend(PIP_QUIET.iter().map(OsString::from));
    args.extend(
        [
            "--no-deps",
            "--only-binary",
            ":all:",
            "--upgrade",
            "--target",
        ]
        .map(OsString::from),
    );
    args.push(dest.into());
    args.push("--requirement".into());
    args.push(requirements.into());
    args
}

/// A Python program that checks the sdist's SHA-256 against the pinned one, then unpacks it,
/// refusing the whole archive (before writing anything) when a member is a link, a device or a
/// path that would land outside the target. Python's `tarfile` follows names and links as they
/// come unless a filter says otherwise (before Python 3.14), so `python -m tarfile -e` cannot be
/// used on an archive from the network.
const UNPACK_PROGRAM: &str = r#"
import hashlib, os, sys, tarfile
archive, target, expected = sys.argv[1:4]
digest = hashlib.sha256()
with open(archive, "rb") as file:
    for block in iter(lambda: file.read(1 << 20), b""):
        digest.update(block)
if digest.hexdigest() != expected:
    sys.exit(f"refused {archive}: its sha256 is {digest.hexdigest()}, not the pinned {expected}")
root = os.path.realpath(target)
def check(member, path=root):
    if member.issym() or member.islnk():
        raise SystemExit(f"refused {archive}: member {member.name!r} is a link")
    if not (member.isfile() or member.isdir()):
        raise SystemExit(f"refused {archive}: member {member.name!r} is not a file or folder")
    where = os.path.realpath(os.path.join(root, member.name))
    if os.path.isabs(member.name) or os.path.commonpath([root, where]) != root:
        raise SystemExit(f"refused {archive}: member {member.name!r} is outside the target")
    data_filter = getattr(tarfile, "data_filter", None)
    return data_filter(member, path) if data_filter else member
with tarfile.open(archive) as tar:
    members = tar.getmembers()
    for member in members:
        check(member)
    if hasattr(tarfile, "data_filter"):
        tar.extractall(root, members=members, filter=check)
    else:
        tar.extractall(root, members=members)
"#;

/// `python -c <program> archive dest sha256`: checks and unpacks the sdist (see the program).
pub(crate) fn python_untar(archive: &Path, dest: &Path, sha256: &str) -> Vec<OsString> {
    vec![
        "-c".into(),
        UNPACK_PROGRAM.into(),
        archive.into(),
        dest.into(),
        sha256.into(),
    ]
}

/// `cmake -S source -B build ...`: configures a CPU-only, static, Release build of llama.cpp with
/// the server and nothing else, and nothing downloaded.
pub(crate) fn cmake_configure(
    source: &Path,
    build: &Path,
    ninja: &Path,
    cpu: CpuFeatures,
) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec![
        "-S".into(),
        source.into(),
        "-B".into(),
        build.into(),
        "-G".into(),
        "Ninja".into(),
    ];
    let mut make_program = OsString::from("-DCMAKE_MAKE_PROGRAM=");
    make_program.push(ninja);
    args.push(make_program);
    let defines: Vec<(&str, &str)> = vec![
        ("CMAKE_BUILD_TYPE", "Release"),
        ("BUILD_SHARED_LIBS", "OFF"),
        ("GGML_NATIVE", "OFF"),
        ("GGML_AMX_TILE", "OFF"),
        ("GGML_AMX_INT8", "OFF"),
        ("GGML_AMX_BF16", "OFF"),
        ("GGML_AVX", on_off(cpu.avx)),
        ("GGML_AVX2", on_off(cpu.avx2)),
        ("GGML_FMA", on_off(cpu.fma)),
        ("GGML_F16C", on_off(cpu.f16c)),
        ("GGML_BMI2", on_off(cpu.bmi2)),
        ("GGML_AVX512", on_off(cpu.avx512)),
        ("GGML_METAL", "OFF"),
        ("LLAMA_BUILD_TESTS", "OFF"),
        ("LLAMA_BUILD_EXAMPLES", "OFF"),
        ("LLAMA_BUILD_TOOLS", "ON"),
        ("LLAMA_BUILD_SERVER", "ON"),
        ("LLAMA_BUILD_APP", "OFF"),
        ("LLAMA_CURL", "OFF"),
        ("LLAMA_OPENSSL", "OFF"),
        ("LLAMA_USE_PREBUILT_UI", "OFF"),
        ("LLAMA_BUILD_UI", "OFF"),
    ];
    args.extend(
        defines
            .into_iter()
            .map(|(key, value)| OsString::from(format!("-D{key}={value}"))),
    );
    args
}

/// `cmake --build build --target llama-server -j jobs`.
pub(crate) fn cmake_build(build: &Path, jobs: usize) -> Vec<OsString> {
    vec![
        "--build".into(),
        build.into(),
        "--target".into(),
        "llama-server".into(),
        "-j".into(),
        jobs.to_string().into(),
    ]
}

/// Where CMake leaves the `llama-server` binary inside the build directory.
pub(crate) fn built_server(build: &Path) -> std::path::PathBuf {
    build
        .join("bin")
        .join(format!("llama-server{}", std::env::consts::EXE_SUFFIX))
}

/// The arguments of `llama-server` serving `model` as `name` on `127.0.0.1:port`, offline.
pub(crate) fn server_args(
    model: &Path,
    name: &str,
    port: u16,
    options: &ServerOptions,
) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec![
        "--model".into(),
        model.into(),
        "--alias".into(),
        name.into(),
        "--host".into(),
        "127.0.0.1".into(),
        "--port".into(),
        port.to_string().into(),
        "--jinja".into(),
        "--offline".into(),
        "--no-webui".into(),
        "--ctx-size".into(),
        options.ctx_size.to_string().into(),
        "--seed".into(),
        options.seed.to_string().into(),
        "--parallel".into(),
        options.parallel.to_string().into(),
    ];
    if let Some(temperature) = options.temperature {
        args.extend(["--temp".into(), temperature.to_string().into()]);
    }
    if let Some(threads) = options.threads {
        args.extend(["--threads".into(), threads.to_string().into()]);
    }
    args.extend(options.extra_args.iter().map(OsString::from));
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(args: &[OsString]) -> Vec<String> {
        args.iter()
            .map(|arg| arg.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn review_10_pip_fetches_the_sdist_never_a_wheel_and_only_by_hash() {
        let args = strings(&pip_download_sdist(
            Path::new("/c/requirements/sdist.txt"),
            Path::new("/c/downloads"),
        ))
        .join(" ");
        assert!(args.starts_with("-m pip download "), "{args}");
        assert!(args.contains(" --require-hashes "), "{args}");
        assert!(
            args.ends_with(
                "--no-deps --no-binary llama-cpp-python --only-binary cmake,ninja \
                 --dest /c/downloads --requirement /c/requirements/sdist.txt"
            ),
            "{args}"
        );
    }

    #[test]
    fn review_10_pip_installs_only_pinned_wheels_into_targets() {
        let tools = strings(&pip_install_wheels(
            Path::new("/c/requirements/tools.txt"),
            Path::new("/c/tools"),
        ))
        .join(" ");
        assert!(tools.starts_with("-m pip install "), "{tools}");
        assert!(tools.contains(" --require-hashes "), "{tools}");
        assert!(
            tools.ends_with(
                "--only-binary :all: --upgrade --target /c/tools --requirement /c/requirements/tools.txt"
            ),
            "{tools}"
        );
        let untar = strings(&python_untar(
            Path::new("/a.tar.gz"),
            Path::new("/c/src"),
            "ab12",
        ));
        assert_eq!(untar[0], "-c");
        assert_eq!(&untar[2..], ["/a.tar.gz", "/c/src", "ab12"]);
    }

    #[test]
    fn cmake_configures_a_portable_cpu_only_server_build() {
        let cpu = CpuFeatures {
            avx: true,
            avx2: true,
            fma: true,
            f16c: true,
            bmi2: true,
            avx512: false,
        };
        let args = strings(&cmake_configure(
            Path::new("/s"),
            Path::new("/b"),
            Path::new("/t/ninja"),
            cpu,
        ));
        assert_eq!(
            &args[..7],
            [
                "-S",
                "/s",
                "-B",
                "/b",
                "-G",
                "Ninja",
                "-DCMAKE_MAKE_PROGRAM=/t/ninja"
            ]
        );
        for expected in [
            "-DGGML_NATIVE=OFF",
            "-DGGML_AMX_TILE=OFF",
            "-DGGML_AMX_INT8=OFF",
            "-DGGML_AMX_BF16=OFF",
            "-DGGML_AVX2=ON",
            "-DGGML_AVX512=OFF",
            "-DLLAMA_BUILD_TESTS=OFF",
            "-DLLAMA_BUILD_EXAMPLES=OFF",
            "-DLLAMA_CURL=OFF",
            "-DLLAMA_USE_PREBUILT_UI=OFF",
            "-DBUILD_SHARED_LIBS=OFF",
        ] {
            assert!(
                args.iter().any(|arg| arg == expected),
                "{expected} missing from {args:?}"
            );
        }
        let avx512 = CpuFeatures {
            avx512: true,
            ..cpu
        };
        let args = strings(&cmake_configure(
            Path::new("/s"),
            Path::new("/b"),
            Path::new("/n"),
            avx512,
        ));
        assert!(args.iter().any(|arg| arg == "-DGGML_AVX512=ON"));
        let build = strings(&cmake_build(Path::new("/b"), 2));
        assert_eq!(
            build,
            ["--build", "/b", "--target", "llama-server", "-j", "2"]
        );
    }

    #[test]
    fn the_server_listens_on_loopback_offline_with_a_fixed_seed() {
        let mut options = ServerOptions {
            threads: None,
            ..ServerOptions::default()
        };
        let args = strings(&server_args(Path::new("/m.gguf"), "smol", 8081, &options)).join(" ");
        assert_eq!(
            args,
            "--model /m.gguf --alias smol --host 127.0.0.1 --port 8081 --jinja --offline \
             --no-webui --ctx-size 4096 --seed 42 --parallel 1 --temp 0"
        );
        options.threads = Some(2);
        options.temperature = None;
        options.extra_args = vec!["--top-k".into(), "1".into()];
        let args = strings(&server_args(Path::new("/m.gguf"), "smol", 1, &options)).join(" ");
        assert!(
            args.ends_with("--parallel 1 --threads 2 --top-k 1"),
            "{args}"
        );
    }
}
