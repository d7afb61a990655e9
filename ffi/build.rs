//! The shared library's SONAME: clients linked against c-toxcore 0.2.18 ask the loader for
//! `libtoxcore.so.2` (protocol.md §9: so.version CURRENT 20 − AGE 18 = major 2).

fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libtoxcore.so.2");
    println!("cargo:rerun-if-changed=build.rs");
}
