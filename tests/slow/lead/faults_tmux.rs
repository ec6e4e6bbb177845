//! Faults inside tmux leave nothing behind, with the real lead in a pane of a private test
//! tmux server:
//! - `/quit` with 1–8 pane teammates, 20 times (two private servers at a time; the lead runs
//!   as `teamlead serve` in a pane and is driven by `teamlead ctl`): no pane of a
//!   teammate is left, dead or alive (tmux 3.3a keeps the pane of a program that exited,
//!   dead, under `remain-on-exit failed`), and no teammate process;
//! - a teammate whose team directory is removed under it exits, also when its lead is then
//!   SIGKILLed; a teammate pane still there (dead) is found and closed by `clean --orphans`.

use crate::panes_common;

use std::process::Command;
use std::time::Duration;

use panes_common::{
    Reaper, TestTmux, TmuxLead, WAIT, Workspace, alive, sh_quote, sigkill, teammate_processes,
    tmux_env_value, wait_until,
};

/// Every pane of the lead's server that runs or ran a teammate: id, dead flag, start command.
fn teammate_panes(lead: &TmuxLead) -> Vec<String> {
    lead.tmux
        .panes("#{pane_id} dead=#{pane_dead} #{pane_start_command}")
        .into_iter()
        .filter(|l| l.contains(" teammate "))
        .collect()
}

/// The lead as a server (`teamlead serve`, the default way a lead runs) in a pane of a private
/// test tmux server, so its teammates are panes of that server; driven by `teamlead ctl`, so
/// the runs do not depend on a terminal's keyboard under load.
struct ServedLead {
    tmux: TestTmux,
    pid: u32,
    run_dir: tempfile::TempDir,
}

const NO_CONFIG: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/no-config.toml");

