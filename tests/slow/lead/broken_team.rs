//! A team whose lead died and whose team file is then broken: starting a lead on it refuses
//! with an error that names the way out and changes nothing; `teamlead clean --dry-run` lists
//! it with the reason and changes nothing; `teamlead clean` moves it, bytes as they are, into
//! `<home>/quarantine/<team>/` (never deletes it), after which the name is free again.

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::hostile_common::tree::{changes, fingerprint};

const TEAM: &str = "lt";
const BROKEN: &[u8] = b"{1: \"a team file torn by hand\"";

fn teamlead(root: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_teamlead"));
    cmd.arg("--home").arg(root.join("home")).args(args);
    for var in ["CLAUDE_CONFIG_DIR", "TEAMLEAD_HOME", "TMUX", "TMUX_PANE"] {
        cmd.env_remove(var);
    }
    cmd.env("NO_COLOR", "1")
        .env("TEAMLEAD_LOG_DIR", root.join("logs"))
        .env("TEAMLEAD_RUNTIME_DIR", root.join("run"))
        .env(
            "TEAMLEAD_CONFIG",
            concat!(env!("CARGO_MANIFEST_DIR"), "/tests/no-config.toml"),
        )
        .current_dir(root);
    cmd
}

/// Runs to the end, killed at the deadline (then `status.code()` is `None`).
fn run(mut cmd: Command) -> Output {
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(Duration::from_secs(20)) {
        Ok(out) => out.unwrap(),
        Err(_) => {
            // SAFETY: kill of our own child's pid.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            rx.recv().unwrap().unwrap()
        }
    }
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A real lead (`teamlead serve`) that started the team, then SIGKILLed.
fn dead_lead(root: &Path) {
    let mut lead: Child = teamlead(root, &["serve", "--team", TEAM, "--backend", "in-process"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let config = root.join("home/teams").join(TEAM).join("config.json");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !(config.exists()
        && root
            .join("run")
            .read_dir()
            .is_ok_and(|mut d| d.next().is_some()))
    {
        assert!(Instant::now() < deadline, "the lead did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    lead.kill().unwrap();
    lead.wait().unwrap();
}

#[test]
fn a_broken_team_of_a_dead_lead_is_named_with_its_fix_and_clean_quarantines_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for d in ["home", "logs", "run"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    std::fs::set_permissions(
        root.join("run"),
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    dead_lead(root);
    let home = root.join("home");
    std::fs::write(home.join("teams").join(TEAM).join("config.json"), BROKEN).unwrap();
    // What a lead killed inside an atomic write leaves (a loaded machine met it for real).
    let temp = home
        .join("teams")
        .join(TEAM)
        .join(".teamlead/session.json.tmp.0badc0de");
    std::fs::write(&temp, b"{\"lead").unwrap();
    std::fs::File::options()
        .write(true)
        .open(&temp)
        .unwrap()
        .set_modified(std::time::SystemTime::now() - Duration::from_secs(60))
        .unwrap();
    let before = fingerprint(&home);

    // The lead refuses, names the fix, and changes nothing.
    let out = run(teamlead(
        root,
        &["serve", "--team", TEAM, "--backend", "in-process"],
    ));
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("cannot be read")
            && said.contains("teamlead clean")
            && said.contains("quarantine"),
        "the error does not say what to do: {said}"
    );
    assert!(
        changes(&before, &fingerprint(&home)).is_empty(),
        "the lead changed the home"
    );

    // The dry run lists it, with why, and changes nothing.
    let out = run(teamlead(root, &["clean", "--dry-run"]));
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains(&format!("would move to quarantine: team {TEAM}"))
            && said.contains("cannot be read"),
        "the dry run does not offer the broken team: {said}"
    );
    assert!(
        changes(&before, &fingerprint(&home)).is_empty(),
        "the dry run changed the home"
    );

    // clean moves it into quarantine, bytes as they are.
    let out = run(teamlead(root, &["clean"]));
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains(&format!("moved to quarantine: team {TEAM}")),
        "{said}"
    );
    assert!(!home.join("teams").join(TEAM).exists());
    let kept: Vec<_> = std::fs::read_dir(home.join("quarantine").join(TEAM))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(
        std::fs::read(kept[0].join("team/config.json")).unwrap(),
        BROKEN,
        "the broken team file is kept as it was"
    );
    // Everything but the liveness file, in which `clean` wrote its own pid while it held the
    // team's liveness lock (so no lead could start on it meanwhile), and the temp files of
    // writers that died (the SIGKILLed lead may have been inside an atomic write): `clean`
    // removes those once they are 2 s old, and says so.
    let liveness = Path::new(".teamlead/lead.lock");
    let mut moved = fingerprint(&kept[0].join("team"));
    moved.remove(liveness);
    let was: std::collections::BTreeMap<_, _> = before
        .iter()
        .filter_map(|(p, v)| {
            p.strip_prefix(Path::new("teams").join(TEAM))
                .ok()
                .filter(|rel| !rel.as_os_str().is_empty() && *rel != liveness)
                .map(|rel| (rel.to_path_buf(), v.clone()))
        })
        .filter(|(rel, _)| {
            let name = rel.file_name().unwrap().to_string_lossy().into_owned();
            let swept = name.contains(".tmp.") && !moved.contains_key(rel);
            if swept {
                assert!(
                    said.lines()
                        .any(|l| l.starts_with("removed:") && l.contains(&name)),
                    "{name} is gone and clean did not say it removed it: {said}"
                );
            }
            !swept
        })
        .collect();
    assert_eq!(was, moved, "the team directory was moved as it was");
    let mut why = kept[0].clone().into_os_string();
    why.push(".why");
    let why = std::fs::read_to_string(&why).unwrap();
    assert!(why.contains("could not be read"), "{why}");

    // The name is free: a lead starts on it (and is stopped again).
    let mut lead = teamlead(root, &["serve", "--team", TEAM, "--backend", "in-process"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let config = home.join("teams").join(TEAM).join("config.json");
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::fs::read(&config).map_or(true, |b| b == BROKEN || b.is_empty()) {
        assert!(
            Instant::now() < deadline && lead.try_wait().unwrap().is_none(),
            "a lead could not start on the freed name"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    lead.kill().unwrap();
    lead.wait().unwrap();
}
