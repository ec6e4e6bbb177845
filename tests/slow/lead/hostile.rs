//! The hostile-input suite for the lead session (`teamlead --home H --team T --backend
//! in-process` in a PTY): with hostile teams in the home it must start, or refuse with one
//! clear error, within a deadline, never hang; nothing it draws may carry a file's escape
//! sequence: no window title is set from a file and no injected clear-screen reaches the
//! terminal, while the hostile text itself shows up escaped.

use crate::hostile_common;
use crate::pty_harness::PtyLead;

use std::time::Duration;

use hostile_common::corpus::categories;
use hostile_common::tree::{changes, fingerprint};
use hostile_common::{Sandbox, TEAM, run};

const START: Duration = Duration::from_secs(20);
const QUIT: Duration = Duration::from_secs(20);

/// Applies the named categories of the corpus to the home.
fn apply(sandbox: &Sandbox, names: &[&str]) {
    for cat in categories() {
        if names.contains(&cat.name) {
            (cat.build)(&sandbox.home());
        }
    }
}

/// No injected sequence reached the terminal: no title from a file, no injected clear.
fn nothing_injected(lead: &PtyLead) {
    let titles = lead.titles();
    assert!(
        !titles.iter().any(|t| t.contains("pwned")),
        "a file set the window title: {titles:?}"
    );
    let raw = lead.raw_text();
    for seq in [
        "\u{1b}]0;pwned",
        "\u{1b}[2J\u{1b}[H",
        "\u{9b}2J",
        "\u{202e}",
    ] {
        assert!(
            !raw.contains(seq),
            "{seq:?} from a file reached the terminal"
        );
    }
}

/// `teamlead --home H <args>` in the sandbox, logs in the sandbox's log directory.
fn start(sandbox: &Sandbox, args: &[&str]) -> PtyLead {
    crate::pty_harness::lead(sandbox.root.path())
        .home(sandbox.home())
        .logs(sandbox.logs())
        .args(args)
        .spawn()
}

fn started(lead: &mut PtyLead) -> bool {
    lead.poll_text(START, |s| s.contains("shift+tab to cycle"))
}

fn quit(lead: &mut PtyLead) {
    lead.send_lossy(b"/quit\r");
    assert!(
        lead.exit_within(QUIT).is_some(),
        "the lead did not quit; screen:\n{}",
        lead.contents()
    );
}

/// Hostile teams beside the lead's own: it starts, draws nothing raw, quits.
#[test]
fn lead_starts_beside_hostile_teams() {
    let sandbox = Sandbox::seeded();
    apply(
        &sandbox,
        &[
            "team-dir-bad-team",
            "team-dir-escape",
            "team-dir-newline",
            "team-dir-not-utf8",
            "team-dir-link-to-etc",
            "tasks-root-link-to-etc",
            "member-name-osc-title",
            "member-name-clear-screen",
            "inbox-escape-name",
            "stale-lock-dir",
            "task-subject-escape",
            "highwatermark-u64-max",
        ],
    );
    let before = fingerprint(&sandbox.home().join("teams").join(TEAM));
    let mut lead = start(&sandbox, &["--team", "fresh", "--backend", "in-process"]);
    assert!(
        started(&mut lead),
        "the lead did not start; screen:\n{}",
        lead.contents()
    );
    nothing_injected(&lead);
    quit(&mut lead);
    nothing_injected(&lead);
    let after = fingerprint(&sandbox.home().join("teams").join(TEAM));
    assert!(
        changes(&before, &after).is_empty(),
        "the lead touched a team that is not its own"
    );
}

/// `--team` naming a hostile team another lead owns: one clear error, nothing touched.
#[test]
fn lead_refuses_a_hostile_foreign_team_untouched() {
    let sandbox = Sandbox::seeded();
    apply(
        &sandbox,
        &[
            "member-name-osc-title",
            "member-second-team-lead",
            "inbox-not-utf8",
            "task-cycle",
        ],
    );
    let before = fingerprint(&sandbox.home());
    let mut lead = start(&sandbox, &["--team", TEAM, "--backend", "in-process"]);
    let exit = lead.exit_within(START);
    assert_eq!(
        exit,
        Some(false),
        "refused with an error; screen:\n{}",
        lead.contents()
    );
    let screen = lead.contents();
    assert!(screen.contains("error:"), "{screen}");
    assert!(screen.contains("not started by teamlead"), "{screen}");
    nothing_injected(&lead);
    assert!(changes(&before, &fingerprint(&sandbox.home())).is_empty());
}

/// A FIFO where a team's liveness file should be (another team's, then the lead's own team):
/// the lead starts or refuses within the deadline, never hangs on it.
#[test]
fn lead_never_hangs_on_a_fifo_liveness_file() {
    for team in ["fresh", TEAM] {
        let sandbox = Sandbox::seeded();
        apply(&sandbox, &["lead-lock-fifo"]);
        let mut lead = start(&sandbox, &["--team", team, "--backend", "in-process"]);
        let ok = lead.poll_text(START, |s| {
            s.contains("shift+tab to cycle") || s.contains("error:")
        });
        assert!(
            ok,
            "--team {team}: neither started nor refused in {START:?} (hang); screen:\n{}",
            lead.contents()
        );
        if lead.exit_status().is_none() {
            quit(&mut lead);
        }
        nothing_injected(&lead);
    }
}

/// Hostile messages, frames and task subjects arriving while the lead runs are drawn
/// escaped: the text shows, the sequences do not act.
#[test]
fn lead_draws_hostile_text_escaped() {
    let sandbox = Sandbox::seeded();
    let mut lead = start(&sandbox, &["--team", "live", "--backend", "in-process"]);
    assert!(started(&mut lead), "screen:\n{}", lead.contents());
    lead.send_lossy(b"before-marker\r");
    let send = |text: &str| {
        let out = run(
            sandbox.cmd(&[
                "send",
                "--team",
                "live",
                "--to",
                "team-lead",
                "--from",
                "scout",
                text,
            ]),
            Duration::from_secs(10),
        );
        assert_eq!(out.code, Some(0), "{}", out.text());
    };
    send("hi \u{1b}]0;pwned-title\u{7} then \u{1b}[2J\u{1b}[H \u{9b}2J \u{202e}rtl end-marker");
    let frame = serde_json::json!({"type": "idle_notification", "from": "scout",
        "timestamp": "2026-02-18T18:40:00.000Z", "idleReason": "available",
        "summary": "idle\u{1b}]0;pwned-title\u{7}frame-marker"});
    send(&frame.to_string());
    let tasks = sandbox.home().join("tasks/live");
    std::fs::create_dir_all(&tasks).unwrap();
    std::fs::write(
        tasks.join("1.json"),
        serde_json::json!({"id": "1", "subject": "task\u{1b}]0;pwned-title\u{7}\u{1b}[2J\u{1b}[H-marker",
            "description": "", "status": "pending", "blocks": [], "blockedBy": []})
        .to_string(),
    )
    .unwrap();
    assert!(
        lead.poll_text(START, |s| s.contains("end-marker")),
        "the hostile message was not shown; screen:\n{}",
        lead.contents()
    );
    lead.send_lossy(b"\x14"); // Ctrl+T: the task list.
    let shown = lead.poll_text(Duration::from_secs(10), |s| {
        s.contains("-marker") && s.contains("task")
    });
    nothing_injected(&lead);
    let screen = lead.contents();
    assert!(shown, "{screen}");
    assert!(
        screen.contains("pwned-title"),
        "the hostile text shows, escaped: {screen}"
    );
    lead.send_lossy(b"\x14");
    quit(&mut lead);
    nothing_injected(&lead);
}
