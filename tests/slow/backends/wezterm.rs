//! The WezTerm backend against a stand-in `wezterm` (tests/bin/wezterm) that records its calls
//! with the syntax of `wezterm cli` and runs what is typed into a pane: the exact calls of the
//! split chain, hide/show, focus and kill; detection; and the real lead in a pseudo-terminal
//! inside "WezTerm" (`WEZTERM_PANE`, `TERM_PROGRAM=WezTerm`): three teammates in split panes, a
//! permission round trip through the lead's queue, `/kill` closes a pane, a SIGKILLed lead
//! restarted within the grace period re-binds the living panes, `/quit` closes them all, and a
//! SIGKILLed lead leaves nothing after `clean --orphans`.

use crate::panes_common;
use teamlead_test_support::keys::Keyboard;

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use panes_common::{
    EXIT_AFTER_LEAD_DIES, PtyLead, Reaper, WAIT, Workspace, processes_of, sigkill, spawn_three,
    teammate_processes, wait_until,
};
use teamlead::backend::detect::{BackendChoice, CapturedEnv, detect};
use teamlead::backend::terminals::PaneChoice;
use teamlead::backend::terminals::wezterm::WeztermBackend;
use teamlead::backend::{PaneBackend, PaneState};
use teamlead::protocol::{BackendKind, BackendRequest};

/// The stand-in's state directory, with the lead's pane 0 in tab 0.
struct FakeWezterm {
    dir: tempfile::TempDir,
}

impl FakeWezterm {
    fn new() -> FakeWezterm {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("panes"), "0 0 -\n").unwrap();
        FakeWezterm { dir }
    }
    fn bin_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bin")
    }
    fn program() -> String {
        Self::bin_dir()
            .join("wezterm")
            .to_string_lossy()
            .into_owned()
    }
    /// A `wezterm` for the backend in this process: the stand-in with this state directory
    /// (a script, so no test changes this process's environment).
    fn program_here(&self) -> String {
        let path = self.dir.path().join("wezterm-here");
        let script = format!(
            "#!/bin/sh\nWEZTERM_STATE='{}' exec '{}' \"$@\"\n",
            self.dir.path().display(),
            Self::program()
        );
        fs::write(&path, script).unwrap();
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        path.to_string_lossy().into_owned()
    }
    fn calls(&self) -> Vec<String> {
        fs::read_to_string(self.dir.path().join("calls.log"))
            .unwrap_or_default()
            .lines()
            .filter(|l| !l.starts_with("list "))
            .map(str::to_string)
            .collect()
    }
    /// The panes as "id tab" (the lead's included), after panes whose program ended have
    /// closed (the stand-in closes them when it is called, as WezTerm does by itself).
    fn panes(&self) -> Vec<String> {
        let listed = std::process::Command::new(Self::program())
            .args(["cli", "list", "--format", "json"])
            .env("WEZTERM_STATE", self.dir.path())
            .output()
            .expect("run the stand-in");
        assert!(listed.status.success());
        fs::read_to_string(self.dir.path().join("panes"))
            .unwrap_or_default()
            .lines()
            .map(|l| l.split(' ').take(2).collect::<Vec<_>>().join(" "))
            .collect()
    }
    fn pane_log(&self, pane: &str) -> String {
        fs::read_to_string(self.dir.path().join(format!("pane-{pane}.log"))).unwrap_or_default()
    }
    /// The lead's environment inside "WezTerm".
    fn lead_env(&self) -> Vec<(String, String)> {
        let path = format!(
            "{}:{}",
            Self::bin_dir().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        vec![
            ("PATH".into(), path),
            ("WEZTERM_PANE".into(), "0".into()),
            ("TERM_PROGRAM".into(), "WezTerm".into()),
            (
                "WEZTERM_STATE".into(),
                self.dir.path().to_string_lossy().into_owned(),
            ),
        ]
    }
}

#[test]
fn wezterm_cli_calls_split_hide_show_focus_kill() {
    let fake = FakeWezterm::new();
    let backend = WeztermBackend::new(&fake.program_here(), Some("0"));
    let a = backend.create_pane().unwrap();
    backend.style(&a, "a", None).unwrap();
    let b = backend.create_pane().unwrap();
    backend.style(&b, "b", None).unwrap();
    backend.run_command(&a, "sleep 30").unwrap();
    assert_eq!(
        backend.pane_states(&[a.clone(), b.clone(), "9".into()]),
        vec![PaneState::Running, PaneState::Running, PaneState::Gone]
    );
    backend.hide(&b).unwrap();
    backend.show(&b).unwrap();
    backend.focus(&a).unwrap();
    backend.kill(&a).unwrap();
    backend.kill(&b).unwrap();
    assert!(!backend.pane_alive(&a));
    assert_eq!(fake.panes(), vec!["0 0"]);
    let placeholder = "sh -c stty -echo 2>/dev/null; IFS= read -r line; stty echo 2>/dev/null; exec sh -c \"$line\"";
    assert_eq!(
        fake.calls(),
        vec![
            format!("split-pane --pane-id 0 --right --percent 70 -- {placeholder}"),
            format!("split-pane --pane-id 1 --bottom -- {placeholder}"),
            // The typed line ends with a newline (the log shows it as an empty line).
            "send-text --pane-id 1 --no-paste sleep 30".to_string(),
            String::new(),
            "move-pane-to-new-tab --pane-id 2".to_string(),
            "set-tab-title --pane-id 2 b".to_string(),
            "split-pane --pane-id 1 --bottom --move-pane-id 2".to_string(),
            "activate-pane --pane-id 1".to_string(),
            "kill-pane --pane-id 1".to_string(),
            "kill-pane --pane-id 2".to_string(),
        ]
    );
}

