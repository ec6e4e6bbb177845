//! `teamlead inspect` and `teamlead send` with the real binary on copies of the fixtures:
//! what a user reads (blockers, availability, unread previews, problems), that inspect never
//! writes, that a sent message shows up, and that bad names fail in one line without writing.

use crate::cli_common;

use cli_common::{TestHome, lock_dirs, snapshot};
use serde_json::Value;

fn stdout_of(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn line_with<'a>(text: &'a str, needle: &str) -> &'a str {
    text.lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?} in:\n{text}"))
}

/// `teamlead inspect ARGS --json`, parsed: it succeeds, and its output never holds a raw
/// escape.
fn inspect_json(t: &TestHome, args: &[&str]) -> Value {
    let out = t
        .cmd()
        .arg("inspect")
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(!out.stdout.contains(&0x1b), "no raw escape in --json");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out:?}"))
}

/// The entry of `doc[list]` whose `key` is `value`.
fn entry(doc: &Value, list: &str, key: &str, value: &str) -> Value {
    doc[list]
        .as_array()
        .and_then(|a| a.iter().find(|e| e[key] == value))
        .unwrap_or_else(|| panic!("no {list} entry with {key} {value}: {doc:#}"))
        .clone()
}

/// The kinds of `doc`'s problems, in order.
fn problem_kinds(doc: &Value) -> Vec<String> {
    doc["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["kind"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn inspect_seed_team_shows_blockers_availability_and_unread() {
    let t = TestHome::fixture("seed-2.1.45");
    let before = snapshot(&t.home());
    let out = t
        .cmd()
        .args(["inspect", "codebase-research"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = stdout_of(&out);

    let task3 = line_with(&text, "#3 ");
    assert!(task3.contains("blocked by #2 (in_progress"), "{task3}");
    assert!(
        !task3.contains("#1"),
        "a completed blocker no longer blocks: {task3}"
    );
    assert!(line_with(&text, "#4 ").contains("[available]"));
    assert!(line_with(&text, "#5 ").contains("internal"));
    assert!(!line_with(&text, "#5 ").contains("available"));
    assert!(line_with(&text, "available:").contains("#4"));

    assert!(text.contains("team-lead: 3 unread"), "{text}");
    let perm = line_with(&text, "permission request: Bash `mkdir -p");
    assert!(perm.contains("from farewell-builder"), "{perm}");
    assert!(text.contains("greeter is idle"), "{text}");
    assert!(
        text.contains("worker: All 2 tasks completed successfully"),
        "{text}"
    );

    let member = line_with(&text, "frontend-engineer  ");
    assert!(
        member.contains("in-process") && member.contains("blue"),
        "{member}"
    );
    assert!(text.contains("problems: none"), "{text}");
    assert_eq!(
        before,
        snapshot(&t.home()),
        "inspect must not write anything"
    );
}

#[test]
fn inspect_seed_team_as_json() {
    let t = TestHome::fixture("seed-2.1.45");
    let doc = inspect_json(&t, &["codebase-research"]);
    let task = |id: &str| entry(&doc, "tasks", "id", id);
    let t3 = task("3");
    assert_eq!(t3["blocked_by"], serde_json::json!(["1", "2"]));
    assert_eq!(
        t3["waiting_on"],
        serde_json::json!([{"id": "2", "status": "in_progress", "owner": "backend-engineer"}])
    );
    assert_eq!(t3["available"], false);
    assert_eq!(task("4")["available"], true);
    assert_eq!(task("5")["internal"], true);
    assert_eq!(doc["available"], serde_json::json!(["4"]));

    let lead_inbox = entry(&doc, "inboxes", "member", "team-lead");
    assert_eq!(lead_inbox["unread"], 3);
    let recent = lead_inbox["recent_unread"].as_array().unwrap();
    let perm = recent
        .iter()
        .find(|m| m["kind"] == "permission_request")
        .unwrap();
    assert_eq!(perm["from"], "farewell-builder");
    assert!(
        perm["summary"]
            .as_str()
            .unwrap()
            .starts_with("permission request: Bash `mkdir -p")
    );
    assert_eq!(doc["members"].as_array().unwrap().len(), 2);
    assert_eq!(doc["lead_alive"], false);
    assert_eq!(doc["lead_status"], "unknown");
    assert_eq!(doc["problems"], serde_json::json!([]));
}

#[test]
fn inspect_without_a_team_lists_teams() {
    let t = TestHome::fixture("seed-2.1.45");
    let out = t.cmd().arg("inspect").output().unwrap();
    assert!(out.status.success());
    let text = stdout_of(&out);
    let row = line_with(&text, "codebase-research");
    let cols: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(
        cols,
        // A Claude Code lead holds no teamlead lock and this fixture records no lead process:
        // its lead is neither running nor provably gone.
        ["codebase-research", "2", "unknown", "3", "5"],
        "{row}"
    );

    let doc = inspect_json(&t, &[]);
    assert_eq!(doc["teams"][0]["name"], "codebase-research");
    assert_eq!(doc["teams"][0]["members"], 2);
    assert_eq!(doc["teams"][0]["unread_for_lead"], 3);
    assert_eq!(doc["teams"][0]["lead_alive"], false);

    let empty = TestHome::empty();
    let out = empty.cmd().arg("inspect").output().unwrap();
    assert!(out.status.success());
    assert!(stdout_of(&out).contains("no teams"));
}

#[test]
fn inspect_reads_claude_code_files_of_both_versions() {
    let t = TestHome::fixture("claude-code-2.1.329");
    let out = t
        .cmd()
        .args(["inspect", "session-abc12345"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = stdout_of(&out);
    assert!(text.contains("team-lead: 5 unread (5 total)"), "{text}");
    assert!(text.contains("permission request: Bash `touch made_by_bash.txt` from worker"));
    assert!(text.contains("worker approved shutdown"), "{text}");
    let worker = line_with(&text, "worker  ");
    assert!(worker.contains("tmux") && worker.contains("%1") && worker.contains("blue"));
    assert!(text.contains("problems: none"), "{text}");

    let t = TestHome::fixture("claude-code-2.1.45");
    let out = t
        .cmd()
        .args(["inspect", "session-abc12345"])
        .output()
        .unwrap();
    let text = stdout_of(&out);
    assert!(out.status.success(), "{out:?}");
    assert!(line_with(&text, "worker  ").contains("idle"), "{text}");
    // The lead's message, marked read by Claude Code 2.1.45 itself.
    assert!(
        text.contains("worker: 0 unread (1 total; from the lead: 1 read, 0 unread)"),
        "{text}"
    );
    assert!(text.contains("team-lead: 2 unread"), "{text}");
    assert!(text.contains("worker: mock teammate says hi"), "{text}");
}

#[test]
fn inspect_reports_problems_without_touching_them() {
    let t = TestHome::empty();
    t.write_team("broken", &["a"]);
    let team = t.home().join("teams/broken");
    // A member entry without agentId.
    let mut config: Value =
        serde_json::from_str(&std::fs::read_to_string(team.join("config.json")).unwrap()).unwrap();
    config["members"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({"name": "ghost"}));
    std::fs::write(team.join("config.json"), config.to_string()).unwrap();
    // An inbox that is not an array, and one with an entry that fails the schema.
    std::fs::write(team.join("inboxes/a.json"), "{\"oops\": 1}").unwrap();
    std::fs::write(
        team.join("inboxes/team-lead.json"),
        r#"[{"from":"a","text":"hi","timestamp":"2026-01-01T00:00:00.000Z"},{"text":"no sender"}]"#,
    )
    .unwrap();
    // Tasks: a dangling blocker and a file that is not a task.
    let tasks = t.home().join("tasks/broken");
    std::fs::create_dir_all(&tasks).unwrap();
    std::fs::write(
        tasks.join("1.json"),
        r#"{"id":"1","subject":"s","description":"","status":"pending","blocks":[],"blockedBy":["9"]}"#,
    )
    .unwrap();
    std::fs::write(tasks.join("2.json"), "not json").unwrap();
    // A lock directory a dead writer left 60 s ago.
    let stale = team.join("config.json.lock");
    std::fs::create_dir(&stale).unwrap();
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    std::fs::File::open(&stale)
        .unwrap()
        .set_times(
            std::fs::FileTimes::new()
                .set_modified(old)
                .set_accessed(old),
        )
        .unwrap();

    let before = snapshot(&t.home());
    let out = t.cmd().args(["inspect", "broken"]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = stdout_of(&out);
    assert!(
        text.contains("member entry without a string agentId"),
        "{text}"
    );
    assert!(text.contains("inboxes/a.json: not a JSON array"), "{text}");
    assert!(
        text.contains("1 entry without string from/text/timestamp"),
        "{text}"
    );
    assert!(
        text.contains("blocked by #9, which does not exist"),
        "{text}"
    );
    assert!(text.contains("tasks/broken/2.json"), "{text}");
    assert!(
        text.contains("config.json.lock: stale lock directory"),
        "{text}"
    );
    assert!(text.contains("team-lead: 1 unread"), "{text}");
    assert_eq!(
        before,
        snapshot(&t.home()),
        "inspect must not write, move or quarantine"
    );

    let doc = inspect_json(&t, &["broken"]);
    assert_eq!(problem_kinds(&doc).len(), 6, "{doc:#}");
}

#[test]
fn send_then_inspect_shows_the_message() {
    let t = TestHome::fixture("seed-2.1.45");
    t.cmd()
        .args([
            "send",
            "--team",
            "codebase-research",
            "--to",
            "team-lead",
            "--from",
            "frontend-engineer",
            "--summary",
            "dashboard mapped",
            "The dashboard has 14 routes.",
        ])
        .assert()
        .success()
        .stdout(predicates::str::contains(
            "sent to team-lead@codebase-research",
        ));
    assert!(lock_dirs(&t.home()).is_empty(), "no lock directory is left");

    let inbox: Value = serde_json::from_str(
        &std::fs::read_to_string(
            t.home()
                .join("teams/codebase-research/inboxes/team-lead.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let last = inbox.as_array().unwrap().last().unwrap();
    assert_eq!(last["from"], "frontend-engineer");
    assert_eq!(last["text"], "The dashboard has 14 routes.");
    assert_eq!(last["summary"], "dashboard mapped");
    assert_eq!(
        last["color"], "blue",
        "the sender's color from the team file"
    );
    assert_eq!(last["msgV"], 1);
    assert_eq!(last["type"], "message");
    assert_eq!(last["read"], false);
    assert!(last["msg_id"].as_str().is_some_and(|id| id.len() == 36));

    let out = t
        .cmd()
        .args(["inspect", "codebase-research"])
        .output()
        .unwrap();
    let text = stdout_of(&out);
    assert!(text.contains("team-lead: 4 unread (4 total)"), "{text}");
    assert!(
        text.contains("frontend-engineer: dashboard mapped"),
        "{text}"
    );

    // To a teammate that has no inbox yet; from the lead by default.
    t.cmd()
        .args([
            "send",
            "--team",
            "codebase-research",
            "--to",
            "frontend-engineer",
            "go on",
        ])
        .assert()
        .success();
    let out = t
        .cmd()
        .args(["inspect", "codebase-research"])
        .output()
        .unwrap();
    let text = stdout_of(&out);
    assert!(text.contains("frontend-engineer: 1 unread"), "{text}");
    assert!(text.contains("team-lead: go on"), "{text}");
}

#[test]
fn bad_names_fail_in_one_line_and_write_nothing() {
    let t = TestHome::fixture("seed-2.1.45");
    let before = snapshot(t.root.path());
    let cases: &[&[&str]] = &[
        &["send", "--team", "../../etc", "--to", "team-lead", "x"],
        &[
            "send",
            "--team",
            "codebase-research",
            "--to",
            "../../etc",
            "x",
        ],
        &["send", "--team", "codebase-research", "--to", "a/b", "x"],
        &[
            "send",
            "--team",
            "codebase-research",
            "--to",
            "team-lead",
            "--from",
            "..",
            "x",
        ],
        &["send", "--team", "no-such-team", "--to", "team-lead", "x"],
        &["inspect", "../../etc"],
        &["inspect", "no-such-team"],
        &["monitor", "../../etc"],
        &["task", "add", "--team", "../../etc", "s"],
        &["task", "list", "--team", "no-such-team"],
        &[
            "task",
            "claim",
            "../1",
            "--team",
            "codebase-research",
            "--owner",
            "a",
        ],
        &[
            "task",
            "claim",
            "4",
            "--team",
            "codebase-research",
            "--owner",
            "../../x",
        ],
        &[
            "task",
            "add",
            "--team",
            "codebase-research",
            "s",
            "--blocked-by",
            "../2",
        ],
    ];
    for args in cases {
        let out = t.cmd().args(*args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert_eq!(
            stderr.lines().count(),
            1,
            "{args:?}: one line, got {stderr:?}"
        );
        assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
    let after = snapshot(t.root.path());
    let added: Vec<_> = after
        .keys()
        .filter(|p| !before.contains_key(*p) && !p.starts_with(t.logs()))
        .collect();
    assert!(added.is_empty(), "nothing may be created: {added:?}");
    let home_before: Vec<_> = before
        .iter()
        .filter(|(p, _)| p.starts_with(t.home()))
        .collect();
    let home_after: Vec<_> = after
        .iter()
        .filter(|(p, _)| p.starts_with(t.home()))
        .collect();
    assert_eq!(home_before, home_after, "the home is untouched");
}

#[test]
fn odd_inbox_names_are_reported_and_the_rest_is_shown() {
    let t = TestHome::fixture("seed-2.1.45");
    let inboxes = t.home().join("teams/codebase-research/inboxes");
    std::fs::write(inboxes.join("odd name!.json"), "[]").unwrap();
    std::fs::write(inboxes.join("\u{1b}]0;pwned\u{7}.json"), "[]").unwrap();
    let before = snapshot(&t.home());
    let out = t
        .cmd()
        .args(["inspect", "codebase-research"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = stdout_of(&out);
    assert!(!text.contains('\u{1b}'), "no raw escape: {text:?}");
    assert!(
        text.contains("odd name!.json: inbox file name is not a safe member name"),
        "{text}"
    );
    assert!(text.contains("\\e]0;pwned\\x07.json"), "{text}");
    assert!(
        text.contains("team-lead: 3 unread"),
        "the other inboxes still show: {text}"
    );

    let doc = inspect_json(&t, &["codebase-research"]);
    assert_eq!(
        problem_kinds(&doc),
        ["unsafe-name", "unsafe-name"],
        "{doc:#}"
    );
    assert_eq!(before, snapshot(&t.home()), "inspect wrote nothing");
}

/// Issue 18, part 4: a `permission_request` whose command hides text with the "conceal"
/// attribute, whose `tool_name` carries an OSC title, and a task whose owner carries escape
/// sequences are shown escaped *and* reported, by `inspect` (text and `--json`) and by
/// `task list` (a problem line per task).
#[test]
fn control_sequences_in_frames_and_tasks_are_reported() {
    let t = TestHome::fixture("seed-2.1.45");
    let inbox = t
        .home()
        .join("teams/codebase-research/inboxes/team-lead.json");
    let mut entries: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(&inbox).unwrap()).unwrap();
    let frame = serde_json::json!({
        "type": "permission_request", "request_id": "perm-hidden", "agent_id": "greeter",
        "tool_name": "Bash\u{1b}]0;owned\u{7}", "description": "list",
        "input": {"command": "ls\u{1b}[8m; rm -rf ~\u{1b}[0m"},
    });
    entries.push(serde_json::json!({
        "from": "greeter", "text": frame.to_string(),
        "timestamp": "2026-02-18T18:40:00.000Z", "read": false,
    }));
    std::fs::write(&inbox, serde_json::to_string(&entries).unwrap()).unwrap();
    let task = t.home().join("tasks/codebase-research/4.json");
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&task).unwrap()).unwrap();
    doc["owner"] = Value::String("greeter\u{1b}[2J\u{202e}".into());
    std::fs::write(&task, doc.to_string()).unwrap();

    let out = t
        .cmd()
        .args(["inspect", "codebase-research"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = stdout_of(&out);
    assert!(!text.contains('\u{1b}'), "no raw escape: {text:?}");
    let frame_line = line_with(&text, "(permission_request) from `greeter`");
    assert!(
        frame_line.contains("carries control sequences in `tool_name`, `input`"),
        "{frame_line}"
    );
    let task_line = line_with(&text, "task #4 carries control sequences");
    assert!(task_line.contains("`owner`"), "{task_line}");

    let doc = inspect_json(&t, &["codebase-research"]);
    assert_eq!(
        problem_kinds(&doc),
        ["control-sequences", "control-sequences"],
        "{doc:#}"
    );

    let out = t
        .cmd()
        .args(["task", "list", "--team", "codebase-research"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let all = format!(
        "{}{}",
        stdout_of(&out),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!all.contains('\u{1b}'), "no raw escape: {all:?}");
    let warning = line_with(&all, "task #4 carries control sequences");
    assert!(warning.contains("`owner`"), "{warning}");
    let out = t
        .cmd()
        .args(["task", "list", "--team", "codebase-research", "--json"])
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["problems"][0]["kind"], "control-sequences", "{doc:#}");
}

/// What each teammate used and cost, read from files alone: a `claude` teammate's session
/// transcript (its messages repeat their id on several lines: counted once) and an own
/// teammate's last idle report; the team's total.
#[test]
fn inspect_shows_what_each_teammate_used_and_cost() {
    let t = TestHome::fixture("seed-2.1.45");
    let home = t.home();
    let session = "5d0c5a9e-2f4b-4c7a-9a57-6b1f0b8f0c11";
    let dir = home.join("teams/codebase-research/.teamlead");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("session.json"),
        format!(
            r#"{{"teammates":{{"frontend-engineer":{{"claude":true,"sessionId":"{session}"}}}}}}"#
        ),
    )
    .unwrap();
    let projects = home.join("projects/-w");
    std::fs::create_dir_all(&projects).unwrap();
    let line = |id: &str, input: u64, write: u64, read: u64, output: u64| {
        format!(
            "{{\"type\":\"assistant\",\"message\":{{\"id\":\"{id}\",\"model\":\"claude-sonnet-4-5-20250929\",\"content\":[],\"usage\":{{\"input_tokens\":{input},\"cache_creation_input_tokens\":{write},\"cache_read_input_tokens\":{read},\"output_tokens\":{output}}}}}}}\n"
        )
    };
    let text = [
        line("msg_a", 3, 20_000, 0, 1),
        line("msg_a", 3, 20_000, 0, 40),
        line("msg_a", 3, 20_000, 0, 412),
        line("msg_b", 5, 1_500, 20_000, 2),
        line("msg_b", 5, 1_500, 20_000, 988),
    ]
    .concat();
    std::fs::write(projects.join(format!("{session}.jsonl")), text).unwrap();
    // An own teammate, `helper`, and its idle report with its usage (Claude Code's own
    // frames carry none).
    let config = home.join("teams/codebase-research/config.json");
    let mut file: Value = serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    let mut helper = file["members"][1].clone();
    helper["name"] = "helper".into();
    helper["agentId"] = "helper@codebase-research".into();
    file["members"].as_array_mut().unwrap().push(helper);
    std::fs::write(&config, serde_json::to_string(&file).unwrap()).unwrap();
    let idle = r#"{"type":"idle_notification","from":"helper","timestamp":"2026-01-01T00:00:00.000Z","idleReason":"available","teamleadUsage":{"inputTokens":1200,"outputTokens":300,"toolUses":2,"turns":1}}"#;
    let sent = t
        .cmd()
        .args([
            "send",
            "--team",
            "codebase-research",
            "--to",
            "team-lead",
            "--from",
            "helper",
            idle,
        ])
        .output()
        .unwrap();
    assert!(sent.status.success(), "{sent:?}");

    let report = inspect_json(&t, &["codebase-research"]);
    let member = |name: &str| entry(&report, "members", "name", name);
    let claude = member("frontend-engineer");
    assert_eq!(claude["usage"]["output_tokens"], 1_400, "{claude}");
    assert_eq!(claude["usage"]["cost_micros"], 107_649, "{claude}");
    assert_eq!(claude["usage"]["model"], "claude-sonnet-4-5-20250929");
    let helper = member("helper");
    assert_eq!(helper["usage"]["input_tokens"], 1_200, "{helper}");
    assert!(
        report["cost_micros"].as_u64().unwrap() > 107_649,
        "{report}"
    );

    let out = t
        .cmd()
        .args(["inspect", "codebase-research"])
        .output()
        .unwrap();
    let text = stdout_of(&out);
    assert!(text.contains("usage (team $0.12)"), "{text}");
    let row = line_with(&text, "1.4k out");
    assert!(
        row.trim_start().starts_with("frontend-engineer") && row.contains("$0.11"),
        "{row}"
    );
}

/// Messages from the lead in a teammate's inbox, read or not: the ledger's receipts as the
/// files show them.
#[test]
fn inspect_counts_the_leads_messages_read_and_unread() {
    let t = TestHome::fixture("seed-2.1.45");
    for text in ["first", "second"] {
        t.cmd()
            .args([
                "send",
                "--team",
                "codebase-research",
                "--to",
                "frontend-engineer",
                "--from",
                "team-lead",
                text,
            ])
            .assert()
            .success();
    }
    // The teammate takes the first one as Claude Code does: marks it read.
    let path = t
        .home()
        .join("teams/codebase-research/inboxes/frontend-engineer.json");
    let mut inbox: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let first = inbox
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|e| e["text"] == "first")
        .unwrap();
    first["read"] = Value::Bool(true);
    std::fs::write(&path, serde_json::to_string(&inbox).unwrap()).unwrap();
    let out = t
        .cmd()
        .args(["inspect", "codebase-research"])
        .output()
        .unwrap();
    let text = stdout_of(&out);
    let row = line_with(&text, "frontend-engineer: ");
    assert!(row.contains("from the lead: 1 read, 1 unread"), "{row}");
}

/// Claims `frontend-engineer` of the seed team as a claude teammate of session `session`, and
/// returns the directory its transcript goes in.
fn claude_session(t: &TestHome, session: &str) -> std::path::PathBuf {
    let home = t.home();
    let dir = home.join("teams/codebase-research/.teamlead");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("session.json"),
        format!(
            r#"{{"teammates":{{"frontend-engineer":{{"claude":true,"sessionId":"{session}"}}}}}}"#
        ),
    )
    .unwrap();
    let projects = home.join("projects/-w");
    std::fs::create_dir_all(&projects).unwrap();
    projects
}

fn answer(id: &str, model: &str, usage: &str) -> String {
    format!(
        "{{\"type\":\"assistant\",\"message\":{{\"id\":\"{id}\",\"model\":\"{model}\",\"content\":[],\"usage\":{usage}}}}}\n"
    )
}

/// A claude teammate that switched models, wrote to the 1-hour cache and ran subagents (one on
/// a model without a price): `inspect` prices each message by its own model and tier, says
/// what the team's total leaves out, and applies the config file's `[prices]`.
#[test]
fn inspect_prices_each_message_subagents_included_and_applies_the_config_prices() {
    let t = TestHome::fixture("seed-2.1.45");
    let session = "7a1d9c2e-4b6f-4e1a-8c3d-2f5e6a7b8c90";
    let projects = claude_session(&t, session);
    let text = [
        // Opus 5.5: 1000×4 + 10000×5 (5 min) + 20000×8 (1 h) + 2000×20 = 254,000 µ$.
        answer(
            "msg_1",
            "claude-opus-5-5",
            r#"{"input_tokens":1000,"cache_creation_input_tokens":30000,"cache_creation":{"ephemeral_5m_input_tokens":10000,"ephemeral_1h_input_tokens":20000},"output_tokens":2000}"#,
        ),
        // Sonnet 5.5: 500×2 + 2000×2.5 + 30000×0.20 + 1000×10 = 22,000 µ$.
        answer(
            "msg_2",
            "claude-sonnet-5-5",
            r#"{"input_tokens":500,"cache_creation_input_tokens":2000,"cache_read_input_tokens":30000,"output_tokens":1000}"#,
        ),
    ]
    .concat();
    std::fs::write(projects.join(format!("{session}.jsonl")), text).unwrap();
    let subagents = projects.join(session).join("subagents");
    std::fs::create_dir_all(&subagents).unwrap();
    // Haiku 5.5 over its 100K tier: (2000×0.10 + 120000×0.01) × 5 + 3000×0.50 × 5 = 14,500 µ$.
    std::fs::write(
        subagents.join("agent-a1.jsonl"),
        answer(
            "msg_s1",
            "claude-haiku-5-5",
            r#"{"input_tokens":2000,"cache_read_input_tokens":120000,"output_tokens":3000}"#,
        ),
    )
    .unwrap();
    std::fs::write(
        subagents.join("agent-b2.jsonl"),
        answer(
            "msg_s2",
            "fable-5-2",
            r#"{"input_tokens":10000,"output_tokens":1000}"#,
        ),
    )
    .unwrap();

    // 254,000 + 22,000 + 14,500 = 290,500 µ$; fable-5-2 left out, and said so.
    let report = inspect_json(&t, &["codebase-research"]);
    let claude = entry(&report, "members", "name", "frontend-engineer");
    let usage = &claude["usage"];
    assert_eq!(usage["cost_micros"], 290_500, "{claude}");
    assert_eq!(usage["cache_write_1h_tokens"], 20_000, "{claude}");
    assert_eq!(usage["cache_write_5m_tokens"], 12_000, "{claude}");
    assert_eq!(usage["unpriced_models"], serde_json::json!(["fable-5-2"]));
    let models: Vec<&str> = usage["by_model"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["model"].as_str().unwrap())
        .collect();
    assert_eq!(
        models,
        [
            "claude-opus-5-5",
            "claude-sonnet-5-5",
            "claude-haiku-5-5",
            "fable-5-2"
        ]
    );
    assert_eq!(
        report["unpriced"],
        serde_json::json!([{"name": "frontend-engineer", "models": ["fable-5-2"]}])
    );
    let out = t
        .cmd()
        .args(["inspect", "codebase-research"])
        .output()
        .unwrap();
    let text = stdout_of(&out);
    let head = line_with(&text, "usage (team");
    assert!(
        head.contains("usage (team $0.29 + 1 teammate not priced (model fable-5-2))"),
        "{text}"
    );
    assert!(
        line_with(&text, "claude-haiku-5-5:").contains("$0.01"),
        "{text}"
    );

    // The config file prices fable-5-2: 10000×1 + 1000×2 = 12,000 µ$ more, nothing left out.
    std::fs::write(
        t.config(),
        "[prices.\"fable-5-2\"]\ninput = 1.0\noutput = 2.0\n",
    )
    .unwrap();
    let report = inspect_json(&t, &["codebase-research"]);
    let claude = entry(&report, "members", "name", "frontend-engineer");
    assert_eq!(claude["usage"]["cost_micros"], 302_500, "{claude}");
    assert_eq!(report["unpriced"], serde_json::json!([]));
}

/// A transcript of over 20 MB: `inspect` counts every message in it (it once read the first
/// 8 MiB only).
#[test]
fn inspect_counts_every_message_of_a_20_mb_transcript() {
    let t = TestHome::fixture("seed-2.1.45");
    let session = "0b9e8d7c-6a5f-4e3d-9c2b-1a0f9e8d7c6b";
    let projects = claude_session(&t, session);
    let filler = "x".repeat(1_000);
    let messages = 21_000u64;
    let mut text = String::with_capacity(22 * 1024 * 1024);
    for i in 0..messages {
        text += &format!(
            "{{\"type\":\"assistant\",\"message\":{{\"id\":\"msg_{i}\",\"model\":\"claude-sonnet-5-5\",\"content\":[{{\"type\":\"text\",\"text\":\"{filler}\"}}],\"usage\":{{\"input_tokens\":10,\"output_tokens\":1}}}}}}\n"
        );
    }
    assert!(text.len() > 20 * 1024 * 1024, "{}", text.len());
    std::fs::write(projects.join(format!("{session}.jsonl")), text).unwrap();
    let report = inspect_json(&t, &["codebase-research"]);
    let claude = entry(&report, "members", "name", "frontend-engineer");
    assert_eq!(claude["usage"]["output_tokens"], messages, "{claude}");
    assert_eq!(claude["usage"]["input_tokens"], messages * 10, "{claude}");
    // 21,000 × (10×2 + 1×10) = 630,000 µ$.
    assert_eq!(claude["usage"]["cost_micros"], 630_000, "{claude}");
}

/// A teammate on another host (teamlead's `teamleadHost` member key) is shown as
/// `name · host` in the text and with its `host` in the JSON; a local one has no host.
#[test]
fn inspect_shows_the_host_of_a_remote_teammate() {
    let t = TestHome::empty();
    t.write_team("spread", &["near", "far"]);
    let config = t.home().join("teams/spread/config.json");
    let mut file: Value = serde_json::from_slice(&std::fs::read(&config).unwrap()).unwrap();
    file["members"][2]["teamleadHost"] = Value::from("build");
    std::fs::write(&config, serde_json::to_vec_pretty(&file).unwrap()).unwrap();

    let out = t.cmd().args(["inspect", "spread"]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = stdout_of(&out);
    assert!(line_with(&text, "far").contains("far · build"), "{text}");
    assert!(!line_with(&text, "near").contains('·'), "{text}");

    let doc = inspect_json(&t, &["spread"]);
    assert_eq!(entry(&doc, "members", "name", "far")["host"], "build");
    assert_eq!(entry(&doc, "members", "name", "near")["host"], Value::Null);
}
