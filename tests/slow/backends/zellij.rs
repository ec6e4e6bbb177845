//! The Zellij backend against a real `zellij` (0.44 or newer), headless: a private background
//! session (`attach --create-background`) in a private `ZELLIJ_SOCKET_DIR`, HOME and config
//! directory, removed at the end (no session, server or socket left). Three panes named after
//! their teammates, a typed command line that runs, an exit status read from a held pane,
//! focus, hide/show, kill, and a session taken over under a new name as a resumed lead does. `.ci/run`
//! installs zellij when it is missing; without it this test fails.

use std::path::PathBuf;
use std::time::Duration;

use teamlead::backend::terminals::zellij::{ZellijBackend, list_sessions, remove_session};
use teamlead::backend::{PaneBackend, PaneState};

const WAIT: Duration = Duration::from_secs(20);

fn wait_until(what: &str, cond: impl FnMut() -> bool) {
    teamlead_test_support::wait::wait_until(what, WAIT, cond, String::new);
}

/// A private socket directory, home and config for zellij, reached through `bin/zellij`: a
/// script that sets them and runs the real zellij (no test changes this process's
/// environment: the suite's tests share it). Removes every session on drop.
struct PrivateZellij {
    dir: tempfile::TempDir,
}

impl PrivateZellij {
    fn new() -> PrivateZellij {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for sub in ["sock", "config", "cache", "data", "bin"] {
            std::fs::create_dir_all(root.join(sub)).unwrap();
        }
        let q = |sub: &str| format!("'{}'", root.join(sub).display());
        // Zellij's log directory goes under the temporary directory.
        let script = format!(
            "#!/bin/sh\nunset ZELLIJ ZELLIJ_SESSION_NAME ZELLIJ_PANE_ID\nexport ZELLIJ_SOCKET_DIR={} ZELLIJ_CONFIG_DIR={} HOME='{}' XDG_CACHE_HOME={} XDG_DATA_HOME={} TMPDIR='{}'\nexec zellij \"$@\"\n",
            q("sock"),
            q("config"),
            root.display(),
            q("cache"),
            q("data"),
            root.display(),
        );
        let program = root.join("bin").join("zellij");
        std::fs::write(&program, script).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
        PrivateZellij { dir }
    }
    fn file(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
    /// The `zellij` to give the backend.
    fn program(&self) -> String {
        self.file("bin/zellij").to_string_lossy().into_owned()
    }
}

impl Drop for PrivateZellij {
    fn drop(&mut self) {
        let program = self.program();
        for session in list_sessions(&program) {
            remove_session(&program, &session);
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
    let zellij = z.program();
    let backend = ZellijBackend::private(&zellij, "teamlead-test-1");
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
    let next = ZellijBackend::private(&zellij, "teamlead-test-2");
    assert!(next.take_over("teamlead-test-1").unwrap());
    assert!(list_sessions(&zellij).contains(&"teamlead-test-2".to_string()));
    next.adopt_pane(&panes[2]);
    assert_eq!(next.pane_states(&panes[2..]), vec![PaneState::Running]);
    next.shutdown();
    wait_until("no session left", || {
        !list_sessions(&zellij)
            .iter()
            .any(|s| s.starts_with("teamlead-test"))
    });
}
