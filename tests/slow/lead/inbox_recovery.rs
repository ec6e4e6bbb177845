//! A lead whose own inbox turns unreadable while it runs recovers (the real binary in a
//! pseudo-terminal, `--backend in-process`): for a truncated array, binary bytes, an object,
//! invalid UTF-8, a byte-order mark and 10 MB of garbage written over
//! `inboxes/team-lead.json`, a `teamlead send` to the lead right after reaches its screen
//! within a second of the send, the transcript and `inspect` say where the bytes went, and
//! after `/quit` (which removes the team) the bytes are still in `<home>/quarantine/<team>/`,
//! byte for byte.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const TEAM: &str = "deafness";
const START: Duration = Duration::from_secs(20);

fn cases() -> Vec<(&'static str, Vec<u8>)> {
    let truncated = br#"[
  {
    "from": "scout",
    "text": "cut off here",
    "timestamp": "2026-11-20T10:00:00.000Z""#
        .to_vec();
    let binary: Vec<u8> = (0u8..=255).cycle().take(4096).collect();
    let object =
        br#"{"from": "scout", "text": "an object", "timestamp": "2026-11-20T10:00:00.000Z"}"#
            .to_vec();
    let mut not_utf8 = br#"[{"from": "scout", "text": "bad "#.to_vec();
    not_utf8.extend_from_slice(&[0xff, 0xfe, 0xc0, 0x80]);
    not_utf8.extend_from_slice(br#"", "timestamp": "2026-11-20T10:00:00.000Z"}]"#);
    let mut bom = vec![0xef, 0xbb, 0xbf];
    bom.extend_from_slice(
        br#"[{"from": "scout", "text": "behind a BOM", "timestamp": "2026-11-20T10:00:00.000Z"}]"#,
    );
    let garbage: Vec<u8> = b"garbage \x01\x02 not json {[ "
        .iter()
        .copied()
        .cycle()
        .take(10 * 1024 * 1024)
        .collect();
    vec![
        ("truncated-array", truncated),
        ("binary", binary),
        ("object", object),
        ("invalid-utf8", not_utf8),
        ("bom", bom),
        ("garbage-10mb", garbage),
    ]
}

fn teamlead(home: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_teamlead"));
    cmd.arg("--home").arg(home).args(args);
    for var in ["CLAUDE_CONFIG_DIR", "TEAMLEAD_HOME", "TMUX", "TMUX_PANE"] {
        cmd.env_remove(var);
    }
    cmd.env("NO_COLOR", "1");
    cmd
}

fn quarantined(home: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(home.join("quarantine").join(TEAM))
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    found.retain(|p| p.extension().is_some_and(|x| x == "bad"));
    found.sort();
    found
}

fn one_case(name: &str, bytes: &[u8]) {
    let root = tempfile::tempdir().unwrap();
    let home = root.path().join("home");
    let logs = root.path().join("logs");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&logs).unwrap();
    let mut lead = crate::pty_harness::lead(root.path())
        .home(&home)
        .logs(&logs)
        .args(["--team", TEAM, "--backend", "in-process"])
        .size(160, 40)
        .spawn();
    assert!(
        lead.poll_text(START, |s| s.contains("shift+tab to cycle")),
        "{name}: the lead did not start: {}",
        lead.contents()
    );
    let inbox = home.join("teams").join(TEAM).join("inboxes/team-lead.json");
    std::fs::create_dir_all(inbox.parent().unwrap()).unwrap();
    std::fs::write(&inbox, bytes).unwrap();
    let corrupted = Instant::now();
    let marker = format!("after-{name}-marker");
    let out = teamlead(
        &home,
        &[
            "send",
            "--team",
            TEAM,
            "--to",
            "team-lead",
            "--from",
            "scout",
            &marker,
        ],
    )
    .output()
    .unwrap();
    let sent = Instant::now();
    assert!(
        out.status.success(),
        "{name}: send after the corruption failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        lead.poll_text(Duration::from_secs(1), |s| s.contains(&marker)),
        "{name}: the message sent after the corruption did not reach the lead within 1 s \
         of the send ({:?} after the corruption); screen:\n{}",
        sent - corrupted,
        lead.contents()
    );
    assert!(
        lead.poll_text(Duration::from_secs(2), |s| s.contains("could not be read")
            && s.contains("quarantine")),
        "{name}: the transcript does not say where the inbox went; screen:\n{}",
        lead.contents()
    );
    let kept = quarantined(&home);
    assert_eq!(kept.len(), 1, "{name}: one quarantine file: {kept:?}");
    let report = teamlead(&home, &["inspect", TEAM]).output().unwrap();
    let report = String::from_utf8_lossy(&report.stdout).into_owned();
    let kept_name = kept[0].file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        report.contains("quarantined (1)") && report.contains(&kept_name),
        "{name}: inspect does not say where the inbox went:\n{report}"
    );
    lead.send(b"/quit\r");
    assert!(
        lead.exit_within(Duration::from_secs(20)).is_some(),
        "{name}: the lead did not quit: {}",
        lead.contents()
    );
    assert!(
        !home.join("teams").join(TEAM).exists(),
        "{name}: /quit removes the team"
    );
    let kept = quarantined(&home);
    assert_eq!(kept.len(), 1, "{name}: {kept:?}");
    assert!(
        std::fs::read(&kept[0]).unwrap() == bytes,
        "{name}: the quarantined bytes differ from what was written"
    );
    let why = std::fs::read_to_string(kept[0].with_extension("why")).unwrap();
    assert!(
        why.contains("team-lead.json") && why.contains("could not be read"),
        "{name}: {why}"
    );
}

#[test]
fn an_unreadable_lead_inbox_is_quarantined_and_messages_flow_again() {
    for (name, bytes) in cases() {
        one_case(name, &bytes);
    }
}
