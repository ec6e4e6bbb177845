//! The task list across hosts, led from the local lead server over real OpenSSH (two test
//! hosts, each a network namespace with its own sshd, login user and HOME): tasks made at the
//! lead appear in each host's mirror; teamlead's own shell teammate on a host claims a task
//! there on its own (its ordinary claim, on its host's list), runs it and completes it, and
//! the lead's list shows both; its `isActive` shows on the lead while it works; the link
//! dropped in the middle of that task loses nothing; two teammates on two hosts claim one task
//! while their links are down: neither runs it before the lead answers, exactly one claim holds
//! at the lead and only its teammate runs the task, the other host's mirror is set back to the
//! winner and its teammate is told so in its inbox.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use teamlead_protocol::store::{Home, TaskList, team as team_file};
use teamlead_protocol::{Task, TaskStatus};

use crate::hosts_common::crew::*;
use crate::hosts_common::link::gid_of;
use crate::hosts_common::{HostSetup, TestHost, TestLead, skip_unless_root};

/// `teamlead task ARGS --team crew` at the lead; its output.
fn lead_task(lead: &TestLead, args: &[&str]) -> String {
    let out = lead
        .cmd()
        .arg("task")
        .args(args)
        .args(["--team", TEAM])
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "task {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `teamlead task ARGS --team crew` on `host`, as its user in its own home (what a teammate
/// or a person there does to the host's list).
fn host_task(host: &TestHost, args: &[&str]) -> String {
    let bin = host.home().join(".local/bin/teamlead");
    let out = Command::new(&bin)
        .env_clear()
        .env("HOME", host.home())
        .env("PATH", "/usr/bin:/bin")
        .arg("--home")
        .arg(host.home().join(".claude"))
        .arg("task")
        .args(args)
        .args(["--team", TEAM])
        .current_dir(host.home())
        .uid(host.uid)
        .gid(gid_of(&host.user))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "task {args:?} on {}: {}",
        host.user,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn lead_home(lead: &TestLead) -> Home {
    Home::new(lead.home.home())
}

fn host_home(host: &TestHost) -> Home {
    Home::new(host.home().join(".claude"))
}

/// A task of a list (`None`: not there, or not readable now).
fn task(home: &Home, id: &str) -> Option<Task> {
    TaskList::new(home, TEAM).ok()?.get(id).ok()
}

fn tasks(home: &Home) -> Vec<Task> {
    TaskList::new(home, TEAM)
        .and_then(|l| l.list())
        .map(|l| l.tasks)
        .unwrap_or_default()
}

fn owner_status(home: &Home, id: &str) -> Option<(Option<String>, TaskStatus)> {
    task(home, id).map(|t| (t.owner, t.status))
}

fn subjects(home: &Home) -> Vec<String> {
    tasks(home).into_iter().map(|t| t.subject).collect()
}

/// The id `teamlead task add` printed (`task #3 "…" added`).
fn added_id(out: &str) -> String {
    out.split('#')
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .unwrap_or_else(|| panic!("no id in {out:?}"))
        .to_string()
}

/// A member's `isActive` in the lead's team file.
fn lead_active(lead: &TestLead, name: &str) -> Option<bool> {
    team_file::read_team(&lead_home(lead), TEAM)
        .ok()?
        .members
        .into_iter()
        .find(|m| m.name == name)?
        .is_active
}

/// The texts of an inbox file that carry `needle`.
fn texts_with(inbox: &Path, needle: &str) -> Vec<String> {
    let Ok(bytes) = std::fs::read(inbox) else {
        return Vec::new();
    };
    let entries: Vec<serde_json::Value> = serde_json::from_slice(&bytes).unwrap_or_default();
    entries
        .iter()
        .filter_map(|e| e["text"].as_str())
        .filter(|t| t.contains(needle))
        .map(str::to_string)
        .collect()
}

fn spawn(lead: &TestLead, name: &str, host: &str) {
    let out = ctl_ok(
        lead,
        &[&format!(
            "/spawn {name} --host {host} --mode bypassPermissions \"Take the tasks you can.\""
        )],
    );
    assert!(out.contains(&format!("Spawned {name}")), "{out}");
}

#[test]
fn tasks_claims_and_activity_cross_hosts_and_a_race_has_one_winner() {
    if skip_unless_root() {
        return;
    }
    let lead = TestLead::new();
    let one = TestHost::start(HostSetup::default());
    let two = TestHost::start(HostSetup::default());
    for (name, host) in [("one", &one), ("two", &two)] {
        lead.trust(host);
        lead.add_host(name, host);
        host.give_teamlead();
    }
    let work = tempfile::tempdir().unwrap();
    let mut serve = Serve::start(&lead, work.path(), None);
    let (lead_list, one_list, two_list) = (lead_home(&lead), host_home(&one), host_home(&two));
    let explain = || {
        format!(
            "\nlead: {:?}\none: {:?}\ntwo: {:?}",
            tasks(&lead_list),
            tasks(&one_list),
            tasks(&two_list)
        )
    };

    // A task without a command (nobody's to take) made at the lead appears on host one once
    // alice runs there.
    spawn(&lead, "alice", "one");
    let plan = added_id(&lead_task(&lead, &["add", "write the plan"]));
    let took = wait_for(
        "the lead's task in host one's mirror",
        Duration::from_secs(30),
        || subjects(&one_list) == ["write the plan"],
        explain,
    );
    eprintln!("task #{plan} mirrored on one after {took:?}");

    // alice claims a task with a command on her host's list, runs it and completes it; the
    // lead's list shows her claim, then the completion; the lead's team file shows her busy
    // while it runs. The link drops while it runs: nothing is lost.
    let marker = PathBuf::from(one.home()).join("build-ran");
    let build = added_id(&lead_task(
        &lead,
        &[
            "add",
            "build",
            "--command",
            &format!("sleep 3; echo built >> {}", marker.display()),
        ],
    ));
    let claimed = wait_for(
        "alice's claim at the lead",
        Duration::from_secs(30),
        || owner_status(&lead_list, &build) == Some((Some("alice".into()), TaskStatus::InProgress)),
        explain,
    );
    eprintln!("alice's claim of #{build} at the lead {claimed:?} after the task was added");
    wait_for(
        "alice busy in the lead's team file",
        Duration::from_secs(3),
        || lead_active(&lead, "alice") == Some(true),
        || format!("isActive {:?}", lead_active(&lead, "alice")),
    );
    one.set_link(false);
    wait_for(
        "the build done on host one while its link is down",
        Duration::from_secs(30),
        || owner_status(&one_list, &build) == Some((Some("alice".into()), TaskStatus::Completed)),
        explain,
    );
    assert_eq!(
        owner_status(&lead_list, &build),
        Some((Some("alice".into()), TaskStatus::InProgress)),
        "the lead cannot know yet"
    );
    one.set_link(true);
    let back = wait_for(
        "the completion at the lead after the link returned",
        Duration::from_secs(30),
        || owner_status(&lead_list, &build) == Some((Some("alice".into()), TaskStatus::Completed)),
        explain,
    );
    eprintln!("completion at the lead {back:?} after the link returned");
    wait_for(
        "alice idle in the lead's team file",
        Duration::from_secs(15),
        || lead_active(&lead, "alice") == Some(false),
        || format!("isActive {:?}", lead_active(&lead, "alice")),
    );
    wait_for(
        "alice's report of the build at the lead",
        Duration::from_secs(30),
        || told(&lead, "built") + told(&lead, &format!("#{build}")) >= 1,
        explain,
    );
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(
        std::fs::read_to_string(&marker).unwrap_or_default(),
        "built\n",
        "the build ran once"
    );
    assert_eq!(
        tasks(&lead_list).len(),
        2,
        "nothing made twice: {}",
        explain()
    );

    // The race: bob runs on host two; a task with a command waits on a blocker. Both links go
    // down, the blocker is completed on each host, both teammates claim the task on their own
    // host's list and wait for the lead's word. Host one's link returns first: alice's claim
    // holds and she runs it; bob's is set back on host two, and bob is told.
    spawn(&lead, "bob", "two");
    let blocker = added_id(&lead_task(&lead, &["add", "agree on the format"]));
    let raced = added_id(&lead_task(
        &lead,
        &[
            "add",
            "convert the data",
            "--blocked-by",
            &blocker,
            "--command",
            "echo converted",
        ],
    ));
    wait_for(
        "both hosts mirror the lead's list",
        Duration::from_secs(30),
        || tasks(&one_list) == tasks(&lead_list) && tasks(&two_list) == tasks(&lead_list),
        explain,
    );
    one.set_link(false);
    two.set_link(false);
    host_task(&one, &["done", &blocker]);
    host_task(&two, &["done", &blocker]);
    wait_for(
        "each teammate claims the task on its own host",
        Duration::from_secs(30),
        || {
            owner_status(&one_list, &raced) == Some((Some("alice".into()), TaskStatus::InProgress))
                && owner_status(&two_list, &raced)
                    == Some((Some("bob".into()), TaskStatus::InProgress))
        },
        explain,
    );
    // A claim on a host's list is a proposal until the lead's list holds it: neither runs
    // the task while its link is down.
    let cut = std::time::Instant::now();
    while cut.elapsed() < Duration::from_secs(2) {
        assert_eq!(
            (
                owner_status(&one_list, &raced).map(|(_, s)| s),
                owner_status(&two_list, &raced).map(|(_, s)| s)
            ),
            (Some(TaskStatus::InProgress), Some(TaskStatus::InProgress)),
            "a task ran on a claim the lead has not answered: {}",
            explain()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    one.set_link(true);
    wait_for(
        "alice's claim holds at the lead",
        Duration::from_secs(30),
        || owner_status(&lead_list, &raced) == Some((Some("alice".into()), TaskStatus::Completed)),
        explain,
    );
    two.set_link(true);
    let bob_inbox = two.home().join(".claude/teams/crew/inboxes/bob.json");
    let undone = wait_for(
        "bob's mirror set back to alice's claim, and bob told",
        Duration::from_secs(30),
        || {
            owner_status(&two_list, &raced) == Some((Some("alice".into()), TaskStatus::Completed))
                && !texts_with(&bob_inbox, "went to alice").is_empty()
        },
        || {
            format!(
                "{}\nbob's inbox: {:?}",
                explain(),
                texts_with(&bob_inbox, "")
            )
        },
    );
    eprintln!("bob's claim undone on two {undone:?} after its link returned");
    std::thread::sleep(Duration::from_secs(2));
    let told_bob = texts_with(&bob_inbox, "went to alice");
    assert_eq!(told_bob.len(), 1, "{told_bob:?}");
    eprintln!("bob was told: {}", told_bob[0]);
    assert_eq!(
        owner_status(&lead_list, &raced),
        Some((Some("alice".into()), TaskStatus::Completed)),
        "exactly one claim holds"
    );
    assert_eq!(
        owner_status(&lead_list, &blocker).map(|(_, s)| s),
        Some(TaskStatus::Completed)
    );
    assert_eq!(tasks(&lead_list).len(), 4, "{}", explain());
    assert_eq!(tasks(&one_list), tasks(&lead_list), "{}", explain());
    assert_eq!(tasks(&two_list), tasks(&lead_list), "{}", explain());

    ctl_ok(&lead, &["/quit"]);
    wait_for(
        "the lead server exits",
        Duration::from_secs(30),
        || serve.0.try_wait().ok().flatten().is_some(),
        String::new,
    );
}
