//! The lead server without any terminal (stdin /dev/null, no TTY, its own session), driven
//! by `teamlead ctl` only: two in-process shell teammates, a task whose command needs Bash,
//! the request seen in `pending` and approved, `wait --tasks-done`, the whole story in
//! `events`, and `/quit` ending the server with no team, socket or process left.

use crate::server_common;

use server_common::{Ws, mode_of, position, story, wait_until};

#[test]
fn a_team_led_by_ctl_alone_runs_its_task_and_ends_cleanly() {
    let ws = Ws::new("headless");
    let mut server = ws.serve(&[]);
    // The socket is private: 0700 directory, 0600 socket.
    assert_eq!(mode_of(&ws.run_dir()), 0o700);
    assert_eq!(mode_of(&ws.sockets()[0]), 0o600);

    let out = ws.ctl_ok(&["/spawn alpha \"take the tasks\""]);
    assert!(out.contains("Spawned alpha"), "{out}");
    ws.ctl_ok(&["/spawn beta \"take the tasks\""]);
    let out = ws.ctl_ok(&[
        "--json",
        "/task add greet --command \"echo hello-from-greet\"",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["ok"], true, "{out}");

    ws.ctl_ok(&["wait", "--approval", "--timeout", "30"]);
    let pending: serde_json::Value =
        serde_json::from_str(&ws.ctl_ok(&["--json", "pending"])).expect("json");
    let request = &pending["permissions"][0];
    assert_eq!(request["tool"], "Bash", "{pending}");
    let id = request["id"].as_u64().expect("an id").to_string();
    // Not done yet: a short wait times out with exit status 1.
    let early = ws.ctl(&["wait", "--tasks-done", "--timeout", "0.2"]);
    assert_eq!(early.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&early.stderr).starts_with("error: timed out"));

    let out = ws.ctl_ok(&["approve", &id]);
    assert!(out.contains("allow"), "{out}");
    ws.ctl_ok(&["wait", "--tasks-done", "--timeout", "30"]);
    let status: serde_json::Value =
        serde_json::from_str(&ws.ctl_ok(&["status", "--json"])).expect("json");
    assert_eq!(status["tasks"][0]["status"], "completed", "{status}");
    assert_eq!(status["teammates"].as_array().map(Vec::len), Some(2));
    // Budgets and spend read back by a script: a shell teammate costs nothing.
    ws.ctl_ok(&["/budget beta 2"]);
    let status: serde_json::Value =
        serde_json::from_str(&ws.ctl_ok(&["status", "--json"])).expect("json");
    let beta = status["teammates"]
        .as_array()
        .and_then(|ts| ts.iter().find(|t| t["name"] == "beta"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(beta["budget_usd"], 2.0, "{status}");
    assert_eq!(beta["costs_nothing"], true, "{status}");
    assert_eq!(beta["cost_usd"], 0.0, "{status}");
    let alpha = status["teammates"]
        .as_array()
        .and_then(|ts| ts.iter().find(|t| t["name"] == "alpha"))
        .cloned()
        .unwrap_or_default();
    assert!(alpha["budget_usd"].is_null(), "{status}");

    // The whole story, in order.
    let s = story(&ws);
    let kind = |e: &serde_json::Value, k: &str| e["kind"] == k;
    let spawned = position(&s, "alpha started", |e| {
        kind(e, "teammate") && e["name"] == "alpha" && e["status"] == "started"
    });
    let task_added = position(&s, "the task", |e| {
        kind(e, "task") && e["subject"] == "greet"
    });
    let asked = position(&s, "the request", |e| kind(e, "permission_request"));
    let answered = position(&s, "the answer", |e| {
        kind(e, "permission_answer") && e["decision"] == "allow"
    });
    let done = position(&s, "the task done", |e| {
        kind(e, "task") && e["status"] == "completed"
    });
    let reported = position(&s, "the teammate's report", |e| {
        kind(e, "message")
            && e["to"] == "team-lead"
            && e["text"]
                .as_str()
                .is_some_and(|t| t.contains("hello-from-greet"))
    });
    assert!(spawned < task_added && task_added < asked && asked < answered);
    assert!(answered < done && answered < reported, "{s:#?}");
    let seqs: Vec<u64> = s.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]));

    // /quit through ctl ends the server: no team, socket or process is left.
    let out = ws.ctl_ok(&["/quit"]);
    assert!(out.contains("shut down"), "{out}");
    assert!(server.wait_exit().success());
    assert!(ws.sockets().is_empty(), "{:?}", ws.sockets());
    assert!(!ws.team_dir().exists());
    wait_until(
        "every process of the team to end",
        || ws.processes().is_empty(),
        || format!("{:?}", ws.processes()),
    );
    // Nobody is there any more: exit status 3.
    let after = ws.ctl(&["status"]);
    assert_eq!(after.status.code(), Some(3));
    let err = String::from_utf8_lossy(&after.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: no lead server is running for team `headless`"),
        "{err}"
    );
}

