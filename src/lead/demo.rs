//! The offline demo (`teamlead demo`): a temporary working directory, a team of three
//! in-process `shell` teammates (one must get its plan approved), and a graph of six tasks whose
//! commands do small real work there (make directories, write files, count, sort, checksum,
//! report). Run it with `Lead::start(LeadOptions::new(home, ".").with_demo(plan))`: the tasks
//! are created and the teammates spawned at start; `/quit` removes the team and the directory.
//! [`DemoLeftovers`] removes what else the demo made in a home it was given (the reviewer's
//! plan file, the `teams/`, `tasks/` and `plans/` directories it had to create).

use std::path::{Path, PathBuf};

use crate::protocol::PermissionMode;
use crate::store::{self, Home};

/// One teammate of the demo.
#[derive(Debug, Clone, PartialEq)]
pub struct DemoTeammate {
    pub name: String,
    pub prompt: String,
    pub plan_mode_required: bool,
    pub mode: PermissionMode,
}

/// One task of the demo; `blocked_by` holds indices of earlier tasks in [`DemoPlan::tasks`];
/// `owner` is the teammate it is assigned to (so every teammate, the planner included, gets
/// work whatever the timing).
#[derive(Debug, Clone, PartialEq)]
pub struct DemoTask {
    pub subject: String,
    pub description: String,
    pub command: String,
    pub blocked_by: Vec<usize>,
    pub owner: Option<String>,
}

/// Everything the demo needs; dropping it removes its working directory.
#[derive(Debug)]
pub struct DemoPlan {
    /// The team name (free in this home).
    pub team: String,
    pub teammates: Vec<DemoTeammate>,
    pub tasks: Vec<DemoTask>,
    workdir: tempfile::TempDir,
}

impl DemoPlan {
    /// The temporary working directory (removed when the plan is dropped).
    pub fn workdir(&self) -> &Path {
        self.workdir.path()
    }
}

fn task(
    subject: &str,
    description: &str,
    command: &str,
    blocked_by: &[usize],
    owner: &str,
) -> DemoTask {
    DemoTask {
        subject: subject.to_string(),
        description: description.to_string(),
        command: command.to_string(),
        blocked_by: blocked_by.to_vec(),
        owner: Some(owner.to_string()),
    }
}

fn teammate(name: &str, prompt: &str, plan_mode_required: bool) -> DemoTeammate {
    DemoTeammate {
        name: name.to_string(),
        prompt: prompt.to_string(),
        plan_mode_required,
        mode: PermissionMode::Default,
    }
}

/// The six tasks: one that lays out the files, three that work on them in parallel, a checksum
/// of the results, and a report; two for each teammate.
pub fn demo_tasks() -> Vec<DemoTask> {
    vec![
        task(
            "Lay out the workspace",
            "Create data/ and out/ and write the input files.",
            "mkdir -p data out && printf 'pear\\napple\\nfig\\nbanana\\ncherry\\n' > data/fruit.txt && printf 'the quick brown fox\\njumps over the lazy dog\\n' > data/words.txt && ls -l data",
            &[],
            "builder",
        ),
        task(
            "Count the lines",
            "Count the lines of every input file.",
            "wc -l data/fruit.txt data/words.txt | tee out/line-counts.txt",
            &[0],
            "counter",
        ),
        task(
            "Sort the fruit",
            "Sort the fruit list alphabetically.",
            "sort data/fruit.txt | tee out/fruit-sorted.txt",
            &[0],
            "reviewer",
        ),
        task(
            "Count the words",
            "Count the words of the sentence file.",
            "tr -s ' ' '\\n' < data/words.txt | grep -c . | tee out/word-count.txt",
            &[0],
            "builder",
        ),
        task(
            "Checksum the results",
            "Checksum every result file.",
            "cksum out/line-counts.txt out/fruit-sorted.txt out/word-count.txt | tee out/CHECKSUMS",
            &[1, 2, 3],
            "counter",
        ),
        task(
            "Write the report",
            "Put the results together in out/REPORT.md.",
            "{ echo '# Demo report'; echo; echo '## Lines'; cat out/line-counts.txt; echo; echo '## Fruit'; cat out/fruit-sorted.txt; echo; echo '## Words'; cat out/word-count.txt; echo; echo '## Checksums'; cat out/CHECKSUMS; } > out/REPORT.md && wc -l out/REPORT.md",
            &[4],
            "reviewer",
        ),
    ]
}

/// The three teammates: two in `default` mode (each Bash command is asked for), one that must
/// get its plan approved first.
pub fn demo_teammates() -> Vec<DemoTeammate> {
    vec![
        teammate(
            "builder",
            "You are builder. Claim the available tasks of the team and run their commands; report what they printed.",
            false,
        ),
        teammate(
            "counter",
            "You are counter. Claim the available tasks of the team and run their commands; report what they printed.",
            false,
        ),
        teammate(
            "reviewer",
            "You are reviewer. Before you run anything, write your plan and get it approved by the lead; then run the commands of the tasks you claimed.",
            true,
        ),
    ]
}

