//! `include/tox/*.h`, the headers `install.sh` installs, are generated from this crate's Rust
//! definitions, and proven against Debian's c-toxcore 0.2.18 headers.
//!
//! Generation ([`generate`]): rustc expands the crate's macros (`cargo rustc
//! -Zunpretty=expanded`, in its own target directory under `target/tmp`, whose first run
//! checks the dependencies once more; cbindgen cannot see functions that `macro_rules!`
//! define), the expanded source is cut into its modules, and
//! cbindgen (settings in `cbindgen.toml`) writes each header from that header's modules
//! ([`HEADERS`]). The generator adds what cbindgen cannot express, each from Rust data where
//! there is some: the numeric macros (the crate's constants), enums that Rust spells as a
//! module of constants (`av::Toxav_Friend_Call_State`), the uppercase type names c-toxcore
//! still provides (`typedef Tox_Err_New TOX_ERR_NEW;`), c-toxcore's `TOX_DEFINED`-style
//! guards, and callback types as function types (`typedef void tox_friend_message_cb(...)`,
//! used as `tox_friend_message_cb *`). What no Rust definition expresses is written in C in
//! [`Header::hand_written`].
//!
//! The tests:
//! * [`checked_in_headers_are_the_generated_ones`]: `include/tox` equals what the code
//!   generates; `RUSTOX_WRITE_HEADERS=1 cargo test -p rustox-ffi --test headers` rewrites it.
//! * [`a_c99_client_of_our_headers_compiles_and_links`]: a C program that includes our five
//!   headers (and no header of Debian's: `cc -H` says which were read) and uses every
//!   function, enum constant, macro, type and callback type that ours or Debian's declare
//!   compiles with `-std=c99 -Wall -Werror`, links to our `libtoxcore.so`, and loads with
//!   every symbol bound; every function our library exports has a prototype.
//! * [`debian_declarations_agree_with_ours`]: Debian's declarations, redeclared in C after
//!   ours (C rejects a conflicting redeclaration), Debian's enum constants and
//!   `struct Tox_Options` copied under other names and compared with `_Static_assert`, its
//!   macros compared; and every parameter and return type compared by name, where the only
//!   difference allowed is a Debian enum that Rust takes or gives as `uint32_t`.
//!
//! The C tests need cc and pkg-config's toxcore (Debian's `libtoxcore-dev`); without them
//! they are skipped, or fail when the environment variable `CI` is set.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use toxcore::{constants, encryptsave};

// ---------------------------------------------------------------------------------------
// What goes into which header
// ---------------------------------------------------------------------------------------

/// One header of `include/tox/`.
struct Header {
    /// Its file name.
    file: &'static str,
    /// Its include guard: c-toxcore's, for code that tests it.
    guard: &'static str,
    /// The crate's modules whose functions (and the types they define) it declares, in
    /// this order.
    modules: &'static [&'static str],
    /// Modules that only provide types it declares (`Tox`, `types`' enums, ...).
    type_modules: &'static [&'static str],
    /// The headers of ours it includes.
    includes: &'static [&'static str],
    /// Its numeric macros: (the crate's module, the name after `TOX_`, the crate's value).
    macros: fn() -> Vec<(&'static str, &'static str, u32)>,
    /// Whether its enums also get c-toxcore's uppercase names (`TOX_ERR_NEW`), which
    /// tox.h, toxav.h and toxencryptsave.h still declare for clients of the old API.
    uppercase_aliases: bool,
    /// C for what no Rust definition of the crate expresses: (the name it defines, C). The
    /// generator fails once the crate defines that name, so that Rust takes over.
    hand_written: &'static [(&'static str, &'static str)],
}

/// The headers, in the order they include one another.
const HEADERS: [Header; 5] = [
    Header {
        file: "tox.h",
        guard: "C_TOXCORE_TOXCORE_TOX_H",
        modules: &[
            "constants",
            "options",
            "lifecycle",
            "self_info",
            "friends",
            "callbacks",
            "files",
            "conference",
        ],
        type_modules: &["handle", "types"],
        includes: &[],
        macros: tox_h_macros,
        uppercase_aliases: true,
        hand_written: &[
            (
                "TOX_VERSION_IS_API_COMPATIBLE",
                TOX_VERSION_IS_API_COMPATIBLE,
            ),
            (
                "TOX_VERSION_IS_ABI_COMPATIBLE",
                TOX_VERSION_IS_ABI_COMPATIBLE,
            ),
        ],
    },
    Header {
        file: "toxav.h",
        guard: "C_TOXCORE_TOXAV_TOXAV_H",
        modules: &["av"],
        type_modules: &["handle", "types"],
        includes: &[],
        macros: Vec::new,
        uppercase_aliases: true,
        hand_written: &[],
    },
    Header {
        file: "toxencryptsave.h",
        guard: "C_TOXCORE_TOXENCRYPTSAVE_TOXENCRYPTSAVE_H",
        modules: &["encryptsave"],
        type_modules: &["types"],
        includes: &[],
        macros: toxencryptsave_h_macros,
        uppercase_aliases: true,
        hand_written: &[],
    },
    Header {
        file: "tox_events.h",
        guard: "C_TOXCORE_TOXCORE_TOX_EVENTS_H",
        modules: &["events"],
        type_modules: &["types"],
        includes: &["tox.h"],
        macros: Vec::new,
        uppercase_aliases: false,
        hand_written: &[],
    },
    Header {
        file: "tox_dispatch.h",
        guard: "C_TOXCORE_TOXCORE_TOX_DISPATCH_H",
        modules: &["dispatch"],
        type_modules: &["types"],
        includes: &["tox_events.h"],
        macros: Vec::new,
        uppercase_aliases: false,
        hand_written: &[],
    },
];

/// A preprocessor macro: Rust cannot write one (`constants::api_compatible` is this rule).
const TOX_VERSION_IS_API_COMPATIBLE: &str = r#"/**
 * Whether code written for version MAJOR.MINOR.PATCH of the API compiles against these
 * headers, at preprocessing time: the same major version and no newer minor or patch; in
 * 0.x.y versions the minor acts as the major, and 0.0.x only matches itself.
 */
#define TOX_VERSION_IS_API_COMPATIBLE(MAJOR, MINOR, PATCH) \
    (((TOX_VERSION_MAJOR > 0 && TOX_VERSION_MAJOR == (MAJOR)) && \
      (TOX_VERSION_MINOR > (MINOR) || \
       (TOX_VERSION_MINOR == (MINOR) && TOX_VERSION_PATCH >= (PATCH)))) || \
     ((TOX_VERSION_MAJOR == 0 && (MAJOR) == 0) && \
      (((TOX_VERSION_MINOR > 0 && TOX_VERSION_MINOR == (MINOR)) && \
        TOX_VERSION_PATCH >= (PATCH)) || \
       ((TOX_VERSION_MINOR == 0 && (MINOR) == 0) && TOX_VERSION_PATCH == (PATCH)))))"#;

/// A preprocessor macro.
const TOX_VERSION_IS_ABI_COMPATIBLE: &str = r#"/**
 * Whether the library loaded at run time serves clients built against these headers.
 */
#define TOX_VERSION_IS_ABI_COMPATIBLE() \
    tox_version_is_compatible(TOX_VERSION_MAJOR, TOX_VERSION_MINOR, TOX_VERSION_PATCH)"#;

/// Modules that export no function (checked: a module with one must be in [`HEADERS`]).
const INTERNAL_MODULES: &[&str] = &["event", "guard", "handle", "proxy", "types"];