#[test]
fn ctl_refusals_and_bad_input_have_their_exit_status_and_one_error_line() {
    let ws = Ws::new("refusals");
    let mut server = ws.serve(&[]);
    let cases: [(&[&str], i32, &str); 5] = [
        (&["approve", "42"], 1, "no request #42 waits"),
        (&["/msg @nobody hi"], 1, "the lead refused the command"),
        (&["aprove", "1"], 2, "unknown ctl command `aprove`"),
        (&["/detach"], 2, "/detach leaves a screen"),
        (&["wait", "--idle", "--timeout", "0.1"], 1, "timed out"),
    ];
    for (args, code, needle) in cases {
        let out = ws.ctl(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.starts_with("error: ") && err.contains(needle),
            "{args:?}: {err}"
        );
    }
    // Clap's usage errors are 2 as well.
    assert_eq!(ws.ctl(&["wait"]).status.code(), Some(2));
    ws.ctl_ok(&["/quit"]);
    assert!(server.wait_exit().success());
}

#[test]
fn teamlead_without_a_terminal_points_to_serve_and_ctl() {
    let ws = Ws::new("notty");
    let out = ws.cmd(&["--team", "notty"]).output().expect("run teamlead");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("needs a terminal")
            && err.contains("teamlead serve")
            && err.contains("teamlead ctl"),
        "{err}"
    );
    assert!(!err.contains("internal error"), "{err}");
    assert!(!ws.team_dir().exists());
    assert!(ws.sockets().is_empty());
}

#[test]
fn a_policy_hook_answers_routine_requests_and_its_denial_reaches_the_teammate() {
    let ws = Ws::new("policy");
    let hook = ws.root.path().join("policy.sh");
    std::fs::write(
        &hook,
        "#!/bin/sh\ninput=$(cat)\ncase \"$input\" in\n  *'\"command\":\"echo '*|*'\"command\":\"true'*) echo allow ;;\n  *) echo 'deny: only echo and true run here' ;;\nesac\n",
    )
    .expect("write the hook");
    let hook_arg = format!("sh {}", hook.display());
    let mut server = ws.serve(&["--permission-hook", &hook_arg]);
    ws.ctl_ok(&["/spawn alpha \"take the tasks\""]);
    ws.ctl_ok(&["/task add fine --command \"echo policy-ok\""]);
    ws.ctl_ok(&["wait", "--tasks-done", "--timeout", "30"]);
    ws.ctl_ok(&["/task add risky --command \"touch not-allowed\""]);
    let s = {
        let mut s = Vec::new();
        wait_until(
            "the teammate to report the denial",
            || {
                s = story(&ws);
                s.iter().any(|e| {
                    e["kind"] == "message"
                        && e["from"] == "alpha"
                        && e["text"]
                            .as_str()
                            .is_some_and(|t| t.contains("only echo and true run here"))
                })
            },
            || format!("{:#?}", story(&ws)),
        );
        s
    };
    let note = |needle: &str| {
        s.iter()
            .any(|e| e["kind"] == "note" && e["text"].as_str().is_some_and(|t| t.contains(needle)))
    };
    assert!(note("Policy hook allowed alpha's Bash request"), "{s:#?}");
    assert!(note("Policy hook denied alpha's Bash request"), "{s:#?}");
    assert!(
        s.iter()
            .any(|e| e["kind"] == "permission_answer" && e["decision"] == "allow")
    );
    assert!(s.iter().any(|e| e["kind"] == "permission_answer"
        && e["decision"] == "deny"
        && e["feedback"] == "only echo and true run here"));
    assert!(!ws.work().join("not-allowed").exists());
    // Nobody had to answer: nothing waits.
    assert!(ws.ctl_ok(&["pending"]).contains("nothing waits"));
    ws.ctl_ok(&["/quit"]);
    assert!(server.wait_exit().success());
    assert!(ws.sockets().is_empty());
}

#[test]
fn ctl_prints_a_commands_outcome_as_the_transcript_shows_it() {
    let ws = Ws::new("helpful");
    let mut server = ws.serve(&[]);
    insta::assert_snapshot!("ctl_help", ws.ctl_ok(&["/help"]));
    ws.ctl_ok(&["/quit"]);
    assert!(server.wait_exit().success());
}

