//! The repository's layout rules, checked on the tree as it is (docs/conventions.md, "Layout"):
//! no source file too big to read, no import loop between files, nothing below the drivers
//! reaching up into them, no tracker numbers in comments, and the shipped binary free of the
//! test rig. Each rule reads the source as text: these are checks on how the code is arranged,
//! not on what it does.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The most lines a source file may hold before its `#[cfg(test)]` part: beyond it a file holds
/// more than one concern (docs/conventions.md).
const MAX_FILE_LINES: usize = 900;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The workspace's member folders, from the root Cargo.toml's `members = [...]`.
fn members() -> Vec<String> {
    let manifest = fs::read_to_string(workspace_root().join("Cargo.toml")).unwrap();
    let start = manifest
        .find("members")
        .expect("members in the workspace manifest");
    let open = start + manifest[start..].find('[').unwrap();
    let close = open + manifest[open..].find(']').unwrap();
    manifest[open + 1..close]
        .split(',')
        .map(|m| m.trim().trim_matches('"').to_string())
        .filter(|m| !m.is_empty())
        .collect()
}

/// A test file: unit-test modules kept in files of their own (`tests.rs`, `tests_*.rs`, anything
/// under a `tests/` folder).
fn is_test_file(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name == "tests.rs"
        || name.starts_with("tests_")
        || path.components().any(|c| c.as_os_str() == "tests")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every non-test source file of every member's `src/`, paired with its text.
fn sources() -> Vec<(String, PathBuf, String)> {
    let root = workspace_root();
    let mut out = Vec::new();
    for member in members() {
        let mut files = Vec::new();
        rust_files(&root.join(&member).join("src"), &mut files);
        files.sort();
        for file in files {
            let rel = file.strip_prefix(root.join(&member).join("src")).unwrap();
            if is_test_file(rel) {
                continue;
            }
            let text = fs::read_to_string(&file).unwrap();
            out.push((member.clone(), rel.to_path_buf(), text));
        }
    }
    out
}

/// The lines before a file's `#[cfg(test)]` part (the whole file when it has none).
fn lines_before_tests(text: &str) -> usize {
    text.lines()
        .position(|l| l.trim_start().starts_with("#[cfg(test)]"))
        .unwrap_or_else(|| text.lines().count())
}

#[test]
fn no_source_file_is_too_big_to_read() {
    let too_big: Vec<String> = sources()
        .iter()
        .filter(|(_, _, text)| lines_before_tests(text) > MAX_FILE_LINES)
        .map(|(m, p, t)| format!("{m}/src/{} ({} lines)", p.display(), lines_before_tests(t)))
        .collect();
    assert!(
        too_big.is_empty(),
        "over {MAX_FILE_LINES} lines before their tests: {too_big:#?}"
    );
}

#[test]
fn comments_cite_no_tracker_numbers() {
    let mut found = Vec::new();
    for (member, path, text) in sources() {
        for (n, line) in text.lines().enumerate() {
            let lower = line.to_ascii_lowercase();
            if let Some(at) = lower.find("issue #") {
                if lower[at + 7..].starts_with(|c: char| c.is_ascii_digit()) {
                    found.push(format!("{member}/src/{}:{}", path.display(), n + 1));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "comments citing a tracker the repository lacks: {found:#?}"
    );
}

/// A module's path inside its crate, from its file: `lib.rs` and `main.rs` are the root,
/// `a/mod.rs` and `a.rs` are `a`.
fn module_path(file: &Path) -> Vec<String> {
    let mut parts: Vec<String> = file
        .iter()
        .map(|c| c.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs");
    let is_root = parts.is_empty() && matches!(stem, "lib" | "main");
    if stem != "mod" && !is_root {
        parts.push(stem.to_string());
    }
    parts
}

/// Source text without comments and string literals, so a path named in prose or a message
/// is no import.
fn code_only(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '/' if chars.peek() == Some(&'/') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                let mut prev = ' ';
                for c in chars.by_ref() {
                    if prev == '*' && c == '/' {
                        break;
                    }
                    prev = c;
                }
            }
            '"' => {
                let mut escaped = false;
                for c in chars.by_ref() {
                    if !escaped && c == '"' {
                        break;
                    }
                    escaped = !escaped && c == '\\';
                }
                out.push_str("\"\"");
            }
            _ => out.push(c),
        }
    }
    out
}

/// The paths a file names: every `use` tree expanded (`a::{b, c::d}` gives `a::b` and
/// `a::c::d`), plus inline `crate::`/`super::` paths in code. Each is a list of segments.
fn named_paths(code: &str) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    let mut rest = code;
    while let Some(at) = find_word(rest, "use") {
        let after = &rest[at + 3..];
        let Some(end) = after.find(';') else { break };
        expand_use_tree(
            &compact_use_tree(&after[..end]),
            &mut Vec::new(),
            &mut paths,
        );
        rest = &after[end..];
    }
    for token in code.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')) {
        if token.starts_with("crate::") || token.starts_with("super::") {
            paths.push(
                token
                    .split("::")
                    .filter(|s| !s.is_empty())
                    .map(String::from)
                    .collect(),
            );
        }
    }
    paths
}