/// Opaque types that c-toxcore declares under a `<NAME>_DEFINED` guard, since two headers
/// declare them (`Tox`: tox.h and toxav.h).
const GUARDED_TYPES: &[&str] = &["Tox", "Tox_Pass_Key"];

/// `(module, name without TOX_, value)` for constants of the crate.
macro_rules! numeric {
    ($module:ident: $($name:ident),* $(,)?) => {
        vec![$((stringify!($module), stringify!($name), $module::$name)),*]
    };
}

/// tox.h's numeric macros.
fn tox_h_macros() -> Vec<(&'static str, &'static str, u32)> {
    numeric!(constants:
        VERSION_MAJOR, VERSION_MINOR, VERSION_PATCH, PUBLIC_KEY_SIZE, SECRET_KEY_SIZE,
        CONFERENCE_UID_SIZE, CONFERENCE_ID_SIZE, NOSPAM_SIZE, ADDRESS_SIZE, MAX_NAME_LENGTH,
        MAX_STATUS_MESSAGE_LENGTH, MAX_FRIEND_REQUEST_LENGTH, MAX_MESSAGE_LENGTH,
        MAX_CUSTOM_PACKET_SIZE, HASH_LENGTH, FILE_ID_LENGTH, MAX_FILENAME_LENGTH,
        MAX_HOSTNAME_LENGTH,
    )
}

/// toxencryptsave.h's numeric macros.
fn toxencryptsave_h_macros() -> Vec<(&'static str, &'static str, u32)> {
    numeric!(encryptsave: PASS_SALT_LENGTH, PASS_KEY_LENGTH, PASS_ENCRYPTION_EXTRA_LENGTH)
}

// ---------------------------------------------------------------------------------------
// Generation
// ---------------------------------------------------------------------------------------

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn include_dir() -> PathBuf {
    manifest_dir().join("include")
}

