//! Build script: only for the release binary on Linux, its debug sections (line tables only,
//! see `[profile.release]`) are compressed with zlib by the linker. A backtrace still names
//! files and lines (the standard library reads compressed sections), and the binary that
//! `cargo install` puts on the PATH is about a quarter of the size.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let release = std::env::var("PROFILE").is_ok_and(|p| p == "release");
    let linux = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    if release && linux {
        println!("cargo:rustc-link-arg-bins=-Wl,--compress-debug-sections=zlib");
    }
}
