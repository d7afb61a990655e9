//! `ffi/install.sh PREFIX` installs a libtoxcore that C programs find through pkg-config
//! and build and run against, as they do with c-toxcore: the shared library under its
//! SONAME with the usual symlinks, the static library, the headers and toxcore.pc.
//!
//! The test installs the library of its own cargo profile (`--from target/<profile>`) into
//! a temporary prefix, then builds `tests/c/peer.c` with only that prefix's toxcore.pc in
//! pkg-config's path (`PKG_CONFIG_LIBDIR`): with our installed headers (the compiler's
//! dependency list shows they are the ones used), linked to the installed libtoxcore.so
//! and, separately, statically to libtoxcore.a; each build runs peer.c's selftest.
//! While ffi/include/tox/ does not exist the headers part is skipped (and says so), and
//! peer.c is compiled against the system's c-toxcore headers.

mod common;

use common::*;
use std::path::Path;
use std::process::Command;

fn pkg_config_in(pc_dir: &Path, args: &[&str]) -> String {
    run_ok(
        Command::new("pkg-config")
            .env("PKG_CONFIG_LIBDIR", pc_dir)
            .env_remove("PKG_CONFIG_PATH")
            .args(args)
            .arg("toxcore"),
    )
    .unwrap_or_else(|e| panic!("pkg-config with only the installed toxcore.pc: {e}"))
    .trim()
    .to_string()
}