/// A directory of its own under `target/tmp` for `what`.
fn scratch_dir(what: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("headers")
        .join(format!("{what}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The crate's source with its macros expanded, from rustc. `-Zunpretty` is unstable, hence
/// `RUSTC_BOOTSTRAP=1` (for this one command). Its own target directory, since the one of
/// the running `cargo test` may be locked, and it stays for the next run.
fn expanded_crate() -> String {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "rustc",
            "--lib",
            "--profile=check",
            "--quiet",
            "--manifest-path",
        ])
        .arg(manifest_dir().join("Cargo.toml"))
        .args(["--", "-Zunpretty=expanded"])
        .env("RUSTC_BOOTSTRAP", "1")
        .env(
            "CARGO_TARGET_DIR",
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("headers-expand"),
        )
        .output()
        .expect("running cargo rustc -Zunpretty=expanded");
    assert!(
        out.status.success(),
        "cargo rustc -Zunpretty=expanded failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("expanded source is UTF-8")
}

/// The expanded crate's top-level modules (`pub mod name {` ... `}` at the line's start, as
/// rustc prints them): name -> body.
fn modules(expanded: &str) -> BTreeMap<String, String> {
    let mut modules = BTreeMap::new();
    let mut open: Option<(String, String)> = None;
    for line in expanded.lines() {
        match &mut open {
            Some((name, body)) => {
                if line == "}" {
                    modules.insert(std::mem::take(name), std::mem::take(body));
                    open = None;
                } else {
                    body.push_str(line);
                    body.push('\n');
                }
            }
            None => {
                if let Some(name) = line
                    .strip_prefix("pub mod ")
                    .and_then(|l| l.strip_suffix(" {"))
                {
                    open = Some((name.to_string(), String::new()));
                }
            }
        }
    }
    assert!(open.is_none(), "unterminated module in the expanded source");
    modules
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The identifier at the start of `s`.
fn ident(s: &str) -> &str {
    let end = s.find(|c| !is_ident_char(c)).unwrap_or(s.len());
    &s[..end]
}

/// Names of the crate's function pointer types (`pub type X = unsafe extern "C" fn(...)`,
/// or an alias of such a type, generic ones included).
fn function_pointer_types(modules: &BTreeMap<String, String>) -> BTreeSet<String> {
    let mut aliases = Vec::new();
    for body in modules.values() {
        for (at, _) in body.match_indices("pub type ") {
            let rest = &body[at + "pub type ".len()..];
            let name = ident(rest);
            let rhs = rest[rest.find('=').unwrap() + 1..].trim_start();
            aliases.push((name.to_string(), rhs.to_string()));
        }
    }
    let mut found = BTreeSet::new();
    loop {
        let before = found.len();
        for (name, rhs) in &aliases {
            let target = ident(rhs);
            if rhs.starts_with("unsafe extern \"C\" fn")
                || rhs.starts_with("extern \"C\" fn")
                || found.contains(target)
            {
                found.insert(name.clone());
            }
        }
        if found.len() == before {
            return found;
        }
    }
}

/// `pub type N = G<T>;` -> `pub type N = unsafe extern "C" fn(.. T ..);` where `G<P>` is a
/// generic function pointer type (dispatch.rs's `Callback<E>`): cbindgen would declare
/// `N` as a pointer to a `G_T`, where c-toxcore declares the function type `N` itself.
fn monomorphise_callbacks(modules: &mut BTreeMap<String, String>) {
    let mut generics = BTreeMap::new();
    for body in modules.values() {
        for (at, _) in body.match_indices("pub type ") {
            let rest = &body[at + "pub type ".len()..];
            let name = ident(rest);
            if let Some(params) = rest[name.len()..].strip_prefix('<') {
                let param = ident(params);
                assert!(
                    params[param.len()..].starts_with('>'),
                    "{name}: one type parameter expected"
                );
                let rhs = rest[rest.find('=').unwrap() + 1..rest.find(';').unwrap()].trim();
                if rhs.starts_with("unsafe extern \"C\" fn") {
                    generics.insert(name.to_string(), (param.to_string(), rhs.to_string()));
                }
            }
        }
    }
    for body in modules.values_mut() {
        let mut out = String::new();
        let mut rest = body.as_str();
        while let Some(at) = rest.find("pub type ") {
            let start = at + "pub type ".len();
            out.push_str(&rest[..start]);
            rest = &rest[start..];
            let end = rest.find(';').unwrap();
            let (lhs, rhs) = rest[..end].split_once('=').unwrap();
            let rhs = rhs.trim();
            let generic = ident(rhs);
            match generics.get(generic) {
                Some((param, function)) if rhs[generic.len()..].starts_with('<') => {
                    let argument = rhs[generic.len() + 1..rhs.len() - 1].trim();
                    out.push_str(lhs);
                    out.push_str("= ");
                    out.push_str(&replace_word(function, param, argument));
                }
                _ => out.push_str(&rest[..end]),
            }
            rest = &rest[end..];
        }
        out.push_str(rest);
        *body = out;
    }
}

/// `text` with the identifier `word` replaced by `by`.
fn replace_word(text: &str, word: &str, by: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(word) {
        let whole = !rest[..at].chars().next_back().is_some_and(is_ident_char)
            && !rest[at + word.len()..]
                .chars()
                .next()
                .is_some_and(is_ident_char);
        out.push_str(&rest[..at]);
        out.push_str(if whole { by } else { word });
        rest = &rest[at + word.len()..];
    }
    out.push_str(rest);
    out
}

/// `Option<F>` -> `F` for the function pointer types `F`: cbindgen makes `Option<fn(..)>` a
/// nullable pointer but not `Option` of an alias of one (it emits an opaque
/// `Option_F`). In C the two are the same: any function pointer may be NULL.
fn unwrap_optional_callbacks(body: &str, callbacks: &BTreeSet<String>) -> String {
    let mut out = String::with_capacity(body.len());
    let mut rest = body;
    while let Some(at) = rest.find("Option<") {
        out.push_str(&rest[..at]);
        let inner = rest[at + "Option<".len()..].trim_start();
        let name = ident(inner);
        let after = inner[name.len()..].trim_start();
        if callbacks.contains(name) && after.starts_with('>') {
            out.push_str(name);
            rest = &after[1..];
        } else {
            out.push_str("Option<");
            rest = &rest[at + "Option<".len()..];
        }
    }
    out.push_str(rest);
    out
}

/// The enums in `types` (`pub enum`, and `pub mod` of constants: [`constant_enums`]), each
/// with the header its doc comment names (`/// `X` (tox.h).`): the header that declares
/// it.
fn enum_headers(types: &str) -> BTreeMap<String, String> {
    let mut headers = BTreeMap::new();
    let mut named: Option<String> = None;
    for line in types.lines().map(str::trim) {
        if let Some(doc) = line.strip_prefix("///") {
            if let Some(open) = doc.find('(') {
                let file = ident(&doc[open + 1..]);
                if doc[open + 1 + file.len()..].starts_with(".h)") {
                    named = Some(format!("{file}.h"));
                }
            }
        } else if let Some(rest) = line
            .strip_prefix("pub enum ")
            .or_else(|| line.strip_prefix("pub mod "))
        {
            let name = ident(rest);
            let header = named
                .take()
                .unwrap_or_else(|| panic!("types.rs: the doc of {name} names no header"));
            headers.insert(name.to_string(), header);
        } else if !line.starts_with('#') {
            named = None;
        }
    }
    headers
}

/// A module of `u32` constants that stands for a C enum (`pub mod Toxav_Friend_Call_State
/// { pub const NONE: u32 = 0; ... }`, a bit set C passes as `uint32_t`): (its name, its
/// doc, its constants).
type ConstantEnum = (String, String, Vec<(String, String)>);

fn constant_enums(body: &str) -> Vec<ConstantEnum> {
    let mut found = Vec::new();
    let mut doc = String::new();
    let mut open: Option<ConstantEnum> = None;
    for line in body.lines().map(str::trim) {
        if let Some((_, _, constants)) = &mut open {
            if line == "}" {
                found.push(open.take().unwrap());
            } else if let Some(rest) = line.strip_prefix("pub const ") {
                let name = ident(rest);
                let value = rest.split('=').nth(1).unwrap().trim().trim_end_matches(';');
                assert!(
                    rest[name.len()..].starts_with(": u32 ") && value.parse::<u32>().is_ok(),
                    "{line}: a constant of an enum module must be a u32 literal"
                );
                constants.push((name.to_string(), value.to_string()));
            }
        } else if let Some(text) = line.strip_prefix("///") {
            doc.push_str(text.trim());
            doc.push('\n');
        } else if let Some(rest) = line.strip_prefix("pub mod ") {
            open = Some((
                ident(rest).to_string(),
                std::mem::take(&mut doc),
                Vec::new(),
            ));
        } else if !line.starts_with('#') {
            doc.clear();
        }
    }
    found
}

/// `Tox_Err_New` -> `TOX_ERR_NEW`.
fn upper(name: &str) -> String {
    name.to_ascii_uppercase()
}

/// cbindgen's function pointer typedefs (`typedef R (*name)(...);`) become function types
/// (`typedef R name(...);`) as in c-toxcore, and their uses pointers to them
/// (`tox_friend_message_cb *callback`), so that clients can declare callbacks with them.
fn callbacks_as_function_types(header: &str) -> String {
    let mut names = Vec::new();
    let mut lines = Vec::new();
    let mut shift = false;
    for line in header.lines() {
        if let Some(rest) = line.strip_prefix("typedef ") {
            if let Some(at) = rest.find("(*") {
                let name = ident(&rest[at + 2..]);
                names.push(name.to_string());
                let pointer = format!("(*{name})");
                lines.push(line.replacen(&pointer, name, 1));
                shift = !line.ends_with(';');
                continue;
            }
        }
        if shift {
            // Continuation lines were aligned after `(*name)(`.
            lines.push(line.strip_prefix("   ").unwrap_or(line).to_string());
            shift = !line.ends_with(';');
        } else {
            lines.push(line.to_string());
        }
    }
    let mut text = lines.join("\n") + "\n";
    for name in names {
        let mut out = String::new();
        let mut rest = text.as_str();
        while let Some(at) = rest.find(&name) {
            let before = rest[..at].chars().next_back();
            let after = &rest[at + name.len()..];
            out.push_str(&rest[..at + name.len()]);
            if !before.is_some_and(is_ident_char) && after.starts_with(' ') {
                out.push_str(" *");
                rest = &after[1..];
            } else {
                rest = after;
            }
        }
        out.push_str(rest);
        text = out;
    }
    text
}

/// Drops doc comments that only repeat the name declared next (`/** `TOX_ERR_NEW_OK` */`
/// before `TOX_ERR_NEW_OK = 0,`; the Rust docs name the C item for Rust readers), and
/// puts the space after ` *` that `#[doc = concat!(..)]` docs lack.
fn tidy_docs(header: &str) -> String {
    let lines: Vec<&str> = header.lines().collect();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim_start().starts_with("/**") {
            let end = (i..lines.len())
                .find(|&j| lines[j].trim_end().ends_with("*/"))
                .unwrap();
            let text: String = lines[i..=end]
                .iter()
                .map(|l| l.trim().trim_start_matches("/**").trim_end_matches("*/"))
                .map(|l| l.trim().trim_start_matches('*').trim())
                .collect::<Vec<_>>()
                .join(" ");
            let text = text.trim().trim_end_matches('.');
            // types.rs and av.rs say which header: "`Tox_Err_New` (tox.h)".
            let text = match text.split_once(" (") {
                Some((name, file)) if file.ends_with(".h)") => name,
                _ => text,
            };
            let name = text.strip_prefix('`').and_then(|t| t.strip_suffix('`'));
            let next = lines.get(end + 1).copied().unwrap_or("");
            if name.is_some_and(|n| ident(n) == n && contains_word(next, n)) {
                i = end + 1;
                continue;
            }
        }
        out.push(match lines[i].split_once(" *") {
            Some((indent, text))
                if indent.trim().is_empty()
                    && !text.is_empty()
                    && !text.starts_with([' ', '/']) =>
            {
                format!("{indent} * {text}")
            }
            _ => lines[i].to_string(),
        });
        i += 1;
    }
    out.join("\n") + "\n"
}

fn contains_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(at, _)| {
        !text[..at].chars().next_back().is_some_and(is_ident_char)
            && !text[at + word.len()..]
                .chars()
                .next()
                .is_some_and(is_ident_char)
    })
}

/// The doc comment of the item whose line starts with `item` (`pub struct Tox `) in `body`.
fn doc_of(body: &str, item: &str) -> Vec<String> {
    let lines: Vec<&str> = body.lines().map(str::trim).collect();
    let at = lines.iter().position(|l| l.starts_with(item)).unwrap();
    let mut doc = Vec::new();
    for line in lines[..at].iter().rev() {
        if let Some(text) = line.strip_prefix("///") {
            doc.push(text.trim().to_string());
        } else if !line.starts_with('#') {
            break;
        }
    }
    doc.reverse();
    doc
}

