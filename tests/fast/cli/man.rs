//! `teamlead man`: the manual page generated from the clap definitions is roff that `man`
//! renders (when `man` is installed; else its header and sections are checked), for teamlead
//! and for each command; completions still work.

use crate::cli_common;

use std::io::Write;
use std::process::{Command, Stdio};

use cli_common::TestHome;

fn man_page(args: &[&str]) -> String {
    let out = TestHome::empty()
        .cmd()
        .arg("man")
        .args(args)
        .output()
        .expect("run teamlead man");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// `man -l -` on `roff`, or `None` when `man` is not installed.
fn render(roff: &str) -> Option<String> {
    let mut child = Command::new("man")
        .args(["-l", "-"])
        .env("MANWIDTH", "100")
        .env("MANPAGER", "cat")
        .env("PAGER", "cat")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(roff.as_bytes())
        .expect("write the page");
    let out = child.wait_with_output().expect("man");
    assert!(
        out.status.success(),
        "man -l - failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("warning"), "roff warnings: {stderr}");
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn the_man_page_renders() {
    let roff = man_page(&[]);
    assert!(
        roff.starts_with(".ie") || roff.contains(".TH teamlead 1"),
        "{roff}"
    );
    for section in [
        ".SH NAME",
        ".SH SYNOPSIS",
        ".SH DESCRIPTION",
        ".SH OPTIONS",
        ".SH SUBCOMMANDS",
    ] {
        assert!(roff.contains(section), "{section} in\n{roff}");
    }
    if let Some(text) = render(&roff) {
        let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flat.contains("teamlead - A terminal lead"), "{text}");
        for command in [
            "demo", "inspect", "monitor", "send", "task", "clean", "config", "man",
        ] {
            assert!(
                flat.contains(&format!("teamlead-{command}(1)")),
                "{command} in\n{text}"
            );
        }
        assert!(flat.contains("--backend"), "{text}");
    }
}

#[test]
fn every_command_has_a_page() {
    for command in ["demo", "inspect", "send", "task", "config", "completions"] {
        let roff = man_page(&[command]);
        assert!(
            roff.contains(&format!(".TH teamlead-{command} 1")),
            "{roff}"
        );
        if let Some(text) = render(&roff) {
            assert!(text.contains(&format!("teamlead {command}")), "{text}");
        }
    }
    let out = TestHome::empty()
        .cmd()
        .args(["man", "nope"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("error: no command `nope`: one of demo,"),
        "{err}"
    );
}

#[test]
fn completions_stay() {
    let out = TestHome::empty()
        .cmd()
        .args(["completions", "bash"])
        .output()
        .expect("run");
    assert!(out.status.success());
    let script = String::from_utf8_lossy(&out.stdout);
    assert!(
        script.contains("teamlead") && script.contains("man"),
        "{script}"
    );
}

/// `ctl --help` lists the commands that are not clap subcommands (review, merges, merge, and
/// composer commands), not only in the examples.
#[test]
fn ctl_help_lists_review_merges_and_merge() {
    let out = TestHome::empty()
        .cmd()
        .args(["ctl", "--help"])
        .output()
        .expect("run teamlead ctl --help");
    let help = String::from_utf8_lossy(&out.stdout).into_owned();
    let listed = help
        .split("Examples:")
        .next()
        .unwrap_or_default()
        .to_string();
    insta::assert_snapshot!("ctl_help_commands", listed);
    for word in ["  review NAME", "  merges", "  merge NAME"] {
        assert!(listed.contains(word), "{word}: {help}");
    }
}
