//! Screens of the lead server in a private tmux server (real terminals): `teamlead` starts
//! the team's server in the background; killing its tmux session (a hang-up) leaves the server
//! and the teammate running; `teamlead attach` in a new session shows the transcript so far
//! and a request that arrived meanwhile, answers it, and the command runs. Two screens at once:
//! an answer in one closes the dialog in the other. `/quit` from a screen ends everything.

use teamlead_test_support::tmux;

use crate::server_common;

use crate::pty_harness::PtyLeadBuilder;
use server_common::{Ws, wait_until};
use teamlead_test_support::keys::{Key, Keyboard};
use tmux::TestTmux;

/// A screen of the workspace's lead server in a pseudo-terminal (arguments to add), with
/// notifications off.
fn screen_of(ws: &Ws) -> PtyLeadBuilder {
    crate::pty_harness::lead(ws.work())
        .home(ws.home())
        .envs(ws.env())
        .env("TEAMLEAD_NO_SERVER", "false")
        .env("TEAMLEAD_NOTIFY", "off")
}

/// A screen: one tmux session running teamlead with the workspace's environment.
struct Screen<'a> {
    tmux: &'a TestTmux,
    session: String,
}

impl<'a> Screen<'a> {
    fn start(tmux: &'a TestTmux, ws: &Ws, session: &str, args: &[&str]) -> Screen<'a> {
        let mut words = vec![
            "exec env -u CLAUDE_CONFIG_DIR -u TEAMLEAD_HOME -u TEAMLEAD_NO_SERVER -u XDG_RUNTIME_DIR"
                .to_string(),
        ];
        for (k, v) in ws.env() {
            words.push(format!("{k}='{v}'"));
        }
        words.push(format!("'{}'", env!("CARGO_BIN_EXE_teamlead")));
        words.push(format!("--home '{}'", ws.home().display()));
        words.extend(args.iter().map(|a| a.to_string()));
        let work = ws.work().display().to_string();
        tmux.run(&[
            "new-session",
            "-d",
            "-s",
            session,
            "-x",
            "120",
            "-y",
            "40",
            "-c",
            &work,
            &words.join(" "),
        ])
        .expect("a tmux session");
        let s = Screen {
            tmux,
            session: session.to_string(),
        };
        s.wait("the lead's screen", |t| t.contains("shift+tab to cycle"));
        s
    }

    fn text(&self) -> String {
        self.tmux.capture(&self.session)
    }

    fn wait(&self, what: &str, check: impl Fn(&str) -> bool) {
        wait_until(
            what,
            || check(&self.text()),
            || format!("screen {}:\n{}", self.session, self.text()),
        );
    }

    fn alive(&self) -> bool {
        self.tmux.run(&["has-session", "-t", &self.session]).is_ok()
    }
}

impl Keyboard for Screen<'_> {
    fn screen(&self) -> String {
        self.text()
    }
    fn type_text(&self, text: &str) {
        self.tmux
            .run(&["send-keys", "-t", &self.session, "-l", text])
            .expect("send-keys");
    }
    fn press(&self, key: Key) {
        self.tmux
            .run(&["send-keys", "-t", &self.session, &key.tmux_name()])
            .expect("send-keys");
    }
    fn explain(&self) -> String {
        format!("screen {}:\n{}", self.session, self.text())
    }
}

fn alive(pid: u32) -> bool {
    // SAFETY: signal 0 only checks the process exists.
    unsafe { libc::kill(pid as i32, 0) == 0 }
}

fn server_pid(ws: &Ws) -> u32 {
    let status: serde_json::Value =
        serde_json::from_str(&ws.ctl_ok(&["status", "--json"])).expect("json");
    status["server_pid"].as_u64().expect("pid") as u32
}