/// Writes `doc` as a C doc comment.
fn write_doc(out: &mut String, doc: &[String]) {
    if !doc.is_empty() {
        out.push_str("/**\n");
        for line in doc {
            writeln!(out, " * {line}").unwrap();
        }
        out.push_str(" */\n");
    }
}

/// What a header declares before cbindgen's items: its guarded types ([`GUARDED_TYPES`],
/// returned apart, for cbindgen to leave out), numeric macros, enums of constants and
/// hand-written C.
fn preamble(
    header: &Header,
    modules: &BTreeMap<String, String>,
    constant_enums: &[ConstantEnum],
) -> (String, Vec<String>) {
    let mut c = String::new();
    let mut guarded = Vec::new();
    for name in GUARDED_TYPES {
        let item = format!("pub struct {name} ");
        let mut sources = header.modules.iter().chain(header.type_modules);
        if let Some(module) = sources.find(|m| modules[**m].contains(&item)) {
            let guard = format!("{}_DEFINED", upper(name));
            c.push('\n');
            write_doc(&mut c, &doc_of(&modules[*module], &item));
            writeln!(
                c,
                "#ifndef {guard}\n#define {guard}\ntypedef struct {name} {name};\n\
                 #endif /* {guard} */"
            )
            .unwrap();
            guarded.push(name.to_string());
        }
    }
    for (module, name, value) in (header.macros)() {
        c.push('\n');
        let doc = doc_of(&modules[module], &format!("pub const {name}:"));
        write_doc(&mut c, &doc);
        writeln!(c, "#define TOX_{name} {value}").unwrap();
    }
    for (name, doc, constants) in constant_enums {
        let doc: Vec<String> = doc.lines().map(str::to_string).collect();
        c.push('\n');
        write_doc(&mut c, &doc);
        writeln!(c, "enum {name} {{").unwrap();
        for (constant, value) in constants {
            writeln!(c, "    {}_{constant} = {value},", upper(name)).unwrap();
        }
        c.push_str("};\n");
    }
    for (_, text) in header.hand_written {
        write!(c, "\n{text}\n").unwrap();
    }
    (c.trim_end().to_string(), guarded)
}

/// The uppercase names of a header's enums (`typedef Tox_Err_New TOX_ERR_NEW;`), if it
/// has them: `enums` are typedefs, the others only tags.
fn uppercase_aliases(
    header: &Header,
    enums: &[&String],
    constant_enums: &[ConstantEnum],
) -> String {
    if !header.uppercase_aliases {
        return String::new();
    }
    let mut c = String::from(
        "/* The uppercase type names of c-toxcore's older API, which its headers still declare. */\n",
    );
    for name in enums {
        writeln!(c, "typedef {name} {};", upper(name)).unwrap();
    }
    let constants = constant_enums.iter().map(|(name, _, _)| name.as_str());
    let hand_written = header
        .hand_written
        .iter()
        .filter(|(_, text)| text.contains("\nenum "))
        .map(|(name, _)| *name);
    for name in constants.chain(hand_written) {
        writeln!(c, "typedef enum {name} {};", upper(name)).unwrap();
    }
    c
}

/// The five headers: file name -> text.
fn generate() -> BTreeMap<&'static str, String> {
    let mut modules = modules(&expanded_crate());
    for (name, body) in &modules {
        let listed = HEADERS.iter().any(|h| h.modules.contains(&name.as_str()));
        assert!(
            listed || !body.contains("#[no_mangle]") && INTERNAL_MODULES.contains(&name.as_str()),
            "module {name}: add it to HEADERS (it exports functions) or INTERNAL_MODULES"
        );
    }
    let expected = HEADERS
        .iter()
        .flat_map(|h| h.modules.iter().chain(h.type_modules));
    for name in expected.chain(INTERNAL_MODULES) {
        assert!(
            modules.contains_key(*name),
            "no module {name} in the expanded crate"
        );
    }
    monomorphise_callbacks(&mut modules);
    let callbacks = function_pointer_types(&modules);
    let enum_headers = enum_headers(&modules["types"]);
    let dir = scratch_dir("sources");
    for (name, body) in &modules {
        let body = unwrap_optional_callbacks(body, &callbacks);
        std::fs::write(dir.join(format!("{name}.rs")), body).unwrap();
    }
    let base = cbindgen::Config::from_file(manifest_dir().join("cbindgen.toml"))
        .expect("reading cbindgen.toml");

    let mut headers = BTreeMap::new();
    for header in &HEADERS {
        for (name, _) in header.hand_written {
            let defined = modules.values().any(|body| {
                ["pub type ", "pub struct ", "pub enum ", "pub mod "]
                    .iter()
                    .any(|item| contains_word(body, &format!("{item}{name}")))
            });
            assert!(
                !defined,
                "the crate now defines {name}: drop its hand-written C for {} from \
                 tests/headers.rs",
                header.file
            );
        }
        let constant_enums: Vec<ConstantEnum> = header
            .modules
            .iter()
            .flat_map(|m| constant_enums(&modules[*m]))
            .chain(
                constant_enums(&modules["types"])
                    .into_iter()
                    .filter(|(name, _, _)| enum_headers[name] == header.file),
            )
            .collect();
        let is_constants = |name: &String| constant_enums.iter().any(|(n, _, _)| n == name);
        let mine: Vec<&String> = enum_headers
            .iter()
            .filter(|(name, file)| *file == header.file && !is_constants(name))
            .map(|(name, _)| name)
            .collect();
        let others = enum_headers
            .iter()
            .filter(|(_, file)| *file != header.file)
            .map(|(name, _)| name.clone());

        let mut config = base.clone();
        config.include_guard = Some(header.guard.to_string());
        config.includes = header.includes.iter().map(|s| s.to_string()).collect();
        // Its enums and its callback types, even where no function uses them.
        let own_callbacks = callbacks.iter().filter(|name| {
            let item = format!("pub type {name}");
            header
                .modules
                .iter()
                .any(|m| contains_word(&modules[*m], &item))
        });
        config.export.include = mine.iter().copied().chain(own_callbacks).cloned().collect();
        config.export.exclude = others.collect();
        // A `Tox_User_Status_Value` (an alias of `u32`: what C passes for a
        // `Tox_User_Status`) is declared as the enum, as in c-toxcore.
        for name in enum_headers.keys() {
            let value = format!("{name}_Value");
            config.export.rename.insert(value.clone(), name.clone());
            config.export.exclude.push(value);
        }
        config.export.item_types = vec![
            cbindgen::ItemType::Enums,
            cbindgen::ItemType::Structs,
            cbindgen::ItemType::Unions,
            cbindgen::ItemType::Typedefs,
            cbindgen::ItemType::OpaqueItems,
            cbindgen::ItemType::Functions,
        ];

        let sources = || header.modules.iter().chain(header.type_modules);
        let (before, guarded) = preamble(header, &modules, &constant_enums);
        if !before.is_empty() {
            config.after_includes = Some(before);
        }
        config.export.exclude.extend(guarded);
        let aliases = uppercase_aliases(header, &mine, &constant_enums);

        let mut builder = cbindgen::Builder::new().with_config(config);
        for module in sources() {
            builder = builder.with_src(dir.join(format!("{module}.rs")));
        }
        let bindings = builder
            .generate()
            .unwrap_or_else(|e| panic!("cbindgen, {}: {e}", header.file));
        let mut text = Vec::new();
        bindings.write(&mut text);
        let text = String::from_utf8(text).unwrap();
        let text = tidy_docs(&callbacks_as_function_types(&text));
        let end = format!("#endif  /* {} */", header.guard);
        let at = text.rfind(&end).expect("cbindgen's include guard");
        let text = format!("{}{aliases}\n{}", &text[..at], &text[at..]);
        headers.insert(header.file, text);
    }
    let _ = std::fs::remove_dir_all(&dir);
    headers
}

