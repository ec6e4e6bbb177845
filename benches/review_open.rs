//! Opening the review of a big branch: a real git repository with a teammate's worktree
//! whose branch changes 200 Rust files, 20,000 changed lines (50 lines replaced in each).
//! Prints the time to the first frame (the summary read from git as `/review` does, the
//! first file's diff read and parsed, the dialog opened and drawn on a 160×50 `TestBackend`)
//! and the time of a page (PageDown and a redraw, syntax colours and word highlights
//! included) over every page of every file; the goals are 100 ms and 16 ms. As in the app
//! loop, every key is followed by a frame: Tab to the next file is timed apart (its first
//! page). Keys come 40 ms apart, as a held key repeats (`REVIEW_BENCH_PAUSE_MS` changes it; 0
//! pages as fast as the loop can): the dialog styles ahead of the screen on a thread of its
//! own meanwhile. Each page is also timed in CPU time of the UI's thread, which other
//! processes on a busy machine do not inflate. Run by hand: `cargo bench --bench
//! review_open`.
//!
//! Measured (one machine, 2 cores shared with other builds, load 6-13; wall times move with
//! the load, the UI thread's CPU time does not):
//! - before (the main branch's dialog and bench: no frame after Tab, keys back to back): page
//!   median 8.5 ms, p99 28.6-32.2 ms.
//! - the dialog styling each page during its key (no styler thread), this bench: page median
//!   4.8-5.3 ms, p99 14.4-18.9 ms; UI thread CPU median 4.7 ms, p99 7.9-8.1 ms.
//! - with the styler thread: page median 0.57 ms, p99 1.7-4.0 ms; UI thread CPU median
//!   0.57 ms, p99 0.84 ms; Tab and the next file's first page median 5.5 ms, p99 13 ms; first
//!   frame 73-100 ms. Keys back to back (`REVIEW_BENCH_PAUSE_MS=0`, the thread cannot get
//!   ahead): page median 4.1 ms, p99 20.7 ms; UI thread CPU p99 6.1 ms.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use teamlead::backend::git;
use teamlead::lead::contract::{LeadCommand, LeadEvent};
use teamlead::lead::review::{ReviewSummary, parse_diff};
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

/// CPU time this thread has used.
fn thread_cpu() -> Duration {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid clock id and a valid pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
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
    let pause = Duration::from_millis(
        std::env::var("REVIEW_BENCH_PAUSE_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(40),
    );
    let (mut pages, mut cpu, mut switches) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..FILES {
        for _ in 0..4 {
            std::thread::sleep(pause);
            let (start, start_cpu) = (Instant::now(), thread_cpu());
            state.handle_key(key(KeyCode::PageDown));
            terminal
                .draw(|f| render::render(f, &mut state))
                .expect("draw");
            pages.push(start.elapsed());
            cpu.push(thread_cpu() - start_cpu);
        }
        std::thread::sleep(pause);
        let start = Instant::now();
        state.handle_key(key(KeyCode::Tab));
        let _ = state.take_commands();
        terminal
            .draw(|f| render::render(f, &mut state))
            .expect("draw");
        switches.push(start.elapsed());
    }
    println!("keys {} ms apart", pause.as_millis());
    println!(
        "page (PageDown + redraw), {} pages: median {:.2} ms, p99 {:.2} ms, max {:.2} ms; UI thread CPU median {:.2} ms, p99 {:.2} ms",
        pages.len(),
        ms(percentile(pages.clone(), 0.5)),
        ms(percentile(pages.clone(), 0.99)),
        ms(percentile(pages, 1.0)),
        ms(percentile(cpu.clone(), 0.5)),
        ms(percentile(cpu, 0.99)),
    );
    println!(
        "next file (Tab + its first page), {} files: median {:.2} ms, p99 {:.2} ms",
        switches.len(),
        ms(percentile(switches.clone(), 0.5)),
        ms(percentile(switches, 0.99)),
    );
}
