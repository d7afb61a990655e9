//! The shared library's SONAME, and the name the loader looks for beside it.
//!
//! Clients linked against c-toxcore 0.2.18 ask the loader for `libtoxcore.so.2`
//! (docs/protocol.md §9: so.version CURRENT 20 − AGE 18 = major 2). Cargo writes
//! `target/<profile>/libtoxcore.so`; a symlink `libtoxcore.so.2` beside it lets a client run
//! on the freshly built library with `LD_LIBRARY_PATH=target/<profile>` alone, as
//! `ffi/install.sh` arranges for an installed one.

use std::path::PathBuf;

fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libtoxcore.so.2");
    println!("cargo:rerun-if-changed=build.rs");
    // OUT_DIR is target/<profile>/build/rustox-ffi-<hash>/out.
    let Some(profile_dir) = std::env::var_os("OUT_DIR")
        .map(PathBuf::from)
        .and_then(|out| out.ancestors().nth(3).map(PathBuf::from))
    else {
        return;
    };
    let link = profile_dir.join("libtoxcore.so.2");
    if std::fs::symlink_metadata(&link).is_err() {
        // Best effort: a read-only target directory only loses the convenience.
        let _ = std::os::unix::fs::symlink("libtoxcore.so", &link);
    }
}