/// A free team name for the demo in `home`: `demo`, else `demo-2`, `demo-3`, …
fn free_team_name(home: &Home) -> String {
    let mut n = 1;
    loop {
        let name = if n == 1 {
            "demo".to_string()
        } else {
            format!("demo-{n}")
        };
        let taken =
            home.config_path(&name).is_ok_and(|p| p.exists()) && store::is_lead_alive(home, &name);
        if !taken {
            return name;
        }
        n += 1;
    }
}

/// Prepares the demo: a temporary working directory, the team of three, the task graph.
pub fn setup_demo(home: &Home) -> std::io::Result<DemoPlan> {
    let workdir = tempfile::Builder::new()
        .prefix("teamlead-demo-")
        .tempdir()?;
    Ok(DemoPlan {
        team: free_team_name(home),
        teammates: demo_teammates(),
        tasks: demo_tasks(),
        workdir,
    })
}

/// What the demo may leave in a home it did not create: its plan files and the top
/// directories that did not exist before it ran. Dropping it removes them (directories only
/// when empty, so nothing of anyone else's is touched).
#[derive(Debug)]
pub struct DemoLeftovers {
    plans_dir: PathBuf,
    /// `<team>-<member>-` of every demo teammate: the prefix of its plan files.
    plan_prefixes: Vec<String>,
    /// Directories of the home the demo created (removed when empty), deepest last.
    new_dirs: Vec<PathBuf>,
}

impl DemoLeftovers {
    /// Notes what exists in `home` before the demo `plan` runs.
    pub fn before(home: &Home, plan: &DemoPlan) -> DemoLeftovers {
        let mut new_dirs: Vec<PathBuf> = [home.teams_dir(), home.tasks_root(), home.plans_dir()]
            .into_iter()
            .filter(|d| std::fs::symlink_metadata(d).is_err())
            .collect();
        if std::fs::symlink_metadata(&home.root).is_err() {
            new_dirs.push(home.root.clone());
        }
        DemoLeftovers {
            plans_dir: home.plans_dir(),
            plan_prefixes: plan
                .teammates
                .iter()
                .map(|t| format!("{}-{}-", plan.team, t.name))
                .collect(),
            new_dirs,
        }
    }

    /// Removes the demo's plan files and the directories it created that are now empty.
    pub fn remove(&self) {
        if let Ok(entries) = std::fs::read_dir(&self.plans_dir) {
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                let ours =
                    name.ends_with(".md") && self.plan_prefixes.iter().any(|p| name.starts_with(p));
                if ours && entry.file_type().is_ok_and(|t| t.is_file()) {
                    let _ = std::fs::remove_file(entry.path());
                }
            }
        }
        for dir in &self.new_dirs {
            // Only empty directories go: whatever someone else put there stays.
            let _ = std::fs::remove_dir(dir);
        }
    }
}

impl Drop for DemoLeftovers {
    fn drop(&mut self) {
        self.remove();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_task_graph_only_points_backwards() {
        let tasks = demo_tasks();
        assert_eq!(tasks.len(), 6);
        for (i, t) in tasks.iter().enumerate() {
            assert!(t.blocked_by.iter().all(|b| *b < i), "task {i}");
        }
        assert_eq!(
            demo_teammates()
                .iter()
                .filter(|t| t.plan_mode_required)
                .count(),
            1
        );
    }

    #[test]
    fn the_commands_do_real_work() {
        let dir = tempfile::tempdir().unwrap();
        for t in demo_tasks() {
            let status = std::process::Command::new("sh")
                .arg("-c")
                .arg(&t.command)
                .current_dir(dir.path())
                .output()
                .unwrap();
            assert!(
                status.status.success(),
                "{}: {}",
                t.subject,
                String::from_utf8_lossy(&status.stderr)
            );
        }
        let report = std::fs::read_to_string(dir.path().join("out/REPORT.md")).unwrap();
        assert!(report.contains("apple\nbanana\ncherry\nfig\npear"));
        assert!(report.contains("## Checksums"));
    }

    #[test]
    fn setup_makes_a_directory_that_goes_away() {
        let home = tempfile::tempdir().unwrap();
        let plan = setup_demo(&Home::new(home.path())).unwrap();
        let dir = plan.workdir().to_path_buf();
        assert!(dir.is_dir());
        assert_eq!(plan.team, "demo");
        drop(plan);
        assert!(!dir.exists());
    }

    #[test]
    fn leftovers_go_and_what_was_there_stays() {
        let tmp = tempfile::tempdir().unwrap();
        let home = Home::new(tmp.path().join("home"));
        std::fs::create_dir_all(home.tasks_root().join("other")).unwrap();
        let plan = setup_demo(&home).unwrap();
        let leftovers = DemoLeftovers::before(&home, &plan);
        std::fs::create_dir_all(home.plans_dir()).unwrap();
        std::fs::create_dir_all(home.teams_dir()).unwrap();
        let ours = home.plan_path(&plan.team, "reviewer", 1).unwrap();
        std::fs::write(&ours, "# plan").unwrap();
        let theirs = home.plans_dir().join("other-alpha-1.md");
        std::fs::write(&theirs, "# plan").unwrap();
        drop(leftovers);
        assert!(!ours.exists());
        assert!(theirs.exists(), "another team's plan stays");
        assert!(
            !home.teams_dir().exists(),
            "made by the demo, empty: removed"
        );
        assert!(
            home.tasks_root().join("other").exists(),
            "there before: kept"
        );
    }
}
