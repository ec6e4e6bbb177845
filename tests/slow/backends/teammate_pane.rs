//! `teamlead teammate` as a pane process in real tmux (a private `-L` server): it shows who it is,
//! asks the lead through the lead's inbox and runs the command once approved, completes the
//! task, answers the shutdown handshake and its pane closes, and exits by itself within 3 s when
//! the lead's liveness lock is released by the lead dying.

use teamlead_test_support::tmux as test_tmux;

use std::path::Path;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use teamlead::backend::PaneBackend;
use teamlead::backend::launch::{TeammateLaunch, TeammateProgram};
use teamlead::backend::terminals::tmux::{TmuxBackend, TmuxLayout, TmuxServer};
use teamlead::protocol::frames::{Frame, PermissionResponse, ShutdownRequest};
use teamlead::protocol::{InboxEntry, Member, PermissionMode, TeamFile};
use teamlead::store::{Home, inbox, tasks::TaskList, team};
use test_tmux::TestTmux;

const TEAM: &str = "pane-team";

/// One process holding the lead's liveness lock (flock(1) on a descriptor the shell keeps as
/// it becomes `sleep`: the same flock(2) lock the lead takes), killed on drop.
struct FakeLead(Child);

impl FakeLead {
    fn hold(home: &Home) -> FakeLead {
        let path = home.lead_lock_path(TEAM).unwrap();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let child = Command::new("bash")
            .args(["-c", "exec 9>>\"$0\" && flock 9 && exec sleep 600"])
            .arg(&path)
            .spawn()
            .expect("bash");
        let deadline = Instant::now() + Duration::from_secs(5);
        while !teamlead::store::liveness::is_lead_alive(home, TEAM) {
            assert!(Instant::now() < deadline, "flock never took the lock");
            std::thread::sleep(Duration::from_millis(20));
        }
        FakeLead(child)
    }
    fn kill(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for FakeLead {
    fn drop(&mut self) {
        self.kill();
    }
}

fn wait_until(what: &str, timeout: Duration, cond: impl FnMut() -> bool) {
    teamlead_test_support::wait::wait_until(what, timeout, cond, String::new);
}

fn setup(home: &Home, cwd: &Path, names: &[&str]) {
    let mut file = TeamFile::new(TEAM, None, &cwd.to_string_lossy());
    for name in names {
        let mut m = Member::new(name, TEAM, &cwd.to_string_lossy());
        m.backend_type = Some("tmux".into());
        m.color = Some("green".into());
        file.members.push(m);
    }
    team::create_team(home, &file).unwrap();
}

/// Starts `teamlead teammate` for `name` in a new pane beside the test's "lead" pane.
fn start_teammate(
    t: &TestTmux,
    backend: &TmuxBackend,
    home: &Home,
    cwd: &Path,
    name: &str,
) -> String {
    let launch = TeammateLaunch {
        program: TeammateProgram::Teamlead {
            binary: env!("CARGO_BIN_EXE_teamlead").to_string(),
            engine: "shell".into(),
        },
        cwd: cwd.to_string_lossy().into_owned(),
        name: name.into(),
        team: TEAM.into(),
        color: Some("green".into()),
        parent_session_id: None,
        plan_mode_required: false,
        agent_type: None,
        model: None,
        lead_mode: PermissionMode::Default,
        session_id: None,
        guard: None,
    };
    let root = home.root.to_string_lossy().into_owned();
    // No grace period: the teammate leaves as soon as its lead is gone (the lead's own tests
    // cover the grace period and coming back).
    let line = launch.command_line(&|k| match k {
        "TEAMLEAD_HOME" => Some(root.clone()),
        "TEAMLEAD_LEAD_GRACE_MS" => Some("0".to_string()),
        _ => None,
    });
    let pane = backend.create_pane().unwrap();
    backend.style(&pane, name, None).unwrap();
    backend.run_command(&pane, &line).unwrap();
    t.wait_for(
        "the teammate's header in its pane",
        Duration::from_secs(10),
        || t.capture(&pane).contains(&format!("● {name} @ {TEAM}")),
    );
    pane
}

fn lead_frames(home: &Home) -> Vec<Frame> {
    inbox::read(home, TEAM, "team-lead")
        .map(|r| r.entries.iter().filter_map(|e| e.parse_frame()).collect())
        .unwrap_or_default()
}

#[test]
fn pane_teammate_asks_runs_and_shuts_down() {
    let home_dir = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let home = Home::new(home_dir.path());
    setup(&home, work.path(), &["worker"]);
    let _lead = FakeLead::hold(&home);
    let t = TestTmux::start();
    let server = TmuxServer {
        socket: Some(t.socket.clone()),
    };
    let backend = TmuxBackend::new(
        server,
        TmuxLayout::Inside {
            lead_pane: t.main_pane(),
        },
    );
    let pane = start_teammate(&t, &backend, &home, work.path(), "worker");

    let tasks = TaskList::new(&home, TEAM).unwrap();
    let mut meta = serde_json::Map::new();
    meta.insert("command".into(), "echo made-by-worker > proof.txt".into());
    tasks
        .create("write the proof", "", vec![], Some(meta))
        .unwrap();

    // The request reaches the lead's inbox, and the pane says what it waits for.
    let mut request = None;
    wait_until(
        "a permission_request in the lead inbox",
        Duration::from_secs(10),
        || {
            request = lead_frames(&home).into_iter().find_map(|f| match f {
                Frame::PermissionRequest(r) => Some(r),
                _ => None,
            });
            request.is_some()
        },
    );
    let request = request.unwrap();
    assert_eq!(request.agent_id, "worker");
    assert_eq!(request.tool_name, "Bash");
    t.wait_for(
        "the waiting line in the pane",
        Duration::from_secs(5),
        || t.capture(&pane).contains("waiting for team lead approval"),
    );
    assert!(
        !work.path().join("proof.txt").exists(),
        "ran before approval"
    );

    // The lead approves (a bound answer); the command runs and the task completes.
    let answer = Frame::PermissionResponse(PermissionResponse::approve(&request, vec![]));
    inbox::append(
        &home,
        TEAM,
        "worker",
        &InboxEntry::frame("team-lead", &answer),
    )
    .unwrap();
    wait_until("the command's output file", Duration::from_secs(10), || {
        work.path().join("proof.txt").exists()
    });
    wait_until("the task completed", Duration::from_secs(10), || {
        tasks
            .get("1")
            .is_ok_and(|t| t.status == teamlead::protocol::TaskStatus::Completed)
    });

    // Shutdown handshake: approved with its pane id, then the process exits and the pane closes.
    let shutdown = Frame::ShutdownRequest(ShutdownRequest {
        request_id: "shutdown-1@worker".into(),
        from: "team-lead".into(),
        reason: None,
        timestamp: teamlead::protocol::time::now_iso(),
    });
    inbox::append(
        &home,
        TEAM,
        "worker",
        &InboxEntry::frame("team-lead", &shutdown),
    )
    .unwrap();
    wait_until("shutdown_approved", Duration::from_secs(10), || {
        lead_frames(&home).iter().any(|f| {
            matches!(f,
            Frame::ShutdownApproved(a) if a.request_id == "shutdown-1@worker"
                && a.pane_id.as_deref() == Some(pane.as_str()))
        })
    });
    wait_until(
        "the teammate process to end (its pane closes or is dead)",
        Duration::from_secs(5),
        || !backend.pane_running(&pane),
    );
}

#[test]
fn pane_teammates_exit_when_the_lead_dies() {
    let home_dir = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let home = Home::new(home_dir.path());
    setup(&home, work.path(), &["a", "b"]);
    let mut lead = FakeLead::hold(&home);
    let t = TestTmux::start();
    let server = TmuxServer {
        socket: Some(t.socket.clone()),
    };
    let backend = TmuxBackend::new(
        server,
        TmuxLayout::Inside {
            lead_pane: t.main_pane(),
        },
    );
    let a = start_teammate(&t, &backend, &home, work.path(), "a");
    let b = start_teammate(&t, &backend, &home, work.path(), "b");

    lead.kill();
    let killed_at = Instant::now();
    let deadline = Instant::now() + Duration::from_secs(5);
    while backend.pane_running(&a) || backend.pane_running(&b) {
        assert!(
            Instant::now() < deadline,
            "teammates still running 5 s after the lead died:\n{}\n---\n{}",
            t.capture(&a),
            t.capture(&b)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        killed_at.elapsed() < Duration::from_secs(3),
        "took {:?}",
        killed_at.elapsed()
    );
}
