//! `claude` teammates of a lead that dies (issue 17, 18): SIGKILL of whatever process holds the
//! team (its liveness lock names it: the lead, or with a lead server `teamlead serve`), then
//! - the same lead started again within the grace period re-binds every teammate (by process:
//!   Claude Code retitles its pane), asks again the permission request that waited on the dead
//!   lead, refuses `/respawn` of a teammate that runs, and `/quit` leaves no `claude`;
//! - no lead: every `claude` of the team (and what it started) is gone after the grace period
//!   (`TEAMLEAD_LEAD_GRACE_MS=3000` in the tmux server's environment, which the teammates' panes
//!   inherit: the guard in front of each `claude` honours it) plus 5 s;
//! - `teamlead clean --orphans` at once: the team's panes and processes are gone 3 s later, and
//!   a lead socket no server answers is removed (a live one is kept);
//! - pane borders show the teammate's name while Claude Code has retitled the pane.

use std::process::Command;
use std::time::{Duration, Instant};

use crate::claude_code_common::panes_common::{alive, cmdline, environ, pane_infos, processes};
use crate::claude_code_common::{
    Act, Client, PermissionAnswer, Rule, Scene, client_env, sh_quote, sigkill, wait_until,
};

/// The grace period the reaping scenarios give the guards.
const SHORT_GRACE_MS: u64 = 3000;

fn rules() -> Vec<Rule> {
    vec![
        Rule::on("shutdown_request", Act::ApproveShutdown),
        Rule::on(
            "CC-RESUME-ASK",
            Act::Bash {
                command: "touch resumed_yes.txt".into(),
                description: "conformance command".into(),
            },
        ),
    ]
}

/// The pid of the process holding the team's liveness lock (written in `lead.lock`).
fn holder_pid(scene: &Scene) -> u32 {
    let path = scene.ws.team_dir().join(".teamlead/lead.lock");
    std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or_else(|| panic!("no pid in {}", path.display()))
}

/// How the lead in the scene's pane was started (arguments and environment), to run it again.
struct LeadCommand {
    argv: Vec<String>,
    env: Vec<String>,
}

impl LeadCommand {
    fn of(scene: &Scene) -> LeadCommand {
        let pid = scene.lead_pid;
        LeadCommand {
            argv: cmdline(pid),
            env: environ(pid)
                .into_iter()
                .filter(|kv| !kv.starts_with("TMUX=") && !kv.starts_with("TMUX_PANE="))
                .collect(),
        }
    }

    /// Runs it again in a new window of the scene's server; the scene's pane becomes its pane.
    fn run_again(&self, scene: &mut Scene) {
        let mut words = vec!["exec".to_string(), "env".to_string()];
        words.extend(self.env.iter().map(|kv| sh_quote(kv)));
        words.extend(self.argv.iter().map(|a| sh_quote(a)));
        let line = scene
            .tmux
            .run(&[
                "new-window",
                "-d",
                "-t",
                "main",
                "-c",
                &scene.ws.work().to_string_lossy(),
                "-P",
                "-F",
                "#{pane_id} #{pane_pid}",
                &words.join(" "),
            ])
            .expect("new-window for the lead");
        let (pane, pid) = line.trim().split_once(' ').expect("pane and pid");
        scene.pane = pane.to_string();
        scene.lead_pid = pid.parse().expect("pid");
        scene.wait_screen("the new lead's screen", |s| {
            s.contains("shift+tab to cycle")
        });
    }
}

/// Every process of the team's teammates: those naming `<name>@<team>` and everything below
/// the teammates' panes.
fn team_pids(scene: &Scene, names: &[&str]) -> Vec<u32> {
    let mut pids: Vec<u32> = Vec::new();
    for name in names {
        pids.extend(scene.teammate_pids(name));
    }
    let suffix = format!("@{}", scene.ws.team);
    pids.extend(
        processes(|args| args.iter().any(|a| a.ends_with(&suffix)))
            .into_iter()
            .map(|(p, _)| p),
    );
    let below = descendants(&pids);
    pids.extend(below);
    pids.sort();
    pids.dedup();
    pids
}