/// The position of `word` standing alone (not inside an identifier), followed by a space.
fn find_word(text: &str, word: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(at) = text[from..].find(word).map(|i| i + from) {
        let before_ok = at == 0
            || !text[..at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_');
        let after_ok = text[at + word.len()..].starts_with(char::is_whitespace);
        if before_ok && after_ok {
            return Some(at);
        }
        from = at + word.len();
    }
    None
}

/// A `use` tree without white space, a rename `a as b` kept as `a@b`.
fn compact_use_tree(tree: &str) -> String {
    tree.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace(" as ", "@")
        .replace(' ', "")
}

fn expand_use_tree(tree: &str, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    if let Some(open) = tree.find('{') {
        let head: Vec<String> = tree[..open]
            .split("::")
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect();
        let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
        let depth_before = prefix.len();
        prefix.extend(head);
        for part in split_top_level(inner) {
            expand_use_tree(part, prefix, out);
        }
        prefix.truncate(depth_before);
    } else {
        let simple = tree.split('@').next().unwrap_or(tree);
        let mut path = prefix.clone();
        path.extend(
            simple
                .split("::")
                .filter(|s| !s.is_empty() && *s != "self")
                .map(String::from),
        );
        out.push(path);
    }
}

fn split_top_level(inner: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts.into_iter().filter(|p| !p.is_empty()).collect()
}

/// One crate's files by module path, with what each file re-exports (`pub use`), so a name
/// reached through a re-export leads to the file that defines it.
struct CrateModules {
    files: BTreeMap<Vec<String>, String>,
    reexports: BTreeMap<Vec<String>, BTreeMap<String, Vec<String>>>,
    codes: BTreeMap<Vec<String>, String>,
}

impl CrateModules {
    fn new(files: &[(PathBuf, String)]) -> Self {
        let mut modules = CrateModules {
            files: BTreeMap::new(),
            reexports: BTreeMap::new(),
            codes: BTreeMap::new(),
        };
        for (path, text) in files {
            let module = module_path(path);
            let code = code_only(text);
            modules
                .files
                .insert(module.clone(), path.display().to_string());
            modules.codes.insert(module, code);
        }
        let modules_list: Vec<Vec<String>> = modules.codes.keys().cloned().collect();
        for module in modules_list {
            let code = modules.codes[&module].clone();
            let mut map = BTreeMap::new();
            let mut rest = code.as_str();
            while let Some(at) = rest.find("pub use ") {
                let after = &rest[at + 8..];
                let Some(end) = after.find(';') else { break };
                let mut paths = Vec::new();
                expand_use_tree(
                    &compact_use_tree(&after[..end]),
                    &mut Vec::new(),
                    &mut paths,
                );
                for path in paths {
                    if let Some(absolute) = modules.absolute(&module, &path) {
                        if let Some(name) = absolute.last() {
                            map.insert(name.clone(), absolute.clone());
                        }
                    }
                }
                rest = &after[end..];
            }
            modules.reexports.insert(module, map);
        }
        modules
    }

    /// A path named in `from`, made absolute in the crate (`crate::`, `super::`, `self::`, or
    /// a child module of `from`); `None` for other crates and the standard library.
    fn absolute(&self, from: &[String], path: &[String]) -> Option<Vec<String>> {
        let first = path.first()?;
        let mut base: Vec<String> = match first.as_str() {
            "crate" => Vec::new(),
            "self" => from.to_vec(),
            "super" => {
                let mut base = from.to_vec();
                let mut rest = path;
                while rest.first().is_some_and(|s| s == "super") {
                    base.pop();
                    rest = &rest[1..];
                }
                base.extend(rest.iter().cloned());
                return Some(base);
            }
            child => {
                let mut candidate = from.to_vec();
                candidate.push(child.to_string());
                if !self.files.contains_key(&candidate) {
                    return None;
                }
                let mut base = from.to_vec();
                base.extend(path.iter().cloned());
                return Some(base);
            }
        };
        base.extend(path[1..].iter().cloned());
        Some(base)
    }

    /// The file that defines what an absolute path names: the longest module prefix, then
    /// through that module's re-exports (a few steps at most).
    fn defining_module(&self, path: &[String]) -> Option<Vec<String>> {
        let mut path = path.to_vec();
        for _ in 0..4 {
            let module = (0..=path.len())
                .rev()
                .map(|n| path[..n].to_vec())
                .find(|prefix| self.files.contains_key(prefix))?;
            let Some(name) = path.get(module.len()) else {
                return Some(module);
            };
            match self.reexports.get(&module).and_then(|r| r.get(name)) {
                Some(target) if *target != path => {
                    let mut next = target.clone();
                    next.extend(path[module.len() + 1..].iter().cloned());
                    path = next;
                }
                _ => return Some(module),
            }
        }
        None
    }

    /// The arrows between files: `a` takes a name defined in `b`. A file reaching its own
    /// ancestor module (a child using what its parent holds) is the module tree itself, not an
    /// arrow between rooms.
    fn arrows(&self) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
        let mut arrows: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
        for (module, code) in &self.codes {
            for path in named_paths(code) {
                let Some(absolute) = self.absolute(module, &path) else {
                    continue;
                };
                let Some(target) = self.defining_module(&absolute) else {
                    continue;
                };
                let is_ancestor = target.len() < module.len() && module.starts_with(&target);
                if target != *module && !is_ancestor {
                    arrows.entry(module.clone()).or_default().insert(target);
                }
            }
        }
        arrows
    }
}