#[test]
fn checked_in_headers_are_the_generated_ones() {
    let generated = generate();
    let dir = include_dir().join("tox");
    if std::env::var_os("RUSTOX_WRITE_HEADERS").is_some() {
        std::fs::create_dir_all(&dir).unwrap();
        for (file, text) in &generated {
            std::fs::write(dir.join(file), text).unwrap();
        }
        eprintln!("wrote {}", dir.display());
        return;
    }
    let stale: Vec<&str> = generated
        .iter()
        .filter(|(file, text)| std::fs::read_to_string(dir.join(file)).ok().as_ref() != Some(text))
        .map(|(file, _)| *file)
        .collect();
    let mut extra: Vec<String> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|f| !generated.contains_key(f.as_str()))
                .collect()
        })
        .unwrap_or_default();
    extra.sort();
    assert!(
        stale.is_empty() && extra.is_empty(),
        "{} differ from what the crate generates ({stale:?} stale, {extra:?} not generated): \
         regenerate them with\n    RUSTOX_WRITE_HEADERS=1 cargo test -p rustox-ffi --test \
         headers\nand commit the result",
        dir.display()
    );
}

// ---------------------------------------------------------------------------------------
// The C tools, and the declarations of a set of headers as the C compiler reads them
// ---------------------------------------------------------------------------------------

/// The five headers, as a client includes them.
const INCLUDES: &str = "#include <tox/tox.h>\n#include <tox/toxav.h>\n\
                        #include <tox/toxencryptsave.h>\n#include <tox/tox_events.h>\n\
                        #include <tox/tox_dispatch.h>\n";

/// What the C tests need.
struct Tools {
    /// The C compiler (`CC`, or `cc`).
    cc: String,
    /// The directory holding Debian's `tox/*.h` (pkg-config's toxcore `includedir`).
    debian: PathBuf,
}

