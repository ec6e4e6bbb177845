//! Lock interop with the real peer library: node processes appending with proper-lockfile
//! 4.1.2 (the lock library Claude Code 2.1.45 bundles) and teamlead writers appending at the
//! same time to one inbox. Every message must be there exactly once and the inbox valid.
//! Needs `npm ci --prefix tests/interop` (the test fails, not skips, without it).

use crate::store_common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use store_common::{
    ChildGuard, ChildJob, TempHome, assert_exactly_once, child_command, inbox_texts,
};

fn interop_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop")
}

fn wait_ok(mut child: ChildGuard, what: &str) {
    let status = child.0.wait().unwrap();
    let mut err = String::new();
    if let Some(mut e) = child.0.stderr.take() {
        use std::io::Read;
        let _ = e.read_to_string(&mut err);
    }
    assert!(status.success(), "{what} failed ({status}): {err}");
}

#[test]
fn proper_lockfile_and_teamlead_writers_share_one_inbox() {
    let lib = interop_dir().join("node_modules/proper-lockfile");
    assert!(
        lib.is_dir(),
        "the lock interop test needs proper-lockfile: run `npm ci --prefix tests/interop`"
    );
    let t = TempHome::new();
    let team = "interop";
    let to = "team-lead";
    let inbox = t.home.inbox_path(team, to).unwrap();
    let cwd = t.home.root.to_string_lossy().into_owned();
    teamlead::store::create_team(
        &t.home,
        &teamlead::protocol::TeamFile::new(team, None, &cwd),
    )
    .unwrap();
    let per_writer = 40;
    let mut prefixes = Vec::new();
    let mut children = Vec::new();
    for n in 0..3 {
        let prefix = format!("node{n}");
        let child = Command::new("node")
            .arg(interop_dir().join("append.js"))
            .arg(&inbox)
            .arg(&prefix)
            .arg(per_writer.to_string())
            .arg(&prefix)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("node must be installed for the lock interop test");
        children.push((ChildGuard(child), prefix.clone()));
        prefixes.push(prefix);
    }
    for n in 0..3 {
        let prefix = format!("rust{n}");
        let child = child_command(ChildJob::Append {
            home: &t.home.root,
            team,
            to,
            from: &prefix,
            count: per_writer,
            prefix: &prefix,
        })
        .spawn()
        .unwrap();
        children.push((ChildGuard(child), prefix.clone()));
        prefixes.push(prefix);
    }
    // The real binary, one process per message.
    let mut send_threads = Vec::new();
    for n in 0..2 {
        let prefix = format!("send{n}");
        prefixes.push(prefix.clone());
        let root = t.home.root.clone();
        send_threads.push(std::thread::spawn(move || {
            for i in 0..per_writer {
                let out = Command::new(env!("CARGO_BIN_EXE_teamlead"))
                    .arg("send")
                    .arg("--home")
                    .arg(&root)
                    .args(["--team", team, "--to", to, "--from", &prefix])
                    .arg(format!("{prefix}-{i}"))
                    .env_remove("CLAUDE_CONFIG_DIR")
                    .env_remove("TEAMLEAD_HOME")
                    .output()
                    .unwrap();
                assert!(
                    out.status.success(),
                    "teamlead send failed: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        }));
    }
    for (child, prefix) in children {
        wait_ok(child, &prefix);
    }
    for th in send_threads {
        th.join().unwrap();
    }
    let texts = inbox_texts(&inbox);
    assert_exactly_once(&texts, &prefixes, per_writer);
    assert!(!teamlead::store::lock::lock_dir_of(&inbox).exists());
    // And the store reads what node wrote.
    let read = teamlead::store::inbox::read(&t.home, team, to).unwrap();
    assert!(read.bad.is_empty());
    assert_eq!(read.entries.len(), prefixes.len() * per_writer);
}

/// `teamlead send` at the moment an in-place writer (Claude Code's way: `writeFileSync` under
/// its `<inbox>.lock` directory) has truncated the inbox and not yet written it, and stays so
/// longer than a quick re-read waits (a writer descheduled on a loaded machine): the send waits
/// for the writer instead of refusing the inbox as not JSON, and both messages are kept. A
/// blank inbox with no writer is an empty inbox, as the store's own readers take it.
#[test]
fn send_waits_out_an_in_place_writer_that_truncated_the_inbox() {
    let t = TempHome::new();
    let team = "inplace";
    let to = "team-lead";
    let inbox = t.home.inbox_path(team, to).unwrap();
    let cwd = t.home.root.to_string_lossy().into_owned();
    teamlead::store::create_team(
        &t.home,
        &teamlead::protocol::TeamFile::new(team, None, &cwd),
    )
    .unwrap();
    let send = |text: &str| {
        Command::new(env!("CARGO_BIN_EXE_teamlead"))
            .arg("send")
            .arg("--home")
            .arg(&t.home.root)
            .args(["--team", team, "--to", to, "--from", "alice", text])
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("TEAMLEAD_HOME")
            .output()
            .unwrap()
    };
    // Blank, nobody writing: an empty inbox.
    std::fs::write(&inbox, "").unwrap();
    let out = send("first");
    assert!(
        out.status.success(),
        "send to a blank inbox failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(inbox_texts(&inbox), vec!["first".to_string()]);

    // A writer holds the lock, the file cut in the middle of its write for 600 ms.
    let lock = teamlead::store::lock::lock_dir_of(&inbox);
    std::fs::create_dir(&lock).unwrap();
    let whole = std::fs::read_to_string(&inbox).unwrap();
    std::fs::write(&inbox, &whole[..whole.len() / 2]).unwrap();
    let writer = {
        let (inbox, lock) = (inbox.clone(), lock.clone());
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(600));
            let mut entries: Vec<serde_json::Value> = serde_json::from_str(&whole).unwrap();
            entries.push(serde_json::json!({
                "from": "worker", "text": "from the writer",
                "timestamp": "2026-11-29T00:00:00.000Z", "read": false
            }));
            std::fs::write(&inbox, serde_json::to_string_pretty(&entries).unwrap()).unwrap();
            std::fs::remove_dir(&lock).unwrap();
        })
    };
    let out = send("second");
    writer.join().unwrap();
    assert!(
        out.status.success(),
        "send refused an inbox a writer was rewriting: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        inbox_texts(&inbox),
        vec![
            "first".to_string(),
            "from the writer".to_string(),
            "second".to_string()
        ]
    );
}