/// Every process below `roots`, from /proc.
fn descendants(roots: &[u32]) -> Vec<u32> {
    let parent = |pid: u32| -> Option<u32> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        stat.rsplit_once(')')?
            .1
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()
    };
    let all: Vec<(u32, u32)> = std::fs::read_dir("/proc")
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
                .filter_map(|p| Some((p, parent(p)?)))
                .collect()
        })
        .unwrap_or_default();
    let mut out: Vec<u32> = roots.to_vec();
    let mut i = 0;
    while i < out.len() {
        let at = out[i];
        for (p, pp) in &all {
            if *pp == at && !out.contains(p) {
                out.push(*p);
            }
        }
        i += 1;
    }
    out.retain(|p| !roots.contains(p));
    out
}

fn living(pids: &[u32]) -> Vec<String> {
    pids.iter()
        .filter(|p| alive(**p))
        .map(|p| format!("{p} {}", cmdline(*p).join(" ")))
        .collect()
}

/// Teammate panes still in the scene's server (every pane but the lead's).
fn teammate_panes(scene: &Scene, panes: &[String]) -> Vec<String> {
    pane_infos(&scene.tmux)
        .into_iter()
        .filter(|p| panes.contains(&p.id))
        .map(|p| format!("{} {}", p.id, p.title))
        .collect()
}

/// (iv) The border of a teammate's pane shows its name, also once Claude Code has retitled it.
fn borders_show_names(scene: &Scene, names: &[&str]) {
    for name in names {
        let pane = scene.pane_of(name);
        scene.wait(&format!("{name}'s pane retitled by Claude Code"), || {
            pane_infos(&scene.tmux)
                .iter()
                .any(|p| p.id == pane && !p.title.is_empty() && p.title != *name)
        });
        let border = scene
            .tmux
            .run(&[
                "display-message",
                "-p",
                "-t",
                &pane,
                "#{T:pane-border-format}",
            ])
            .expect("the border");
        assert!(
            border.contains(&format!(" {name} ")),
            "[{}] the border of {name}'s pane reads `{border}`\n{}",
            scene.client.label,
            scene.explain()
        );
    }
}

/// (i) and (iv): SIGKILL, the same lead again within the grace period.
pub fn lead_killed_and_started_again(client: &Client) {
    let mut scene = Scene::start(client, "cc-resume", rules(), &[]);
    let label = client.label;
    scene.spawn("keeper", "CC-IDLE wait");
    scene.spawn("asker", "CC-IDLE wait");
    borders_show_names(&scene, &["keeper", "asker"]);
    let panes = [scene.pane_of("keeper"), scene.pane_of("asker")];

    // asker waits on a permission request the lead received.
    scene.say("asker", "CC-RESUME-ASK");
    scene.wait("asker's permission request in the lead's log", || {
        !scene.permission_requests("asker").is_empty()
    });
    scene.wait_screen("the request shown", |s| {
        s.contains("needs permission") || s.contains("ctrl+p")
    });
    let pids = team_pids(&scene, &["keeper", "asker"]);
    let lead = LeadCommand::of(&scene);
    sigkill(holder_pid(&scene));
    let killed = Instant::now();
    wait_until(
        "the lead to die",
        Duration::from_secs(10),
        || !alive(scene.lead_pid),
        || scene.explain(),
    );

    lead.run_again(&mut scene);
    scene.wait_screen("the resume note", |s| s.contains("Resumed the team"));
    assert!(
        killed.elapsed() < Duration::from_secs(30),
        "[{label}] the lead came back after the grace period"
    );
    let screen = scene.screen();
    assert!(
        !screen.contains("now belongs to") && !screen.contains("Not running"),
        "[{label}] a teammate was not re-bound\n{}",
        scene.explain()
    );
    scene.wait_screen("both teammates re-bound", |s| {
        s.contains("re-bound") && s.contains("keeper (") && s.contains("asker (")
    });

    // The request asked again, and answerable.
    scene.answer(PermissionAnswer::Yes);
    scene.wait("the command to run", || {
        scene.work_file("resumed_yes.txt").exists()
    });

    // A second process for a running name is refused.
    scene.submit("/respawn keeper");
    scene.wait_screen("the refusal", |s| s.contains("/kill keeper first"));

    // /quit: nothing of the team is left.
    scene.submit("/quit");
    scene.wait(
        "the lead, every teammate process and pane, and the team to go",
        || {
            !alive(scene.lead_pid)
                && living(&pids).is_empty()
                && teammate_panes(&scene, &panes).is_empty()
                && !scene.ws.team_dir().exists()
        },
    );
}