/// A script gets the outcome of the command it ran, in order: acknowledgements that come
/// from the store's continuations (a task added, a task assigned, a mode set) are printed by
/// the `ctl` that ran the command, not lost or left to the next one.
#[test]
fn ctl_waits_for_its_commands_continuations() {
    let ws = Ws::new("outcomes");
    let mut server = ws.serve(&[]);
    ws.ctl_ok(&["/spawn alpha \"wait for tasks\""]);
    let out = ws.ctl_ok(&["--json", "/task add \"a\" --command \"echo hi\""]);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    let lines: Vec<String> = v["output"]
        .as_array()
        .map(|a| a.iter().map(|l| l.to_string()).collect())
        .unwrap_or_default();
    assert!(
        lines.iter().any(|l| l.contains("Added task #1")),
        "the task's acknowledgement: {out}"
    );
    let out = ws.ctl_ok(&["/mode alpha plan"]);
    assert!(out.contains("plan"), "the mode's acknowledgement: {out:?}");
    let out = ws.ctl_ok(&["/task assign 1 alpha"]);
    assert!(
        out.contains("#1") && out.contains("alpha"),
        "the assignment's acknowledgement: {out:?}"
    );
    ws.ctl_ok(&["/quit"]);
    assert!(server.wait_exit().success());
}

/// A Claude Code teammate in an in-process session is refused with every pane terminal named,
/// not only the first two.
#[test]
fn the_spawn_refusal_names_every_pane_terminal() {
    let ws = Ws::new("no-panes");
    let mut server = ws.serve(&[]);
    let out = ws.ctl(&["/spawn c1 --agent claude hi"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("need a pane backend (tmux, iTerm2, Zellij, kitty, WezTerm or screen)"),
        "{text}"
    );
    ws.ctl_ok(&["/quit"]);
    assert!(server.wait_exit().success());
}

#[test]
fn a_failed_or_denied_task_is_held_by_the_lead_and_wait_tasks_done_holds_once_redone() {
    let ws = Ws::new("redo");
    let hook = ws.root.path().join("policy.sh");
    std::fs::write(
        &hook,
        "#!/bin/sh\ninput=$(cat)\ncase \"$input\" in\n  *'\"command\":\"test '*) echo allow ;;\n  *) echo 'deny: only test runs here' ;;\nesac\n",
    )
    .expect("write the hook");
    let hook_arg = format!("sh {}", hook.display());
    let mut server = ws.serve(&["--permission-hook", &hook_arg]);
    ws.ctl_ok(&["/spawn alpha \"take the tasks\""]);
    // Fails (no marker yet), then is held by the lead until someone assigns it.
    ws.ctl_ok(&["/task add flaky --command \"test -f marker\""]);
    let status = || -> serde_json::Value {
        serde_json::from_str(&ws.ctl_ok(&["status", "--json"])).expect("json")
    };
    let noted = |needle: &str| {
        story(&ws).iter().any(|e| {
            e["kind"] == "note" && e["text"].as_str().is_some_and(|t| t.starts_with(needle))
        })
    };
    wait_until(
        "the failed task to be held by the lead",
        || noted("Task #1 \"flaky\" is held by the lead: alpha reported task 1 failed: exit 1."),
        || format!("{:#?}", story(&ws)),
    );
    // A denied command: the same.
    ws.ctl_ok(&["/task add risky --command \"touch not-allowed\""]);
    wait_until(
        "the denied task to be held by the lead",
        || noted("Task #2 \"risky\" is held by the lead: alpha reported task 2 not run"),
        || format!("{:#?}", story(&ws)),
    );
    let now = status();
    for id in ["1", "2"] {
        let task = now["tasks"]
            .as_array()
            .and_then(|t| t.iter().find(|t| t["id"] == id))
            .expect("the task");
        // Pending and owned by the lead: no teammate (nor a claude one) claims it.
        assert_eq!(task["status"], "pending", "{now}");
        assert_eq!(task["owner"], "team-lead", "{now}");
    }
    // alpha is not stuck agent_busy: it takes new work.
    ws.ctl_ok(&["/task add fine --command \"test -d .\""]);
    wait_until(
        "the new task done",
        || {
            status()["tasks"].as_array().is_some_and(|t| {
                t.iter()
                    .any(|t| t["id"] == "3" && t["status"] == "completed")
            })
        },
        || format!("{:#?}", story(&ws)),
    );
    // Not all done: wait --tasks-done does not hold.
    let early = ws.ctl(&["wait", "--tasks-done", "--timeout", "0.3"]);
    assert_eq!(early.status.code(), Some(1));
    // Redo the failed one (its marker now exists), close the denied one by hand.
    std::fs::write(ws.work().join("marker"), "").expect("marker");
    ws.ctl_ok(&["/task assign 1 alpha"]);
    ws.ctl_ok(&["/task done 2"]);
    ws.ctl_ok(&["wait", "--tasks-done", "--timeout", "30"]);
    assert!(!ws.work().join("not-allowed").exists());
    ws.ctl_ok(&["/quit"]);
    assert!(server.wait_exit().success());
}

/// The log files' text.
fn log_text(ws: &Ws) -> String {
    std::fs::read_dir(ws.logs())
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .collect()
}

#[test]
fn a_server_nobody_uses_ends_its_team_at_the_config_files_idle_limit() {
    let ws = Ws::new("idle");
    std::fs::write(
        ws.root.path().join("none.toml"),
        "server-idle-exit = \"2s\"\n",
    )
    .expect("config");
    // A bad flag is one error line naming it, before anything starts.
    let bad = ws
        .cmd(&["serve", "--team", "idle", "--idle-exit", "soon"])
        .output()
        .expect("serve");
    assert_eq!(bad.status.code(), Some(1));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.starts_with("error: --idle-exit \"soon\": ") && err.lines().count() == 1,
        "{err}"
    );
    assert!(!ws.team_dir().exists());

    let mut server = ws.serve(&[]);
    // A ctl client is use: the clock runs again only once it has gone.
    let out = ws.ctl_ok(&["/spawn alpha \"wait for work\""]);
    assert!(out.contains("Spawned alpha"), "{out}");
    // Nobody comes back: the team ends as /quit ends it, teammate included.
    assert!(server.wait_exit().success());
    assert!(!ws.team_dir().exists(), "the team is deleted");
    assert!(ws.sockets().is_empty(), "{:?}", ws.sockets());
    wait_until(
        "every process of the team to end",
        || ws.processes().is_empty(),
        || format!("{:?}", ws.processes()),
    );
    let log = log_text(&ws);
    assert!(
        log.contains("for 2s (server-idle-exit): ending the team as /quit does"),
        "{log}"
    );
}