impl ServedLead {
    fn start(ws: &Workspace) -> ServedLead {
        let run_dir = tempfile::tempdir().expect("runtime dir");
        std::fs::set_permissions(
            run_dir.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o700),
        )
        .expect("private runtime dir");
        let tmux = TestTmux::named(format!("tl-test-{}", uuid::Uuid::new_v4().simple()));
        let command = format!(
            "exec env -u CLAUDE_CONFIG_DIR -u TEAMLEAD_HOME -u TEAMLEAD_NO_SERVER -u XDG_RUNTIME_DIR \
             TEAMLEAD_RUNTIME_DIR={} TEAMLEAD_CONFIG={} TEAMLEAD_LEAD_GRACE_MS={} {} --home {} serve --team {}",
            sh_quote(&run_dir.path().to_string_lossy()),
            sh_quote(NO_CONFIG),
            ws.lead_grace_ms,
            sh_quote(env!("CARGO_BIN_EXE_teamlead")),
            sh_quote(&ws.home().to_string_lossy()),
            sh_quote(&ws.team),
        );
        let work = ws.work().to_string_lossy().into_owned();
        tmux.run(&[
            "new-session",
            "-d",
            "-s",
            "main",
            "-x",
            "240",
            "-y",
            "80",
            "-c",
            &work,
            &command,
        ])
        .expect("start the test tmux server with the lead");
        tmux.run(&["new-window", "-d", "-t", "main", "-n", "shell", "--", "cat"])
            .expect("a second window");
        let pid = tmux
            .run(&["display-message", "-p", "-t", "main:0", "#{pane_pid}"])
            .expect("the lead's pane")
            .trim()
            .parse()
            .expect("pane pid");
        let lead = ServedLead { tmux, pid, run_dir };
        wait_until(
            "the lead server's socket",
            WAIT,
            || {
                std::fs::read_dir(lead.run_dir.path())
                    .map(|d| {
                        d.flatten()
                            .any(|e| e.path().extension().is_some_and(|x| x == "sock"))
                    })
                    .unwrap_or(false)
            },
            || {
                format!(
                    "lead pane:\n{:?}",
                    lead.tmux.run(&["capture-pane", "-p", "-t", "main:0"])
                )
            },
        );
        lead
    }

    /// `teamlead ctl TEAM ARGS…`, which must succeed.
    fn ctl(&self, ws: &Workspace, args: &[&str]) -> String {
        let out = Command::new(env!("CARGO_BIN_EXE_teamlead"))
            .arg("--home")
            .arg(ws.home())
            .args(["ctl", ws.team.as_str()])
            .args(args)
            .env("TEAMLEAD_RUNTIME_DIR", self.run_dir.path())
            .env("TEAMLEAD_CONFIG", NO_CONFIG)
            .env_remove("TEAMLEAD_HOME")
            .env_remove("XDG_RUNTIME_DIR")
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run teamlead ctl");
        assert!(
            out.status.success(),
            "ctl {args:?}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Every pane of the server that runs or ran a teammate.
    fn teammate_panes(&self) -> Vec<String> {
        self.tmux
            .panes("#{pane_id} dead=#{pane_dead} #{pane_start_command}")
            .into_iter()
            .filter(|l| l.contains(" teammate "))
            .collect()
    }
}

fn quit_run(run: usize, teammates: usize) {
    let ws = Workspace::new("quit-panes");
    let lead = ServedLead::start(&ws);
    let mut reaper = Reaper::new(&ws);
    reaper.lead_pid = Some(lead.pid);
    for i in 0..teammates {
        let out = lead.ctl(&ws, &[&format!("/spawn t{i} stand by")]);
        assert!(out.contains(&format!("Spawned t{i}:")), "run {run}: {out}");
    }
    wait_until(
        &format!("run {run}: {teammates} teammate processes"),
        WAIT,
        || teammate_processes(&ws.team).len() == teammates,
        || format!("{:?}", teammate_processes(&ws.team)),
    );
    lead.ctl(&ws, &["/quit"]);
    wait_until(
        &format!("run {run}: the lead to exit"),
        WAIT,
        || !alive(lead.pid),
        || format!("panes: {:#?}", lead.teammate_panes()),
    );
    // Whatever quit left is there as soon as the lead is gone; a short poll only lets tmux
    // finish closing the panes quit killed.
    wait_until(
        &format!("run {run} ({teammates} teammates): no teammate pane left"),
        Duration::from_secs(2),
        || lead.teammate_panes().is_empty(),
        || format!("panes left: {:#?}", lead.teammate_panes()),
    );
    wait_until(
        &format!("run {run}: no teammate process left"),
        Duration::from_secs(3),
        || teammate_processes(&ws.team).is_empty(),
        || format!("{:?}", teammate_processes(&ws.team)),
    );
    assert!(!ws.team_dir().exists(), "run {run}: the team was removed");
}

#[test]
fn quit_inside_tmux_twenty_times_leaves_no_teammate_pane() {
    const RUNS: usize = 20;
    const AT_ONCE: usize = 2;
    let workers: Vec<_> = (0..AT_ONCE)
        .map(|w| {
            std::thread::spawn(move || {
                for run in (w..RUNS).step_by(AT_ONCE) {
                    quit_run(run, run % 8 + 1);
                }
            })
        })
        .collect();
    let failures: Vec<_> = workers.into_iter().filter_map(|w| w.join().err()).collect();
    assert!(failures.is_empty(), "{} worker(s) failed", failures.len());
}

fn pid_of(ws: &Workspace, name: &str) -> u32 {
    teammate_processes(&ws.team)
        .into_iter()
        .find(|(_, line)| line.contains(&format!("--agent-name {name} ")))
        .map(|(pid, _)| pid)
        .unwrap_or_else(|| panic!("no process of {name}"))
}

#[test]
fn a_teammate_whose_team_is_removed_exits_and_clean_finds_its_pane() {
    let mut ws = Workspace::new("team-gone");
    // Long enough that only the missing team can make them leave.
    ws.lead_grace_ms = 120_000;
    let lead = TmuxLead::start(&ws, 240, 60);
    let mut reaper = Reaper::new(&ws);
    reaper.lead_pid = Some(lead.pid);
    for name in ["a", "b"] {
        lead.submit(&format!("/spawn {name} stand by"));
        lead.wait_screen(&format!("`Spawned {name}:`"), |s| {
            s.contains(&format!("Spawned {name}:"))
        });
    }
    wait_until(
        "two teammate processes",
        WAIT,
        || teammate_processes(&ws.team).len() == 2,
        || format!("{:?}", teammate_processes(&ws.team)),
    );
    let (a, b) = (pid_of(&ws, "a"), pid_of(&ws, "b"));
    // b's pane stays after b exits (dead), as tmux 3.3a keeps some under `remain-on-exit
    // failed`: `clean --orphans` must find it with nothing on disk naming it.
    let b_pane = ws.pane_of("b").expect("b's pane in config.json");
    lead.tmux
        .run(&["set-option", "-p", "-t", &b_pane, "remain-on-exit", "on"])
        .expect("keep b's pane");

    // Removed under the running team (the lead may be writing in it meanwhile: again until
    // it is gone), then the lead is SIGKILLed.
    wait_until(
        "the team directory removed",
        WAIT,
        || {
            let _ = std::fs::remove_dir_all(ws.team_dir());
            !ws.team_dir().exists()
        },
        || format!("{:?}", std::fs::read_dir(ws.team_dir()).map(|d| d.count())),
    );
    sigkill(lead.pid);
    wait_until(
        "both teammates to exit without their team",
        Duration::from_secs(5),
        || !alive(a) && !alive(b),
        || format!("still running: {:?}", teammate_processes(&ws.team)),
    );
    wait_until(
        "b's pane to be there, dead (tmux notices the exit)",
        Duration::from_secs(2),
        || {
            teammate_panes(&lead)
                .iter()
                .any(|l| l.starts_with(&format!("{b_pane} dead=1")))
        },
        || format!("{:?}", teammate_panes(&lead)),
    );

    // `clean --orphans` inside tmux (TMUX names the test server; a private socket directory,
    // so no other private server is looked at).
    let sockets = tempfile::tempdir().expect("socket dir");
    let out = Command::new(env!("CARGO_BIN_EXE_teamlead"))
        .arg("--home")
        .arg(ws.home())
        .args(["clean", "--orphans"])
        .current_dir(ws.work())
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("TEAMLEAD_HOME")
        .env_remove("TMUX_PANE")
        .env("TMUX", tmux_env_value(&lead.tmux))
        .env("TMUX_TMPDIR", sockets.path())
        .output()
        .expect("run clean --orphans");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "clean failed: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("of teammate b") && stdout.contains("its team"),
        "clean names b's pane: {stdout}"
    );
    assert!(
        teammate_panes(&lead).is_empty(),
        "no teammate pane left: {:?}",
        teammate_panes(&lead)
    );
}
