//! GNU screen, the sixth terminal, against the real program: the private detached session made
//! with the first window, windows titled and running command lines pasted as typed (quotes, `$`,
//! backslashes), keys, their last lines, a window that closes with its program, kill, the
//! session ending with its last window, a resumed lead's take-over, `clean`'s sweep of a dead
//! lead's session, and a real `teamlead teammate` started, watched, killed and quit through the
//! pane executor. Sessions are named after this test process and quit at the end.

use std::path::Path;
use std::process::{Child, Command};
use std::sync::Arc;
use std::time::Duration;

use teamlead::backend::PaneBackend;
use teamlead::backend::PaneState;
use teamlead::backend::executor::{Liveness, SpawnRequest, TeammateExecutor};
use teamlead::backend::launch::TeammateProgram;
use teamlead::backend::pane_executor::PaneExecutor;
use teamlead::backend::terminals::screen::{Screen, ScreenBackend, list_sessions};
use teamlead::backend::terminals::{Leftover, Terminal};
use teamlead::protocol::{BackendKind, Member, PermissionMode, TeamFile};
use teamlead::store::{Home, team};

const WAIT: Duration = Duration::from_secs(10);

/// The `screen` on PATH (.ci/run installs it from its list).
fn screen() -> String {
    crate::programs::required("screen")
        .to_string_lossy()
        .into_owned()
}

/// Quits the named sessions when the test ends, however it ends.
struct Sessions(Vec<String>);

impl Drop for Sessions {
    fn drop(&mut self) {
        for name in &self.0 {
            ScreenBackend::private(&screen(), name).shutdown();
        }
    }
}

fn wait_until(what: &str, cond: impl FnMut() -> bool, shown: impl Fn() -> String) {
    teamlead_test_support::wait::wait_until(what, WAIT, cond, shown);
}

#[test]
fn screen_windows_titles_pasted_commands_keys_exit_kill_take_over_and_sweep() {
    let program = screen();
    let pid = std::process::id();
    let (old_name, new_name) = (
        format!("teamlead-t{pid}-old"),
        format!("teamlead-t{pid}-new"),
    );
    let _quit = Sessions(vec![old_name.clone(), new_name.clone()]);
    let backend = ScreenBackend::private(&program, &old_name);
    assert_eq!(
        backend.listed(),
        Some(vec![]),
        "no session before the first window"
    );

    // The first window comes with the session (`screen -dmS`), the next ones from `-X screen`.
    let a = backend.create_pane().expect("first window");
    let b = backend.create_pane().expect("second window");
    assert_ne!(a, b);
    assert!(list_sessions(&program).contains(&old_name));
    backend.style(&b, "beta", None).unwrap();
    assert_eq!(backend.title(&b).as_deref(), Some("beta"));

    // The command line arrives byte for byte: screen's parser expands nothing in it.
    backend
        .run_command(
            &b,
            r#"x=42; printf '%s\n' "x=$x it's \\ ^A done"; exec cat"#,
        )
        .unwrap();
    wait_until(
        "the command's output",
        || {
            backend
                .tail(&b, 5)
                .iter()
                .any(|l| l == r"x=42 it's \ ^A done")
        },
        || format!("{:?}", backend.tail(&b, 5)),
    );
    backend
        .send_key(&b, teamlead::backend::PaneKey::Escape)
        .unwrap();
    wait_until(
        "Esc typed into cat",
        || backend.tail(&b, 5).iter().any(|l| l.contains("^[")),
        || format!("{:?}", backend.tail(&b, 5)),
    );

    // A window closes with its program; the other runs on.
    backend.run_command(&a, "exit 3").unwrap();
    let both = vec![a.clone(), b.clone()];
    wait_until(
        "a's window gone",
        || backend.pane_states(&both) == [PaneState::Gone, PaneState::Running],
        || format!("{:?}", backend.pane_states(&both)),
    );

    // A resumed lead takes the session over under its own name.
    let resumed = ScreenBackend::private(&program, &new_name);
    assert!(resumed.take_over(&old_name).unwrap());
    assert!(!list_sessions(&program).contains(&old_name));
    resumed.adopt_pane(&b);
    assert_eq!(
        resumed.pane_states(std::slice::from_ref(&b)),
        [PaneState::Running]
    );
    assert_eq!(resumed.session_record().as_deref(), Some(new_name.as_str()));
    assert!(
        resumed
            .attach()
            .unwrap()
            .1
            .ends_with(&format!("screen -x {new_name}"))
    );

    // Its last window killed, the session ends.
    resumed.kill(&b).unwrap();
    wait_until(
        "the session gone with its last window",
        || !list_sessions(&program).contains(&new_name),
        || format!("{:?}", list_sessions(&program)),
    );
    assert_eq!(
        resumed.pane_states(std::slice::from_ref(&b)),
        [PaneState::Gone]
    );
}

