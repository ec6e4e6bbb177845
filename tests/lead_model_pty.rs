//! `teamlead --lead-model sonnet` end to end: the real binary in a pseudo-terminal (portable-pty
//! and vt100), its model a local server speaking the Anthropic streaming format found through
//! `ANTHROPIC_BASE_URL`. Plain text goes to the model, the footer spins while it answers, the
//! answer and the tokens used show on screen, the key never does, and `/quit` ends it.
//! Temporary home and config directory, no ~/.claude, no tmux.

use crate::llm_common;

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use llm_common::{Gate, Reply, ScriptServer, anthropic};
use portable_pty::{Child, CommandBuilder, PtySize, native_pty_system};

const DEADLINE: Duration = Duration::from_secs(30);
const KEY: &str = "sk-ant-api03-pty-SECRET-9876543210";

/// The binary in a PTY, its screen parsed by vt100; killed on drop if still running.
struct Pty {
    child: Box<dyn Child + Send + Sync>,
    writer: Arc<Mutex<Box<dyn Write + Send>>>,
    screen: Arc<Mutex<vt100::Parser>>,
}

impl Pty {
    fn start(cmd: CommandBuilder) -> Pty {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: 30,
                cols: 100,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("open a pty");
        let child = pair.slave.spawn_command(cmd).expect("spawn teamlead");
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().expect("pty reader");
        let writer = Arc::new(Mutex::new(pair.master.take_writer().expect("pty writer")));
        let screen = Arc::new(Mutex::new(vt100::Parser::new(30, 100, 0)));
        let (screen_in, answer) = (screen.clone(), writer.clone());
        std::thread::spawn(move || {
            let _master = pair.master;
            let mut buf = [0u8; 4096];
            loop {
                match reader.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        let bytes = &buf[..n];
                        // Answer the primary device attributes query like a terminal would.
                        if bytes.windows(3).any(|w| w == b"\x1b[c")
                            && let Ok(mut w) = answer.lock()
                        {
                            let _ = w.write_all(b"\x1b[?1;2c");
                            let _ = w.flush();
                        }
                        if let Ok(mut parser) = screen_in.lock() {
                            parser.process(bytes);
                        }
                    }
                }
            }
        });
        Pty {
            child,
            writer,
            screen,
        }
    }

    fn send(&self, bytes: &[u8]) {
        let mut w = self.writer.lock().expect("writer");
        w.write_all(bytes).expect("write to the pty");
        w.flush().expect("flush the pty");
    }

    fn contents(&self) -> String {
        self.screen.lock().expect("screen").screen().contents()
    }

    fn wait_for(&self, what: &str, check: impl Fn(&str) -> bool) {
        let start = Instant::now();
        loop {
            let text = self.contents();
            assert!(!text.contains(KEY), "the key is on screen:\n{text}");
            if check(&text) {
                return;
            }
            assert!(
                start.elapsed() < DEADLINE,
                "timed out waiting for {what}; screen:\n{text}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn wait_exit(&mut self) -> bool {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status.success();
            }
            assert!(
                start.elapsed() < DEADLINE,
                "teamlead did not exit; screen:\n{}",
                self.contents()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Pty {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

#[test]
fn lead_model_session_answers_on_screen() {
    // The server runs on its own runtime while this thread drives the terminal.
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let gate = Gate::new();
    let server = runtime.block_on(ScriptServer::start(vec![Reply::Held(
        gate.clone(),
        Box::new(Reply::Sse(anthropic::text(
            "Hello from the lead model. Nobody is on the team yet.",
        ))),
    )]));
    let home = tempfile::tempdir().expect("home");
    let config = tempfile::tempdir().expect("config dir");
    let project = tempfile::tempdir().expect("project");

    let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_teamlead"));
    // The lead in this terminal's process (these tests are about it, not the server).
    cmd.env("TEAMLEAD_NO_SERVER", "1");
    cmd.arg("--home");
    cmd.arg(home.path());
    cmd.args([
        "--team",
        "thinking",
        "--backend",
        "in-process",
        "--lead-model",
        "sonnet",
    ]);
    cmd.cwd(project.path());
    cmd.env("TERM", "xterm-256color");
    for var in [
        "CLAUDE_CONFIG_DIR",
        "TEAMLEAD_HOME",
        "TMUX",
        "TMUX_PANE",
        "TEAMLEAD_MODEL",
        "TEAMLEAD_PROVIDER",
        "TEAMLEAD_CONFIG",
        "OPENAI_BASE_URL",
        "OPENAI_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("XDG_CONFIG_HOME", config.path());
    cmd.env("ANTHROPIC_BASE_URL", server.base_url());
    cmd.env("ANTHROPIC_API_KEY", KEY);
    let mut pty = Pty::start(cmd);
    pty.wait_for("the lead session with its model", |s| {
        s.contains("Lead model: anthropic claude-sonnet-4-5")
    });

    pty.send(b"who is on the team?\r");
    pty.wait_for("the spinner", |s| s.contains("thinking…"));
    let requests = runtime.block_on(server.wait_requests(1, 20));
    assert_eq!(requests[0].header("x-api-key"), Some(KEY));
    assert!(requests[0].raw.contains("who is on the team?"));
    gate.open();
    pty.wait_for("the answer and the tokens", |s| {
        s.contains("Hello from the lead model.")
            && s.contains("1.3k tok")
            && !s.contains("thinking…")
    });

    pty.send(b"/quit\r");
    assert!(pty.wait_exit(), "exit status 0");
    assert!(!home.path().join("teams").join("thinking").exists());
}
