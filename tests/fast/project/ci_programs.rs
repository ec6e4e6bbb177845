//! Every program the tests start by name is in `.ci/run`'s `PROGRAMS`, the one list it
//! installs from: a new backend's tests cannot forget their install step (GNU screen's did, and
//! `.ci/run` failed on every fresh machine).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::programs;

/// The `.rs` files under `dir`, recursively (node packages and fixtures are not ours).
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read a source folder") {
        let path = entry.expect("a folder entry").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if path.is_dir() {
            if !matches!(name, "node_modules" | "fixtures" | "snapshots" | "interop") {
                sources(&path, out);
            }
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
}

/// The string literals that follow `call` in `text`: `Command::new("tmux")` gives `tmux`.
fn literals_after(text: &str, call: &str) -> Vec<String> {
    text.match_indices(call)
        .filter_map(|(at, _)| {
            let rest = &text[at + call.len()..];
            let end = rest.find('"')?;
            Some(rest[..end].to_string())
        })
        .collect()
}

/// Every program the tests and the code under test start by a literal name.
fn programs_started() -> BTreeSet<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    sources(&root.join("tests"), &mut files);
    sources(&root.join("src"), &mut files);
    sources(&root.join("crates"), &mut files);
    let mut started = BTreeSet::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("read a source file");
        let shown = file
            .strip_prefix(root)
            .unwrap_or(&file)
            .display()
            .to_string();
        for call in ["Command::new(\"", "programs::required(\""] {
            for program in literals_after(&text, call) {
                if !program.is_empty() && !program.contains('/') {
                    started.insert((program, shown.clone()));
                }
            }
        }
    }
    started
}

#[test]
fn every_program_a_test_starts_is_installed_by_ci() {
    let listed: BTreeSet<String> = programs::listed().into_iter().map(|(p, _)| p).collect();
    let started = programs_started();
    assert!(
        started.iter().any(|(p, _)| p == "screen"),
        "the scan finds the programs the tests start (screen_backend's screen is one): {started:?}"
    );
    let missing: Vec<String> = started
        .iter()
        .filter(|(program, _)| !listed.contains(program))
        .map(|(program, file)| format!("`{program}` (started in {file})"))
        .collect();
    assert!(
        missing.is_empty(),
        "not in .ci/run's PROGRAMS, so .ci/run would not install them on a fresh machine: {}",
        missing.join(", ")
    );
}

#[test]
fn every_listed_program_says_how_it_is_installed() {
    for (program, install) in programs::listed() {
        assert!(
            install.starts_with("apt:") || install.starts_with("cargo:"),
            ".ci/run PROGRAMS: `{program}` has no install (apt:<package> or cargo:<crate>): {install}"
        );
    }
}

#[test]
fn ci_run_installs_from_the_list() {
    let run = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/run"))
        .expect("read .ci/run");
    assert!(
        run.contains("done <<< \"$PROGRAMS\""),
        ".ci/run installs from its PROGRAMS list"
    );
    for program in ["tmux", "screen", "kitty", "Xvfb", "man", "git", "zellij"] {
        assert!(
            programs::listed().iter().any(|(p, _)| p == program),
            "{program} is in .ci/run's list"
        );
    }
}

#[test]
fn a_listed_program_is_found_on_path() {
    let sh = programs::required("sh");
    assert!(sh.is_file(), "sh is found where it is: {}", sh.display());
}
