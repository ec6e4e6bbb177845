//! The kitty backend against a real kitty (Debian's 0.26) under Xvfb with software rendering:
//! each test starts its own X server (`-displayfd`, a free display) and kitty with remote control
//! on a private socket, HOME and config, and kills both on drop. Three teammate windows beside
//! the lead's, titled and bordered in their colors, a typed command line that runs, hide/show
//! between tabs, focus, liveness from `ls`, a window that closes with its program, and kill.

use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use teamlead::backend::kitty::{KittyBackend, parse_ls};
use teamlead::backend::{PaneBackend, PaneState};
use teamlead::protocol::Color;

const WAIT: Duration = Duration::from_secs(20);

fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(start.elapsed() < WAIT, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Xvfb and kitty, killed on drop.
struct RealKitty {
    dir: tempfile::TempDir,
    xvfb: Child,
    kitty: Child,
    listen_on: String,
}

impl RealKitty {
    fn start() -> RealKitty {
        let dir = tempfile::tempdir().unwrap();
        let mut xvfb = Command::new("Xvfb")
            .args([
                "-displayfd",
                "1",
                "-screen",
                "0",
                "1280x800x24",
                "-nolisten",
                "tcp",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("Xvfb is installed (apt-get install xvfb)");
        let mut number = String::new();
        let mut out = xvfb.stdout.take().unwrap();
        let mut byte = [0u8; 1];
        while out.read(&mut byte).unwrap_or(0) == 1 && byte[0] != b'\n' {
            number.push(byte[0] as char);
        }
        assert!(!number.is_empty(), "Xvfb gave no display");
        let socket = dir.path().join("kitty.sock");
        let listen_on = format!("unix:{}", socket.display());
        let kitty = Command::new("kitty")
            .args([
                "--config",
                "NONE",
                "-o",
                "allow_remote_control=yes",
                "-o",
                "enabled_layouts=splits",
                "--listen-on",
                &listen_on,
                "sh",
                "-c",
                "sleep 600",
            ])
            .env("DISPLAY", format!(":{}", number.trim()))
            .env("LIBGL_ALWAYS_SOFTWARE", "1")
            .env("HOME", dir.path())
            .env("XDG_CONFIG_HOME", dir.path().join("config"))
            .env("XDG_CACHE_HOME", dir.path().join("cache"))
            .env_remove("KITTY_WINDOW_ID")
            .env_remove("KITTY_LISTEN_ON")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("kitty is installed (apt-get install kitty)");
        let real = RealKitty {
            dir,
            xvfb,
            kitty,
            listen_on,
        };
        wait_until("kitty's remote control", || {
            KittyBackend::is_available("kitty", &real.listen_on)
        });
        real
    }

    /// (tab, window, title) of every window.
    fn windows(&self) -> Vec<(String, String, String)> {
        let out = Command::new("kitty")
            .args(["@", "--to", &self.listen_on, "ls"])
            .output()
            .unwrap();
        parse_ls(&String::from_utf8_lossy(&out.stdout)).unwrap_or_default()
    }

    fn tab_of(&self, window: &str) -> Option<String> {
        self.windows()
            .into_iter()
            .find(|(_, w, _)| w == window)
            .map(|(t, _, _)| t)
    }
}

impl Drop for RealKitty {
    fn drop(&mut self) {
        let _ = self.kitty.kill();
        let _ = self.kitty.wait();
        let _ = self.xvfb.kill();
        let _ = self.xvfb.wait();
    }
}

#[test]
fn real_kitty_windows_beside_the_lead_titles_colors_commands_hide_show_focus_kill() {
    let start = Instant::now();
    let kitty = RealKitty::start();
    let lead = kitty.windows()[0].1.clone();
    let lead_tab = kitty.tab_of(&lead).unwrap();
    let backend = KittyBackend::new("kitty", &kitty.listen_on, &lead);

    let mut windows = Vec::new();
    for (name, color) in [("a", Color::Red), ("b", Color::Blue), ("c", Color::Green)] {
        let w = backend.create_pane().unwrap();
        backend.style(&w, name, Some(color)).unwrap();
        windows.push(w);
    }
    let started_in = start.elapsed();
    for (w, name) in windows.iter().zip(["a", "b", "c"]) {
        assert_eq!(backend.title(w).as_deref(), Some(name));
        assert_eq!(kitty.tab_of(w), Some(lead_tab.clone()), "beside the lead");
    }
    assert_eq!(
        backend.pane_states(&windows),
        vec![PaneState::Running; 3],
        "placeholders wait for their command"
    );

    // The command line typed into the placeholder runs; the window closes when it ends.
    let proof = kitty.dir.path().join("proof.txt");
    let line = format!("echo ran > '{}'", proof.display());
    backend.run_command(&windows[2], &line).unwrap();
    wait_until("the typed command to run", || {
        std::fs::read_to_string(&proof).is_ok_and(|t| t == "ran\n")
    });
    wait_until("c's window to close with its program", || {
        backend.pane_states(&windows[2..]) == vec![PaneState::Gone]
    });

    // Hide moves a window to a tab of its own, show brings it back beside the lead.
    backend.hide(&windows[1]).unwrap();
    wait_until("b in another tab", || {
        kitty.tab_of(&windows[1]).is_some_and(|t| t != lead_tab)
    });
    backend.show(&windows[1]).unwrap();
    wait_until("b back beside the lead", || {
        kitty.tab_of(&windows[1]) == Some(lead_tab.clone())
    });
    backend.focus(&windows[0]).unwrap();

    backend.kill(&windows[0]).unwrap();
    backend.kill(&windows[1]).unwrap();
    wait_until("a and b closed", || {
        backend.pane_states(&windows[..2]) == vec![PaneState::Gone; 2]
    });
    assert_eq!(kitty.windows().len(), 1, "only the lead's window is left");
    assert!(Path::new(&kitty.dir.path()).exists());
    eprintln!(
        "timings: kitty up + 3 windows {started_in:?}, whole test {:?}",
        start.elapsed()
    );
}
