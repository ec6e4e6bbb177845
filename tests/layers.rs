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
