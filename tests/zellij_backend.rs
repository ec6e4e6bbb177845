//! The Zellij backend against a real `zellij` (0.44 or newer), headless: a private background
//! session (`attach --create-background`) in a private `ZELLIJ_SOCKET_DIR`, HOME and config
//! directory, removed at the end (no session, server or socket left). Three panes named after
//! their teammates, a typed command line that runs, an exit status read from a held pane,
//! focus, hide/show, kill, and a session taken over under a new name as a resumed lead does. `.ci/run`
//! installs zellij when it is missing; without it this test fails.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use teamlead::backend::zellij::{ZellijBackend, list_sessions, remove_session};
use teamlead::backend::{PaneBackend, PaneState};

const WAIT: Duration = Duration::from_secs(20);

fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(start.elapsed() < WAIT, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A private socket directory, home and config for zellij; removes every session on drop.
struct PrivateZellij {
    dir: tempfile::TempDir,
}

impl PrivateZellij {
    fn new() -> PrivateZellij {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("sock");
        std::fs::create_dir_all(&socket).unwrap();
        // SAFETY: the only test of this binary; zellij reads these from the environment.
        unsafe {
            std::env::set_var("ZELLIJ_SOCKET_DIR", &socket);
            std::env::set_var("ZELLIJ_CONFIG_DIR", dir.path().join("config"));
            std::env::set_var("HOME", dir.path());
            std::env::set_var("XDG_CACHE_HOME", dir.path().join("cache"));
            std::env::set_var("XDG_DATA_HOME", dir.path().join("data"));
            // Zellij's log directory goes under the temporary directory.
            std::env::set_var("TMPDIR", dir.path());
            std::env::remove_var("ZELLIJ");
            std::env::remove_var("ZELLIJ_SESSION_NAME");
        }
        PrivateZellij { dir }
    }
    fn file(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

impl Drop for PrivateZellij {
    fn drop(&mut self) {
        for session in list_sessions("zellij") {
            remove_session("zellij", &session);
        }
    }
}

#[test]
fn real_zellij_private_session_panes_names_commands_exit_focus_kill_take_over() {
    let installed = std::process::Command::new("zellij")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        installed,
        "zellij is not installed: .ci/run installs it (cargo install --locked zellij)"
    );
    let z = PrivateZellij::new();
    let backend = ZellijBackend::private("zellij", "teamlead-test-1");
    let mut panes = Vec::new();
    for name in ["a", "b", "c"] {
        let pane = backend.create_pane().unwrap();
        backend.style(&pane, name, None).unwrap();
        panes.push(pane);
    }
    for (pane, name) in panes.iter().zip(["a", "b", "c"]) {
        assert_eq!(backend.title(pane).as_deref(), Some(name));
    }
    // The session's first pane (a shell) is closed: only the teammates' panes are left.
    let terminals: Vec<String> = backend
        .listed()
        .unwrap()
        .iter()
        .filter(|p| !p.is_plugin)
        .map(|p| p.pane_id())
        .collect();
    assert_eq!(terminals, panes);
    assert_eq!(backend.pane_states(&panes), vec![PaneState::Running; 3]);
    let proof = z.file("proof.txt");
    backend
        .run_command(&panes[0], &format!("echo ran > '{}'", proof.display()))
        .unwrap();
    wait_until("the typed command to run", || proof.exists());
    backend.run_command(&panes[1], "exit 3").unwrap();
    wait_until("b's pane held with its exit status", || {
        backend.pane_states(&panes[1..2])
            == vec![PaneState::Dead {
                status: Some(3),
                signal: None,
            }]
    });
    backend.focus(&panes[2]).unwrap();
    let focused = |pane: &str| {
        backend
            .listed()
            .unwrap()
            .iter()
            .any(|p| p.pane_id() == pane && p.is_focused)
    };
    wait_until("c's pane focused", || focused(&panes[2]));

    // Hide: c's pane leaves the tab's layout (floating, with the tab's floating panes
    // hidden) and its teammate goes on running; show embeds it again.
    let listed = |pane: &str| {
        backend
            .listed()
            .unwrap()
            .into_iter()
            .find(|p| p.pane_id() == pane)
            .unwrap()
    };
    let tab = listed(&panes[2]).tab_id.unwrap();
    assert!(!listed(&panes[2]).is_floating);
    backend.hide(&panes[2]).unwrap();
    assert!(listed(&panes[2]).is_floating);
    assert_eq!(backend.floating_visible(tab), Some(false));
    assert!(!listed(&panes[0]).is_floating, "only c's pane is hidden");
    // Hiding twice is harmless.
    backend.hide(&panes[2]).unwrap();
    assert!(listed(&panes[2]).is_floating);
    assert_eq!(backend.pane_states(&panes[2..]), vec![PaneState::Running]);
    backend.show(&panes[2]).unwrap();
    assert!(!listed(&panes[2]).is_floating);
    assert_eq!(listed(&panes[2]).tab_id, Some(tab));
    backend.show(&panes[2]).unwrap();
    assert!(!listed(&panes[2]).is_floating);
    assert_eq!(backend.pane_states(&panes[2..]), vec![PaneState::Running]);

    backend.kill(&panes[1]).unwrap();
    assert_eq!(backend.pane_states(&panes[1..2]), vec![PaneState::Gone]);

    // A resumed lead takes the session over under its own name.
    let next = ZellijBackend::private("zellij", "teamlead-test-2");
    assert!(next.take_over("teamlead-test-1").unwrap());
    assert!(list_sessions("zellij").contains(&"teamlead-test-2".to_string()));
    next.adopt_pane(&panes[2]);
    assert_eq!(next.pane_states(&panes[2..]), vec![PaneState::Running]);
    next.shutdown();
    wait_until("no session left", || {
        !list_sessions("zellij")
            .iter()
            .any(|s| s.starts_with("teamlead-test"))
    });
}