#[test]
fn a_hang_up_leaves_the_team_running_and_attach_brings_it_back() {
    let ws = Ws::new("screens");
    let tmux = TestTmux::start();
    let first = Screen::start(
        &tmux,
        &ws,
        "one",
        &["--team", "screens", "--backend", "in-process"],
    );
    first.type_line("/spawn alpha \"take the tasks\"");
    first.wait("alpha spawned", |t| t.contains("Spawned alpha"));
    let pid = server_pid(&ws);

    // The terminal goes away: the server and the teammate keep running.
    tmux.run(&["kill-session", "-t", "one"])
        .expect("kill-session");
    assert!(!first.alive());
    let status = ws.ctl_ok(&["status"]);
    assert!(alive(pid) && status.contains("alpha"), "{status}");

    // Meanwhile a task needs an answer.
    ws.ctl_ok(&["/task add greet --command \"echo hello-again\""]);
    ws.ctl_ok(&["wait", "--approval", "--timeout", "30"]);

    // A new terminal: the transcript so far, the request waiting; answer it there.
    let second = Screen::start(&tmux, &ws, "two", &["attach", "screens"]);
    second.wait("the earlier transcript and the request", |t| {
        t.contains("Spawned alpha") && t.contains("needs permission")
    });
    second.approve();
    ws.ctl_ok(&["wait", "--tasks-done", "--timeout", "30"]);
    second.wait("the command's output", |t| t.contains("hello-again"));

    // Two screens at once: an answer in one closes the dialog in the other.
    let third = Screen::start(&tmux, &ws, "three", &["attach"]);
    ws.ctl_ok(&["/task add again --command \"echo twice\""]);
    second.wait("the dialog on screen two", |t| {
        t.contains("needs permission")
    });
    third.wait("the dialog on screen three", |t| {
        t.contains("needs permission")
    });
    third.approve();
    second.wait("the dialog gone on screen two", |t| {
        !t.contains("needs permission")
    });
    ws.ctl_ok(&["wait", "--tasks-done", "--timeout", "30"]);

    // /detach leaves the team running.
    third.type_line("/detach");
    wait_until("screen three to leave", || !third.alive(), || third.text());
    assert!(alive(pid));

    // /quit from a screen ends the team, its server and the screen.
    second.type_line("/quit");
    wait_until("screen two to end", || !second.alive(), || second.text());
    wait_until("the server to end", || !alive(pid), String::new);
    assert!(ws.sockets().is_empty());
    assert!(!ws.team_dir().exists());
    wait_until(
        "every process of the team to end",
        || ws.processes().is_empty(),
        || format!("{:?}", ws.processes()),
    );
}

/// `teamlead --team T --backend in-process` on a team whose server already runs (a screen, in
/// a pseudo-terminal): it attaches, and says that the start option did not apply instead of
/// dropping it silently.
#[test]
fn start_options_given_to_a_running_server_are_reported_not_dropped() {
    let ws = Ws::new("ignored-opts");
    let _server = ws.serve(&[]);
    let mut screen = screen_of(&ws)
        .args(["--team", ws.team.as_str(), "--backend", "in-process"])
        .spawn();
    screen.wait_for("the note about --backend", |s| {
        let text = s.contents();
        text.contains("already running") && text.contains("--backend did not apply")
    });
    screen.send(b"/quit\r");
    assert!(screen.wait_exit(), "the screen exits 0 after /quit");
    ws.reap();
}

/// A screen whose lead server dies (`kill -9`) does not return to the shell in silence: one
/// line says the lead went away and how to resume the team, and the status is not 0.
#[test]
fn a_screen_whose_server_dies_says_so_and_fails() {
    let ws = Ws::new("lost-lead");
    let mut server = ws.serve(&[]);
    let mut screen = screen_of(&ws).args(["--team", ws.team.as_str()]).start();
    server.child.kill().expect("kill -9 the server");
    let _ = server.child.wait();
    let success = screen.wait_exit();
    assert!(!success, "the screen exits non-zero");
    // Its last bytes may still be on their way from the pseudo-terminal.
    let resume = format!("teamlead --team {}", ws.team);
    screen.wait_for(
        "one line saying the lead went away and how to resume",
        |s| {
            let text = s.contents();
            text.contains("went away") && text.contains(&resume)
        },
    );
    ws.reap();
}

/// A screen whose terminal went away leaves the team running with nobody to see it: the next
/// screen says so first, and how to end it.
#[test]
fn the_first_screen_after_a_hang_up_says_the_team_kept_running() {
    let ws = Ws::new("hung-up");
    let _server = ws.serve(&[]);
    let start = || screen_of(&ws).args(["attach", &ws.team]).start();
    let mut first = start();
    assert!(!first.contents().contains("kept running"));
    first.sigkill();
    let second = start();
    second.wait_for("the note", |s| {
        let text = s.contents();
        text.contains("kept running") && text.contains("/quit ends it")
    });
    ws.reap();
}

/// A screen whose team another client ends (`ctl … /quit`) does not close without a word: it
/// says who ended the team and with what, and returns to the shell with status 0.
#[test]
fn a_screen_says_who_ended_its_team() {
    let ws = Ws::new("ended-elsewhere");
    let mut server = ws.serve(&[]);
    let mut screen = screen_of(&ws).args(["attach", &ws.team]).start();
    screen.wait_for("the screen", |s| {
        s.contents().contains("shift+tab to cycle")
    });
    ws.ctl_ok(&["/quit"]);
    assert!(screen.wait_exit(), "the screen exits 0");
    screen.wait_for("the line saying who ended the team", |s| {
        s.contents().contains("was ended by")
    });
    let text = screen.contents();
    let line = text
        .lines()
        .find(|l| l.contains("was ended by"))
        .unwrap_or_default()
        .trim();
    insta::assert_snapshot!("ended_by_ctl", line);
    assert!(server.wait_exit().success());
    ws.reap();
}
