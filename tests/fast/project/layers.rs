//! The layers of docs/DESIGN.md, checked on the source: nothing outside `src/ui` and `src/cli`
//! uses ratatui or crossterm, and the UI never touches files, processes, the store, the
//! backends or the teammate runtime.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn sources() -> Vec<(String, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files
        .into_iter()
        .map(|p| {
            let rel = p
                .strip_prefix(&src)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            (rel, std::fs::read_to_string(&p).expect("read file"))
        })
        .collect()
}

/// Lines that are code (not comments).
fn code_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim_start().starts_with("//"))
}

#[test]
fn only_ui_and_cli_use_the_terminal_crates() {
    let mut offenders = Vec::new();
    for (file, text) in sources() {
        if file.starts_with("ui/") || file.starts_with("cli/") || file == "main.rs" {
            continue;
        }
        for (n, line) in code_lines(&text) {
            if ["ratatui", "crossterm"].iter().any(|c| line.contains(c)) {
                offenders.push(format!("src/{file}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "terminal crates outside ui/cli:\n{}",
        offenders.join("\n")
    );
}

#[test]
fn the_ui_never_touches_files_or_processes() {
    let forbidden = [
        "std::fs",
        "std::process",
        "tokio::fs",
        "tokio::process",
        "crate::store",
        "crate::backend",
        "crate::agent::runtime",
        "crate::agent::process",
        "crate::watch",
    ];
    let mut offenders = Vec::new();
    for (file, text) in sources() {
        if !file.starts_with("ui/") {
            continue;
        }
        for (n, line) in code_lines(&text) {
            if let Some(f) = forbidden.iter().find(|f| line.contains(**f)) {
                offenders.push(format!("src/{file}:{}: uses {f}", n + 1));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "the UI reaches below the controller:\n{}",
        offenders.join("\n")
    );
}

#[test]
fn dialogs_never_see_the_ui_state() {
    // A dialog gets a narrow context (what it draws, a sender for its actions), never the
    // whole `AppState`: `ui::modal` does not depend on `ui::state`.
    let forbidden = [
        "ui::state",
        "AppState",
        "super::state",
        "super::super::state",
    ];
    let mut offenders = Vec::new();
    for (file, text) in sources() {
        if !file.starts_with("ui/modal/") {
            continue;
        }
        for (n, line) in code_lines(&text) {
            if let Some(f) = forbidden.iter().find(|f| line.contains(**f)) {
                offenders.push(format!("src/{file}:{}: uses {f}", n + 1));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "a dialog reaches the UI state:\n{}",
        offenders.join("\n")
    );
}

/// The layers of docs/DESIGN.md, lowest first: a module may use its own layer and those
/// before it, never one after it.
const LAYERS: [&str; 11] = [
    "protocol", "store", "config", "watch", "backend", "agent", "lead", "server", "web", "ui",
    "cli",
];

/// Every layer a file's code names: `crate::<layer>` paths (in `use` trees too, grouped or
/// not) and `super::…` chains that climb out of the file's own layer.
fn layers_named(file: &str, text: &str) -> Vec<(String, usize)> {
    paths_named(file, text)
        .into_iter()
        .filter_map(|(path, line)| Some((path.first()?.clone(), line)))
        .collect()
}

/// Every module path of this crate a file's code names, from the crate root (`crate::a::b`,
/// and `super::…` and `self::…` chains resolved against the file's own module), with its line.
fn paths_named(file: &str, text: &str) -> Vec<(Vec<String>, usize)> {
    use syn::visit::Visit;

    struct Names {
        module: Vec<String>,
        found: Vec<(Vec<String>, usize)>,
    }

    impl Names {
        /// The path from the crate root that `segments` name, if they start at `crate`,
        /// `super` or `self`.
        fn resolve(&mut self, segments: &[String], line: usize) {
            let Some(first) = segments.first() else {
                return;
            };
            if first == "crate" {
                self.found.push((segments[1..].to_vec(), line));
                return;
            }
            if first == "self" {
                let mut path = self.module.clone();
                path.extend_from_slice(&segments[1..]);
                self.found.push((path, line));
                return;
            }
            let supers = segments.iter().take_while(|s| *s == "super").count();
            if supers > 0 {
                let kept = self.module.len().saturating_sub(supers);
                let mut path = self.module[..kept].to_vec();
                path.extend_from_slice(&segments[supers..]);
                self.found.push((path, line));
            }
        }

        fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
            match tree {
                syn::UseTree::Path(p) => {
                    prefix.push(p.ident.to_string());
                    self.use_tree(prefix, &p.tree);
                    prefix.pop();
                }
                syn::UseTree::Name(n) => {
                    prefix.push(n.ident.to_string());
                    let line = n.ident.span().start().line;
                    self.resolve(&prefix.clone(), line);
                    prefix.pop();
                }
                syn::UseTree::Rename(r) => {
                    prefix.push(r.ident.to_string());
                    let line = r.ident.span().start().line;
                    self.resolve(&prefix.clone(), line);
                    prefix.pop();
                }
                syn::UseTree::Glob(_) => {
                    let line = 0;
                    self.resolve(&prefix.clone(), line);
                }
                syn::UseTree::Group(g) => {
                    for t in &g.items {
                        self.use_tree(prefix, t);
                    }
                }
            }
        }
    }

    impl<'ast> Visit<'ast> for Names {
        fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
            self.use_tree(&mut Vec::new(), &u.tree);
        }

        fn visit_path(&mut self, path: &'ast syn::Path) {
            let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
            let line = path
                .segments
                .first()
                .map_or(0, |s| s.ident.span().start().line);
            self.resolve(&segments, line);
            syn::visit::visit_path(self, path);
        }
    }

    let syntax = syn::parse_file(text).unwrap_or_else(|e| panic!("src/{file}: {e}"));
    let names = Names {
        module: module_of(file),
        found: Vec::new(),
    };
    let mut names = names;
    names.visit_file(&syntax);
    names.found
}

/// The module path of a source file (`agent/llm/mod.rs` → `agent::llm`).
fn module_of(file: &str) -> Vec<String> {
    let mut module: Vec<String> = file
        .trim_end_matches(".rs")
        .split('/')
        .map(str::to_string)
        .collect();
    if module.last().is_some_and(|m| m == "mod") {
        module.pop();
    }
    module
}

/// Each use of a later layer by an earlier one, as `src/file:line: <layer> uses <layer>`.
fn upward_imports(files: &[(String, String)]) -> Vec<String> {
    let rank = |name: &str| LAYERS.iter().position(|l| *l == name);
    let mut offenders = Vec::new();
    for (file, text) in files {
        let Some(own) = file
            .split('/')
            .next()
            .and_then(|top| rank(top.trim_end_matches(".rs")))
        else {
            continue; // lib.rs, main.rs
        };
        for (layer, line) in layers_named(file, text) {
            if let Some(used) = rank(&layer)
                && used > own
            {
                offenders.push(format!(
                    "src/{file}:{line}: {} uses {}",
                    LAYERS[own], LAYERS[used]
                ));
            }
        }
    }
    offenders
}

#[test]
fn every_layer_uses_only_the_layers_before_it() {
    let offenders = upward_imports(&sources());
    assert!(
        offenders.is_empty(),
        "a layer imports a later one (order: {}):\n{}",
        LAYERS.join(" → "),
        offenders.join("\n")
    );
}

#[test]
fn the_import_check_sees_every_form_of_an_upward_use() {
    let files = [
        ("store/a.rs", "use crate::lead::contract::LeadEvent;"),
        ("store/b.rs", "use crate::{protocol::Task, ui::App};"),
        (
            "backend/c/d.rs",
            "fn f() { let _ = super::super::super::agent::x(); }",
        ),
        ("watch/e.rs", "fn f() -> crate::cli::Args { todo!() }"),
        // Allowed: the same layer, an earlier one, a `super` that stays inside.
        ("lead/f.rs", "use crate::store::Home; use super::view::X;"),
        (
            "ui/g/mod.rs",
            "use super::h::Y; use crate::lead::contract::Z;",
        ),
    ];
    let files: Vec<(String, String)> = files
        .iter()
        .map(|(f, t)| (f.to_string(), t.to_string()))
        .collect();
    let found = upward_imports(&files);
    assert_eq!(
        found,
        vec![
            "src/store/a.rs:1: store uses lead",
            "src/store/b.rs:1: store uses ui",
            "src/backend/c/d.rs:1: backend uses agent",
            "src/watch/e.rs:1: watch uses cli",
        ],
        "{found:#?}"
    );
}

#[test]
fn lib_and_design_list_the_same_layer_order() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = std::fs::read_to_string(root.join("src/lib.rs")).unwrap();
    let order = LAYERS
        .iter()
        .map(|l| format!("`{l}`"))
        .collect::<Vec<_>>()
        .join(" → ");
    assert!(
        lib.replace("\n//! ", " ").contains(&order),
        "src/lib.rs must list the layers as {order}"
    );
    let design = std::fs::read_to_string(root.join("docs/DESIGN.md")).unwrap();
    let rows: Vec<&str> = design
        .lines()
        .filter_map(|l| l.strip_prefix("| `")?.split('/').next())
        .filter(|name| LAYERS.contains(name))
        .collect();
    assert_eq!(rows, LAYERS, "the layer table of docs/DESIGN.md");
}

/// The import cycles among the folders of `root` (and, inside each folder, among its
/// subfolders and files): for every folder, its children are the units, and a file's use of
/// something in a sibling unit is an edge between the two. A cycle that goes through a folder
/// is reported as `in <folder>: a → b → a (file:line, …)`; files of one folder that name each
/// other are not folders and are left alone.
fn folder_cycles(files: &[(String, String)], root: &str) -> Vec<String> {
    use std::collections::{BTreeMap, BTreeSet};
    let modules: BTreeSet<Vec<String>> = files.iter().map(|(f, _)| module_of(f)).collect();
    let folders: BTreeSet<Vec<String>> = files
        .iter()
        .filter(|(f, _)| f.ends_with("/mod.rs"))
        .map(|(f, _)| module_of(f))
        .collect();
    // parent → (unit → units it uses, with where).
    type Edges = BTreeMap<String, BTreeMap<String, String>>;
    let mut graph: BTreeMap<Vec<String>, Edges> = BTreeMap::new();
    for (file, text) in files {
        let own = module_of(file);
        if own.first().map(String::as_str) != Some(root) {
            continue;
        }
        for (mut path, line) in paths_named(file, text) {
            while !path.is_empty() && !modules.contains(&path) {
                path.pop();
            }
            let common = own.iter().zip(&path).take_while(|(a, b)| a == b).count();
            if common == own.len() || common == path.len() {
                continue; // itself, an ancestor or a descendant
            }
            graph
                .entry(own[..common].to_vec())
                .or_default()
                .entry(own[common].clone())
                .or_default()
                .entry(path[common].clone())
                .or_insert_with(|| format!("src/{file}:{line}"));
        }
    }
    let mut cycles = Vec::new();
    for (parent, edges) in &graph {
        let is_folder = |unit: &String| {
            let mut p = parent.clone();
            p.push(unit.clone());
            folders.contains(&p)
        };
        // A unit is on a cycle with `next` when `next` reaches it back.
        let reaches = |from: &String, to: &String| {
            let mut seen = BTreeSet::new();
            let mut stack = vec![from.clone()];
            while let Some(u) = stack.pop() {
                if &u == to {
                    return true;
                }
                if seen.insert(u.clone()) {
                    stack.extend(edges.get(&u).into_iter().flat_map(|e| e.keys().cloned()));
                }
            }
            false
        };
        for (unit, uses) in edges {
            for (next, at) in uses {
                if (is_folder(unit) || is_folder(next)) && reaches(next, unit) {
                    cycles.push(format!(
                        "in {}: {unit} uses {next} ({at}) and {next} reaches {unit} back",
                        parent.join("::")
                    ));
                }
            }
        }
    }
    cycles
}

#[test]
fn no_import_cycle_between_the_folders_of_the_agent() {
    let cycles = folder_cycles(&sources(), "agent");
    assert!(
        cycles.is_empty(),
        "import cycles between folders of src/agent/ (the runtime knows engines only through \
         its Engine trait; the loop's types live beside the loop):\n{}",
        cycles.join("\n")
    );
}

#[test]
fn the_runtime_names_no_engine() {
    let mut offenders = Vec::new();
    for (file, text) in sources() {
        if !file.starts_with("agent/runtime/") {
            continue;
        }
        for (path, line) in paths_named(&file, &text) {
            let named: Vec<&str> = path.iter().map(String::as_str).collect();
            if let ["agent", "llm" | "shell" | "engines", ..] = named.as_slice() {
                offenders.push(format!("src/{file}:{line}: {}", path.join("::")));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "the runtime names an engine's own types:\n{}",
        offenders.join("\n")
    );
}

#[test]
fn the_cycle_check_sees_a_cycle_through_a_folder() {
    let files = [
        ("agent/mod.rs", "pub mod runtime; pub mod llm;"),
        ("agent/runtime/mod.rs", "pub mod teammate;"),
        ("agent/runtime/teammate.rs", "use crate::agent::llm::State;"),
        ("agent/llm/mod.rs", "pub mod turn;"),
        (
            "agent/llm/turn.rs",
            "use super::super::runtime::teammate::T;",
        ),
        // Two files of one folder that name each other: not a folder cycle.
        ("agent/shell/mod.rs", "use self::job::J;"),
        ("agent/shell/job.rs", "use super::Job;"),
        ("agent/shell/plan.rs", "use super::job::J;"),
        ("agent/shell/job2.rs", "use super::plan::P;"),
    ];
    let files: Vec<(String, String)> = files
        .iter()
        .map(|(f, t)| (f.to_string(), t.to_string()))
        .collect();
    let found = folder_cycles(&files, "agent");
    assert_eq!(
        found,
        vec![
            "in agent: llm uses runtime (src/agent/llm/turn.rs:1) and runtime reaches llm back",
            "in agent: runtime uses llm (src/agent/runtime/teammate.rs:1) and llm reaches runtime back",
        ],
        "{found:#?}"
    );
}