#[test]
fn wezterm_is_detected_inside_wezterm_after_the_multiplexers() {
    let bin = FakeWezterm::bin_dir();
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let env = |pairs: &[(&str, &str)]| {
        CapturedEnv::from_map(pairs.iter().copied().chain([("PATH", path.as_str())]))
    };
    let no_it2 = |_: BackendKind, _: &str| false;
    let inside = env(&[("WEZTERM_PANE", "4"), ("TERM_PROGRAM", "WezTerm")]);
    assert_eq!(
        detect(&inside, BackendRequest::Auto, &no_it2),
        BackendChoice::Panes(PaneChoice::inside(
            BackendKind::Wezterm,
            &bin.join("wezterm").to_string_lossy(),
            Some("4".into()),
            None
        ))
    );
    // tmux inside WezTerm: the multiplexer wins.
    let tmux_in_wezterm = env(&[
        ("WEZTERM_PANE", "4"),
        ("TMUX", "/tmp/x,1,0"),
        ("TMUX_PANE", "%1"),
    ]);
    assert_eq!(
        detect(&tmux_in_wezterm, BackendRequest::Auto, &no_it2).label(),
        "tmux"
    );
    assert_eq!(
        "wezterm".parse::<BackendRequest>(),
        Ok(BackendRequest::Kind(BackendKind::Wezterm))
    );
    // Asked for outside WezTerm: in-process, with a notice.
    match detect(
        &env(&[]),
        BackendRequest::Kind(BackendKind::Wezterm),
        &no_it2,
    ) {
        BackendChoice::InProcess { notice } => assert!(notice.unwrap().contains("WezTerm")),
        other => panic!("{other:?}"),
    }
}

/// Starts the lead inside the stand-in and spawns a, b and c.
fn lead_with_three(ws: &Workspace, fake: &FakeWezterm, reaper: &mut Reaper) -> PtyLead {
    let lead = ws.pty_lead(160, 45).start();
    reaper.lead_pid = Some(lead.pid);
    spawn_three(&lead, ws, "wezterm", WAIT, |pane| fake.pane_log(pane));
    assert_eq!(fake.panes(), vec!["0 0", "1 0", "2 0", "3 0"]);
    assert_eq!(teammate_processes(&ws.team).len(), 3);
    lead
}

#[test]
fn lead_in_wezterm_spawns_asks_kills_resumes_and_quits() {
    let start = Instant::now();
    let fake = FakeWezterm::new();
    let mut ws = Workspace::new("wez");
    ws.lead_env = fake.lead_env();
    ws.lead_grace_ms = 60_000;
    let mut reaper = Reaper::new(&ws);
    let first = lead_with_three(&ws, &fake, &mut reaper);
    let spawned_in = start.elapsed();

    first.submit(r#"/task add "make proof" --command "echo proof > proof.txt""#);
    first.wait_screen("the permission request", |s| {
        s.contains("needs permission") && s.contains("make proof (task #1)")
    });
    first.approve();
    let proof = ws.work().join("proof.txt");
    wait_until(
        "the approved command ran",
        WAIT,
        || proof.exists() && ws.task("1")["status"] == "completed",
        || format!("task: {}\n{}", ws.task("1"), first.screen()),
    );

    // `/kill c` closes its pane.
    first.submit("/kill c");
    wait_until(
        "c's pane to close",
        WAIT,
        || fake.panes() == vec!["0 0", "1 0", "2 0"],
        || format!("{:?}\n{}", fake.panes(), first.screen()),
    );
    assert!(fake.calls().contains(&"kill-pane --pane-id 3".to_string()));
    // Then c leaves the team (its pane closes first).
    first.wait_screen("the kill note", |s| s.contains("c was killed."));

    // The lead dies; a new one within the grace period re-binds a and b in their panes.
    let before = teammate_processes(&ws.team);
    let mut first = first;
    sigkill(first.pid);
    assert!(!first.wait_exit());
    let second = ws.pty_lead(160, 45).start();
    reaper.lead_pid = Some(second.pid);
    second.wait_screen("the resume note", |s| {
        s.contains("Resumed the team") && s.contains("re-bound a (1), b (2)")
    });
    assert_eq!(teammate_processes(&ws.team), before);

    // `/quit` closes every pane and removes the team.
    let mut second = second;
    second.submit("/quit");
    assert!(second.wait_exit(), "the lead exits with status 0");
    assert_eq!(fake.panes(), vec!["0 0"]);
    assert!(!ws.team_dir().exists());
    assert!(processes_of(&ws).is_empty(), "{:?}", processes_of(&ws));
    eprintln!(
        "timings: start + 3 spawns {spawned_in:?}, whole test {:?}",
        start.elapsed()
    );
}

#[test]
fn lead_in_wezterm_killed_leaves_nothing_after_clean_orphans() {
    let fake = FakeWezterm::new();
    let mut ws = Workspace::new("wez-kill");
    ws.lead_env = fake.lead_env();
    let mut reaper = Reaper::new(&ws);
    let mut lead = lead_with_three(&ws, &fake, &mut reaper);
    sigkill(lead.pid);
    let killed = Instant::now();
    wait_until(
        "the teammates to exit and their panes to close",
        Duration::from_secs(10),
        || teammate_processes(&ws.team).is_empty() && fake.panes() == vec!["0 0"],
        || format!("{:?} {:?}", teammate_processes(&ws.team), fake.panes()),
    );
    assert!(killed.elapsed() < EXIT_AFTER_LEAD_DIES + Duration::from_secs(1));
    assert!(!lead.wait_exit());
    let out = ws.clean_orphans(None);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains(&format!("removed: team {}", ws.team)),
        "{stdout}"
    );
    assert!(!ws.team_dir().exists());
    assert!(processes_of(&ws).is_empty(), "{:?}", processes_of(&ws));
}