/// The tools, or `None` (with the reason printed) to skip a test; with `CI` set, a missing
/// tool fails it.
fn tools() -> Option<Tools> {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let has_cc = Command::new(&cc)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let debian = Command::new("pkg-config")
        .args(["--variable=includedir", "toxcore"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
        .filter(|dir| dir.join("tox/tox.h").is_file());
    let missing = match (has_cc, &debian) {
        (true, Some(_)) => {
            return Some(Tools {
                cc,
                debian: debian.unwrap(),
            })
        }
        (false, _) => format!("no C compiler ({cc})"),
        (true, None) => "no pkg-config toxcore with tox/tox.h (Debian's libtoxcore-dev)".into(),
    };
    rustox_testkit::ci::skip_or_fail(missing);
    None
}

/// Runs `command`, failing the test with its output if it fails.
fn run(command: &mut Command) -> String {
    let out = command
        .output()
        .unwrap_or_else(|e| panic!("{command:?}: {e}"));
    assert!(
        out.status.success(),
        "{command:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

/// A function prototype, or a function type (`typedef void tox_friend_message_cb(..)`).
struct Function {
    /// The declaration as written (whitespace collapsed), without its `;`.
    text: String,
    /// The return type, normalised ([`normalise`]).
    ret: String,
    /// The parameters as written.
    params: Vec<String>,
}

impl Function {
    /// The parameters' types, normalised.
    fn param_types(&self) -> Vec<String> {
        self.params
            .iter()
            .map(|p| normalise(&strip_name(p).0))
            .collect()
    }
}

/// An enum: `enum tag { .. }` or `typedef enum tag { .. } name`.
struct Enum {
    /// The typedef name, else the tag.
    name: String,
    /// Whether `name` is a typedef (else only `enum name` exists).
    typedef: bool,
    /// Its constants: (name, `= value` as written, if any).
    constants: Vec<(String, Option<String>)>,
}

/// A macro of `-dM`: its parameters (function-like) and body.
struct Macro {
    params: Option<Vec<String>>,
    body: String,
}

/// The declarations of a set of `tox/*.h`.
#[derive(Default)]
struct Api {
    functions: BTreeMap<String, Function>,
    /// Function types (the callback types).
    callbacks: BTreeMap<String, Function>,
    enums: Vec<Enum>,
    /// Other typedefs (opaque types, aliases): name -> declaration.
    typedefs: BTreeMap<String, String>,
    /// Struct definitions: tag -> fields (declaration, name).
    structs: BTreeMap<String, Vec<(String, String)>>,
    macros: BTreeMap<String, Macro>,
}

impl Api {
    /// The declarations of the five headers found under `include` (`include/tox/*.h`).
    fn read(tools: &Tools, include: &Path, scratch: &Path) -> Api {
        let source = scratch.join("all.c");
        std::fs::write(&source, INCLUDES).unwrap();
        let cc = |args: &[&str]| {
            let mut command = Command::new(&tools.cc);
            command
                .args(["-std=c11", "-E"])
                .arg("-I")
                .arg(include)
                .args(args)
                .arg(&source);
            run(&mut command)
        };
        let mut api = Api::default();
        for line in cc(&["-dM"]).lines() {
            let Some(rest) = line.strip_prefix("#define TOX") else {
                continue;
            };
            let name = format!("TOX{}", ident(rest));
            let rest = &rest[name.len() - 3..];
            let (params, body) = match rest.strip_prefix('(') {
                Some(rest) => {
                    let (params, body) = rest.split_once(')').unwrap();
                    let params = params.split(',').map(str::trim).filter(|p| !p.is_empty());
                    (Some(params.map(str::to_string).collect()), body)
                }
                None => (None, rest),
            };
            api.macros.insert(
                name,
                Macro {
                    params,
                    body: body.trim().to_string(),
                },
            );
        }
        // The preprocessed text of the tox/ headers only (line markers say which file).
        let tox_dir = include.join("tox");
        let mut text = String::new();
        let mut inside = false;
        for line in cc(&[]).lines() {
            if let Some(marker) = line.strip_prefix("# ") {
                let file = marker.split('"').nth(1).unwrap_or("");
                inside = Path::new(file).starts_with(&tox_dir);
            } else if inside {
                text.push_str(line);
                text.push(' ');
            }
        }
        for statement in statements(&text) {
            api.add(&statement);
        }
        api
    }

    fn add(&mut self, statement: &str) {
        let typedef = statement.strip_prefix("typedef ");
        let declaration = typedef.unwrap_or(statement);
        if let Some(open) = declaration.find('{') {
            let close = declaration.rfind('}').unwrap();
            let head: Vec<&str> = declaration[..open].split_whitespace().collect();
            let tail = declaration[close + 1..].trim();
            let body = &declaration[open + 1..close];
            let name = if tail.is_empty() { head[1] } else { tail };
            match head[0] {
                "enum" => self.enums.push(Enum {
                    name: name.to_string(),
                    typedef: !tail.is_empty(),
                    constants: body
                        .split(',')
                        .map(str::trim)
                        .filter(|c| !c.is_empty())
                        .map(|c| match c.split_once('=') {
                            Some((n, v)) => (n.trim().to_string(), Some(v.trim().to_string())),
                            None => (c.to_string(), None),
                        })
                        .collect(),
                }),
                "struct" => {
                    let fields = body
                        .split(';')
                        .map(str::trim)
                        .filter(|f| !f.is_empty())
                        .map(|f| (f.to_string(), strip_name(f).1))
                        .collect();
                    self.structs.insert(head[1].to_string(), fields);
                }
                other => panic!("unexpected definition ({other}): {statement}"),
            }
        } else if let Some(open) = declaration.find('(') {
            let name = declaration[..open].trim_end();
            let name_start = name.rfind(|c| !is_ident_char(c)).map_or(0, |i| i + 1);
            let (ret, name) = (&name[..name_start], &name[name_start..]);
            assert!(!name.is_empty(), "a function pointer type: {statement}");
            let close = declaration.rfind(')').unwrap();
            let params = split_top_level(&declaration[open + 1..close], ',');
            let params = if params == ["void"] {
                Vec::new()
            } else {
                params
            };
            let function = Function {
                text: statement.to_string(),
                ret: normalise(ret),
                params,
            };
            let map = if typedef.is_some() {
                &mut self.callbacks
            } else {
                &mut self.functions
            };
            map.insert(name.to_string(), function);
        } else if typedef.is_some() {
            let (_, name) = strip_name(declaration);
            self.typedefs.insert(name, statement.to_string());
        } else {
            panic!("unexpected declaration: {statement}");
        }
    }

    /// The names of enum types: typedefs and tags.
    fn enum_types(&self) -> BTreeSet<String> {
        self.enums.iter().map(|e| e.name.clone()).collect()
    }
}

/// The top-level statements of preprocessed C (split at `;` outside braces), whitespace
/// collapsed.
fn statements(text: &str) -> Vec<String> {
    split_top_level(text, ';')
        .into_iter()
        .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|s| !s.is_empty())
        .collect()
}

/// `text` split at `separator` outside brackets, trimmed.
fn split_top_level(text: &str, separator: char) -> Vec<String> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut part = String::new();
    for c in text.chars() {
        match c {
            '(' | '{' | '[' => depth += 1,
            ')' | '}' | ']' => depth -= 1,
            _ => {}
        }
        if c == separator && depth == 0 {
            parts.push(part.trim().to_string());
            part.clear();
        } else {
            part.push(c);
        }
    }
    if !part.trim().is_empty() {
        parts.push(part.trim().to_string());
    }
    parts
}

/// C tokens: identifiers and numbers, and single punctuation characters.
fn tokens(text: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut word = String::new();
    for c in text.chars() {
        if is_ident_char(c) {
            word.push(c);
            continue;
        }
        if !word.is_empty() {
            tokens.push(std::mem::take(&mut word));
        }
        if !c.is_whitespace() {
            tokens.push(c.to_string());
        }
    }
    if !word.is_empty() {
        tokens.push(word);
    }
    tokens
}

/// A declaration split into its type and its declared name (empty for an unnamed
/// parameter: `uint32_t`, `const uint8_t*`, `unsigned int`).
fn strip_name(declaration: &str) -> (String, String) {
    const NOT_A_TYPE: &[&str] = &["const", "volatile", "struct", "enum", "unsigned", "signed"];
    let mut tokens = tokens(declaration);
    let last = tokens.last().cloned().unwrap_or_default();
    let named = ident(&last) == last
        && tokens[..tokens.len() - 1]
            .iter()
            .any(|t| t == "*" || ident(t) == t && !NOT_A_TYPE.contains(&t.as_str()));
    if named {
        tokens.pop();
        (tokens.join(" "), last)
    } else {
        (tokens.join(" "), String::new())
    }
}

/// A type as this test compares it: `struct`/`enum` keywords dropped, one space between
/// tokens (`const struct Tox*` -> `const Tox *`).
fn normalise(ty: &str) -> String {
    tokens(ty)
        .into_iter()
        .filter(|t| t != "struct" && t != "enum")
        .collect::<Vec<_>>()
        .join(" ")
}

/// Our library as `cargo test -p rustox-ffi` built it for this run: in the test binary's own
/// directory (`target/<profile>/deps`); the copy one level up is refreshed only by `cargo
/// build` and may be stale.
fn our_library() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let lib = exe.parent().unwrap().join("libtoxcore.so");
    assert!(
        lib.is_file(),
        "{} missing: cargo test -p rustox-ffi builds it",
        lib.display()
    );
    lib
}

// ---------------------------------------------------------------------------------------
// A C99 client of our headers
// ---------------------------------------------------------------------------------------

/// A client program that uses everything `ours` and `debian` declare, through our
/// headers: every function called (with zeros: it never runs), a client function for each
/// callback type, declared with the type and written with Debian's parameters, registered
/// where a function takes that type, every type and `struct Tox_Options` field, every enum
/// constant and macro.
fn client_program(ours: &Api, debian: &Api) -> String {
    let mut c = format!("{INCLUDES}#include <stdio.h>\n\n");
    for (name, callback) in &debian.callbacks {
        let params: Vec<(String, String)> = callback.params.iter().map(|p| strip_name(p)).collect();
        assert!(
            params.iter().all(|(_, n)| !n.is_empty()),
            "unnamed: {}",
            callback.text
        );
        writeln!(c, "static {name} on_{name};").unwrap();
        writeln!(
            c,
            "static {} on_{name}({})\n{{",
            callback.ret,
            callback.params.join(", ")
        )
        .unwrap();
        for (_, param) in params {
            writeln!(c, "    (void){param};").unwrap();
        }
        c.push_str("}\n\n");
    }
    c.push_str("void use_everything(void);\nvoid use_everything(void)\n{\n");
    for (name, function) in &ours.functions {
        let zeros = vec!["0"; function.params.len()].join(", ");
        writeln!(c, "    (void){name}({zeros});").unwrap();
    }
    for name in debian.callbacks.keys() {
        let pointer = normalise(&format!("{name} *"));
        let registrations: Vec<(&String, &Function)> = ours
            .functions
            .iter()
            .filter(|(_, f)| f.param_types().contains(&pointer))
            .collect();
        for (registration, function) in &registrations {
            let arguments: Vec<String> = function
                .param_types()
                .iter()
                .map(|t| {
                    if *t == pointer {
                        format!("on_{name}")
                    } else {
                        "0".into()
                    }
                })
                .collect();
            writeln!(c, "    {registration}({});", arguments.join(", ")).unwrap();
        }
        if registrations.is_empty() {
            writeln!(c, "    (void)on_{name};").unwrap();
        }
    }
    let types: BTreeSet<&String> = [ours, debian]
        .iter()
        .flat_map(|api| {
            api.typedefs
                .keys()
                .chain(api.callbacks.keys())
                .chain(api.enums.iter().filter(|e| e.typedef).map(|e| &e.name))
        })
        .collect();
    for (i, name) in types.iter().enumerate() {
        writeln!(c, "    {{ {name} *t{i} = 0; (void)t{i}; }}").unwrap();
    }
    c.push_str(
        "    {\n        struct Tox_Options options;\n        tox_options_default(&options);\n",
    );
    let fields: BTreeSet<&String> = [ours, debian]
        .iter()
        .flat_map(|api| api.structs["Tox_Options"].iter().map(|(_, name)| name))
        .collect();
    for field in fields {
        writeln!(c, "        (void)options.{field};").unwrap();
    }
    c.push_str("    }\n    {\n        static const long long values[] = {\n");
    let mut constants = BTreeSet::new();
    for api in [ours, debian] {
        constants.extend(
            api.enums
                .iter()
                .flat_map(|e| e.constants.iter().map(|(n, _)| n)),
        );
        constants.extend(
            api.macros
                .iter()
                .filter(|(_, m)| m.params.is_none() && !m.body.is_empty())
                .map(|(n, _)| n),
        );
    }
    for constant in constants {
        writeln!(c, "            {constant},").unwrap();
    }
    c.push_str("        };\n        (void)values;\n    }\n");
    let mut function_macros = BTreeMap::new();
    for api in [ours, debian] {
        for (name, m) in &api.macros {
            if let Some(params) = &m.params {
                function_macros.insert(name, params.len());
            }
        }
    }
    for (name, arity) in function_macros {
        writeln!(c, "    (void)({name}({}));", vec!["0"; arity].join(", ")).unwrap();
    }
    c.push_str(
        "}\n\nint main(int argc, char **argv)\n{\n    (void)argv;\n    if (argc < 0) {\n        \
         use_everything();\n    }\n    printf(\"%u.%u.%u %d\\n\", tox_version_major(), \
         tox_version_minor(), tox_version_patch(),\n           \
         (int)TOX_VERSION_IS_ABI_COMPATIBLE());\n    return 0;\n}\n",
    );
    c
}

#[test]
fn a_c99_client_of_our_headers_compiles_and_links() {
    let Some(tools) = tools() else { return };
    let scratch = scratch_dir("client");
    let ours = Api::read(&tools, &include_dir(), &scratch);
    let debian = Api::read(&tools, &tools.debian, &scratch);
    let library = our_library();

    // Every function our library exports is declared.
    let nm = run(Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(&library));
    let exported: BTreeSet<&str> = nm
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .filter(|s| s.starts_with("tox"))
        .collect();
    let undeclared: Vec<&&str> = exported
        .iter()
        .filter(|s| !ours.functions.contains_key(**s))
        .collect();
    assert!(
        undeclared.is_empty(),
        "exported without a prototype: {undeclared:?}"
    );

    // They also compile as C++ (qTox is C++), where there is a C++ compiler.
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    if Command::new(&cxx)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        let source = scratch.join("headers.cc");
        std::fs::write(&source, format!("{INCLUDES}int main() {{ return 0; }}\n")).unwrap();
        run(Command::new(&cxx)
            .args([
                "-std=c++11",
                "-Wall",
                "-Werror",
                "-pedantic",
                "-fsyntax-only",
                "-I",
            ])
            .arg(include_dir())
            .arg(&source));
    } else {
        eprintln!("no C++ compiler ({cxx}): the headers were not compiled as C++");
    }

    let source = scratch.join("client.c");
    std::fs::write(&source, client_program(&ours, &debian)).unwrap();
    let program = scratch.join("client");
    let output = run(Command::new(&tools.cc)
        .args(["-std=c99", "-Wall", "-Werror", "-H", "-I"])
        .arg(include_dir())
        .arg(&source)
        .arg(&library)
        .arg("-o")
        .arg(&program));
    // `-H` lists the headers read: ours, never Debian's.
    let headers: BTreeSet<&str> = output
        .lines()
        .filter_map(|l| l.trim_start_matches('.').strip_prefix(' '))
        .filter(|path| path.contains("/tox/"))
        .collect();
    let expected: BTreeSet<String> = HEADERS
        .iter()
        .map(|h| include_dir().join("tox").join(h.file).display().to_string())
        .collect();
    assert_eq!(
        headers,
        expected.iter().map(String::as_str).collect(),
        "the headers read"
    );

    // It loads our library (as libtoxcore.so.2, its SONAME) with every symbol bound.
    let lib_dir = scratch.join("lib");
    std::fs::create_dir_all(&lib_dir).unwrap();
    std::os::unix::fs::symlink(&library, lib_dir.join("libtoxcore.so.2")).unwrap();
    let loaded = run(Command::new(&program)
        .env("LD_LIBRARY_PATH", &lib_dir)
        .env("LD_TRACE_LOADED_OBJECTS", "1"));
    let ours = format!(
        "libtoxcore.so.2 => {}",
        lib_dir.join("libtoxcore.so.2").display()
    );
    assert!(
        loaded.contains(&ours),
        "the loader did not pick our library:\n{loaded}"
    );
    let printed = run(Command::new(&program)
        .env("LD_LIBRARY_PATH", &lib_dir)
        .env("LD_BIND_NOW", "1"));
    assert_eq!(printed.trim(), "0.2.18 1");
    let _ = std::fs::remove_dir_all(&scratch);
}

