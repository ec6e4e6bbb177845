//! `NO_COLOR` in the real binary (PTY): the lead session, the permission dialog and the
//! teams dialog are drawn without a single colour escape sequence (the demo provides the
//! teammates and the requests).

use std::time::{Duration, Instant};

use crate::pty_harness::PtyLead;
use teamlead_test_support::keys::{Dialog, Key, Keyboard};

/// The colour parameters of every SGR sequence (`ESC [ … m`) in `bytes`.
fn colour_escapes(bytes: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(bytes);
    let mut found = Vec::new();
    let mut rest = text.as_ref();
    while let Some(at) = rest.find("\x1b[") {
        rest = &rest[at + 2..];
        let end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == ';'))
            .unwrap_or(rest.len());
        if rest[end..].starts_with('m') {
            let params = &rest[..end];
            let colour = params
                .split(';')
                .filter_map(|p| p.parse::<u16>().ok())
                .any(|p| matches!(p, 30..=38 | 40..=48 | 58 | 90..=97 | 100..=107));
            if colour {
                found.push(params.to_string());
            }
        }
    }
    found
}

#[test]
fn colour_escapes_are_found() {
    assert_eq!(
        colour_escapes(b"\x1b[38;5;9mx\x1b[39m\x1b[1;31m"),
        ["38;5;9", "1;31"]
    );
    assert!(colour_escapes(b"\x1b[0m\x1b[1;2;7m\x1b[39;49m\x1b[2J").is_empty());
}

/// Opens the approval dialog on purpose and, once it takes keys, puts it back with Esc.
fn put_back(session: &PtyLead) {
    session.open_approvals();
    session.press(Key::Esc);
    session.poll_screen("the dialog put back", |s| Dialog::on(s).is_none());
}

#[test]
fn no_color_keeps_every_screen_and_dialog_free_of_colour() {
    let home = tempfile::tempdir().expect("home");
    let project = tempfile::tempdir().expect("project");
    let tmp = tempfile::tempdir().expect("tmp");
    let mut session = crate::pty_harness::lead(project.path())
        .home(home.path())
        .args(["demo"])
        .env("TMPDIR", tmp.path())
        .env("NO_COLOR", "1")
        .spawn();
    session.wait_for("a request waiting", |s| {
        let c = s.contents();
        c.contains("approval waiting") || c.contains("needs permission")
    });
    // The permission dialog: Ctrl+P opens it; Esc once it takes keys puts it back (the
    // request stays queued).
    put_back(&session);
    // The teams dialog: ↓ selects the badge, Enter opens it. The demo's requests keep
    // waiting, and one takes the keyboard by itself once typing has paused for a second: it
    // is put back and the keys pressed again.
    let start = Instant::now();
    while !session.contents().contains("Team demo") {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "{}",
            session.contents()
        );
        if Dialog::on(&session.contents()).is_some() {
            put_back(&session);
        }
        session.press_until(Key::Down, "the team badge selected", |s| {
            s.contains("open the teams dialog") || Dialog::on(s).is_some()
        });
        if Dialog::on(&session.contents()).is_none() {
            session.press(Key::Enter);
            session.poll_text(Duration::from_secs(2), |s| {
                s.contains("Team demo") || Dialog::on(s).is_some()
            });
        }
    }
    session.wait_for("the teams dialog's hints", |s| {
        s.contents().contains("x kill")
    });
    {
        let screen = session.screen.lock().expect("screen");
        let screen = screen.screen();
        let (rows, cols) = screen.size();
        for row in 0..rows {
            for col in 0..cols {
                if let Some(cell) = screen.cell(row, col) {
                    assert_eq!(cell.fgcolor(), vt100::Color::Default, "{row},{col}");
                    assert_eq!(cell.bgcolor(), vt100::Color::Default, "{row},{col}");
                }
            }
        }
    }
    let found = colour_escapes(&session.raw.lock().expect("raw"));
    assert!(found.is_empty(), "colour escapes under NO_COLOR: {found:?}");
    session.send(b"\x03");
    session.send(b"\x03");
    assert!(session.wait_exit(), "exit status 0");
}
