//! The tmux pane backend against a real tmux server on a private socket: splitting the lead's
//! pane, the placeholder + respawn-pane start, colors and titles, hide/show and kill; and a
//! private server outside tmux.

use teamlead_test_support::tmux as test_tmux;

use std::time::Duration;

use teamlead::backend::PaneBackend;
use teamlead::backend::terminals::tmux::{TmuxBackend, TmuxLayout, TmuxServer};
use teamlead::protocol::Color;
use test_tmux::TestTmux;

fn backend_inside(t: &TestTmux) -> (TmuxBackend, String) {
    let lead = t.main_pane();
    let server = TmuxServer {
        socket: Some(t.socket.clone()),
    };
    (
        TmuxBackend::new(
            server,
            TmuxLayout::Inside {
                lead_pane: lead.clone(),
            },
        ),
        lead,
    )
}

#[test]
fn inside_tmux_splits_styles_runs_hides_shows_and_kills() {
    let t = TestTmux::start();
    let (backend, lead) = backend_inside(&t);
    let mut panes = Vec::new();
    for (name, color) in [
        ("alpha", Color::Red),
        ("beta", Color::Purple),
        ("gamma", Color::Orange),
    ] {
        let pane = backend.create_pane().expect("create pane");
        backend.style(&pane, name, Some(color)).expect("style");
        backend
            .run_command(&pane, &format!("echo ready-{name}; exec cat"))
            .expect("run");
        panes.push(pane);
    }
    // Four panes in the lead's window, titled and colored.
    let listing = t.panes("#{pane_id}|#{pane_title}|#{pane_active}");
    assert_eq!(listing.len(), 4, "{listing:?}");
    for (pane, title) in panes.iter().zip(["alpha", "beta", "gamma"]) {
        assert!(
            listing
                .iter()
                .any(|l| l.starts_with(&format!("{pane}|{title}|")))
        );
    }
    // Each pane's border line shows its name in its color (tmux 3.3 keeps one border style
    // per window, so the per-pane color lives in pane-border-format).
    for (pane, color) in panes.iter().zip(["red", "magenta", "colour208"]) {
        let format = t
            .run(&["show-options", "-p", "-t", pane, "-v", "pane-border-format"])
            .unwrap();
        assert_eq!(
            format,
            format!("#[fg={color},bold] #{{@teamlead-name}} #[default]")
        );
    }
    assert_eq!(
        t.run(&[
            "show-options",
            "-w",
            "-t",
            "main",
            "-v",
            "pane-border-status"
        ])
        .unwrap(),
        "top"
    );
    // The lead keeps focus (panes are created with -d) and the command really runs.
    assert_eq!(
        t.run(&["display-message", "-p", "-t", "main", "#{pane_id}"])
            .unwrap(),
        lead
    );
    t.wait_for(
        "the teammate command output",
        Duration::from_secs(5),
        || t.capture(&panes[0]).contains("ready-alpha"),
    );
    // The lead stays readable: 30 % of 200 columns would be 60, and every `Spawned …` line
    // would wrap; it gets 80 columns (the window leaves the teammates more than 40).
    let lead_width: u32 = t
        .run(&["display-message", "-p", "-t", &lead, "#{pane_width}"])
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(lead_width, 80, "lead width");

    // Hide moves the pane out of the window; show brings it back.
    backend.hide(&panes[1]).expect("hide");
    let in_window = t
        .run(&["list-panes", "-t", "main", "-F", "#{pane_id}"])
        .unwrap();
    assert!(!in_window.contains(&panes[1]));
    assert!(backend.pane_alive(&panes[1]));
    backend.show(&panes[1]).expect("show");
    let in_window = t
        .run(&["list-panes", "-t", "main", "-F", "#{pane_id}"])
        .unwrap();
    assert!(in_window.contains(&panes[1]));

    backend.focus(&panes[2]).expect("focus");
    assert_eq!(
        t.run(&["display-message", "-p", "-t", "main", "#{pane_id}"])
            .unwrap(),
        panes[2]
    );

    backend.kill(&panes[0]).expect("kill");
    assert!(!backend.pane_alive(&panes[0]));
    let in_window = t
        .run(&["list-panes", "-t", "main", "-F", "#{pane_id}"])
        .unwrap();
    assert_eq!(in_window.lines().count(), 3, "{in_window}");
}

