//! The real lead INSIDE Zellij, against a real `zellij` (0.44 or newer): a zellij client runs in
//! a pseudo-terminal (a private socket directory, HOME, config and temporary directory), its
//! session's first pane runs the lead as a user's shell would (`teamlead --home H --team T`,
//! no `--backend`), so the lead finds `ZELLIJ`, `ZELLIJ_SESSION_NAME` and `ZELLIJ_PANE_ID` and
//! puts its teammates in panes of that same session. Keys are typed into the client's terminal:
//! they reach whichever pane has the client's focus. What a user checks: no private session
//! (no attach hint, no other session), three teammates in panes of the lead's session named
//! after them, typing on while a teammate spawns reaches the lead (spawning never takes the
//! focus from the lead's pane), a permission round trip through the lead's queue, the teams
//! dialog says zellij, a jump moves the client's focus to the teammate's pane, `/kill` closes
//! a pane, `/quit` closes the teammates' panes and leaves the user's session, its client and
//! the lead's pane as they were. Every session, server and process is removed on drop.

use crate::panes_common;
use crate::pty_harness::Terminal;
use crate::zellij_common::PrivateZellij;
use teamlead_test_support::keys::{Key, Keyboard};

use std::time::{Duration, Instant};

use panes_common::{
    Reaper, WAIT, Workspace, processes_of, sh_quote, teammate_processes, wait_until,
};
use portable_pty::CommandBuilder;

/// How long the session may take to show the lead's first screen (zellij starts its server).
const START_WAIT: Duration = Duration::from_secs(40);

/// Zellij's locked mode (Ctrl+G): keys Zellij binds (Ctrl+P is its pane mode) reach the pane.
const LOCK: &[u8] = b"\x07";

/// The user's Zellij, with the lead in the first pane of its session.
struct InsideLead<'z> {
    z: &'z PrivateZellij,
    /// The zellij client in the user's terminal.
    client: Terminal,
    session: String,
    /// The lead's pane (`terminal_N`).
    pane: String,
}

impl<'z> InsideLead<'z> {
    /// Starts a session (the user's) whose one pane runs the lead (then a shell, as
    /// after a command typed into one), in a `cols`×`rows` terminal; waits for the lead.
    fn start(z: &'z PrivateZellij, ws: &Workspace, cols: u16, rows: u16) -> InsideLead<'z> {
        let script = z.path("lead.sh");
        let lead = format!(
            "cd {work}\nenv -u CLAUDE_CONFIG_DIR -u TEAMLEAD_HOME -u TMUX -u TMUX_PANE -u TEAMLEAD_CLAUDE_BIN TERM=xterm-256color TEAMLEAD_NO_SERVER=1 TEAMLEAD_CONFIG={config} TEAMLEAD_LEAD_GRACE_MS={grace} {bin} --home {home} --team {team}\necho \"lead exited with $?\"\nexec sh\n",
            work = sh_quote(&ws.work().to_string_lossy()),
            config = sh_quote(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/no-config.toml")),
            grace = ws.lead_grace_ms,
            bin = sh_quote(env!("CARGO_BIN_EXE_teamlead")),
            home = sh_quote(&ws.home().to_string_lossy()),
            team = sh_quote(&ws.team),
        );
        std::fs::write(&script, lead).unwrap();
        let kdl = |s: &str| format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""));
        let layout = z.path("lead.kdl");
        std::fs::write(
            &layout,
            format!(
                "layout {{\n    pane command=\"sh\" {{\n        args {}\n    }}\n}}\n",
                kdl(&script.to_string_lossy())
            ),
        )
        .unwrap();
        // Not the team's name: the processes that name the team are the lead's and its teammates'.
        let session = format!("user-{}", &ws.team[ws.team.len() - 8..]);
        let mut cmd = CommandBuilder::new("zellij");
        cmd.arg("--new-session-with-layout");
        cmd.arg(&layout);
        cmd.args(["--session", &session]);
        cmd.cwd(ws.work());
        for (key, value) in z.env() {
            cmd.env(key, value);
        }
        for var in [
            "ZELLIJ",
            "ZELLIJ_SESSION_NAME",
            "ZELLIJ_PANE_ID",
            "TMUX",
            "TMUX_PANE",
        ] {
            cmd.env_remove(var);
        }
        cmd.env("TERM", "xterm-256color");
        let client = Terminal::spawn(cmd, cols, rows);
        // No CLI call before the session is up: zellij 0.45's server panics when a CLI client
        // connects and leaves while it is still starting (`remove_client` before its session
        // data exists), and the CLI then spins on the dead socket.
        wait_until(
            "the lead's screen in the user's terminal",
            START_WAIT,
            || client.contents().contains("shift+tab to cycle"),
            || format!("{:?}", client.raw_text()),
        );
        let mut pane = String::new();
        wait_until(
            "the session's one pane",
            WAIT,
            || {
                let terminals = z.terminals(&session);
                pane = terminals.first().map(|t| t.0.clone()).unwrap_or_default();
                terminals.len() == 1
            },
            || format!("{:?}\n{}", z.sessions(), client.contents()),
        );
        let lead = InsideLead {
            z,
            client,
            session,
            pane,
        };
        lead.wait_screen("the lead's screen in its pane", |s| {
            s.contains("shift+tab to cycle")
        });
        lead
    }