#[test]
fn install_into_a_prefix_and_build_a_client_with_pkg_config() {
    if !have("cc", "--version") || !have("pkg-config", "--version") {
        skip_or_fail("no cc or pkg-config");
        return;
    }
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let headers = manifest.join("include/tox/tox.h").exists();
    if !headers && c_toolchain().is_err() {
        skip_or_fail("ffi/include/tox/ is missing and the system has no c-toxcore headers");
        return;
    }
    let tmp = TempDir::new("rustox-ffi", "install");
    let prefix = tmp.join("prefix");
    let mut cmd = Command::new("sh");
    cmd.arg(manifest.join("install.sh"))
        .arg("--from")
        .arg(profile_dir().join("deps"));
    if !headers {
        println!(
            "SKIPPED (headers part): ffi/include/tox/ does not exist yet; installing without \
             headers and compiling against the system's c-toxcore headers"
        );
        cmd.arg("--no-headers");
    }
    cmd.arg(&prefix);
    let out = run_ok(&mut cmd).unwrap_or_else(|e| panic!("install.sh: {e}"));
    println!("{}", out.trim());

    // The files and links.
    let lib = prefix.join("lib");
    let real = lib.join("libtoxcore.so.2.18.0");
    assert_eq!(
        std::fs::read(&real).expect("libtoxcore.so.2.18.0 installed"),
        std::fs::read(our_library()).unwrap(),
        "the installed library is not the built one"
    );
    assert_eq!(
        std::fs::read_link(lib.join("libtoxcore.so.2")).unwrap(),
        Path::new("libtoxcore.so.2.18.0")
    );
    assert_eq!(
        std::fs::read_link(lib.join("libtoxcore.so")).unwrap(),
        Path::new("libtoxcore.so.2")
    );
    assert!(lib.join("libtoxcore.a").exists(), "libtoxcore.a installed");
    if headers {
        for h in [
            "tox.h",
            "tox_events.h",
            "tox_dispatch.h",
            "toxav.h",
            "toxencryptsave.h",
        ] {
            assert_eq!(
                std::fs::read(prefix.join("include/tox").join(h))
                    .unwrap_or_else(|e| panic!("include/tox/{h}: {e}")),
                std::fs::read(manifest.join("include/tox").join(h)).unwrap(),
                "include/tox/{h}"
            );
        }
    }

    // pkg-config sees only the installed toxcore.pc.
    let pc_dir = lib.join("pkgconfig");
    assert_eq!(pkg_config_in(&pc_dir, &["--modversion"]), "0.2.18");
    let cflags = pkg_config_in(&pc_dir, &["--cflags"]);
    let libs = pkg_config_in(&pc_dir, &["--libs"]);
    assert_eq!(cflags, format!("-I{}", prefix.join("include").display()));
    assert_eq!(
        libs,
        format!("-L{} -ltoxcore", lib.display()),
        "toxcore.pc's Libs"
    );
    let pc = std::fs::read_to_string(pc_dir.join("toxcore.pc")).unwrap();
    assert!(pc.contains("Name: toxcore"), "{pc}");

    // peer.c built with the installed toxcore.pc, as a client's build would.
    let src = c_dir().join("peer.c");
    let exe = tmp.join("peer-installed");
    let words = |s: &str| s.split_whitespace().map(str::to_string).collect::<Vec<_>>();
    // peer.c as a client builds it, with the installed toxcore.pc's cflags, then `link`.
    let build = |exe: &Path, link: Vec<String>| {
        Cc::new("cc")
            .args(["-O1", "-g", "-Wall", "-Werror"])
            .args(words(&cflags))
            .testkit_header()
            .arg(&src)
            .args(link)
            .build(exe)
    };
    build(&exe, words(&libs))
        .unwrap_or_else(|e| panic!("building peer.c with the installed toxcore.pc: {e}"));
    if headers {
        // The tox headers the compiler read are the installed ones.
        let deps = run_ok(
            Command::new("cc")
                .arg("-M")
                .args(words(&cflags))
                .arg(format!("-I{}", rustox_testkit::c::HEADER_DIR))
                .arg(&src),
        )
        .unwrap();
        let tox_headers: std::collections::BTreeSet<&str> = deps
            .split_whitespace()
            .filter(|w| w.contains("/tox/"))
            .collect();
        let installed = prefix.join("include/tox").display().to_string();
        assert!(
            tox_headers.len() == 5 && tox_headers.iter().all(|h| h.starts_with(&installed)),
            "peer.c read these tox headers: {tox_headers:?}"
        );
    }
    let prog = CProgram {
        lib: Lib::Ours,
        path: exe,
        lib_dir: Some(lib.clone()),
        expected_lib: real.clone(),
    };
    prog.check_ldd();
    run_selftest(&prog, 34700, false);

    // Statically linked against the installed libtoxcore.a, with toxcore.pc's Libs.private.
    let static_libs = pkg_config_in(&pc_dir, &["--static", "--libs"]);
    let private: Vec<String> = words(&static_libs)
        .into_iter()
        .filter(|w| w != "-ltoxcore" && !w.starts_with("-L"))
        .collect();
    let exe_static = tmp.join("peer-static");
    let archive = lib.join("libtoxcore.a").display().to_string();
    build(&exe_static, [archive].into_iter().chain(private).collect())
        .unwrap_or_else(|e| panic!("linking peer.c against libtoxcore.a: {e}"));
    let ldd = run_ok(Command::new("ldd").arg(&exe_static)).unwrap_or_default();
    assert!(
        !ldd.contains("libtoxcore"),
        "the static build loads a libtoxcore:\n{ldd}"
    );
    // The selftest's LIB line names the executable itself: the library is inside it.
    let prog_static = CProgram {
        lib: Lib::Ours,
        path: exe_static.clone(),
        lib_dir: None,
        expected_lib: exe_static,
    };
    run_selftest(&prog_static, 34702, false);
}

/// The script refuses what it cannot do, with a message saying why.
#[test]
fn install_sh_refuses_a_missing_library_and_a_relative_prefix() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = TempDir::new("rustox-ffi", "install-errors");
    let empty = tmp.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let out = Command::new("sh")
        .arg(manifest.join("install.sh"))
        .arg("--from")
        .arg(&empty)
        .arg(tmp.join("prefix"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("cargo build --release -p rustox-ffi"),
        "missing library: {}\n{err}",
        out.status
    );
    assert!(!tmp.join("prefix").exists(), "nothing installed");
    let out = Command::new("sh")
        .arg(manifest.join("install.sh"))
        .arg("relative/prefix")
        .output()
        .unwrap();
    assert!(
        !out.status.success() && String::from_utf8_lossy(&out.stderr).contains("absolute"),
        "relative prefix accepted"
    );
}
