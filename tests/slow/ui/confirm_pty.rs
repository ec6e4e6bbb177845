//! The confirmation boxes of the teams dialog with the real binary in a PTY (issue 33, item 1;
//! the key streams of every box are `tests/fast/ui/confirm.rs`): a kill and a prune asked for
//! and then answered by a key pressed at once (`y`, `a`) do nothing and say so; text typed into
//! the box answers nothing, closes it and lands in the composer; answered on purpose, once the
//! box has been on screen for its grace period, they do what they say.

use std::time::{Duration, Instant};

use crate::pty_harness::PtyLead;
use teamlead_test_support::keys::{Key, Keyboard, composer_rows};

/// Three idle shell teammates of an in-process lead.
fn lead_with_three(dir: &std::path::Path) -> PtyLead {
    let lead = crate::pty_harness::lead(dir)
        .args(["--team", "cf", "--backend", "in-process"])
        .size(120, 36)
        .start();
    for name in ["amy", "bob", "cal"] {
        lead.submit(&format!("/spawn {name} \"wait here\""));
        lead.wait_screen(&format!("{name} spawned"), |s| {
            s.contains(&format!("Spawned {name}"))
        });
    }
    lead
}

/// From the composer: the badge, then the teams dialog.
fn open_teams(lead: &PtyLead) {
    lead.press(Key::Down);
    lead.wait_screen("the badge selected", |s| {
        s.contains("open the teams dialog")
    });
    lead.press(Key::Enter);
    lead.wait_screen("the teams dialog", |s| s.contains("x kill"));
}

/// Waits until the box has been on screen longer than its grace period.
fn past_the_grace(lead: &PtyLead, shown: Instant) {
    lead.poll_screen("the box seen for its grace period", |_| {
        shown.elapsed() > Duration::from_millis(teamlead::ui::modal::guard::GRACE_MS + 100)
    });
}

#[test]
fn kill_and_prune_are_done_only_on_purpose() {
    let dir = tempfile::tempdir().unwrap();
    let lead = lead_with_three(dir.path());

    // A kill answered at once: nothing killed, the box says why and stays.
    open_teams(&lead);
    lead.press(Key::Char('x'));
    lead.send(b"y");
    lead.wait_screen("the early y ignored", |s| {
        s.contains("y ignored: this question just appeared — press again")
    });
    let shown = Instant::now();
    let screen = lead.screen();
    let name = ["amy", "bob", "cal"]
        .into_iter()
        .find(|n| screen.contains(&format!("Kill @{n}?")))
        .unwrap_or_else(|| panic!("the box names who: {screen}"));
    // Text typed into it (holding a `y` and an `n`): answers nothing, closes it and the
    // dialog, goes to the composer.
    lead.type_text("/quit says nothing");
    lead.wait_screen("the box closed with nothing done", |s| {
        s.contains(&format!(
            "Not done: kill @{name} (what you typed went to the composer)."
        ))
    });
    lead.poll_screen("the text in the composer", |s| {
        composer_rows(s).is_some_and(|rows| rows.concat() == "/quit says nothing")
    });
    assert!(shown.elapsed() < Duration::from_secs(10));
    assert!(!lead.screen().contains(&format!("Killed {name}")));
    lead.press(Key::CtrlU);
    lead.poll_screen("the composer cleared", |s| {
        composer_rows(s).is_some_and(|rows| !rows.concat().contains("says nothing"))
    });

    // A prune answered at once: nobody pruned.
    open_teams(&lead);
    lead.press(Key::Char('p'));
    lead.send(b"a");
    lead.wait_screen("the early a ignored", |s| {
        s.contains("a ignored: this question just appeared — press again")
    });
    let shown = Instant::now();
    past_the_grace(&lead, shown);
    lead.press(Key::Esc);
    lead.wait_quiet();
    let screen = lead.screen();
    for n in ["amy", "bob", "cal"] {
        assert!(!screen.contains(&format!("{n} was shut down")), "{screen}");
    }

    // On purpose: the kill, pressed again once the box has been seen.
    lead.wait_screen("the teams dialog still open", |s| s.contains("x kill"));
    lead.press(Key::Char('x'));
    lead.wait_screen("the kill box", |s| s.contains(&format!("Kill @{name}?")));
    let shown = Instant::now();
    past_the_grace(&lead, shown);
    lead.press(Key::Char('y'));
    lead.wait_screen("the kill box closed", |s| {
        !s.contains(&format!("Kill @{name}?"))
    });
    lead.press(Key::Esc);
    lead.wait_screen("the kill said in the transcript", |s| {
        s.contains(&format!("{name} was killed"))
    });
}