/// Starts a scene whose teammates' guards wait [`SHORT_GRACE_MS`] for a lead.
/// Gives the scene's teammates (through its tmux server's environment) the short grace period.
fn short_grace(scene: &Scene) {
    scene
        .tmux
        .run(&[
            "set-environment",
            "-g",
            "TEAMLEAD_LEAD_GRACE_MS",
            &SHORT_GRACE_MS.to_string(),
        ])
        .expect("set-environment");
}

fn short_grace_scene(client: &Client, prefix: &str) -> Scene {
    let scene = Scene::start(client, prefix, rules(), &[]);
    short_grace(&scene);
    scene
}

/// Two idle teammates, their processes; then the lead is SIGKILLed and no lead comes back:
/// asserts every process is gone within the grace period plus 5 s, and says how long it took.
fn spawn_two_kill_the_lead_and_wait_for_the_reaping(scene: &Scene, client: &Client) -> [String; 2] {
    scene.spawn("one", "CC-IDLE wait");
    scene.spawn("two", "CC-IDLE wait");
    let panes = [scene.pane_of("one"), scene.pane_of("two")];
    let pids = team_pids(scene, &["one", "two"]);
    assert!(pids.len() >= 2, "{pids:?}\n{}", scene.explain());
    sigkill(holder_pid(scene));
    let killed = Instant::now();
    let deadline = Duration::from_millis(SHORT_GRACE_MS) + Duration::from_secs(5);
    while !living(&pids).is_empty() && killed.elapsed() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    let left = living(&pids);
    assert!(
        left.is_empty(),
        "[{}] still running {} ms after the lead's SIGKILL: {left:#?}\n{}",
        client.label,
        killed.elapsed().as_millis(),
        scene.explain()
    );
    crate::claude_code_common::timing(client, "lead SIGKILL -> teammates gone", killed.elapsed());
    panes
}

/// (ii) SIGKILL and no lead: no process of the team after the grace period plus 5 s.
pub fn reaped_after_the_grace_period(client: &Client) {
    let scene = short_grace_scene(client, "cc-reap");
    let panes = spawn_two_kill_the_lead_and_wait_for_the_reaping(&scene, client);
    scene.wait("the teammates' panes to close", || {
        teammate_panes(&scene, &panes).is_empty()
    });
}

/// (iii) SIGKILL, then `teamlead clean --orphans` at once.
pub fn clean_orphans_at_once(client: &Client) {
    let scene = Scene::start(client, "cc-clean", rules(), &[]);
    scene.spawn("one", "CC-IDLE wait");
    scene.spawn("two", "CC-IDLE wait");
    let panes = [scene.pane_of("one"), scene.pane_of("two")];
    let pids = team_pids(&scene, &["one", "two"]);
    sigkill(holder_pid(&scene));
    wait_until(
        "the lead to die",
        Duration::from_secs(10),
        || !alive(scene.lead_pid),
        || scene.explain(),
    );

    // A runtime directory with a dead server's socket and a live one.
    let runtime = tempfile::tempdir().expect("runtime dir");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(runtime.path(), std::fs::Permissions::from_mode(0o700))
            .expect("chmod 700");
    }
    let dead = runtime.path().join("lead-00000000000000aa.sock");
    drop(std::os::unix::net::UnixListener::bind(&dead).expect("bind"));
    let live = runtime.path().join("lead-00000000000000bb.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&live).expect("bind");

    let socket_path = scene
        .tmux
        .run(&["display-message", "-p", "#{socket_path},#{pid},0"])
        .expect("the server's TMUX value");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_teamlead"));
    cmd.arg("--home")
        .arg(scene.ws.home())
        .args(["clean", "--orphans"])
        .current_dir(scene.ws.work())
        .env_remove("TEAMLEAD_HOME")
        .env_remove("TMUX_PANE")
        .envs(client_env(
            scene.ws.home(),
            scene.user_home.path(),
            &scene.model.base_url(),
        ))
        .env("TMUX", socket_path.trim())
        .env("TMUX_TMPDIR", scene.user_home.path().join("tmux-tmpdir"))
        .env("TEAMLEAD_RUNTIME_DIR", runtime.path())
        .env(
            "TEAMLEAD_CONFIG",
            concat!(env!("CARGO_MANIFEST_DIR"), "/tests/no-config.toml"),
        );
    let started = Instant::now();
    let out = cmd.output().expect("teamlead clean --orphans");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "[{}] clean failed: {stdout}\n{}",
        client.label,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!scene.ws.team_dir().exists(), "{stdout}");
    let deadline = Duration::from_secs(3);
    while (!living(&pids).is_empty() || !teammate_panes(&scene, &panes).is_empty())
        && started.elapsed() < deadline
    {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        living(&pids).is_empty() && teammate_panes(&scene, &panes).is_empty(),
        "[{}] {} ms after clean: processes {:#?}, panes {:?}\nclean said: {stdout}\n{}",
        client.label,
        started.elapsed().as_millis(),
        living(&pids),
        teammate_panes(&scene, &panes),
        scene.explain()
    );
    assert!(
        !dead.exists(),
        "the dead server's socket is left: {stdout}\n{}\n{:?}",
        String::from_utf8_lossy(&out.stderr),
        std::fs::read_dir(runtime.path())
            .map(|d| d.flatten().map(|e| e.path()).collect::<Vec<_>>())
    );
    assert!(live.exists(), "a live server's socket was removed");
}