/// The files of each strongly connected group of two or more (Tarjan's algorithm).
fn circles(arrows: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<Vec<Vec<String>>> {
    struct State<'a> {
        arrows: &'a BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        index: BTreeMap<Vec<String>, usize>,
        low: BTreeMap<Vec<String>, usize>,
        stack: Vec<Vec<String>>,
        on_stack: BTreeSet<Vec<String>>,
        found: Vec<Vec<Vec<String>>>,
    }
    fn visit(state: &mut State, node: &Vec<String>) {
        let n = state.index.len();
        state.index.insert(node.clone(), n);
        state.low.insert(node.clone(), n);
        state.stack.push(node.clone());
        state.on_stack.insert(node.clone());
        let arrows = state.arrows;
        for next in arrows.get(node).into_iter().flatten() {
            if !state.index.contains_key(next) {
                visit(state, next);
                let low = state.low[node].min(state.low[next]);
                state.low.insert(node.clone(), low);
            } else if state.on_stack.contains(next) {
                let low = state.low[node].min(state.index[next]);
                state.low.insert(node.clone(), low);
            }
        }
        if state.low[node] == state.index[node] {
            let mut group = Vec::new();
            while let Some(member) = state.stack.pop() {
                state.on_stack.remove(&member);
                let done = member == *node;
                group.push(member);
                if done {
                    break;
                }
            }
            if group.len() > 1 {
                state.found.push(group);
            }
        }
    }
    let mut state = State {
        arrows,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for node in arrows.keys() {
        if !state.index.contains_key(node) {
            visit(&mut state, node);
        }
    }
    state.found
}

/// Each crate's library files (its binaries are roots of their own and left out), grouped.
fn library_files() -> BTreeMap<String, Vec<(PathBuf, String)>> {
    let mut by_crate: BTreeMap<String, Vec<(PathBuf, String)>> = BTreeMap::new();
    for (member, path, text) in sources() {
        if path.starts_with("bin") || path == Path::new("main.rs") && member != "cli" {
            continue;
        }
        by_crate.entry(member).or_default().push((path, text));
    }
    by_crate
}

#[test]
fn no_import_loop_between_files() {
    let mut found = Vec::new();
    for (member, files) in library_files() {
        let modules = CrateModules::new(&files);
        for circle in circles(&modules.arrows()) {
            let names: Vec<String> = circle
                .iter()
                .map(|m| format!("{member}/src/{}", modules.files[m]))
                .collect();
            found.push(names.join(" <-> "));
        }
    }
    assert!(
        found.is_empty(),
        "files that import each other in a circle: {found:#?}"
    );
}

#[test]
fn the_loop_finder_sees_a_circle_through_a_reexport() {
    let files = vec![
        (
            PathBuf::from("lib.rs"),
            "mod a; mod b; pub use a::Thing;".to_string(),
        ),
        (
            PathBuf::from("a.rs"),
            "use crate::b::Other; pub struct Thing;".to_string(),
        ),
        (
            PathBuf::from("b.rs"),
            "use crate::Thing;\npub struct Other;".to_string(),
        ),
    ];
    let modules = CrateModules::new(&files);
    let found = circles(&modules.arrows());
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].len(), 2);
    let tree = vec![
        (PathBuf::from("lib.rs"), "mod a; mod b;".to_string()),
        (
            PathBuf::from("a.rs"),
            "use super::b::{Other, more::Deep};".to_string(),
        ),
        (
            PathBuf::from("b.rs"),
            "// use crate::a::X;\nconst S: &str = \"crate::a::Y\";".to_string(),
        ),
    ];
    assert!(circles(&CrateModules::new(&tree).arrows()).is_empty());
}

