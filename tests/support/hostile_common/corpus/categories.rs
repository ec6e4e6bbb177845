//! The table of categories: every way the suite breaks a home, each a mutation of the seeded
//! fixture team.

use std::os::unix::ffi::OsStrExt;

use serde_json::json;

use super::*;
use crate::hostile_common::{age, mkfifo};

const OSC: &str = "\u{1b}]0;pwned-title\u{7}";
const CLEAR: &str = "\u{1b}[2J\u{1b}[H";

macro_rules! cat {
    ($name:expr, $needle:expr, $met:expr, $live:expr, $build:expr) => {
        Category {
            name: $name,
            build: $build,
            needle: $needle,
            met: $met,
            live: $live,
        }
    };
}

/// Every category.
pub fn categories() -> Vec<Category> {
    vec![
        // FIFOs where a file is opened.
        cat!("lead-lock-fifo", Some("lead.lock"), INSPECTS, true, |h| {
            std::fs::create_dir_all(team_dir(h).join(".teamlead")).unwrap();
            mkfifo(&team_dir(h).join(".teamlead/lead.lock"));
        }),
        cat!(
            "highwatermark-fifo",
            Some(".highwatermark"),
            INSPECTS_TASKS_ADD,
            true,
            |h| { mkfifo(&tasks_dir(h).join(".highwatermark")) }
        ),
        // .highwatermark in every bad shape.
        cat!(
            "highwatermark-garbage",
            Some(".highwatermark"),
            INSPECTS_TASKS_ADD,
            true,
            |h| { std::fs::write(tasks_dir(h).join(".highwatermark"), "seven").unwrap() }
        ),
        cat!(
            "highwatermark-binary",
            Some(".highwatermark"),
            INSPECTS_TASKS_ADD,
            true,
            |h| {
                std::fs::write(
                    tasks_dir(h).join(".highwatermark"),
                    [0xff, 0x00, 0x1b, b'[', b'2', b'J'],
                )
                .unwrap()
            }
        ),
        cat!(
            "highwatermark-negative",
            Some(".highwatermark"),
            INSPECTS_TASKS_ADD,
            true,
            |h| { std::fs::write(tasks_dir(h).join(".highwatermark"), "-5\n").unwrap() }
        ),
        cat!(
            "highwatermark-u64-max",
            Some(".highwatermark"),
            INSPECTS_TASKS_ADD,
            true,
            |h| {
                std::fs::write(tasks_dir(h).join(".highwatermark"), "18446744073709551615").unwrap()
            }
        ),
        cat!(
            "highwatermark-overflow",
            Some(".highwatermark"),
            INSPECTS_TASKS_ADD,
            true,
            |h| {
                std::fs::write(
                    tasks_dir(h).join(".highwatermark"),
                    "99999999999999999999999",
                )
                .unwrap()
            }
        ),
        cat!(
            "highwatermark-dir",
            Some(".highwatermark"),
            INSPECTS_TASKS_ADD,
            true,
            |h| { replace_with_dir(&tasks_dir(h).join(".highwatermark")) }
        ),
        // The task list lock.
        cat!(
            "tasks-lock-is-dir",
            Some(".lock"),
            INSPECTS_TASKS_ADD,
            true,
            |h| { replace_with_dir(&tasks_dir(h).join(".lock")) }
        ),
        cat!(
            "tasks-lock-lock-is-file",
            Some(".lock.lock"),
            INSPECTS_TASKS_ADD,
            true,
            |h| { std::fs::write(tasks_dir(h).join(".lock.lock"), "").unwrap() }
        ),
        // Member names.
        cat!(
            "member-name-osc-title",
            Some("pwned-title"),
            INSPECTS,
            true,
            |h| { add_member(h, &format!("{OSC}evil"), "general-purpose") }
        ),
        cat!(
            "member-name-clear-screen",
            Some("member name"),
            INSPECTS,
            true,
            |h| { add_member(h, &format!("wipe{CLEAR}"), "general-purpose") }
        ),
        cat!(
            "member-name-nul",
            Some("member name"),
            INSPECTS,
            true,
            |h| { add_member(h, "nul\u{0}name", "general-purpose") }
        ),
        cat!(
            "member-name-dotdot",
            Some("member name"),
            INSPECTS,
            true,
            |h| { add_member(h, "..", "general-purpose") }
        ),
        cat!(
            "member-name-slash",
            Some("etc/passwd"),
            INSPECTS,
            true,
            |h| { add_member(h, "../../etc/passwd", "general-purpose") }
        ),
        cat!(
            "member-name-newline",
            Some("member name"),
            INSPECTS,
            true,
            |h| { add_member(h, "two\nlines", "general-purpose") }
        ),
        cat!(
            "member-name-rlo",
            Some("member name"),
            INSPECTS,
            true,
            |h| { add_member(h, "evil\u{202e}txt.exe", "general-purpose") }
        ),
        cat!(
            "member-name-500-chars",
            Some("member name"),
            INSPECTS,
            true,
            |h| { add_member(h, &"a".repeat(500), "general-purpose") }
        ),
        cat!(
            "member-name-shell-metachars",
            Some("rm -rf"),
            INSPECTS,
            true,
            |h| { add_member(h, "$(rm -rf ~);`id`|x&y>z", "general-purpose") }
        ),
        cat!(
            "member-second-team-lead",
            Some("appears 2 times"),
            INSPECTS,
            true,
            |h| { add_member(h, "team-lead", "team-lead") }
        ),
        cat!(
            "member-duplicate",
            Some("appears 2 times"),
            INSPECTS,
            true,
            |h| { add_member(h, "frontend-engineer", "general-purpose") }
        ),
        cat!(
            "member-duplicate-case",
            Some("differ only in case"),
            INSPECTS,
            true,
            |h| { add_member(h, "Frontend-Engineer", "general-purpose") }
        ),
        cat!(
            "member-two-leads",
            Some("members are leads"),
            INSPECTS,
            true,
            |h| { add_member(h, "boss", "team-lead") }
        ),
        cat!(
            "member-without-agent-id",
            Some("without a string agentId"),
            INSPECTS,
            true,
            |h| {
                edit_json(&team_dir(h).join("config.json"), |v| {
                    v["members"]
                        .as_array_mut()
                        .unwrap()
                        .push(json!({"name": "ghost"}))
                })
            }
        ),
        cat!(
            "team-name-mismatch-escape",
            Some("names the team"),
            INSPECTS,
            true,
            |h| {
                edit_json(&team_dir(h).join("config.json"), |v| {
                    v["name"] = json!(format!("other{OSC}"))
                })
            }
        ),
        // Team directory names.
        cat!(
            "team-dir-bad-team",
            Some("Bad Team!"),
            INSPECT_HOME,
            false,
            |h| { hostile_team_dir(h, b"Bad Team!") }
        ),
        cat!(
            "team-dir-escape",
            Some("pwned-title"),
            INSPECT_HOME,
            false,
            |h| { hostile_team_dir(h, OSC.as_bytes()) }
        ),
        cat!("team-dir-newline", Some("two"), INSPECT_HOME, false, |h| {
            hostile_team_dir(h, b"two\nlines")
        }),
        cat!(
            "team-dir-rlo",
            Some("team directory name"),
            INSPECT_HOME,
            false,
            |h| { hostile_team_dir(h, "a\u{202e}b".as_bytes()) }
        ),
        cat!(
            "team-dir-not-utf8",
            Some("not UTF-8"),
            INSPECT_HOME,
            false,
            |h| { hostile_team_dir(h, b"x\xff\xfe") }
        ),
        cat!(
            "team-dir-500-chars",
            Some("team directory name"),
            INSPECT_HOME,
            false,
            |h| { hostile_team_dir(h, "b".repeat(250).as_bytes()) }
        ),
        cat!(
            "team-dir-link-to-etc",
            Some("outside the home"),
            INSPECT_HOME,
            false,
            |h| { std::os::unix::fs::symlink("/etc", h.join("teams/etc-team")).unwrap() }
        ),
        cat!(
            "tasks-root-link-to-etc",
            Some("outside the home"),
            INSPECT_HOME,
            false,
            |h| {
                std::fs::create_dir_all(h.join("tasks")).unwrap();
                std::os::unix::fs::symlink("/etc", h.join("tasks/etc-list")).unwrap()
            }
        ),
        // Symlinks leaving the home, in the team itself.
        cat!(
            "team-dir-is-link",
            Some("outside the home"),
            INSPECTS_SEND,
            false,
            |h| { replace_with_link(&team_dir(h), "/etc") }
        ),
        cat!(
            "inboxes-dir-is-link",
            Some("outside the home"),
            INSPECTS_SEND,
            false,
            |h| { replace_with_link(&team_dir(h).join("inboxes"), "/etc") }
        ),
        cat!(
            "inbox-is-link",
            Some("outside the home"),
            INSPECTS_SEND,
            true,
            |h| { replace_with_link(&lead_inbox(h), "/etc/passwd") }
        ),
        cat!(
            "tasks-dir-is-link",
            Some("outside the home"),
            INSPECTS_TASKS_ADD,
            false,
            |h| { replace_with_link(&tasks_dir(h), "/etc") }
        ),
        cat!("task-is-link", Some("9.json"), INSPECTS_TASKS, true, |h| {
            replace_with_link(&tasks_dir(h).join("9.json"), "/etc/passwd")
        }),
        // Inboxes of the wrong kind or content.
        cat!(
            "inbox-is-dir",
            Some("team-lead.json"),
            INSPECTS_SEND,
            true,
            |h| {
                let p = lead_inbox(h);
                std::fs::remove_file(&p).unwrap();
                std::fs::create_dir(&p).unwrap();
            }
        ),
        cat!(
            "inbox-is-fifo",
            Some("team-lead.json"),
            INSPECTS_SEND,
            true,
            |h| { mkfifo(&lead_inbox(h)) }
        ),
        cat!(
            "inbox-stray-lock-file",
            Some("team-lead.json.lock"),
            INSPECTS_SEND,
            true,
            |h| { std::fs::write(team_dir(h).join("inboxes/team-lead.json.lock"), "").unwrap() }
        ),
        cat!(
            "config-stray-lock-file",
            Some("config.json.lock"),
            INSPECTS,
            true,
            |h| { std::fs::write(team_dir(h).join("config.json.lock"), "").unwrap() }
        ),
        cat!("inbox-not-utf8", Some("UTF-8"), INSPECTS_SEND, true, |h| {
            std::fs::write(
                lead_inbox(h),
                b"[{\"from\":\"a\xff\xfe\",\"text\":\"x\",\"timestamp\":\"t\"}]",
            )
            .unwrap()
        }),
        cat!(
            "inbox-lone-surrogate",
            Some("team-lead.json"),
            INSPECTS_SEND,
            true,
            |h| {
                std::fs::write(
                    lead_inbox(h),
                    r#"[{"from":"a","text":"\ud800 lone","timestamp":"2026-02-18T18:40:00.000Z"}]"#,
                )
                .unwrap()
            }
        ),
        cat!(
            "inbox-nested-50000",
            Some("team-lead.json"),
            INSPECTS_SEND,
            true,
            |h| {
                let mut deep = "[".repeat(50_000);
                deep.push_str(&"]".repeat(50_000));
                std::fs::write(lead_inbox(h), deep).unwrap()
            }
        ),
        cat!(
            "inbox-not-json",
            Some("team-lead.json"),
            INSPECTS_SEND,
            true,
            |h| { std::fs::write(lead_inbox(h), "{{{ not json").unwrap() }
        ),
        cat!(
            "inbox-not-array",
            Some("not a JSON array"),
            INSPECTS_SEND,
            true,
            |h| { std::fs::write(lead_inbox(h), "{\"oops\": 1}").unwrap() }
        ),
        cat!(
            "inbox-huge-sparse",
            Some("team-lead.json"),
            INSPECTS_SEND,
            false,
            |h| {
                let f = std::fs::File::create(lead_inbox(h)).unwrap();
                f.set_len(65 * 1024 * 1024).unwrap();
            }
        ),
        cat!(
            "inbox-bad-entries",
            Some("without string from"),
            INSPECTS,
            true,
            |h| { add_message(h, json!({"text": 7, "from": null})) }
        ),
        cat!(
            "inbox-odd-name",
            Some("odd name!.json"),
            INSPECTS,
            true,
            |h| { std::fs::write(team_dir(h).join("inboxes/odd name!.json"), "[]").unwrap() }
        ),
        cat!(
            "inbox-escape-name",
            Some("pwned-title"),
            INSPECTS,
            true,
            |h| { std::fs::write(team_dir(h).join(format!("inboxes/{OSC}.json")), "[]").unwrap() }
        ),
        cat!(
            "inbox-not-utf8-name",
            Some("not UTF-8"),
            INSPECTS,
            true,
            |h| {
                let name = std::ffi::OsStr::from_bytes(b"w\xff.json");
                std::fs::write(team_dir(h).join("inboxes").join(name), "[]").unwrap()
            }
        ),
        // Text from files carrying escape sequences (shown escaped, not a problem).
        cat!("message-osc-clear", None, &[], true, |h| {
            add_message(
                h,
                message(&format!("hi {OSC} then {CLEAR} and \u{9b}2J \u{202e}rtl")),
            )
        }),
        cat!("message-nul", None, &[], true, |h| {
            add_message(h, message("nul \u{0} here \\u0000 there \u{7f}"))
        }),
        cat!("frame-fields-escape", None, &[], true, |h| {
            let frame = json!({"type": "permission_request", "request_id": "perm-1-abcdefg",
                "agent_id": "frontend-engineer", "tool_name": format!("Bash{OSC}"),
                "description": format!("run{CLEAR}"), "input": {"command": format!("ls{OSC}")},
                "permission_suggestions": []});
            add_message(h, message(&frame.to_string()))
        }),
        cat!("task-subject-escape", None, &[], true, |h| {
            write_task(h, "6", task("6", &format!("subject{OSC}{CLEAR}\u{0}"), &[]))
        }),
        cat!("task-owner-escape", None, &[], true, |h| {
            let mut t = task("6", "owned", &[]);
            t["owner"] = json!(format!("own{OSC}"));
            t["status"] = json!("in_progress");
            write_task(h, "6", t)
        }),
        // Task files and the task graph.
        cat!("task-not-json", Some("7.json"), INSPECTS_TASKS, true, |h| {
            std::fs::write(tasks_dir(h).join("7.json"), "not json").unwrap()
        }),
        cat!("task-not-utf8", Some("7.json"), INSPECTS_TASKS, true, |h| {
            std::fs::write(tasks_dir(h).join("7.json"), b"{\"id\":\"7\xff\"}").unwrap()
        }),
        cat!("task-schema", Some("7.json"), INSPECTS_TASKS, true, |h| {
            std::fs::write(tasks_dir(h).join("7.json"), "{\"id\": 7}").unwrap()
        }),
        cat!(
            "task-id-mismatch",
            Some("does not match"),
            INSPECTS_TASKS,
            true,
            |h| { write_task(h, "7", task("8", "wrong id", &[])) }
        ),
        cat!("task-is-fifo", Some("8.json"), INSPECTS_TASKS, true, |h| {
            mkfifo(&tasks_dir(h).join("8.json"))
        }),
        cat!("task-is-dir", Some("8.json"), INSPECTS_TASKS, true, |h| {
            std::fs::create_dir(tasks_dir(h).join("8.json")).unwrap()
        }),
        cat!("task-cycle", Some("cycle"), INSPECTS_TASKS, true, |h| {
            write_task(h, "6", task("6", "six", &["7"]));
            write_task(h, "7", task("7", "seven", &["6"]));
        }),
        cat!(
            "task-self-block",
            Some("itself"),
            INSPECTS_TASKS,
            true,
            |h| { write_task(h, "6", task("6", "six", &["6"])) }
        ),
        cat!(
            "task-dangling",
            Some("does not exist"),
            INSPECTS_TASKS,
            true,
            |h| { write_task(h, "6", task("6", "six", &["99"])) }
        ),
        // Locks.
        cat!("stale-lock-dir", Some("stale"), INSPECTS, true, |h| {
            let lock = team_dir(h).join("inboxes/team-lead.json.lock");
            std::fs::create_dir(&lock).unwrap();
            age(&lock, 120);
        }),
        // The team file.
        cat!(
            "config-not-json",
            Some("config.json"),
            INSPECTS_SEND,
            true,
            |h| { std::fs::write(team_dir(h).join("config.json"), "{\"name\": ").unwrap() }
        ),
        cat!(
            "config-not-utf8",
            Some("config.json"),
            INSPECTS_SEND,
            true,
            |h| {
                std::fs::write(team_dir(h).join("config.json"), b"{\"name\": \"\xff\"}").unwrap()
            }
        ),
        cat!(
            "config-is-fifo",
            Some("config.json"),
            INSPECTS_SEND,
            true,
            |h| { mkfifo(&team_dir(h).join("config.json")) }
        ),
        cat!(
            "config-is-link",
            Some("config.json"),
            INSPECTS_SEND,
            true,
            |h| { replace_with_link(&team_dir(h).join("config.json"), "/etc/hostname") }
        ),
    ]
}