    /// What the lead's pane shows (the client's terminal shows it among the others).
    fn screen(&self) -> String {
        self.z.screen(&self.session, &self.pane)
    }

    fn explain(&self) -> String {
        format!(
            "lead pane:\n{}\nterminal:\n{}",
            self.screen(),
            self.client.contents()
        )
    }

    fn wait_screen(&self, what: &str, check: impl Fn(&str) -> bool) -> Duration {
        self.wait_screen_within(what, WAIT, check)
    }

    fn wait_screen_within(
        &self,
        what: &str,
        limit: Duration,
        check: impl Fn(&str) -> bool,
    ) -> Duration {
        wait_until(what, limit, || check(&self.screen()), || self.explain())
    }

    /// Types `bytes` into the user's terminal.
    fn send(&self, bytes: &[u8]) {
        self.client.send(bytes);
    }

    /// Types a one-line composer input, checked on the composer's row, and presses Enter
    /// ([`Keyboard::type_line`]).
    fn submit(&self, line: &str) {
        self.type_line(line);
    }

    /// The panes the client's focus is on (one client: one pane).
    fn focus(&self) -> Vec<String> {
        self.z.client_panes(&self.session)
    }

    /// The terminal panes of the session as (id, title).
    fn terminals(&self) -> Vec<(String, String)> {
        self.z.terminals(&self.session)
    }
}

impl Keyboard for InsideLead<'_> {
    fn screen(&self) -> String {
        InsideLead::screen(self)
    }
    fn type_text(&self, text: &str) {
        self.send(text.as_bytes());
    }
    /// Ctrl+P is Zellij's pane mode: it reaches the lead in Zellij's locked mode.
    fn press(&self, key: Key) {
        if key == Key::CtrlP {
            self.send(LOCK);
            self.send(&key.bytes());
            self.send(LOCK);
        } else {
            self.send(&key.bytes());
        }
    }
    fn explain(&self) -> String {
        InsideLead::explain(self)
    }
}

/// The pane config.json records for a teammate, once it is there.
fn pane_of(ws: &Workspace, name: &str) -> String {
    let mut pane = None;
    wait_until(
        &format!("{name}'s pane recorded"),
        WAIT,
        || {
            pane = ws.pane_of(name);
            pane.is_some()
        },
        || format!("{}", ws.config()),
    );
    pane.unwrap_or_default()
}

