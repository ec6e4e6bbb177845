//! Notifications follow the window's focus: a screen attached to a lead server (the real
//! binary in a pseudo-terminal) rings the bell for a permission request that arrives while its
//! terminal has not reported focus or reported it lost (`CSI O`), and stays silent while the
//! terminal reports it has the focus (`CSI I`): the person is looking at the dialog.

use crate::server_common;

use crate::pty_harness::PtyLead;

use server_common::{Ws, wait_until};

/// `teamlead attach TEAM` in a pseudo-terminal, with only the bell switched on (no tmux
/// message or desktop notification from a test).
fn attach(ws: &Ws) -> PtyLead {
    crate::pty_harness::lead(ws.work())
        .home(ws.home())
        .args(["attach", ws.team.as_str()])
        .envs(ws.env())
        .env("TEAMLEAD_NOTIFY", "bell")
        .start()
}

/// Bell bytes so far that are not an OSC's terminator.
fn bells(screen: &PtyLead) -> usize {
    let raw = screen.raw.lock().unwrap();
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
    let screen = attach(&ws);

    // The terminal has not said whether it has the focus: a request rings.
    let first = request(&ws, 1);
    wait_until(
        "a bell for the first request",
        || bells(&screen) >= 1,
        || screen.contents(),
    );
    ws.ctl_ok(&["approve", &first]);
    no_request_waits(&ws);

    // Focused: the dialog is in front of the person, no bell.
    screen.send(b"\x1b[I");
    let before = bells(&screen);
    let second = request(&ws, 2);
    // A bell is written before the request is passed on to the screen: once the screen shows
    // the request, a bell would already be in the output.
    screen.wait_for("the second request on screen", |s| {
        s.contents().contains("step-2")
    });
    assert_eq!(bells(&screen), before, "no bell while focused");
    ws.ctl_ok(&["approve", &second]);
    no_request_waits(&ws);

    // Focus lost: the next request rings again.
    screen.send(b"\x1b[O");
    let before = bells(&screen);
    let third = request(&ws, 3);
    wait_until(
        "a bell for the third request",
        || bells(&screen) > before,
        || screen.contents(),
    );
    ws.ctl_ok(&["approve", &third]);
    ws.ctl_ok(&["/quit"]);
    ws.reap();
}