/// `clean` finds the private session of a lead that is gone and removes it.
#[test]
fn clean_sweeps_the_session_of_a_dead_lead() {
    let program = screen();
    let mut gone = Command::new("true").spawn().unwrap();
    let dead_pid = gone.id();
    gone.wait().unwrap();
    let name = format!("teamlead-{dead_pid}");
    let _quit = Sessions(vec![name.clone()]);
    let left = ScreenBackend::private(&program, &name);
    left.create_pane().unwrap();
    let home_dir = tempfile::tempdir().unwrap();
    let home = Home::new(home_dir.path());
    let leftover = Leftover::Private {
        kind: BackendKind::Screen,
        name: name.clone(),
    };
    assert!(Screen.leftovers(&home).contains(&leftover));
    assert_eq!(
        leftover.to_string(),
        format!("screen session {name}: its lead is gone")
    );
    Screen.remove_leftover(&home, &leftover).unwrap();
    wait_until(
        "the dead lead's session removed",
        || !list_sessions(&program).contains(&name),
        || format!("{:?}", list_sessions(&program)),
    );
}

/// One process holding the team's lead liveness lock (the teammate stays while its lead lives).
struct FakeLead(Child);

impl FakeLead {
    fn hold(home: &Home, team: &str) -> FakeLead {
        let path = home.lead_lock_path(team).unwrap();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let child = Command::new("bash")
            .args(["-c", "exec 9>>\"$0\" && flock 9 && exec sleep 600"])
            .arg(&path)
            .spawn()
            .expect("bash");
        wait_until(
            "the lead's lock held",
            || teamlead::store::liveness::is_lead_alive(home, team),
            String::new,
        );
        FakeLead(child)
    }
}

impl Drop for FakeLead {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A real `teamlead teammate` in a screen window: started by the pane executor (its command
/// line pasted into the placeholder), it runs its prompt's command; it is running while its
/// window is listed, and kill and quit leave no window and no session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_teammate_runs_in_a_screen_window_through_the_pane_executor() {
    let program = screen();
    let session = format!("teamlead-t{}-exec", std::process::id());
    let _quit = Sessions(vec![session.clone()]);
    let home_dir = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let home = Home::new(home_dir.path());
    let cwd = work.path().to_string_lossy().into_owned();
    let team_name = "screen-team";
    let mut file = TeamFile::new(team_name, None, &cwd);
    file.members.push(Member::new("worker", team_name, &cwd));
    team::create_team(&home, &file).unwrap();
    let _lead = FakeLead::hold(&home, team_name);

    let backend: Arc<dyn PaneBackend> = Arc::new(ScreenBackend::private(&program, &session));
    let executor = PaneExecutor::new(
        &home,
        team_name,
        backend.clone(),
        TeammateProgram::Teamlead {
            binary: env!("CARGO_BIN_EXE_teamlead").to_string(),
            engine: "shell".into(),
        },
        None,
    );
    let mut request = SpawnRequest::new("worker", work.path());
    request.mode = PermissionMode::BypassPermissions;
    request.prompt = Some("Start with this:\n```\necho \"from $0\" > ran.txt\n```".into());
    let spawned = executor.spawn(request).await.expect("spawn");
    assert_eq!(spawned.kind, BackendKind::Screen);
    let ran = work.path().join("ran.txt");
    wait_until(
        "the prompt's command run by the teammate",
        || std::fs::read_to_string(&ran).is_ok_and(|t| !t.is_empty()),
        || backend.tail(&spawned.pane_id, 10).join("\n"),
    );
    assert_eq!(backend.title(&spawned.pane_id).as_deref(), Some("worker"));
    let reports = executor.liveness().await;
    assert_eq!(reports.len(), 1);
    assert_eq!(reports[0].liveness, Liveness::Running);

    executor.kill("worker").await.expect("kill");
    assert!(!backend.pane_alive(&spawned.pane_id));
    executor.quit().await;
    assert!(!list_sessions(&program).contains(&session));
    assert!(Path::new(&ran).exists());
}