#[test]
fn the_sans_io_layers_of_core_do_not_import_the_drivers() {
    let files = library_files().remove("core").expect("core's sources");
    let modules = CrateModules::new(&files);
    let may_drive = |m: &[String]| m.is_empty() || m[0] == "driver" || m[0] == "app";
    let climbing: Vec<String> = modules
        .arrows()
        .iter()
        .filter(|(from, _)| !may_drive(from))
        .flat_map(|(from, to)| {
            to.iter()
                .filter(|t| t.first().is_some_and(|s| s == "driver"))
                .map(|t| {
                    format!(
                        "core/src/{} -> core/src/{}",
                        modules.files[from], modules.files[t]
                    )
                })
        })
        .collect();
    assert!(
        climbing.is_empty(),
        "sans-IO files importing the drivers: {climbing:#?}"
    );
}

/// A member's package name and the names in its `[dependencies]` table (not its
/// dev-dependencies: those never reach a user's build).
fn manifest(member: &str) -> (String, Vec<String>) {
    let text = fs::read_to_string(workspace_root().join(member).join("Cargo.toml")).unwrap();
    let mut name = String::new();
    let mut deps = Vec::new();
    let mut section = "";
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            section = line;
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let key = key.trim().trim_end_matches(".workspace").to_string();
        if section == "[package]" && key == "name" {
            name = value.trim().trim_matches('"').to_string();
        } else if section == "[dependencies]" && !key.starts_with('#') {
            deps.push(key);
        }
    }
    (name, deps)
}

#[test]
fn the_shipped_binary_carries_no_test_rig() {
    let manifests: BTreeMap<String, Vec<String>> = members().iter().map(|m| manifest(m)).collect();
    assert!(manifests.contains_key("rustox") && manifests.contains_key("rustox-auto-tests"));
    let mut reached = BTreeSet::new();
    let mut to_visit = vec!["rustox".to_string()];
    while let Some(package) = to_visit.pop() {
        if !reached.insert(package.clone()) {
            continue;
        }
        for dep in manifests.get(&package).into_iter().flatten() {
            if manifests.contains_key(dep) {
                to_visit.push(dep.clone());
            }
        }
    }
    assert!(
        reached.contains("rustox-simulator"),
        "rustox sim runs the simulator: {reached:?}"
    );
    assert!(
        !reached.contains("rustox-auto-tests"),
        "rustox links the rig: {reached:?}"
    );
    for package in &reached {
        for dep in &manifests[package] {
            assert!(
                !matches!(dep.as_str(), "tun-rs" | "tun"),
                "{package}, which rustox links, depends on {dep}"
            );
        }
    }
}

#[test]
fn the_cli_reaches_the_protocol_through_core() {
    let (name, deps) = manifest("cli");
    assert_eq!(name, "rustox");
    let below_core: Vec<&String> = deps
        .iter()
        .filter(|d| matches!(d.as_str(), "rustox-net-crypto" | "rustox-file-transfer"))
        .collect();
    assert!(
        below_core.is_empty(),
        "rustox depends past core on {below_core:?}: core re-exports what it needs"
    );
}
