//! Hostile frames in the lead's inbox do not lock the screens out of a lead server: a teammate
//! writes a 20 MiB permission request, a 5 MiB plan and then 100 permission requests of 1 MiB
//! each (in batches of ten, each batch once the lead drained the one before, so the inbox
//! never passes the store's 64 MiB read bound). `teamlead ctl status` and `teamlead attach`
//! still work; the dialogs show the plan and the big request in part with its size and the file that holds
//! it whole (which does); answering it reaches the teammate bound to that request (its id and
//! the digest of its whole input); the server's memory stays bounded.

use std::path::Path;

use serde_json::{Value, json};
use teamlead::protocol::InboxEntry;
use teamlead::protocol::frames::{Frame, PermissionRequest, PlanApprovalRequest, input_digest};
use teamlead::store::Home;

use crate::server_common::{Ws, wait_until};
use teamlead_test_support::keys::{Key, Keyboard};

const MIB: usize = 1024 * 1024;

fn request(id: &str, size: usize) -> PermissionRequest {
    PermissionRequest {
        request_id: id.to_string(),
        agent_id: "alpha".to_string(),
        tool_name: "Bash".to_string(),
        tool_use_id: Some(format!("toolu_{id}")),
        description: "a very long command".to_string(),
        input: json!({ "command": format!("echo {}", "x".repeat(size)) }),
        permission_suggestions: Vec::new(),
    }
}

/// Appends `frames` from alpha to the lead's inbox (one write, as a teammate does).
fn write_to_lead(home: &Path, team: &str, frames: &[Frame]) {
    let entries: Vec<InboxEntry> = frames
        .iter()
        .map(|f| InboxEntry::frame("alpha", f))
        .collect();
    teamlead::store::inbox::append_many(&Home::new(home), team, "team-lead", &entries)
        .expect("append to the lead's inbox");
}

/// The lead's inbox is drained (what is left of it is small).
fn drained(ws: &Ws) {
    let inbox = ws.team_dir().join("inboxes").join("team-lead.json");
    wait_until(
        "the lead to drain its inbox",
        || std::fs::metadata(&inbox).is_ok_and(|m| m.len() < 64 * 1024),
        || format!("{:?}", std::fs::metadata(&inbox).map(|m| m.len())),
    );
}

