//! Issue 29's scenario as one run, from one lead server over real OpenSSH: three test hosts
//! (each a network namespace with its own sshd, login user and HOME) plus the lead's own
//! machine, twelve of teamlead's own shell teammates, three in each place, all in `default`
//! mode so every command asks, and two real `claude` teammates (the newest client of the
//! matrix, on hosts two and three, against the scripted model forwarded from the lead), each
//! working a task of its own with Claude Code's task tool and a Bash call that asks; a task
//! graph of twenty tasks (four given to one teammate in
//! each place, eleven free, four blocked by those, one blocked by the four) worked to the
//! end, each task run exactly once and never before the
//! tasks that block it, with claims made on the hosts' own lists; every permission request
//! (from every host and the lead's machine) answered in the one queue (`ctl pending` and
//! `ctl approve`); and one host teammate's worktree branch reviewed and merged at the lead.
//! `/quit` then leaves nothing running on any host. (Each client of the matrix on a host, step
//! by step, is `hosts_claude.rs`.)

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::claude_code_common::{Act, ModelServer, Rule, clients_or_skip};
use crate::hosts::claude::{OFFLINE_ENV, SECRET, claude_host_keys, prepare_claude_home};
use crate::hosts_common::crew::*;
use crate::hosts_common::{HostSetup, TestHost, TestLead, skip_unless_root};
use teamlead_test_support::git::git;

/// `teamlead task add … --team crew` at the lead; the new task's id.
fn add_task(lead: &TestLead, subject: &str, command: &str, blocked_by: &[&str]) -> String {
    let mut args = vec!["task", "add", subject, "--team", TEAM];
    if !command.is_empty() {
        args.extend(["--command", command]);
    }
    for id in blocked_by {
        args.extend(["--blocked-by", id]);
    }
    let out = lead
        .cmd()
        .args(&args)
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "task add {subject}: {said}");
    said.split('#')
        .nth(1)
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .unwrap_or_else(|| panic!("no id in {said:?}"))
        .to_string()
}