// ---------------------------------------------------------------------------------------
// Debian's declarations against ours
// ---------------------------------------------------------------------------------------

/// Where our headers knowingly differ from Debian's, because the Rust definition does:
/// (declaration or `struct.field`, why). The test checks that each still differs, so the
/// entry goes when Rust is fixed.
const KNOWN_DIFFERENCES: &[(&str, &str)] = &[];

fn known_difference(name: &str) -> bool {
    KNOWN_DIFFERENCES.iter().any(|(n, _)| *n == name)
}

/// Compares two declared types by name. Allowed: a Debian enum that ours passes as
/// `uint32_t` (the Rust side takes any integer C sends and checks it, or gives back what
/// a client stored): the same ABI, and C converts either way.
fn compare_types(
    what: &str,
    debian: &str,
    ours: &str,
    enums: &BTreeSet<String>,
    allowed: &mut Vec<String>,
    wrong: &mut Vec<String>,
) {
    if debian == ours {
        return;
    }
    if ours == "uint32_t" && enums.contains(debian) {
        allowed.push(format!("{what}: {debian} as uint32_t"));
    } else {
        wrong.push(format!("{what}: Debian's {debian}, ours {ours}"));
    }
}

/// Compares functions (or function types) of Debian's with ours by their types' names.
fn compare_functions(
    debian: &BTreeMap<String, Function>,
    ours: &BTreeMap<String, Function>,
    enums: &BTreeSet<String>,
    allowed: &mut Vec<String>,
    wrong: &mut Vec<String>,
) {
    for (name, theirs) in debian {
        let Some(mine) = ours.get(name) else {
            wrong.push(format!("{name}: missing"));
            continue;
        };
        let (their_params, my_params) = (theirs.param_types(), mine.param_types());
        let mut differences = Vec::new();
        if their_params.len() != my_params.len() {
            differences.push(format!(
                "{name}: parameters {their_params:?}, ours {my_params:?}"
            ));
        } else {
            let what = format!("{name} returns");
            compare_types(
                &what,
                &theirs.ret,
                &mine.ret,
                enums,
                allowed,
                &mut differences,
            );
            for (i, (theirs, mine)) in their_params.iter().zip(&my_params).enumerate() {
                let what = format!("{name} parameter {}", i + 1);
                compare_types(&what, theirs, mine, enums, allowed, &mut differences);
            }
        }
        if known_difference(name) {
            assert!(
                !differences.is_empty(),
                "{name} now agrees with Debian's: drop it from KNOWN_DIFFERENCES"
            );
        } else {
            wrong.extend(differences);
        }
    }
}