/// A field of `/proc/PID/status` in kB.
fn proc_kb(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn alpha_answers(ws: &Ws) -> Vec<Value> {
    let inbox = ws.team_dir().join("inboxes").join("alpha.json");
    let entries: Vec<InboxEntry> = std::fs::read_to_string(inbox)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    entries
        .iter()
        .filter_map(|e| serde_json::from_str::<Value>(&e.text).ok())
        .filter(|v| v["type"] == "permission_response")
        .collect()
}

#[test]
fn huge_requests_and_plans_leave_the_screens_working() {
    let ws = Ws::new("hostile-frames");
    let _server = ws.serve(&[]);
    let pid: u32 = {
        let status: Value =
            serde_json::from_str(&ws.ctl_ok(&["status", "--json"])).expect("status json");
        status["server_pid"].as_u64().expect("pid") as u32
    };
    let rss_before = proc_kb(pid, "VmRSS:");

    // 20 MiB request, then a 5 MiB plan.
    let big = request("perm-big", 20 * MIB);
    let big_digest = input_digest(&big.tool_name, &big.input);
    write_to_lead(&ws.home(), &ws.team, &[Frame::PermissionRequest(big)]);
    drained(&ws);
    let plan = PlanApprovalRequest {
        from: "alpha".to_string(),
        timestamp: "2026-01-01T00:00:00.000Z".to_string(),
        plan_file_path: String::new(),
        plan_content: format!("# the plan\n{}", "step\n".repeat(MIB)),
        request_id: "plan_approval-big@alpha@hostile-frames".to_string(),
    };
    write_to_lead(&ws.home(), &ws.team, &[Frame::PlanApprovalRequest(plan)]);
    drained(&ws);
    // 100 requests of 1 MiB, ten at a time.
    for batch in 0..10 {
        let frames: Vec<Frame> = (0..10)
            .map(|i| Frame::PermissionRequest(request(&format!("perm-{batch}-{i}"), MIB)))
            .collect();
        write_to_lead(&ws.home(), &ws.team, &frames);
        drained(&ws);
    }

    // ctl still works and sees every request.
    let status = || {
        let out = ws.ctl(&["status", "--json"]);
        let parsed: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        (parsed, String::from_utf8_lossy(&out.stderr).into_owned())
    };
    wait_until(
        "ctl status to list the 101 requests and the plan",
        || {
            let (s, _) = status();
            s["pending"]["permissions"] == 101 && s["pending"]["plans"] == 1
        },
        || format!("{:?}", status()),
    );
    let pending: Value =
        serde_json::from_str(&ws.ctl_ok(&["pending", "--json"])).expect("pending json");
    let head = &pending["permissions"][0];
    assert_eq!(head["request_id"], "perm-big");
    let whole = head["in_part"]["full_at"]
        .as_str()
        .expect("the file that holds the whole request");
    assert!(head["in_part"]["bytes"].as_u64() > Some(20 * MIB as u64));
    let kept = std::fs::read(whole).expect("the whole request's file");
    assert!(kept.len() > 20 * MIB, "{}", kept.len());
    let plan_file = pending["plans"][0]["in_part"]["full_at"]
        .as_str()
        .expect("the plan's file");
    assert_eq!(
        std::fs::metadata(plan_file).expect("the plan's file").len(),
        "# the plan\n".len() as u64 + 5 * MIB as u64
    );

    // A screen attaches and shows the request in part, its size and where to read it.
    let screen = crate::pty_harness::lead(ws.work())
        .home(ws.home())
        .envs(ws.env())
        .env("TEAMLEAD_NO_SERVER", "false")
        .env("TEAMLEAD_NOTIFY", "off")
        .size(160, 45)
        .args(["attach", ws.team.as_str()])
        .start();
    // The plan may show first (its event came first): shown in part too. Ctrl+P brings the
    // queue's head, permissions before plans, to the top: the 20 MB request.
    screen.wait_screen("the plan shown in part", |s| {
        s.contains("wants to proceed with this plan") && s.contains("shown in part: 5.0 MB in all")
    });
    // (A key at a dialog in its grace period may be dropped: pressed until it shows.)
    screen.press_until(Key::CtrlP, "the request shown in part", |s| {
        let flat: String = s.split_whitespace().collect();
        s.contains("needs permission")
            && s.contains("shown in part: 20.0 MB in all")
            && flat.contains(&whole.split_whitespace().collect::<String>())
    });

    // Answered in the dialog: alpha gets the answer to that request, bound to its whole input.
    screen.approve();
    wait_until(
        "alpha's answer",
        || !alpha_answers(&ws).is_empty(),
        || screen.contents(),
    );
    let answers = alpha_answers(&ws);
    assert_eq!(answers.len(), 1, "{answers:?}");
    assert_eq!(answers[0]["request_id"], "perm-big");
    assert_eq!(answers[0]["subtype"], "success");
    assert_eq!(answers[0]["approved_request"]["input_digest"], big_digest);
    ws.ctl_ok(&["status"]);

    // Memory stays bounded by what is shown, not by the 145 MiB the teammate wrote.
    let rss = proc_kb(pid, "VmRSS:");
    let peak = proc_kb(pid, "VmHWM:");
    eprintln!("server RSS: {rss_before} kB before, {rss} kB after, peak {peak} kB");
    assert!(
        rss < 150 * 1024,
        "the server holds {rss} kB after the hostile frames"
    );
    ws.ctl_ok(&["/quit"]);
    ws.reap();
}
