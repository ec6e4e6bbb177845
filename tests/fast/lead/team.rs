//! Team operations of the lead as a user sees them in the files: cycling every mode in one
//! team-file write, the shutdown handshake (only a matching `shutdown_approved` removes a
//! member and frees its tasks), de-duplicated delivery, messages and frames as turns, and
//! `/quit` removing the team.

use crate::lead_common;

use lead_common::{Session, eventually};
use teamlead::lead::contract::{LeadCommand, LeadEvent, TeammateStatus, TranscriptItem};
use teamlead::protocol::frames::{Frame, ShutdownApproved, TaskCompleted};
use teamlead::protocol::time::now_iso;
use teamlead::protocol::{InboxEntry, PermissionMode, TaskStatus};
use teamlead::store::{self, TaskList};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cycle_all_modes_writes_the_team_once_and_tells_each_teammate_once() {
    let mut s = Session::start("modes").await;
    s.add_pane_member("alpha", "%1", "plan").await;
    s.add_pane_member("beta", "%2", "plan").await;
    s.wait_team("both teammates", |t| t.len() == 2).await;
    let config = s.home.config_path(&s.team).unwrap();
    let before = std::fs::read_to_string(&config).unwrap();

    s.send(LeadCommand::CycleAllModes).await;
    s.wait_note("Every teammate is now in bypassPermissions mode")
        .await;

    let team = store::read_team(&s.home, &s.team).unwrap();
    for name in ["alpha", "beta"] {
        assert_eq!(
            team.member(name).unwrap().permission_mode(),
            PermissionMode::BypassPermissions
        );
        let modes: Vec<PermissionMode> = s
            .frames_in(name)
            .into_iter()
            .filter_map(|(e, f)| match f {
                Frame::ModeSetRequest(m) => {
                    assert_eq!(e.from, "team-lead");
                    Some(m.mode)
                }
                _ => None,
            })
            .collect();
        assert_eq!(modes, [PermissionMode::BypassPermissions], "{name}");
    }
    // One write: the only difference to the file before is the two modes.
    let expected = before.replace("\"mode\": \"plan\"", "\"mode\": \"bypassPermissions\"");
    assert_eq!(std::fs::read_to_string(&config).unwrap(), expected);

    // Mixed modes → everyone to default.
    s.send(LeadCommand::SetTeammateMode {
        name: "alpha".into(),
        mode: PermissionMode::AcceptEdits,
    })
    .await;
    s.wait_note("alpha is now in acceptEdits mode").await;
    s.send(LeadCommand::CycleAllModes).await;
    s.wait_note("Every teammate is now in default mode").await;
    // The snapshot follows the write; the note follows the mode requests.
    let views = s
        .wait_team("the views in default mode", |t| {
            t.iter().all(|v| v.mode == PermissionMode::Default)
        })
        .await;
    assert_eq!(views.len(), 2);
    s.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_a_matching_shutdown_approval_removes_the_teammate() {
    let mut s = Session::start("shutdowns").await;
    s.add_pane_member("worker", "%7", "default").await;
    let tasks = TaskList::new(&s.home, &s.team).unwrap();
    let a = tasks.create("Write the parser", "", vec![], None).unwrap();
    let b = tasks.create("Test the parser", "", vec![], None).unwrap();
    let c = tasks.create("Already done", "", vec![], None).unwrap();
    tasks.claim(&a.id, "worker", false).unwrap();
    tasks
        .update(&b.id, |t| {
            t.owner = Some("worker".into());
            Ok(())
        })
        .unwrap();
    tasks.claim(&c.id, "worker", false).unwrap();
    tasks.complete(&c.id).unwrap();

    s.send(LeadCommand::Shutdown {
        name: "worker".into(),
    })
    .await;
    s.wait_for("worker shutting down", |e| {
        matches!(e, LeadEvent::Team(t) if t.iter().any(|v| v.name == "worker" && matches!(v.status, TeammateStatus::ShuttingDown { .. })))
    })
    .await;
    // Acknowledged once the request is in its inbox (written off the lead's loop).
    s.wait_note("Asked worker to shut down").await;
    let request_id = s
        .frames_in("worker")
        .into_iter()
        .find_map(|(e, f)| match f {
            Frame::ShutdownRequest(r) => {
                assert_eq!(e.from, "team-lead");
                assert_eq!(r.from, "team-lead");
                Some(r.request_id)
            }
            _ => None,
        })
        .expect("a shutdown_request");
    assert!(request_id.starts_with("shutdown-") && request_id.ends_with("@worker"));

    let approved = |request_id: &str, pane: &str| {
        InboxEntry::frame(
            "worker",
            &Frame::ShutdownApproved(ShutdownApproved {
                request_id: request_id.to_string(),
                from: "worker".to_string(),
                timestamp: now_iso(),
                pane_id: Some(pane.to_string()),
                backend_type: Some("tmux".to_string()),
            }),
        )
    };
    // A forged id and the wrong pane are both ignored.
    s.to_lead(&approved("shutdown-1@worker", "%7"));
    s.to_lead(&approved(&request_id, "%99"));
    s.to_lead(&InboxEntry::new(
        "worker",
        "marker after the forged approvals",
    ));
    s.wait_turn("marker after the forged approvals").await;
    let team = store::read_team(&s.home, &s.team).unwrap();
    assert!(
        team.member("worker").is_some(),
        "a forged approval removed the member"
    );

    s.to_lead(&approved(&request_id, "%7"));
    let note = s.wait_note("has shut down").await;
    assert_eq!(
        note,
        format!(
            "worker has shut down. 2 task(s) were unassigned: #{} \"Write the parser\", #{} \"Test the parser\"",
            a.id, b.id
        )
    );
    let team = store::read_team(&s.home, &s.team).unwrap();
    assert!(team.member("worker").is_none());
    for id in [&a.id, &b.id] {
        let t = tasks.get(id).unwrap();
        assert_eq!(t.status, TaskStatus::Pending);
        assert_eq!(t.owner, None);
    }
    assert_eq!(tasks.get(&c.id).unwrap().status, TaskStatus::Completed);
    s.wait_team("the team without worker", |t| t.is_empty())
        .await;
    // From the approval to its removal the worker never read as busy again.
    let shutting_down_from = s
        .seen
        .iter()
        .position(|e| matches!(e, LeadEvent::Team(t) if t.iter().any(|v| matches!(v.status, TeammateStatus::ShuttingDown { .. }))))
        .expect("a shutting-down snapshot");
    let flipped = s.seen[shutting_down_from..].iter().any(|e| {
        matches!(e, LeadEvent::Team(t) if t.iter().any(|v| v.status == TeammateStatus::Working))
    });
    assert!(
        !flipped,
        "the worker read as working while it was shutting down"
    );
    s.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redelivered_entry_is_shown_once_and_frames_are_one_liners() {
    let mut s = Session::start("dedup").await;
    s.add_pane_member("worker", "%2", "default").await;
    let entry = InboxEntry::new("worker", "the build is green").with_summary(Some("green build"));
    s.to_lead(&entry);
    let item = s.wait_turn("the build is green").await;
    assert_eq!(
        item,
        TranscriptItem::Teammate {
            from: "worker".into(),
            color: Some("green".into()),
            summary: Some("green build".into()),
            text: "the build is green".into(),
        }
    );
    // The same entry again (a writer that retried), then a frame, then a marker.
    s.to_lead(&entry);
    s.to_lead(&InboxEntry::frame(
        "worker",
        &Frame::TaskCompleted(TaskCompleted {
            from: Some("worker".into()),
            task_id: "4".into(),
            task_subject: Some("build".into()),
            timestamp: None,
        }),
    ));
    s.to_lead(&InboxEntry::new("worker", "marker"));
    s.wait_turn("marker").await;
    let turns = s
        .seen
        .iter()
        .filter(|e| {
            matches!(e, LeadEvent::Transcript(TranscriptItem::Teammate { text, .. }) if text == "the build is green")
        })
        .count();
    assert_eq!(turns, 1);
    let frame_line = s.seen.iter().find_map(|e| match e {
        LeadEvent::Transcript(TranscriptItem::Frame { from, line, .. }) => {
            Some((from.clone(), line.clone()))
        }
        _ => None,
    });
    assert_eq!(
        frame_line,
        Some(("worker".into(), "task #4 completed \"build\"".into()))
    );
    // The inbox is emptied once it has been quiet a moment after delivery; the recent
    // messages show in the teammate view.
    eventually("the lead's inbox emptied", || {
        store::inbox::read(&s.home, &s.team, "team-lead").is_ok_and(|i| i.entries.is_empty())
    })
    .await;
    let views = s
        .wait_team("recent messages", |t| {
            t.first().is_some_and(|v| v.recent_messages.len() >= 3)
        })
        .await;
    assert_eq!(
        views[0].recent_messages.last().map(String::as_str),
        Some("worker: marker")
    );
    s.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn composer_text_reaches_teammates_and_quit_removes_the_team() {
    let mut s = Session::start("composer").await;
    s.add_pane_member("worker", "%2", "default").await;
    s.submit("@worker please rebase").await;
    s.wait_for("the echo", |e| {
        matches!(e, LeadEvent::Transcript(TranscriptItem::ToTeammate { to, text, .. }) if to == "worker" && text == "please rebase")
    })
    .await;
    s.submit("hello there").await;
    s.wait_note("@name text").await;
    s.submit("/msg @nobody hi").await;
    s.wait_note("no teammate named nobody").await;
    s.submit("/task add count the lines --command \"wc -l *.txt\"")
        .await;
    s.wait_note("Added task #1 \"count the lines\"").await;
    s.wait_tasks("the task", |t| t.len() == 1).await;
    s.submit("/task assign 1 worker").await;
    s.wait_note("Assigned task #1").await;
    s.submit("/frobnicate").await;
    s.wait_note("unknown command `/frobnicate`").await;

    let texts: Vec<String> = store::inbox::read(&s.home, &s.team, "worker")
        .unwrap()
        .entries
        .into_iter()
        .map(|e| {
            assert_eq!(e.from, "team-lead");
            e.text
        })
        .collect();
    assert_eq!(texts[0], "please rebase");
    assert!(matches!(Frame::parse(&texts[1]), Some(Frame::TaskAssignment(a)) if a.task_id == "1"));
    let task = TaskList::new(&s.home, &s.team).unwrap().get("1").unwrap();
    assert_eq!(task.owner.as_deref(), Some("worker"));

    let team_dir = s.team_dir();
    let tasks_dir = s.tasks_dir();
    assert!(teamlead::store::is_lead_alive(&s.home, &s.team));
    s.submit("/quit").await;
    s.wait_for("Exited", |e| matches!(e, LeadEvent::Exited))
        .await;
    assert!(!team_dir.exists(), "team dir left behind");
    assert!(!tasks_dir.exists(), "tasks dir left behind");
    let home = s.home.clone();
    let team = s.team.clone();
    eventually("the liveness lock released", move || {
        !teamlead::store::is_lead_alive(&home, &team)
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_lead_of_the_same_team_is_refused_and_a_stale_team_is_adopted() {
    let s = Session::start("twice").await;
    let opts = teamlead::lead::LeadOptions::new(s.home.clone(), s.cwd.path()).with_team("twice");
    let err = teamlead::lead::Lead::start(opts).expect_err("second lead");
    assert!(
        err.to_string().contains("already has a running lead"),
        "{err}"
    );
    drop(s);

    // A team of another lead (no teamlead liveness file: a Claude Code lead's) is refused and
    // left exactly as it was.
    let home_dir = tempfile::tempdir().unwrap();
    let home = teamlead::store::Home::new(home_dir.path());
    let mut stale = teamlead::protocol::TeamFile::new("stale", None, "/nowhere");
    stale.members.push(teamlead::protocol::Member::new(
        "ghost", "stale", "/nowhere",
    ));
    store::create_team(&home, &stale).unwrap();
    let before = std::fs::read(home.config_path("stale").unwrap()).unwrap();
    let opts = teamlead::lead::LeadOptions::new(home.clone(), home_dir.path()).with_team("stale");
    let err = teamlead::lead::Lead::start(opts).expect_err("a foreign team is not taken over");
    assert!(
        err.to_string().contains("was not started by teamlead"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(home.config_path("stale").unwrap()).unwrap(),
        before
    );

    // A team left by a crashed teamlead lead (its liveness file is there, its lock free) is
    // adopted at start, never deleted: its member stays (listed as not running) and the new
    // lead says what it found.
    let lock = home.lead_lock_path("stale").unwrap();
    std::fs::create_dir_all(lock.parent().unwrap()).unwrap();
    std::fs::write(&lock, "999999").unwrap();
    let opts = teamlead::lead::LeadOptions::new(home.clone(), home_dir.path()).with_team("stale");
    let (handle, mut events) = teamlead::lead::Lead::start(opts).expect("starts");
    let team = store::read_team(&home, "stale").unwrap();
    assert!(team.member("ghost").is_some(), "the member is kept");
    assert_eq!(team.member("team-lead").unwrap().tmux_pane_id, "leader");
    let mut resumed = None;
    while let Some(e) = events.recv().await {
        if let LeadEvent::Transcript(teamlead::lead::contract::TranscriptItem::System { text }) = &e
            && text.starts_with("Resumed the team `stale`")
        {
            resumed = Some(text.clone());
            break;
        }
    }
    let resumed = resumed.expect("a note about the resumed team");
    assert!(resumed.contains("Not running: ghost"), "{resumed}");
    assert!(resumed.contains("/respawn NAME"), "{resumed}");
    handle.commands.send(LeadCommand::Quit).await.unwrap();
    while let Some(e) = events.recv().await {
        if e == LeadEvent::Exited {
            break;
        }
    }
}

/// A pane teammate's model usage lives in its own process: it reports it in the `teamleadUsage`
/// extension of its idle notification, and the lead shows the latest report.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pane_teammates_usage_comes_with_its_idle_notification() {
    use teamlead::protocol::frames::{IdleNotification, IdleReason, ReportedUsage};
    let mut s = Session::start("pane-usage").await;
    s.add_pane_member("coder", "%4", "default").await;
    let idle = IdleNotification {
        from: "coder".to_string(),
        timestamp: now_iso(),
        idle_reason: Some(IdleReason::Available),
        summary: None,
        completed_task_id: None,
        completed_status: None,
        failure_reason: None,
        result: None,
        usage: Some(ReportedUsage {
            input_tokens: 12_000,
            output_tokens: 800,
            tool_uses: 3,
            turns: 2,
            cache_read_tokens: 10_000,
            cache_write_tokens: 1_000,
            cache_write_1h_tokens: 0,
        }),
        limit_until_ms: None,
    };
    let text = Frame::IdleNotification(idle).to_text();
    assert!(
        text.contains("\"teamleadUsage\":{\"inputTokens\":12000"),
        "{text}"
    );
    assert!(
        text.contains("\"cacheReadTokens\":10000,\"cacheWriteTokens\":1000"),
        "{text}"
    );
    // Its model has a price: sonnet, $3 in, $15 out, $3.75 cache write, $0.30 cache read.
    store::edit_team(&s.home, &s.team, |team| {
        if let Some(m) = team.members.iter_mut().find(|m| m.name == "coder") {
            m.model = Some("claude-sonnet-4-5".to_string());
        }
        Ok(())
    })
    .unwrap();
    s.wait_team("coder's model", |t| {
        t.iter()
            .any(|v| v.name == "coder" && v.model.as_deref() == Some("claude-sonnet-4-5"))
    })
    .await;
    s.to_lead(&InboxEntry::new("coder", text));
    let team = s
        .wait_team("coder's usage", |t| {
            t.iter().any(|v| v.name == "coder" && v.usage.is_some())
        })
        .await;
    let usage = team[0].usage.clone().expect("usage");
    assert_eq!((usage.input_tokens, usage.output_tokens), (12_000, 800));
    assert_eq!((usage.tool_uses, usage.turns), (3, 2));
    // 1,000 × 3 + 800 × 15 + 1,000 × 3.75 + 10,000 × 0.30 micro-dollars = $0.02175.
    assert_eq!(usage.cost_micros, Some(21_750));
    s.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_clean_removes_a_dead_writers_temp_file_and_keeps_the_team() {
    let mut s = Session::start("clean-leftovers").await;
    // A writer that died between writing its temp file and renaming it (no flock held), long
    // enough ago that it cannot be a writer still starting.
    let temp = s.team_dir().join("config.json.tmp.0badc0de");
    std::fs::write(&temp, b"{\"half\":").unwrap();
    std::fs::File::options()
        .write(true)
        .open(&temp)
        .unwrap()
        .set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(60))
        .unwrap();
    s.submit("/clean").await;
    let note = s.wait_note("temp file of a writer that is gone").await;
    assert!(note.starts_with("Removed: "), "{note}");
    assert!(note.contains("config.json.tmp.0badc0de"), "{note}");
    assert!(!temp.exists(), "the temp file is gone");
    assert!(
        s.team_dir().join("config.json").is_file(),
        "the team is kept"
    );
    s.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_version_says_which_teamlead_leads() {
    let mut s = Session::start("version").await;
    s.submit("/version").await;
    let note = s
        .wait_note(&format!("teamlead {}", env!("CARGO_PKG_VERSION")))
        .await;
    assert_eq!(note, format!("teamlead {}", env!("CARGO_PKG_VERSION")));
    s.quit().await;
}

/// The message ledger as the lead follows it: a message to a teammate is delivered (its
/// inbox written), read once the teammate marks it read, turn started once the teammate sends
/// something after; each step is a `Receipt` event for the message the transcript shows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_is_followed_delivered_read_and_acted_on() {
    use teamlead::lead::ledger::Receipt;
    let mut s = Session::start("ledger").await;
    s.add_pane_member("alpha", "%1", "default").await;
    // alpha is idle: a message waits for nobody's turn to end.
    let idle = teamlead::protocol::frames::IdleNotification {
        from: "alpha".into(),
        timestamp: teamlead::protocol::time::now_iso(),
        idle_reason: Some(teamlead::protocol::frames::IdleReason::Available),
        summary: None,
        completed_task_id: None,
        completed_status: None,
        failure_reason: None,
        result: None,
        usage: None,
        limit_until_ms: None,
    };
    s.to_lead(&InboxEntry::frame(
        "alpha",
        &teamlead::protocol::frames::Frame::IdleNotification(idle),
    ));
    s.wait_team("alpha idle", |t| {
        t.iter()
            .any(|v| v.name == "alpha" && matches!(v.status, TeammateStatus::Idle { .. }))
    })
    .await;
    s.submit("@alpha please rebase on main").await;
    let shown = s
        .wait_for("the message shown with its ledger id", |e| {
            matches!(e, LeadEvent::Transcript(TranscriptItem::ToTeammate { to, receipt: Some(_), .. }) if to == "alpha")
        })
        .await;
    let LeadEvent::Transcript(TranscriptItem::ToTeammate {
        receipt: Some(id), ..
    }) = shown
    else {
        unreachable!()
    };
    let receipt = |state: Receipt| move |e: &LeadEvent| matches!(e, LeadEvent::Receipt { id: i, state: st, .. } if *i == id && *st == state);
    s.seen_or_wait("delivered", receipt(Receipt::Delivered))
        .await;
    // alpha takes it as Claude Code does: marks it read in its inbox.
    let keys: Vec<String> = store::inbox::read(&s.home, &s.team, "alpha")
        .unwrap()
        .entries
        .iter()
        .map(|e| e.dedup_key())
        .collect();
    store::inbox::mark_read(&s.home, &s.team, "alpha", &keys).unwrap();
    s.seen_or_wait("read", receipt(Receipt::Read)).await;
    // It answers: it got to it.
    s.to_lead(&InboxEntry::new("alpha", "rebased, tests pass"));
    s.seen_or_wait("turn started", receipt(Receipt::TurnStarted))
        .await;
    let views = s
        .wait_team("alpha's receipts in its view", |t| {
            t.iter().any(|v| {
                v.name == "alpha"
                    && v.messages
                        .first()
                        .is_some_and(|m| m.state == Receipt::TurnStarted)
            })
        })
        .await;
    let alpha = views.iter().find(|v| v.name == "alpha").unwrap();
    assert_eq!(alpha.messages[0].preview, "please rebase on main");
    s.quit().await;
}

/// Writes `entry` to the lead's inbox as Claude Code 2.1.45 does: one `mkdir` of the lock
/// (a busy lock loses the entry: `false`), the file read, the entry added, the file written
/// in place, the lock removed.
fn write_once_like_2_1_45(s: &Session, entry: &InboxEntry) -> bool {
    let path = s.home.inbox_path(&s.team, "team-lead").unwrap();
    let lock = path.with_extension("json.lock");
    if std::fs::create_dir(&lock).is_err() {
        return false;
    }
    let mut all: Vec<serde_json::Value> = std::fs::read(&path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    all.push(serde_json::to_value(entry).unwrap());
    std::fs::write(&path, serde_json::to_vec_pretty(&all).unwrap()).unwrap();
    std::fs::remove_dir(&lock).unwrap();
    true
}

/// A teammate's frames come in bursts, and Claude Code 2.1.45 gives up at once on a busy
/// inbox lock: the lead must not hold its inbox's lock in the middle of a burst, so every
/// entry of eight bursts (twenty entries 2 ms apart, 300 ms between bursts) is written and
/// shown.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_frames_never_finds_the_leads_inbox_locked() {
    let mut s = Session::start("bursts").await;
    s.add_pane_member("worker", "%2", "default").await;
    let mut lost = Vec::new();
    for burst in 0..8 {
        for i in 0..20 {
            let text = format!("burst {burst} entry {i}");
            if !write_once_like_2_1_45(&s, &InboxEntry::new("worker", &text)) {
                lost.push(text);
            }
            tokio::time::sleep(std::time::Duration::from_millis(2)).await;
        }
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    }
    assert!(lost.is_empty(), "found the lead's inbox locked: {lost:?}");
    s.wait_turn("burst 7 entry 19").await;
    let shown = s
        .seen
        .iter()
        .filter(|e| matches!(e, LeadEvent::Transcript(TranscriptItem::Teammate { text, .. }) if text.starts_with("burst ")))
        .count();
    assert_eq!(shown, 160);
    s.quit().await;
}