/// `enum X { A, B = 2 }` copied as `enum Debian_X { DEBIAN_A, DEBIAN_B = 2 }`, and each
/// constant compared with ours.
fn check_enum(c: &mut String, e: &Enum) {
    let renamed = |text: &str| {
        e.constants
            .iter()
            .fold(text.to_string(), |text, (name, _)| {
                replace_word(&text, name, &format!("DEBIAN_{name}"))
            })
    };
    writeln!(c, "enum Debian_{} {{", e.name).unwrap();
    for (name, value) in &e.constants {
        match value {
            Some(value) => writeln!(c, "    DEBIAN_{name} = {},", renamed(value)).unwrap(),
            None => writeln!(c, "    DEBIAN_{name},").unwrap(),
        }
    }
    c.push_str("};\n");
    for (name, _) in &e.constants {
        writeln!(
            c,
            "_Static_assert((long long){name} == (long long)DEBIAN_{name}, \"value of {name}\");"
        )
        .unwrap();
    }
    if e.typedef {
        let name = &e.name;
        writeln!(
            c,
            "_Static_assert(sizeof({name}) == sizeof(enum Debian_{name}), \"size of {name}\");"
        )
        .unwrap();
    }
}

/// `struct X`'s fields copied as `struct Debian_X`; offsets, types, size and alignment
/// compared with ours.
fn check_struct(c: &mut String, tag: &str, fields: &[(String, String)]) {
    writeln!(c, "struct Debian_{tag} {{").unwrap();
    for (declaration, _) in fields {
        writeln!(c, "    {declaration};").unwrap();
    }
    c.push_str("};\n");
    for what in ["sizeof", "_Alignof"] {
        writeln!(
            c,
            "_Static_assert({what}(struct {tag}) == {what}(struct Debian_{tag}), \"{what} {tag}\");"
        )
        .unwrap();
    }
    for (_, field) in fields {
        writeln!(
            c,
            "_Static_assert(offsetof(struct {tag}, {field}) == offsetof(struct Debian_{tag}, \
             {field}), \"offset of {tag}.{field}\");"
        )
        .unwrap();
        let types = format!(
            "__typeof__(((struct {tag} *)0)->{field}), __typeof__(((struct Debian_{tag} *)0)->{field})"
        );
        if known_difference(&format!("{tag}.{field}")) {
            writeln!(c, "/* {tag}.{field}: a known difference */").unwrap();
        } else {
            writeln!(
                c,
                "_Static_assert(__builtin_types_compatible_p({types}), \"type of {tag}.{field}\");"
            )
            .unwrap();
        }
    }
}

/// Debian's macros against ours: guards defined, values equal; a function-like macro
/// copied as `DEBIAN_X` and compared over small arguments (or, when it calls the library,
/// only expanded).
fn check_macros(c: &mut String, macros: &BTreeMap<String, Macro>) {
    const ARGUMENTS: [u32; 7] = [0, 1, 2, 3, 17, 18, 19];
    let mut calls = String::new();
    for (name, m) in macros {
        writeln!(
            c,
            "#ifndef {name}\n#error \"{name} is not defined\"\n#endif"
        )
        .unwrap();
        match &m.params {
            None if m.body.is_empty() => {}
            None => writeln!(
                c,
                "_Static_assert({name} == {}, \"value of {name}\");",
                m.body
            )
            .unwrap(),
            Some(params) => {
                writeln!(c, "#define DEBIAN_{name}({}) {}", params.join(", "), m.body).unwrap();
                if params.is_empty() {
                    writeln!(calls, "    (void)({name}() == DEBIAN_{name}());").unwrap();
                    continue;
                }
                let mut arguments = vec![0usize; params.len()];
                loop {
                    let list: Vec<String> = arguments
                        .iter()
                        .map(|&i| ARGUMENTS[i].to_string())
                        .collect();
                    let list = list.join(", ");
                    writeln!(
                        c,
                        "_Static_assert(({name}({list})) == (DEBIAN_{name}({list})), \
                         \"{name}({list})\");"
                    )
                    .unwrap();
                    // The next combination of arguments, the last one fastest.
                    let Some(i) = arguments.iter().rposition(|&i| i + 1 < ARGUMENTS.len()) else {
                        break;
                    };
                    arguments[i] += 1;
                    arguments[i + 1..].iter_mut().for_each(|a| *a = 0);
                }
            }
        }
    }
    writeln!(
        c,
        "void use_macros(void);\nvoid use_macros(void)\n{{\n{calls}}}"
    )
    .unwrap();
}

#[test]
fn debian_declarations_agree_with_ours() {
    let Some(tools) = tools() else { return };
    let scratch = scratch_dir("debian");
    let ours = Api::read(&tools, &include_dir(), &scratch);
    let debian = Api::read(&tools, &tools.debian, &scratch);

    // By name: every function, callback type and Tox_Options field of Debian's has ours,
    // with the same types.
    let enums = debian.enum_types();
    let (mut allowed, mut wrong) = (Vec::new(), Vec::new());
    compare_functions(
        &debian.functions,
        &ours.functions,
        &enums,
        &mut allowed,
        &mut wrong,
    );
    compare_functions(
        &debian.callbacks,
        &ours.callbacks,
        &enums,
        &mut allowed,
        &mut wrong,
    );
    for (tag, fields) in &debian.structs {
        let mine: BTreeMap<&String, String> = ours.structs[tag]
            .iter()
            .map(|(declaration, name)| (name, normalise(&strip_name(declaration).0)))
            .collect();
        for (declaration, name) in fields {
            let what = format!("{tag}.{name}");
            let theirs = normalise(&strip_name(declaration).0);
            let mut differences = Vec::new();
            match mine.get(name) {
                Some(mine) => {
                    compare_types(&what, &theirs, mine, &enums, &mut allowed, &mut differences)
                }
                None => differences.push(format!("{what}: missing")),
            }
            if known_difference(&what) {
                assert!(
                    !differences.is_empty(),
                    "{what}: drop it from KNOWN_DIFFERENCES"
                );
            } else {
                wrong.extend(differences);
            }
        }
    }
    eprintln!(
        "Debian enums that ours passes as uint32_t ({}):\n  {}",
        allowed.len(),
        allowed.join("\n  ")
    );

    // In C: Debian's declarations after ours. A conflicting redeclaration does not compile;
    // typedefs may be repeated in C11 when they name the same type.
    let mut c = format!("{INCLUDES}#include <stddef.h>\n\n");
    let declarations = debian
        .functions
        .iter()
        .chain(&debian.callbacks)
        .map(|(name, f)| (name, &f.text))
        .chain(&debian.typedefs);
    for (name, text) in declarations {
        if known_difference(name) {
            writeln!(c, "/* {name}: a known difference */").unwrap();
        } else {
            writeln!(c, "{text};").unwrap();
        }
    }
    c.push('\n');
    for e in &debian.enums {
        check_enum(&mut c, e);
    }
    for (tag, fields) in &debian.structs {
        check_struct(&mut c, tag, fields);
    }
    check_macros(&mut c, &debian.macros);
    let source = scratch.join("debian.c");
    std::fs::write(&source, c).unwrap();
    let compiled = Command::new(&tools.cc)
        .args(["-std=c11", "-Wall", "-Werror", "-fsyntax-only", "-I"])
        .arg(include_dir())
        .arg(&source)
        .output()
        .unwrap();
    assert!(
        wrong.is_empty() && compiled.status.success(),
        "declared unlike Debian's:\n{}\n{}",
        wrong.join("\n"),
        String::from_utf8_lossy(&compiled.stderr)
    );
    let _ = std::fs::remove_dir_all(&scratch);
}
