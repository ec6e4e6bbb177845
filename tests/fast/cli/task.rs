//! `teamlead task …`, `completions`, `--help` of every command, usage errors and the
//! placeholder commands, with the real binary and temporary homes.

use crate::cli_common;

use cli_common::{TestHome, lock_dirs};
use serde_json::Value;

fn run(t: &TestHome, args: &[&str]) -> std::process::Output {
    t.cmd().args(args).output().unwrap()
}

fn ok(t: &TestHome, args: &[&str]) -> String {
    let out = run(t, args);
    assert!(out.status.success(), "{args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Runs a command that must fail; returns its single stderr line.
fn fails(t: &TestHome, args: &[&str]) -> String {
    let out = run(t, args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr:?}");
    stderr.trim_end().to_string()
}

#[test]
fn task_add_list_claim_done_delete() {
    let t = TestHome::empty();
    t.write_team("work", &["a", "b"]);
    let team = ["--team", "work"];
    let with = |args: &[&'static str]| -> Vec<&'static str> {
        let mut v = args.to_vec();
        v.extend_from_slice(&team);
        v
    };

    assert_eq!(
        ok(
            &t,
            &with(&["task", "add", "Write the parser", "-d", "grammar in docs"])
        )
        .trim(),
        "created task #1 \"Write the parser\""
    );
    assert!(
        ok(
            &t,
            &with(&[
                "task",
                "add",
                "Run the tests",
                "--blocked-by",
                "1",
                "--command",
                "cargo test"
            ])
        )
        .contains("created task #2")
    );
    ok(&t, &with(&["task", "add", "Write docs"]));

    let on_disk: Value =
        serde_json::from_str(&std::fs::read_to_string(t.home().join("tasks/work/2.json")).unwrap())
            .unwrap();
    assert_eq!(on_disk["metadata"]["command"], "cargo test");
    assert_eq!(on_disk["blockedBy"], serde_json::json!(["1"]));
    assert_eq!(on_disk["status"], "pending");
    assert!(on_disk.get("owner").is_none(), "no owner key until claimed");

    let list = ok(&t, &with(&["task", "list"]));
    let line2 = list.lines().find(|l| l.starts_with("#2")).unwrap();
    assert!(line2.contains("blocked by #1 (pending)"), "{list}");
    assert!(
        list.lines()
            .find(|l| l.starts_with("#1"))
            .unwrap()
            .contains("available")
    );

    // The five claim failures, each one clear line.
    let blocked = fails(&t, &with(&["task", "claim", "2", "--owner", "a"]));
    assert_eq!(
        blocked,
        "error: cannot claim task #2 (blocked): task is blocked by unfinished task(s) #1"
    );
    assert!(ok(&t, &with(&["task", "claim", "1", "--owner", "a"])).contains("claimed by a"));
    let claimed = fails(&t, &with(&["task", "claim", "1", "--owner", "b"]));
    assert!(
        claimed.contains("(already_claimed)") && claimed.contains("claimed by a"),
        "{claimed}"
    );
    let busy = fails(
        &t,
        &with(&["task", "claim", "3", "--owner", "a", "--check-busy"]),
    );
    assert!(
        busy.contains("(agent_busy)") && busy.contains("#1"),
        "{busy}"
    );
    let missing = fails(&t, &with(&["task", "claim", "42", "--owner", "a"]));
    assert!(missing.contains("(task_not_found)"), "{missing}");

    assert!(
        ok(&t, &with(&["task", "done", "1"])).contains("task #1 \"Write the parser\" completed")
    );
    let resolved = fails(&t, &with(&["task", "claim", "1", "--owner", "b"]));
    assert!(resolved.contains("(already_resolved)"), "{resolved}");
    assert!(ok(&t, &with(&["task", "claim", "2", "--owner", "b"])).contains("claimed by b"));

    let json: Value = serde_json::from_str(&ok(&t, &with(&["task", "list", "--json"]))).unwrap();
    let t2 = json["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["id"] == "2")
        .unwrap();
    assert_eq!(t2["status"], "in_progress");
    assert_eq!(t2["owner"], "b");
    assert_eq!(t2["command"], "cargo test");
    assert_eq!(json["available"], serde_json::json!(["3"]));

    assert!(ok(&t, &with(&["task", "delete", "3"])).contains("deleted task #3"));
    assert!(!t.home().join("tasks/work/3.json").exists());
    // Ids are never reused.
    assert!(ok(&t, &with(&["task", "add", "Again"])).contains("created task #4"));
    let gone = fails(&t, &with(&["task", "done", "3"]));
    assert!(gone.contains("not found"), "{gone}");
    assert!(lock_dirs(&t.home()).is_empty(), "no lock directory is left");
}

#[test]
fn task_needs_an_existing_team() {
    let t = TestHome::empty();
    let err = fails(&t, &["task", "add", "s", "--team", "nowhere"]);
    assert!(err.contains("team `nowhere` not found"), "{err}");
    assert!(!t.home().join("tasks").exists());
    // --team is required: a usage error.
    assert_eq!(run(&t, &["task", "add", "s"]).status.code(), Some(2));
}

#[test]
fn completions_print_scripts() {
    let t = TestHome::empty();
    let bash = ok(&t, &["completions", "bash"]);
    assert!(
        bash.contains("_teamlead()") && bash.contains("complete -F"),
        "{bash}"
    );
    assert!(bash.contains("inspect") && bash.contains("monitor"));
    let zsh = ok(&t, &["completions", "zsh"]);
    assert!(zsh.starts_with("#compdef teamlead"));
    let fish = ok(&t, &["completions", "fish"]);
    assert!(fish.contains("complete -c teamlead"));
    assert_eq!(run(&t, &["completions", "tcsh"]).status.code(), Some(2));
}

#[test]
fn every_command_has_help_with_examples() {
    let t = TestHome::empty();
    let commands: &[&[&str]] = &[
        &[],
        &["demo"],
        &["teammate"],
        &["inspect"],
        &["monitor"],
        &["send"],
        &["task"],
        &["task", "add"],
        &["task", "list"],
        &["task", "claim"],
        &["task", "done"],
        &["task", "delete"],
        &["clean"],
        &["completions"],
    ];
    for command in commands {
        let mut args = command.to_vec();
        args.push("--help");
        let out = ok(&t, &args);
        assert!(out.contains("Usage: teamlead"), "{args:?}: {out}");
        assert!(out.contains("Example"), "{args:?} has examples: {out}");
    }
    let teammate = ok(&t, &["teammate", "--help"]);
    for flag in [
        "--agent-id",
        "--agent-name",
        "--team-name",
        "--agent-color",
        "--parent-session-id",
        "--plan-mode-required",
        "--agent-type",
        "--model",
        "--permission-mode",
        "--dangerously-skip-permissions",
        "--engine",
    ] {
        assert!(teammate.contains(flag), "teammate --help lists {flag}");
    }
    let main = ok(&t, &["--help"]);
    for word in ["--team", "--backend", "--agent", "--home", "--verbose"] {
        assert!(main.contains(word), "--help lists {word}");
    }
    assert!(ok(&t, &["--version"]).starts_with("teamlead "));
}

#[test]
fn usage_errors_exit_2() {
    let t = TestHome::empty();
    for args in [
        &["inspect", "--bogus"][..],
        &["no-such-command"],
        &["--backend", "ghostty"],
        &["--team", "x", "inspect"],
        &[
            "teammate",
            "--agent-id",
            "a@t",
            "--agent-name",
            "a",
            "--team-name",
            "t",
            "--permission-mode",
            "plan",
            "--dangerously-skip-permissions",
        ],
        &[
            "teammate",
            "--agent-id",
            "a@t",
            "--agent-name",
            "a",
            "--team-name",
            "t",
            "--permission-mode",
            "yolo",
        ],
        &["send", "--team", "t", "hello"],
    ] {
        let out = run(&t, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("error:"));
    }
}

#[test]
fn the_log_goes_to_a_file_not_the_terminal() {
    let t = TestHome::fixture("seed-2.1.45");
    let out = t
        .cmd()
        .args(["-v", "inspect", "codebase-research"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(
        out.stderr.is_empty(),
        "nothing on stderr: {:?}",
        String::from_utf8_lossy(&out.stderr)
    );
    let logs: Vec<_> = std::fs::read_dir(t.logs()).unwrap().flatten().collect();
    assert_eq!(logs.len(), 1, "one log file");
    let text = std::fs::read_to_string(logs[0].path()).unwrap();
    assert!(
        text.contains("teamlead") && text.contains("started"),
        "{text}"
    );
}

#[test]
fn task_reset_unassign_and_edit() {
    let t = TestHome::empty();
    t.write_team("work", &["a"]);
    let team = ["--team", "work"];
    let with = |args: &[&'static str]| -> Vec<&'static str> {
        let mut v = args.to_vec();
        v.extend_from_slice(&team);
        v
    };
    ok(&t, &with(&["task", "add", "Write the parser", "-d", "old"]));
    ok(&t, &with(&["task", "claim", "1", "--owner", "a"]));
    assert_eq!(
        ok(&t, &with(&["task", "unassign", "1"])).trim(),
        "task #1 \"Write the parser\" is unassigned (pending)"
    );
    ok(&t, &with(&["task", "claim", "1", "--owner", "a"]));
    ok(&t, &with(&["task", "done", "1"]));
    assert_eq!(
        ok(&t, &with(&["task", "reset", "1"])).trim(),
        "task #1 \"Write the parser\" is pending, with no owner (pending)"
    );
    assert_eq!(
        ok(
            &t,
            &with(&[
                "task",
                "edit",
                "1",
                "--subject",
                "Write the lexer",
                "-d",
                ""
            ])
        )
        .trim(),
        "task #1 \"Write the lexer\" edited"
    );
    let list: Value = serde_json::from_str(&ok(&t, &with(&["task", "list", "--json"]))).unwrap();
    let task = &list["tasks"][0];
    assert_eq!(task["subject"], "Write the lexer", "{list}");
    assert_eq!(task["status"], "pending", "{list}");
    assert!(task["owner"].is_null(), "{list}");
    // Nothing to change, an empty subject, an unknown flag: refused.
    let out = run(&t, &with(&["task", "edit", "1"]));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        fails(&t, &with(&["task", "edit", "1", "--subject", " "])).contains("the subject is empty")
    );
    let out = run(&t, &with(&["task", "reset", "1", "--owner", "a"]));
    assert_eq!(out.status.code(), Some(2));
    assert!(fails(&t, &with(&["task", "reset", "7"])).contains("not found"));
}
