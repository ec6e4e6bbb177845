//! Notifications follow the window's focus: a screen attached to a lead server (the real
//! binary in a pseudo-terminal) rings the bell for a permission request that arrives while its
//! terminal has not reported focus or reported it lost (`CSI O`), and stays silent while the
//! terminal reports it has the focus (`CSI I`): the person is looking at the dialog.

#[path = "server_common/mod.rs"]
mod server_common;

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};
use server_common::{Ws, wait_until};

/// The attached screen: its raw output (bell bytes included) and its parsed screen.
struct Attached {
    raw: Arc<Mutex<Vec<u8>>>,
    writer: Box<dyn Write + Send>,
    child: Box<dyn portable_pty::Child + Send + Sync>,
}

impl Attached {
    fn start(ws: &Ws) -> Attached {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: 40,
                cols: 120,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("open a pty");
        let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_teamlead"));
        cmd.arg("--home");
        cmd.arg(ws.home());
        cmd.args(["attach", ws.team.as_str()]);
        cmd.cwd(ws.work());
        cmd.env("TERM", "xterm-256color");
        // Only the bell: no tmux message or desktop notification from a test.
        cmd.env("TEAMLEAD_NOTIFY", "bell");
        for (k, v) in ws.env() {
            cmd.env(k, v);
        }
        for var in [
            "CLAUDE_CONFIG_DIR",
            "TEAMLEAD_HOME",
            "TMUX",
            "TMUX_PANE",
            "TEAMLEAD_NO_SERVER",
            "XDG_RUNTIME_DIR",
        ] {
            cmd.env_remove(var);
        }
        let child = pair
            .slave
            .spawn_command(cmd)
            .expect("spawn teamlead attach");
        drop(pair.slave);
        let raw = Arc::new(Mutex::new(Vec::new()));
        let mut reader = pair.master.try_clone_reader().expect("pty reader");
        let sink = raw.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        let writer = pair.master.take_writer().expect("pty writer");
        // The master must outlive the child's use of the terminal.
        std::mem::forget(pair.master);
        let attached = Attached { raw, writer, child };
        attached.wait("the lead's screen", |s| s.contains("shift+tab to cycle"));
        attached
    }

    fn screen(&self) -> String {
        let mut parser = vt100::Parser::new(40, 120, 0);
        parser.process(&self.raw.lock().unwrap());
        parser.screen().contents()
    }

    /// Bell bytes so far that are not an OSC's terminator.
    fn bells(&self) -> usize {
        let raw = self.raw.lock().unwrap();
        let mut in_osc = false;
        let mut count = 0;
        for (i, b) in raw.iter().enumerate() {
            if *b == 0x1b && raw.get(i + 1) == Some(&b']') {
                in_osc = true;
            } else if *b == 0x07 {
                if in_osc {
                    in_osc = false;
                } else {
                    count += 1;
                }
            }
        }
        count
    }

    fn wait(&self, what: &str, check: impl Fn(&str) -> bool) {
        wait_until(what, || check(&self.screen()), || self.screen());
    }

    fn send(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).expect("write to the pty");
        self.writer.flush().expect("flush the pty");
    }
}

impl Drop for Attached {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A Bash task for `alpha` and its permission request, waiting in the lead's queue.
fn request(ws: &Ws, n: usize) -> String {
    ws.ctl_ok(&[&format!("/task add step{n} --command \"echo step-{n}\"")]);
    ws.ctl_ok(&["wait", "--approval", "--timeout", "30"]);
    let pending: serde_json::Value =
        serde_json::from_str(&ws.ctl_ok(&["--json", "pending"])).expect("pending json");
    pending["permissions"][0]["id"]
        .as_u64()
        .unwrap_or_else(|| panic!("a request id in {pending}"))
        .to_string()
}

/// Waits until the lead's queue is empty again.
fn no_request_waits(ws: &Ws) {
    wait_until(
        "no request waiting",
        || {
            let pending: serde_json::Value =
                serde_json::from_str(&ws.ctl_ok(&["--json", "pending"])).expect("pending json");
            pending["permissions"]
                .as_array()
                .is_some_and(|p| p.is_empty())
        },
        || ws.ctl_ok(&["pending"]),
    );
}

#[test]
fn the_bell_rings_only_while_the_window_is_not_focused() {
    let ws = Ws::new("notify");
    let _server = ws.serve(&[]);
    ws.ctl_ok(&["/spawn alpha \"take your tasks\""]);
    let mut screen = Attached::start(&ws);

    // The terminal has not said whether it has the focus: a request rings.
    let first = request(&ws, 1);
    wait_until(
        "a bell for the first request",
        || screen.bells() >= 1,
        || screen.screen(),
    );
    ws.ctl_ok(&["approve", &first]);
    no_request_waits(&ws);

    // Focused: the dialog is in front of the person, no bell.
    screen.send(b"\x1b[I");
    let before = screen.bells();
    let second = request(&ws, 2);
    // A bell is written before the request is passed on to the screen: once the screen shows
    // the request, a bell would already be in the output.
    screen.wait("the second request on screen", |s| s.contains("step-2"));
    assert_eq!(screen.bells(), before, "no bell while focused");
    ws.ctl_ok(&["approve", &second]);
    no_request_waits(&ws);

    // Focus lost: the next request rings again.
    screen.send(b"\x1b[O");
    let before = screen.bells();
    let third = request(&ws, 3);
    wait_until(
        "a bell for the third request",
        || screen.bells() > before,
        || screen.screen(),
    );
    ws.ctl_ok(&["approve", &third]);
    ws.ctl_ok(&["/quit"]);
    ws.reap();
}