#[test]
fn lead_inside_zellij_spawns_beside_itself_keeps_focus_asks_jumps_kills_and_quits() {
    let start = Instant::now();
    let z = PrivateZellij::new();
    let ws = Workspace::new("zji");
    let _reaper = Reaper::new(&ws);
    let lead = InsideLead::start(&z, &ws, 200, 50);
    let session = lead.session.clone();
    let lead_pane = lead.pane.clone();
    // Inside Zellij: no private session to attach to, and the keys go to the lead's pane.
    assert!(
        !lead.screen().contains("private session"),
        "{}",
        lead.explain()
    );
    assert_eq!(lead.focus(), vec![lead_pane.clone()]);

    // Three teammates. While the first spawns the user types on: every key reaches the lead's
    // composer (a pane that took the focus would have swallowed some, and its teammate's
    // command line with them).
    lead.submit("/spawn a say hi");
    let mut typed = 0;
    wait_until(
        "a spawned while typing on",
        WAIT,
        || {
            if typed < 40 {
                lead.send(b"x");
                typed += 1;
            }
            std::thread::sleep(Duration::from_millis(20));
            lead.screen().contains("Spawned a:")
        },
        || lead.explain(),
    );
    let ahead = "x".repeat(typed);
    lead.wait_screen(
        &format!("the {typed} keys typed ahead in the composer"),
        |s| s.contains(&ahead),
    );
    assert_eq!(lead.focus(), vec![lead_pane.clone()], "{}", lead.explain());
    // Ctrl+U clears the composer.
    lead.send(b"\x15");
    lead.wait_screen("the composer cleared", |s| !s.contains("xxx"));
    for name in ["b", "c"] {
        lead.submit(&format!("/spawn {name} say hi"));
        lead.wait_screen(&format!("`Spawned {name}:`"), |s| {
            s.contains(&format!("Spawned {name}:"))
        });
        assert_eq!(lead.focus(), vec![lead_pane.clone()], "{}", lead.explain());
    }
    let panes: Vec<String> = ["a", "b", "c"].iter().map(|n| pane_of(&ws, n)).collect();
    for (name, pane) in ["a", "b", "c"].iter().zip(&panes) {
        let member = ws.config()["members"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == *name)
            .unwrap()
            .clone();
        assert_eq!(member["backendType"], "zellij");
        let header = format!("{name}@{} started", ws.team);
        wait_until(
            &format!("{name}'s header in its pane"),
            WAIT,
            || z.screen(&session, pane).contains(&header),
            || format!("pane {pane}:\n{}", z.screen(&session, pane)),
        );
    }
    // The lead's pane and three more in the same session, named after their teammates; no
    // other session.
    let mut expected = vec![(lead_pane.clone(), String::new())];
    expected.extend(panes.iter().cloned().zip(["a", "b", "c"].map(String::from)));
    let named = |terminals: Vec<(String, String)>| -> Vec<(String, String)> {
        terminals
            .into_iter()
            .map(|(id, title)| {
                let title = if id == lead_pane {
                    String::new()
                } else {
                    title
                };
                (id, title)
            })
            .collect()
    };
    wait_until(
        "the lead's pane and a, b, c in its session",
        WAIT,
        || named(lead.terminals()) == expected,
        || format!("{:?}", lead.terminals()),
    );
    assert_eq!(z.sessions(), vec![session.clone()]);
    assert_eq!(teammate_processes(&ws.team).len(), 3);
    assert_eq!(lead.focus(), vec![lead_pane.clone()], "{}", lead.explain());
    let spawned_in = start.elapsed();

    // A permission round trip: the request reaches the lead's pane; the user answers it there
    // (Ctrl+P through Zellij's locked mode, Ctrl+G, as Zellij binds Ctrl+P).
    lead.submit(r#"/task add "make proof" --command "echo proof > proof.txt""#);
    lead.wait_screen("the permission request", |s| {
        s.contains("needs permission") && s.contains("make proof (task #1)")
    });
    let proof = ws.work().join("proof.txt");
    assert!(!proof.exists(), "the command ran before approval");
    lead.approve();
    wait_until(
        "the approved command ran",
        WAIT,
        || {
            std::fs::read_to_string(&proof).is_ok_and(|t| t == "proof\n")
                && ws.task("1")["status"] == "completed"
        },
        || format!("task: {}\n{}", ws.task("1"), lead.explain()),
    );

    // The teams dialog says zellij; a jump to b moves the client's focus to b's pane.
    lead.send(b"\x1b[B");
    lead.wait_screen("the footer badge selected", |s| {
        s.contains("open the teams dialog")
    });
    lead.send(b"\r");
    lead.wait_screen("the teams dialog on a, backend zellij", |s| {
        s.lines()
            .any(|l| l.contains("❯ ● a") && l.contains("zellij"))
    });
    lead.send(b"j");
    lead.wait_screen("b selected", |s| s.contains("❯ ● b"));
    lead.send(b"\r");
    lead.wait_screen("b's details", |s| s.contains("enter jump"));
    lead.send(b"\r");
    wait_until(
        "the client's focus on b's pane",
        WAIT,
        || lead.focus() == vec![panes[1].clone()],
        || format!("focus {:?}\n{}", lead.focus(), lead.explain()),
    );
    // Back to the lead with Zellij's keys (Alt+←, Alt+↑: the lead's pane is the first).
    wait_until(
        "the focus back on the lead's pane",
        WAIT,
        || {
            if lead.focus() == vec![lead_pane.clone()] {
                return true;
            }
            lead.send(b"\x1bh");
            lead.send(b"\x1bk");
            std::thread::sleep(Duration::from_millis(150));
            lead.focus() == vec![lead_pane.clone()]
        },
        || format!("focus {:?}\n{}", lead.focus(), lead.explain()),
    );
    lead.send(b"\x1b");
    lead.wait_screen("the note of the jump", |s| {
        !s.contains("enter jump")
            && s.contains("Jumped to b's pane: alt+← (Zellij's move focus) comes back to the lead.")
    });

    // `/kill c` closes its pane, and only that one.
    lead.submit("/kill c");
    let without_c: Vec<(String, String)> = expected[..3].to_vec();
    wait_until(
        "c's pane closed",
        WAIT,
        || named(lead.terminals()) == without_c,
        || format!("{:?}\n{}", lead.terminals(), lead.explain()),
    );
    assert_eq!(lead.focus(), vec![lead_pane.clone()], "{}", lead.explain());

    // `/quit` closes the teammates' panes; the user's session, its client and the lead's pane
    // (back at the shell) stay.
    lead.submit("/quit");
    lead.wait_screen("the lead exited with status 0", |s| {
        s.contains("lead exited with 0")
    });
    wait_until(
        "only the lead's pane left",
        WAIT,
        || named(lead.terminals()) == expected[..1],
        || format!("{:?}\n{}", lead.terminals(), lead.explain()),
    );
    assert_eq!(z.sessions(), vec![session.clone()]);
    assert_eq!(z.clients(&session), 1, "the user's client stays attached");
    let mut lead = lead;
    assert_eq!(lead.client.exit_status(), None, "the zellij client runs on");
    assert!(!ws.team_dir().exists());
    wait_until(
        "no teammate or lead process left",
        WAIT,
        || processes_of(&ws).is_empty(),
        || format!("{:?}", processes_of(&ws)),
    );
    eprintln!(
        "timings: start + 3 spawns {spawned_in:?}, whole test {:?}",
        start.elapsed()
    );
}