#[test]
fn outside_tmux_uses_a_private_tiled_server() {
    let socket = format!("tl-test-{}", uuid::Uuid::new_v4().simple());
    let backend = TmuxBackend::private(&socket);
    let guard = TestTmux::named(socket.clone());
    let a = backend.create_pane().expect("first pane");
    let b = backend.create_pane().expect("second pane");
    backend.style(&b, "beta", Some(Color::Pink)).unwrap();
    let panes = guard.panes("#{pane_id}|#{session_name}");
    assert_eq!(panes.len(), 2);
    assert!(panes.iter().all(|p| p.ends_with("|teamlead-swarm")));
    assert!(panes.iter().any(|p| p.starts_with(&a)));
    assert_eq!(
        guard
            .run(&["show-options", "-p", "-t", &b, "-v", "pane-border-format"])
            .unwrap(),
        "#[fg=colour205,bold] #{@teamlead-name} #[default]"
    );
    assert_eq!(
        backend.attach_hint().unwrap(),
        format!("tmux -L {socket} attach -t teamlead-swarm")
    );
    backend.server.kill_server().unwrap();
    assert!(!backend.server.is_running());
}

/// A private server of a unique name (its guard kills it) with the swarm's first pane, styled
/// for `first` in green and started.
fn private_with_a_pane() -> (TmuxBackend, TestTmux, String) {
    let socket = format!("tl-test-{}", uuid::Uuid::new_v4().simple());
    let backend = TmuxBackend::private(&socket);
    let guard = TestTmux::named(socket);
    let first =
        styled_and_started(&backend, "first", Some(Color::Green)).expect("the swarm's first pane");
    (backend, guard, first)
}

/// A pane made for `name` and started (a placeholder command: the style goes with the start).
fn styled_and_started(
    backend: &TmuxBackend,
    name: &str,
    color: Option<Color>,
) -> Result<String, teamlead::backend::BackendError> {
    let pane = backend.create_styled_pane(name, color)?;
    backend.run_command(&pane, "cat")?;
    Ok(pane)
}

/// A styled pane in two tmux calls: the split (an empty pane, no placeholder process), then
/// its style, layout and start in one sequence. Both on the private server and inside it: the
/// same title, name option, border and `remain-on-exit` as the step-by-step calls gave, the
/// command running; a word that ends in `;` (which tmux would take for the end of a command)
/// stays a word.
#[test]
fn a_styled_pane_gets_its_style_and_layout_in_one_sequence() {
    let (backend, guard, first) = private_with_a_pane();
    let socket = backend.server.socket.clone().unwrap();
    let before = TmuxServer::clients_run(&socket);
    let odd = backend
        .create_styled_pane("odd;", Some(Color::Pink))
        .expect("a split pane");
    assert_eq!(
        guard
            .run(&["display-message", "-p", "-t", &odd, "#{pane_pid}"])
            .unwrap(),
        "0",
        "the split pane runs nothing until its start"
    );
    backend.run_command(&odd, "cat").expect("started");
    assert_eq!(
        TmuxServer::clients_run(&socket) - before,
        2,
        "a spawn on the private server is two tmux clients"
    );
    for (pane, name, color) in [(&first, "first", "green"), (&odd, "odd;", "colour205")] {
        let option = |o: &str| {
            guard
                .run(&["show-options", "-p", "-t", pane, "-v", o])
                .unwrap()
        };
        assert_eq!(option("@teamlead-name"), name);
        assert_eq!(option("remain-on-exit"), "failed");
        assert_eq!(
            option("pane-border-format"),
            format!("#[fg={color},bold] #{{@teamlead-name}} #[default]")
        );
        let shown = |f: &str| {
            guard
                .run(&["display-message", "-p", "-t", pane, f])
                .unwrap()
        };
        assert_eq!(shown("#{pane_title}"), name);
        assert_eq!(shown("#{pane_current_command}"), "cat");
    }
    assert_eq!(guard.panes("#{pane_id}").len(), 2);
    backend.server.kill_server().unwrap();

    let t = TestTmux::start();
    let (inside, lead) = backend_inside(&t);
    let pane =
        styled_and_started(&inside, "beside", Some(Color::Red)).expect("a pane beside the lead");
    assert_eq!(
        t.run(&["show-options", "-p", "-t", &pane, "-v", "@teamlead-name"])
            .unwrap(),
        "beside"
    );
    assert_eq!(
        t.run(&[
            "show-options",
            "-w",
            "-t",
            "main",
            "-v",
            "pane-border-status"
        ])
        .unwrap(),
        "top"
    );
    assert_eq!(
        t.run(&["display-message", "-p", "-t", "main", "#{pane_id}"])
            .unwrap(),
        lead,
        "the lead keeps focus"
    );
}