/// A command someone typed on a screen that the lead refused is that screen's: the next `ctl`
/// call, whose own command is fine, exits 0 (refusals were counted per store generation and
/// charged to the next ctl caller).
#[test]
fn a_ctl_calls_status_is_that_of_its_own_command_only() {
    use teamlead::lead::contract::{LeadCommand, LeadEvent, TranscriptItem, ViewTarget};
    use teamlead::server::wire::{ClientMsg, ServerMsg};
    let ws = Ws::new("ownstatus");
    let mut server = ws.serve(&[]);
    let socket = ws.sockets()[0].clone();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // A screen (a client with no barrier after its command) types a refused command.
    let mut screen = rt.block_on(async {
        let mut c = teamlead::server::client::connect(&socket, "ownstatus")
            .await
            .expect("connect");
        c.send(&ClientMsg::Attach { transcripts: false })
            .await
            .unwrap();
        c.send(&ClientMsg::Command(LeadCommand::Submit {
            target: ViewTarget::Lead,
            text: "/kill nobody".into(),
        }))
        .await
        .unwrap();
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
        loop {
            let msg = tokio::time::timeout_at(deadline, c.recv())
                .await
                .expect("the refusal within 20 s")
                .unwrap();
            if let Some(ServerMsg::Event(LeadEvent::Transcript(TranscriptItem::System { text }))) =
                &msg
                && text.contains("nobody")
            {
                break c;
            }
        }
    });
    let out = ws.ctl(&["/task list"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The screen shows ctl's command as ctl's, not as if typed there.
    let echoed = rt.block_on(async {
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
        loop {
            let msg = tokio::time::timeout_at(deadline, screen.recv())
                .await
                .expect("the echo within 20 s")
                .unwrap();
            match msg {
                Some(ServerMsg::Event(LeadEvent::Transcript(
                    item @ (TranscriptItem::User { .. } | TranscriptItem::Ctl { .. }),
                ))) => break item,
                Some(_) => {}
                None => panic!("the server went away"),
            }
        }
    });
    assert_eq!(
        echoed,
        TranscriptItem::Ctl {
            text: "/task list".into()
        }
    );
    // Its own refusal is still its own.
    assert_eq!(ws.ctl(&["/kill nobody"]).status.code(), Some(1));
    assert_eq!(ws.ctl(&["/task list"]).status.code(), Some(0));
    rt.block_on(async {
        drop(
            screen
                .send(&ClientMsg::Command(LeadCommand::ScreenClosed))
                .await,
        )
    });
    ws.ctl_ok(&["/quit"]);
    assert!(server.wait_exit().success());
}
