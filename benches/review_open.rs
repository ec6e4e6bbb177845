//! Opening the review of a big branch: a real git repository with a teammate's worktree
//! whose branch changes 200 Rust files, 20,000 changed lines (50 lines replaced in each).
//! Prints the time to the first frame (the summary read from git as `/review` does, the
//! first file's diff read and parsed, the dialog opened and drawn on a 160×50 `TestBackend`)
//! and the time of a page (PageDown and a redraw, syntax colours and word highlights
//! included) over every page of every file; the goals are 100 ms and 16 ms. Run by hand:
//! `cargo bench --bench review_open`.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use teamlead::backend::git;
use teamlead::lead::review::{ReviewSummary, parse_diff};
use teamlead::lead::contract::{LeadCommand, LeadEvent};
use teamlead::ui::AppState;
use teamlead::ui::render;

const FILES: usize = 200;
const LINES: usize = 100;

fn sh(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "b")
        .env("GIT_AUTHOR_EMAIL", "b@example.com")
        .env("GIT_COMMITTER_NAME", "b")
        .env("GIT_COMMITTER_EMAIL", "b@example.com")
        .status()
        .expect("git")
        .success();
    assert!(ok, "git {args:?}");
}

fn source(file: usize, changed: bool) -> String {
    let mut s = String::new();
    for i in 0..LINES {
        if changed && i % 2 == 0 {
            s.push_str(&format!(
                "    let value_{i} = compute({file}, {i}).unwrap_or(default_{i}); // changed\n"
            ));
        } else {
            s.push_str(&format!("    let value_{i} = compute({file}, {i});\n"));
        }
    }
    format!("fn f_{file}() {{\n{s}}}\n")
}

fn percentile(mut v: Vec<Duration>, p: f64) -> Duration {
    v.sort();
    v[((v.len() - 1) as f64 * p) as usize]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(repo.join("src")).expect("mkdir");
    sh(&repo, &["init", "--quiet", "--initial-branch=main"]);
    for f in 0..FILES {
        std::fs::write(repo.join(format!("src/m{f:03}.rs")), source(f, false)).expect("write");
    }
    sh(&repo, &["add", "."]);
    sh(&repo, &["commit", "--quiet", "-m", "base"]);
    let wt = dir.path().join("wt");
    let wt_s = wt.to_string_lossy().to_string();
    sh(
        &repo,
        &["worktree", "add", "--quiet", "-b", "teamlead/b/w", &wt_s],
    );
    for f in 0..FILES {
        std::fs::write(wt.join(format!("src/m{f:03}.rs")), source(f, true)).expect("write");
    }
    sh(&wt, &["commit", "--quiet", "-am", "work"]);
    let base = git::rev(&repo, "main").expect("base");

    let mut terminal = Terminal::new(TestBackend::new(160, 50)).expect("terminal");
    let mut firsts = Vec::new();
    let mut state = AppState::new();
    for _ in 0..5 {
        state = AppState::new();
        let start = Instant::now();
        let files = git::changed_files(&wt, &base).expect("files");
        let commits = git::commits(&wt, &base, "HEAD").expect("commits");
        let summary = ReviewSummary::from_git("w", "teamlead/b/w".into(), &base, files, commits, 0);
        assert_eq!(summary.files.len(), FILES);
        assert_eq!(summary.added() + summary.removed(), FILES * LINES);
        state.apply(LeadEvent::Review(summary));
        let asked = state.take_commands();
        let Some(LeadCommand::ReviewFile { path, .. }) = asked.first() else {
            panic!("no file asked for");
        };
        let text = git::file_diff(&wt, &base, path).expect("diff");
        state.apply(LeadEvent::ReviewFile {
            name: "w".into(),
            diff: parse_diff(path, &text),
        });
        terminal
            .draw(|f| render::render(f, &mut state))
            .expect("draw");
        firsts.push(start.elapsed());
    }
    println!(
        "review of {FILES} files / {} changed lines: first frame {:.1} ms (the first of 5, syntaxes loaded), median {:.1} ms",
        FILES * LINES,
        ms(firsts[0]),
        ms(percentile(firsts.clone(), 0.5))
    );

    // Every file's diff, as the controller would answer them.
    let load = Instant::now();
    for f in 0..FILES {
        let path = format!("src/m{f:03}.rs");
        let text = git::file_diff(&wt, &base, &path).expect("diff");
        state.apply(LeadEvent::ReviewFile {
            name: "w".into(),
            diff: parse_diff(&path, &text),
        });
    }
    let per_file = load.elapsed() / FILES as u32;
    println!(
        "next file's diff (git diff + parse): {:.2} ms a file",
        ms(per_file)
    );

    let key = |code| KeyEvent::new(code, KeyModifiers::NONE);
    let mut pages = Vec::new();
    for _ in 0..FILES {
        for _ in 0..4 {
            let start = Instant::now();
            state.handle_key(key(KeyCode::PageDown));
            terminal
                .draw(|f| render::render(f, &mut state))
                .expect("draw");
            pages.push(start.elapsed());
        }
        state.handle_key(key(KeyCode::Tab));
        let _ = state.take_commands();
    }
    println!(
        "page (PageDown + redraw), {} pages: median {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        pages.len(),
        ms(percentile(pages.clone(), 0.5)),
        ms(percentile(pages.clone(), 0.99)),
        ms(percentile(pages, 1.0))
    );
}