/// A pane that closed between its split and its start (the sequence's style finds no pane)
/// fails the start, and nothing runs.
#[test]
fn a_pane_gone_before_its_start_starts_nothing() {
    let (backend, guard, _first) = private_with_a_pane();
    let second = backend
        .create_styled_pane("second", Some(Color::Blue))
        .expect("a split pane");
    guard.run(&["kill-pane", "-t", &second]).unwrap();
    let error = backend
        .run_command(&second, "cat")
        .expect_err("no pane to start in");
    assert!(error.to_string().contains(&second), "{error}");
    assert_eq!(guard.panes("#{pane_id}").len(), 1);
    backend.server.kill_server().unwrap();
}

/// On the private server a spawn splits at once, without listing the panes first (one tmux
/// client fewer per spawn; a hook counts the listings), and when every teammate pane closed
/// and the swarm session went with them, the next spawn makes the session again.
#[test]
fn a_private_spawn_lists_nothing_and_remakes_a_gone_swarm() {
    let (backend, guard, first) = private_with_a_pane();
    // A session that outlives the swarm keeps the server up, so only the swarm goes.
    guard
        .run(&["new-session", "-d", "-s", "keeper", "--", "cat"])
        .unwrap();
    guard
        .run(&[
            "set-hook",
            "-g",
            "after-list-panes",
            "set-option -g @tl_lists '#{e|+:#{@tl_lists},1}'",
        ])
        .unwrap();
    guard.run(&["set-option", "-g", "@tl_lists", "0"]).unwrap();
    let second = styled_and_started(&backend, "second", Some(Color::Blue)).expect("a split pane");
    assert_eq!(
        guard
            .run(&["show-options", "-g", "-v", "@tl_lists"])
            .unwrap(),
        "0",
        "a spawn on the private server listed the panes"
    );
    for pane in [&first, &second] {
        guard.run(&["kill-pane", "-t", pane]).unwrap();
    }
    assert!(
        guard.run(&["has-session", "-t", "teamlead-swarm"]).is_err(),
        "the swarm session is gone with its panes"
    );
    let third = styled_and_started(&backend, "third", Some(Color::Red))
        .expect("a pane in a new swarm session");
    assert_eq!(
        guard
            .run(&["display-message", "-p", "-t", &third, "#{session_name}"])
            .unwrap(),
        "teamlead-swarm"
    );
    assert_eq!(
        guard
            .run(&["show-options", "-p", "-t", &third, "-v", "@teamlead-name"])
            .unwrap(),
        "third"
    );
    backend.server.kill_server().unwrap();
}

/// A split that fails while the swarm session is there (its window renamed by hand) reports
/// the split's own error, not the "duplicate session" of the session it then tried to make.
#[test]
fn a_failed_split_beside_a_swarm_says_why_the_split_failed() {
    let (backend, guard, _first) = private_with_a_pane();
    guard
        .run(&["rename-window", "-t", "teamlead-swarm:teammates", "renamed"])
        .unwrap();
    let error = backend
        .create_styled_pane("second", None)
        .expect_err("no window to split")
        .to_string();
    assert!(error.contains("split-window"), "{error}");
    assert!(!error.contains("duplicate session"), "{error}");
    backend.server.kill_server().unwrap();
}

/// A teammate pane that closes between the listing and the split (a teammate that just shut
/// down) is forgotten and another split: a tmux hook kills it right after the second
/// `list-panes` of `create_pane`, the one that picks the pane to split.
#[test]
fn a_pane_gone_before_its_split_is_not_split() {
    let t = TestTmux::start();
    let (backend, _lead) = backend_inside(&t);
    let first = backend.create_pane().expect("first pane");
    let hook = format!(
        "if-shell -F '#{{@tl_listed}}' 'kill-pane -t {first} ; set-hook -gu after-list-panes' 'set-option -g @tl_listed 1'"
    );
    t.run(&["set-hook", "-g", "after-list-panes", &hook])
        .expect("set the hook");
    let second = backend
        .create_pane()
        .expect("a pane made although the one it would split closed");
    assert_ne!(second, first);
    let panes = t
        .run(&["list-panes", "-a", "-F", "#{pane_id}"])
        .expect("list panes");
    assert!(panes.lines().any(|p| p == second), "{panes}");
    assert!(
        !panes.lines().any(|p| p == first),
        "the hook closed {first}: {panes}"
    );
}