/// The approver: answers every permission request in the lead's one queue as it comes, and
/// keeps who asked (`name · host`, or the name alone for the lead's machine) and for what.
struct Approver {
    stop: Arc<AtomicBool>,
    asked: Arc<Mutex<Vec<(String, String)>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Approver {
    fn start(lead: &Arc<TestLead>) -> Approver {
        let stop = Arc::new(AtomicBool::new(false));
        let asked = Arc::new(Mutex::new(Vec::new()));
        let (stop2, asked2) = (stop.clone(), asked.clone());
        let lead = lead.clone();
        let thread = std::thread::spawn(move || {
            while !stop2.load(Ordering::Relaxed) {
                let out = ctl(lead.as_ref(), &["--json", "pending"]);
                let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
                for p in v["permissions"].as_array().cloned().unwrap_or_default() {
                    let who = format!(
                        "{}{}",
                        p["teammate"].as_str().unwrap_or(""),
                        p["host"]
                            .as_str()
                            .map(|h| format!(" · {h}"))
                            .unwrap_or_default()
                    );
                    let id = p["id"].as_u64().unwrap_or(0).to_string();
                    if ctl(lead.as_ref(), &["approve", &id]).status.success() {
                        asked2
                            .lock()
                            .unwrap()
                            .push((who, p["tool"].as_str().unwrap_or("").to_string()));
                    }
                }
                std::thread::sleep(Duration::from_millis(150));
            }
        });
        Approver {
            stop,
            asked,
            thread: Some(thread),
        }
    }

    fn asked(&self) -> Vec<(String, String)> {
        self.asked.lock().unwrap().clone()
    }
}

impl Drop for Approver {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Each `T<n> <ns>` line of the marks files, as (task, time).
fn marks(files: &[PathBuf]) -> Vec<(String, u128)> {
    files
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .flat_map(|text| {
            text.lines()
                .filter_map(|l| {
                    let (task, at) = l.split_once(' ')?;
                    Some((task.to_string(), at.trim().parse().ok()?))
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn three_hosts_and_the_lead_work_one_task_graph_answer_one_queue_and_merge_a_remote_branch() {
    if skip_unless_root() {
        return;
    }
    let Some(client) = clients_or_skip("latest") else {
        return;
    };
    let started = Instant::now();
    let lead = Arc::new(TestLead::new());
    let model = ModelServer::start(Vec::new());
    let work = tempfile::tempdir().unwrap();
    let repo = work.path();
    git(repo, &["init", "-q", "-b", "main"]);
    git(repo, &["config", "user.name", "Lead"]);
    git(repo, &["config", "user.email", "lead@example.org"]);
    std::fs::write(repo.join("README"), "the project\n").unwrap();
    std::fs::write(repo.join(".gitignore"), "marks.log\n").unwrap();
    git(repo, &["add", "README", ".gitignore"]);
    git(repo, &["commit", "-qm", "start"]);

    let hosts: Vec<(&str, TestHost)> = ["one", "two", "three"]
        .into_iter()
        .map(|name| {
            (
                name,
                TestHost::start_with_env(HostSetup::default(), OFFLINE_ENV),
            )
        })
        .collect();
    for (name, host) in &hosts {
        // Each host works in a clone of the lead's repository (host one's worktree teammate
        // makes its branch there).
        let clone = host.home().join("repo");
        git(
            Path::new("/"),
            &[
                "clone",
                "-q",
                &repo.display().to_string(),
                &clone.display().to_string(),
            ],
        );
        git(&clone, &["config", "user.name", "Host"]);
        git(&clone, &["config", "user.email", "host@example.org"]);
        chown_tree(&clone, host.uid);
        lead.trust(host);
        host.give_teamlead();
        lead.cmd()
            .args(["hosts", "add", name, &host.destination(), "--dir"])
            .arg(&clone)
            .assert()
            .success();
        if *name != "one" {
            // Hosts two and three run a `claude` teammate each, in that clone.
            prepare_claude_home(host, &clone);
            let keys = claude_host_keys(host, &client);
            let config = std::fs::read_to_string(lead.home.config()).unwrap();
            let config = config.replace(
                &format!("[hosts.{name}]\n"),
                &format!("[hosts.{name}]\n{keys}"),
            );
            std::fs::write(lead.home.config(), config).unwrap();
        }
    }
    let model_url = model.base_url();
    let mut serve = Serve::start_with_env(
        &lead,
        repo,
        None,
        &[
            ("ANTHROPIC_BASE_URL", model_url.as_str()),
            ("ANTHROPIC_API_KEY", SECRET),
        ],
    );
    let approver = Approver::start(&lead);

    // Twelve teammates, three in each place, all asking before each command.
    let places: Vec<(Option<&str>, [&str; 3])> = vec![
        (None, ["l1", "l2", "l3"]),
        (Some("one"), ["a1", "a2", "a3"]),
        (Some("two"), ["b1", "b2", "b3"]),
        (Some("three"), ["c1", "c2", "c3"]),
    ];
    let mark = |task: &str| format!("echo \"{task} $(date +%s%N)\" >> marks.log");
    let spawning = Instant::now();
    for (host, names) in &places {
        for name in names {
            let on = host.map(|h| format!(" --host {h}")).unwrap_or_default();
            let out = ctl_ok(
                &lead,
                &[&format!(
                    "/spawn {name}{on} --mode default \"Take the tasks you can.\""
                )],
            );
            assert!(out.contains(&format!("Spawned {name}")), "{out}");
        }
    }
    eprintln!(
        "12 teammates on 3 hosts and local spawned in {:?}",
        spawning.elapsed()
    );
    // Two `claude` teammates, on hosts two and three, asking too. Each works one task of its
    // own (no command: teamlead's shell teammates never claim it): Claude Code's task tool
    // marks it in progress on its host's list, a Bash call (which asks) leaves its mark,
    // and the task tool completes it.
    model.add(Rule::on("CLAUDE-IDLE", Act::Text("ready".into())));
    let claude_tasks = [("cb", "two", "T21"), ("cc", "three", "T22")];
    for (name, host, _) in claude_tasks {
        let out = ctl_ok(
            &lead,
            &[&format!(
                "/spawn {name} --host {host} --agent claude --mode default CLAUDE-IDLE wait for your task"
            )],
        );
        assert!(out.contains(&format!("Spawned {name}")), "{out}");
    }
    // Each is given its task once it is idle after its first turn (a message that came with
    // its first prompt would be answered in that one turn).
    let idle = |name: &str| {
        let out = ctl(&lead, &["status", "--json"]);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        v["teammates"].as_array().is_some_and(|ts| {
            ts.iter()
                .any(|t| t["name"] == name && t["status"] == "idle")
        })
    };
    for (name, _, _) in claude_tasks {
        wait_for(
            &format!("{name}'s first idle"),
            Duration::from_secs(90),
            || idle(name),
            || model.summary().to_string(),
        );
    }
    let mut claude_ids = Vec::new();
    for (name, _, t) in claude_tasks {
        let id = add_task(&lead, &format!("CLAUDE-{t}"), "", &[]);
        let update = |status: &str| Act::Tool {
            name: "TaskUpdate".into(),
            input: serde_json::json!({"taskId": id, "status": status, "owner": name}),
        };
        model.add(Rule::seq(
            &format!("CLAUDE-{t}"),
            vec![
                update("in_progress"),
                Act::Bash {
                    command: mark(t),
                    description: format!("mark {t}"),
                },
                update("completed"),
                Act::Text(format!("{t} done")),
            ],
        ));
        ctl_ok(&lead, &[&format!("/task assign {id} {name}")]);
        claude_ids.push((t, id, name));
    }

    // The graph: four tasks given to one teammate of each place (behind a gate without a
    // command, so nobody claims them before they are given), eleven free ones, then four
    // blocked by them, one blocked by those.
    let gate = add_task(&lead, "gate", "", &[]);
    let mut first = Vec::new();
    for (i, who) in ["l1", "a1", "b1", "c1"].iter().enumerate() {
        let t = format!("T{}", i + 1);
        let id = add_task(&lead, &t, &mark(&t), &[&gate]);
        ctl_ok(&lead, &[&format!("/task assign {id} {who}")]);
        first.push((t, id));
    }
    let out = lead
        .cmd()
        .args(["task", "done", &gate, "--team", TEAM])
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let mut free = Vec::new();
    for i in 5..=15 {
        let t = format!("T{i}");
        let id = add_task(&lead, &t, &mark(&t), &[]);
        free.push((t, id));
    }
    let mut second = Vec::new();
    for i in 0..4 {
        let t = format!("T{}", 16 + i);
        let blockers = [free[2 * i].1.as_str(), free[2 * i + 1].1.as_str()];
        let id = add_task(&lead, &t, &mark(&t), &blockers);
        second.push((t, id, blockers.map(str::to_string).to_vec()));
    }
    let last_blockers: Vec<&str> = second.iter().map(|(_, id, _)| id.as_str()).collect();
    let last = add_task(&lead, "T20", &mark("T20"), &last_blockers);

    let graph_took = wait_for(
        "every task of the graph completed at the lead",
        Duration::from_secs(240),
        || {
            let tasks = lead_tasks(&lead);
            tasks.len() == 23 && tasks.values().all(|(s, _, _)| s == "completed")
        },
        || format!("{:?}\nasked: {:?}", lead_tasks(&lead), approver.asked()),
    );
    eprintln!("the task graph worked to the end in {graph_took:?}");

    // Each task ran exactly once, in its owner's place, and never before its blockers.
    let mut files = vec![repo.join("marks.log")];
    files.extend(hosts.iter().map(|(_, h)| h.home().join("repo/marks.log")));
    for f in &files {
        eprintln!(
            "{}: {:?}",
            f.display(),
            marks(std::slice::from_ref(f))
                .iter()
                .map(|(t, _)| t.clone())
                .collect::<Vec<_>>()
        );
    }
    let ran = marks(&files);
    let mut runs: BTreeMap<String, Vec<u128>> = BTreeMap::new();
    for (task, at) in &ran {
        runs.entry(task.clone()).or_default().push(*at);
    }
    for i in 1..=22 {
        let t = format!("T{i}");
        assert_eq!(
            runs.get(&t).map(Vec::len),
            Some(1),
            "{t} ran once: {runs:?}"
        );
    }
    let at = |t: &str| runs[t][0];
    for (t, _, blockers) in &second {
        for b in blockers {
            let name = free.iter().find(|(_, id)| id == b).unwrap().0.clone();
            assert!(at(&name) < at(t), "{t} ran before its blocker {name}");
        }
        assert!(at(t) < at("T20"), "T20 ran before {t}");
    }
    let tasks = lead_tasks(&lead);
    let place_of = |owner: &str| -> &str {
        places
            .iter()
            .find(|(_, names)| names.contains(&owner))
            .map(|(h, _)| h.unwrap_or("local"))
            .or_else(|| {
                claude_tasks
                    .iter()
                    .find(|(name, _, _)| *name == owner)
                    .map(|(_, host, _)| *host)
            })
            .unwrap_or("?")
    };
    let by_place: BTreeMap<&str, usize> = tasks.iter().filter(|(id, _)| **id != gate).fold(
        BTreeMap::new(),
        |mut acc, (_, (_, owner, _))| {
            *acc.entry(place_of(owner)).or_default() += 1;
            acc
        },
    );
    eprintln!("tasks run per place: {by_place:?}; the last: #{last}");
    assert_eq!(by_place.get("?"), None, "an owner of no place: {tasks:?}");
    // Claims made on the hosts' own lists: the free tasks run on hosts.
    let free_remote = free
        .iter()
        .filter(|(_, id)| place_of(&tasks[id].1) != "local")
        .count();
    assert!(
        free_remote > 0,
        "no free task was claimed on a host: {tasks:?}"
    );
    for (_, id) in &first {
        assert_ne!(tasks[id].1, "", "an assigned task has its owner");
    }
    for (t, id, name) in &claude_ids {
        assert_eq!(&tasks[id].1, name, "{t} is {name}'s");
    }

    // Every place asked, in the one queue, with its host named.
    let asked = approver.asked();
    let asked_from: BTreeSet<&str> = asked
        .iter()
        .map(|(who, _)| who.split(" · ").nth(1).unwrap_or("local"))
        .collect();
    eprintln!(
        "{} permission requests answered from {asked_from:?}",
        asked.len()
    );
    assert_eq!(
        asked_from,
        BTreeSet::from(["local", "one", "three", "two"]),
        "{asked:?}"
    );
    assert!(asked.len() >= 22, "a request per command: {asked:?}");
    for (name, host, _) in claude_tasks {
        let who = format!("{name} · {host}");
        assert!(
            asked.iter().any(|(w, tool)| *w == who && tool == "Bash"),
            "{who}'s Bash call asked in the one queue: {asked:?}"
        );
    }

    // A teammate on host one works in a worktree there; its branch is reviewed and merged here.
    let out = ctl_ok(
        &lead,
        &[
            "/spawn wt --host one --worktree --mode default \"```sh\necho 'from host one' > remote.txt && git add remote.txt && git commit -qm 'remote work' && echo committed-$((40+2))\n```\"",
        ],
    );
    assert!(out.contains("Spawned wt"), "{out}");
    wait_for(
        "the worktree teammate's commit reported",
        Duration::from_secs(60),
        || told(&lead, "committed-42") >= 1,
        || format!("asked: {:?}", approver.asked()),
    );
    let review: serde_json::Value =
        serde_json::from_str(&ctl_ok(&lead, &["review", "wt", "--json"])).unwrap();
    assert_eq!(review["ok"], true, "{review}");
    assert_eq!(review["branch"], "teamlead/crew/wt", "{review}");
    let said = ctl_ok(&lead, &["merge", "wt", "--squash"]);
    assert!(said.contains("teamlead/crew/wt"), "{said}");
    assert_eq!(git(repo, &["show", "HEAD:remote.txt"]), "from host one");

    // /quit: nothing of the team left running on any host.
    drop(approver);
    ctl_ok(&lead, &["/quit"]);
    wait_for(
        "the lead server exits",
        Duration::from_secs(60),
        || serve.0.try_wait().ok().flatten().is_some(),
        String::new,
    );
    for (name, host) in &hosts {
        wait_for(
            &format!("nothing of the team left on {name}"),
            Duration::from_secs(20),
            || {
                !host_processes(host).iter().any(|p| {
                    p.contains("tmux")
                        || p.contains("teammate")
                        || p.contains("relay")
                        || p.contains("@crew")
                })
            },
            || format!("{:?}", host_processes(host)),
        );
    }
    serve.kill();
    eprintln!("the whole scenario took {:?}", started.elapsed());
}
