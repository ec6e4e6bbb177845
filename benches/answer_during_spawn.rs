//! The controller's loop while teammates start, measured by hand:
//! `cargo build --release && cargo bench --bench answer_during_spawn`.
//!
//! A permission request waits in the queue; three `/spawn`s of pane teammates (a private tmux
//! server, `teamlead teammate` from the release build) are sent, then the answer to the
//! request. Measured: from the answer command to the `permission_response` in the asking
//! teammate's inbox, and from the first `/spawn` to the third teammate started. Median and
//! p90 over several rounds. The private tmux server goes with the lead at quit.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use teamlead::backend::detect::BackendChoice;
use teamlead::lead::view::{
    LeadCommand, LeadEvent, PermissionDecision, TranscriptItem, ViewTarget,
};
use teamlead::lead::{Lead, LeadOptions};
use teamlead::protocol::frames::{Frame, PermissionRequest};
use teamlead::protocol::{InboxEntry, Member};
use teamlead::store::{self, Home};
use tokio::sync::mpsc;

const ROUNDS: usize = 5;

fn main() {
    if std::process::Command::new("tmux")
        .arg("-V")
        .output()
        .is_err()
    {
        eprintln!("tmux is needed");
        return;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let mut answer = Vec::new();
    let mut starts = Vec::new();
    for round in 0..ROUNDS {
        let (a, s) = runtime.block_on(one_round(round));
        println!(
            "round {round}: answer written {:.1} ms after it was given; three started in {:.0} ms",
            ms(a),
            ms(s)
        );
        answer.push(a);
        starts.push(s);
    }
    answer.sort();
    starts.sort();
    println!(
        "\nanswer → permission_response on disk, while three /spawns run: median {:.1} ms, p90 {:.1} ms",
        ms(percentile(&answer, 0.5)),
        ms(percentile(&answer, 0.9))
    );
    println!(
        "first /spawn → third teammate started: median {:.0} ms, p90 {:.0} ms",
        ms(percentile(&starts, 0.5)),
        ms(percentile(&starts, 0.9))
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn teamlead_binary() -> PathBuf {
    let exe = std::env::current_exe().expect("exe");
    let dir = exe.parent().and_then(Path::parent).expect("target dir");
    let bin = dir.join("teamlead");
    assert!(
        bin.exists(),
        "build the binary first: cargo build --release (looked for {})",
        bin.display()
    );
    bin
}

async fn next_event(events: &mut mpsc::Receiver<LeadEvent>) -> LeadEvent {
    tokio::time::timeout(Duration::from_secs(60), events.recv())
        .await
        .expect("an event within a minute")
        .expect("the lead is running")
}

async fn one_round(round: usize) -> (Duration, Duration) {
    let home_dir = tempfile::tempdir().expect("temp home");
    let cwd = tempfile::tempdir().expect("temp cwd");
    let home = Home::new(home_dir.path());
    let team = format!("bench-spawn-{round}");
    let mut opts = LeadOptions::new(home.clone(), cwd.path())
        .with_team(&team)
        .with_backend(BackendChoice::TmuxPrivate)
        .with_quit_timeout(Duration::from_secs(2));
    opts.teammate_binary = Some(teamlead_binary());
    let (handle, mut events) = Lead::start(opts).expect("lead");
    let mut asker = Member::new("asker", &team, &cwd.path().to_string_lossy());
    asker.tmux_pane_id = "in-process".into();
    asker.backend_type = Some("in-process".into());
    store::add_member(&home, &team, asker).expect("member");

    // A request from `asker` waits in the queue.
    let request = PermissionRequest {
        request_id: format!("perm-bench-{round}"),
        agent_id: "asker".to_string(),
        tool_name: "Bash".to_string(),
        tool_use_id: None,
        description: "list".to_string(),
        input: serde_json::json!({"command": "ls"}),
        permission_suggestions: Vec::new(),
    };
    let entry = InboxEntry::frame("asker", &Frame::PermissionRequest(request));
    store::inbox::append(&home, &team, "team-lead", &entry).expect("request");
    let key = loop {
        if let LeadEvent::Permissions(p) = next_event(&mut events).await
            && let Some(first) = p.first()
        {
            break first.key;
        }
    };

    let started = Instant::now();
    for name in ["one", "two", "three"] {
        let text = format!("/spawn {name} \"wait for messages\"");
        handle
            .commands
            .send(LeadCommand::Submit {
                target: ViewTarget::Lead,
                text,
            })
            .await
            .expect("lead");
    }
    let answered = Instant::now();
    handle
        .commands
        .send(LeadCommand::AnswerPermission {
            key,
            decision: PermissionDecision::AllowOnce,
        })
        .await
        .expect("lead");
    let answer = loop {
        let written = store::inbox::read(&home, &team, "asker")
            .map(|r| {
                r.entries
                    .iter()
                    .any(|e| matches!(e.parse_frame(), Some(Frame::PermissionResponse(_))))
            })
            .unwrap_or(false);
        if written {
            break answered.elapsed();
        }
        assert!(answered.elapsed() < Duration::from_secs(60), "no answer");
        std::thread::sleep(Duration::from_micros(500));
    };
    let mut spawned = 0;
    while spawned < 3 {
        if let LeadEvent::Transcript(TranscriptItem::System { text }) =
            next_event(&mut events).await
        {
            if text.starts_with("Spawned") {
                spawned += 1;
            } else if text.contains("Could not start") || text.contains("Cannot spawn") {
                panic!("{text}");
            }
        }
    }
    let three = started.elapsed();
    handle.commands.send(LeadCommand::Quit).await.expect("lead");
    while next_event(&mut events).await != LeadEvent::Exited {}
    (answer, three)
}