/// The private tmux servers (`teamlead-*`) in the scene's socket directory that still answer.
fn private_servers(scene: &Scene) -> Vec<String> {
    let dir = scene.user_home.path().join("tmux-tmpdir");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for sub in entries.flatten() {
        for sock in std::fs::read_dir(sub.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            let name = sock.file_name().to_string_lossy().into_owned();
            if name.starts_with("teamlead-")
                && std::os::unix::net::UnixStream::connect(sock.path()).is_ok()
            {
                found.push(name);
            }
        }
    }
    found
}

/// Outside tmux (teammates in the lead's private tmux server): SIGKILL and no lead → every
/// `claude` of the team gone after the grace period plus 5 s.
pub fn reaped_outside_tmux(client: &Client) {
    let scene = Scene::start_outside(client, "cc-reapout", rules(), Some(SHORT_GRACE_MS));
    spawn_two_kill_the_lead_and_wait_for_the_reaping(&scene, client);
}

/// Outside tmux: SIGKILL, then `teamlead clean --orphans` at once → the team's processes and
/// its private tmux server are gone (clean waits for what it killed; the test allows a loaded
/// machine 15 s more).
pub fn clean_orphans_outside_tmux(client: &Client) {
    let scene = Scene::start_outside(client, "cc-cleanout", rules(), None);
    scene.spawn("one", "CC-IDLE wait");
    scene.spawn("two", "CC-IDLE wait");
    let pids = team_pids(&scene, &["one", "two"]);
    let holder = holder_pid(&scene);
    sigkill(holder);
    // Its lock goes with it once it is dead (a clean a moment sooner finds it running).
    wait_until(
        "the lead to die",
        Duration::from_secs(10),
        || !alive(holder),
        || scene.explain(),
    );
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_teamlead"));
    cmd.arg("--home")
        .arg(scene.ws.home())
        .args(["clean", "--orphans"])
        .current_dir(scene.ws.work())
        .env_remove("TEAMLEAD_HOME")
        .env_remove("TMUX")
        .env_remove("TMUX_PANE")
        .envs(client_env(
            scene.ws.home(),
            scene.user_home.path(),
            &scene.model.base_url(),
        ))
        .env("TMUX_TMPDIR", scene.user_home.path().join("tmux-tmpdir"))
        .env("TEAMLEAD_RUNTIME_DIR", scene.user_home.path().join("run"))
        .env(
            "TEAMLEAD_CONFIG",
            concat!(env!("CARGO_MANIFEST_DIR"), "/tests/no-config.toml"),
        );
    let started = Instant::now();
    let out = cmd.output().expect("teamlead clean --orphans");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "[{}] clean failed: {stdout}",
        client.label
    );
    // clean waits for what it killed to be gone; the server's socket may take a moment more
    // on a loaded machine (it was a fixed 3 s, which a loaded 2-core machine missed).
    let gone_by = Instant::now() + Duration::from_secs(15);
    while (!living(&pids).is_empty() || !private_servers(&scene).is_empty())
        && Instant::now() < gone_by
    {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        living(&pids).is_empty() && private_servers(&scene).is_empty(),
        "[{}] {} ms after clean (outside tmux): processes {:#?}, servers {:?}\nclean said: {stdout}",
        client.label,
        started.elapsed().as_millis(),
        living(&pids),
        private_servers(&scene)
    );
}
