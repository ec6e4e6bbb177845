//! The iTerm2 backend against a stand-in `it2` (tests/bin/it2) that records its calls and answers
//! like the real CLI: detection, the split chain, run/focus/close, and pruning closed sessions.

use std::fs;
use std::path::{Path, PathBuf};

use teamlead::backend::PaneBackend;
use teamlead::backend::detect::{BackendChoice, CapturedEnv, detect};
use teamlead::backend::terminals::iterm2::{Iterm2, Iterm2Backend};
use teamlead::backend::terminals::{PaneChoice, Terminal, answers};
use teamlead::protocol::{BackendKind, BackendRequest};

/// The stand-in `it2` with its own state directory: `bin/it2` is a script that runs
/// tests/bin/it2 with `IT2_STATE` set, so no test changes this process's environment.
struct FakeIt2 {
    dir: tempfile::TempDir,
}

impl FakeIt2 {
    fn new(alive: &[&str]) -> FakeIt2 {
        let dir = tempfile::tempdir().unwrap();
        fs::write(
            dir.path().join("sessions"),
            format!("{}\n", alive.join("\n")),
        )
        .unwrap();
        let bin = dir.path().join("bin");
        fs::create_dir(&bin).unwrap();
        let stand_in = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bin/it2");
        let script = format!(
            "#!/bin/sh\nIT2_STATE='{}' exec '{}' \"$@\"\n",
            dir.path().display(),
            stand_in.display()
        );
        fs::write(bin.join("it2"), script).unwrap();
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(bin.join("it2"), fs::Permissions::from_mode(0o755)).unwrap();
        FakeIt2 { dir }
    }
    fn bin_dir(&self) -> PathBuf {
        self.dir.path().join("bin")
    }
    fn program(&self) -> PathBuf {
        self.bin_dir().join("it2")
    }
    fn calls(&self) -> Vec<String> {
        fs::read_to_string(self.dir.path().join("calls.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }
    fn close(&self, id: &str) {
        let path = self.dir.path().join("sessions");
        let left: Vec<String> = fs::read_to_string(&path)
            .unwrap()
            .lines()
            .filter(|l| *l != id)
            .map(str::to_string)
            .collect();
        fs::write(path, format!("{}\n", left.join("\n"))).unwrap();
    }
}

#[test]
fn iterm2_split_chain_run_focus_close_and_prune() {
    let fake = FakeIt2::new(&["LEAD-UUID"]);
    let program = fake.program();
    let program = program.to_str().unwrap();
    assert!(Iterm2.answers(program));
    let backend = Iterm2Backend::new(program, "w0t0p0:LEAD-UUID");

    let first = backend.create_pane().unwrap();
    let second = backend.create_pane().unwrap();
    assert_eq!(
        (first.as_str(), second.as_str()),
        ("SESSION-1", "SESSION-2")
    );
    backend
        .run_command(&second, "cd /w && env teamlead teammate")
        .unwrap();
    backend.focus(&first).unwrap();

    // The user closes the newest pane: the next split fails against it, the backend checks the
    // session list, drops the dead id and splits the one before.
    fake.close("SESSION-2");
    let third = backend.create_pane().unwrap();
    assert_eq!(third, "SESSION-3");
    assert_eq!(backend.sessions(), vec!["SESSION-1", "SESSION-3"]);

    // Every teammate pane closed: the chain falls back to the lead's session.
    fake.close("SESSION-1");
    fake.close("SESSION-3");
    let fourth = backend.create_pane().unwrap();
    assert_eq!(fourth, "SESSION-4");
    backend.kill(&fourth).unwrap();

    assert_eq!(
        fake.calls(),
        vec![
            "session list",
            "session split -v -s LEAD-UUID",
            "session split -s SESSION-1",
            "session run -s SESSION-2 cd /w && env teamlead teammate",
            "session focus SESSION-1",
            "session split -s SESSION-2",
            "session list",
            "session split -s SESSION-1",
            "session split -s SESSION-3",
            "session list",
            "session split -s SESSION-1",
            "session list",
            "session split -v -s LEAD-UUID",
            "session close -f -s SESSION-4",
        ]
    );
}

#[test]
fn detection_order_and_overrides() {
    let fake = FakeIt2::new(&["LEAD-UUID"]);
    let bin_dir = fake.bin_dir();
    let with_it2 = format!("{}:/usr/bin:/bin", bin_dir.display());
    let works = answers;
    let env = |pairs: &[(&str, &str)]| CapturedEnv::from_map(pairs.iter().copied());
    // Inside tmux wins.
    let inside = env(&[
        ("TMUX", "/tmp/x,1,0"),
        ("TMUX_PANE", "%3"),
        ("PATH", &with_it2),
    ]);
    assert_eq!(
        detect(&inside, BackendRequest::Auto, &works),
        BackendChoice::Panes(PaneChoice::inside(
            BackendKind::Tmux,
            "tmux",
            Some("%3".into()),
            None
        ))
    );
    // iTerm2 with a working it2 next.
    let iterm = env(&[
        ("TERM_PROGRAM", "iTerm.app"),
        ("ITERM_SESSION_ID", "w0t0p0:LEAD-UUID"),
        ("PATH", &with_it2),
    ]);
    assert!(matches!(
        detect(&iterm, BackendRequest::Auto, &works),
        BackendChoice::Panes(PaneChoice {
            kind: BackendKind::Iterm2,
            ..
        })
    ));
    // An it2 whose API is off does not count.
    assert_ne!(
        detect(&iterm, BackendRequest::Auto, &|_, _| false).label(),
        "iterm2"
    );
    // Nothing usable: in-process with a notice.
    let bare = env(&[("PATH", "/nonexistent")]);
    match detect(&bare, BackendRequest::Auto, &works) {
        BackendChoice::InProcess { notice } => assert!(notice.unwrap().contains("in-process")),
        other => panic!("{other:?}"),
    }
    // --backend overrides.
    assert_eq!(
        detect(
            &inside,
            BackendRequest::Kind(BackendKind::InProcess),
            &works
        ),
        BackendChoice::InProcess { notice: None }
    );
    assert!("bogus".parse::<BackendRequest>().is_err());
}

/// The lead asks for its teammates' pane states twice a second, and each `it2 session list` runs
/// iTerm2's Python API (54 listings in 30 s were seen): a listing that comes back unchanged is
/// reused for longer and longer, while a session closed outside teamlead is still seen and a
/// pane the backend just made is never taken for gone.
#[test]
fn the_liveness_poll_lists_less_while_nothing_changes() {
    use std::time::{Duration, Instant};
    use teamlead::backend::PaneState;
    use teamlead::backend::terminals::iterm2::TRUST_MAX;

    let fake = FakeIt2::new(&["LEAD-UUID"]);
    let program = fake.program();
    let backend = Iterm2Backend::new(program.to_str().unwrap(), "w0t0p0:LEAD-UUID");
    let panes = vec![
        backend.create_pane().unwrap(),
        backend.create_pane().unwrap(),
    ];
    let listings = || {
        fake.calls()
            .iter()
            .filter(|c| c.as_str() == "session list")
            .count()
    };
    let before = listings();
    // Two seconds of polls every 100 ms (five times as often as the lead's).
    let start = Instant::now();
    let mut polls = 0;
    while start.elapsed() < Duration::from_secs(2) {
        assert_eq!(backend.pane_states(&panes), vec![PaneState::Running; 2]);
        polls += 1;
        std::thread::sleep(Duration::from_millis(100));
    }
    let listed = listings() - before;
    assert!(
        listed <= 4,
        "{listed} `it2 session list` calls for {polls} polls"
    );

    // The user closes a teammate's pane: seen within the longest reuse and a poll.
    fake.close(&panes[0]);
    let closed = Instant::now();
    while backend.pane_states(&panes)[0] != PaneState::Gone {
        assert!(
            closed.elapsed() < TRUST_MAX + Duration::from_secs(2),
            "a closed session still counts as running"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(backend.pane_states(&panes)[1], PaneState::Running);

    // A pane made after the last listing runs at once (making it forgets the listing).
    let third = backend.create_pane().unwrap();
    assert_eq!(
        backend.pane_states(std::slice::from_ref(&third)),
        vec![PaneState::Running]
    );
}

/// An `it2` that never answers (iTerm2's API stuck) is given up at the runner's time limit and
/// killed: detection goes on without iTerm2 instead of hanging the lead's start.
#[test]
fn an_it2_that_hangs_is_given_up() {
    use std::time::{Duration, Instant};
    use teamlead::backend::terminals::cli::CALL_TIMEOUT;

    let fake = FakeIt2::new(&["LEAD-UUID"]);
    let program = fake.program();
    let program = program.to_str().unwrap();
    fs::write(fake.dir.path().join("hang"), "").unwrap();
    let start = Instant::now();
    assert!(!Iterm2.answers(program));
    let took = start.elapsed();
    assert!(
        took >= CALL_TIMEOUT && took < CALL_TIMEOUT + Duration::from_secs(5),
        "the call took {took:?}"
    );
    // The hung call was killed: no `it2` of this state directory runs any more.
    let dir = fake.dir.path().to_string_lossy().into_owned();
    let running = || {
        fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|e| fs::read(e.path().join("environ")).ok())
            .filter(|env| String::from_utf8_lossy(env).contains(&format!("IT2_STATE={dir}")))
            .count()
    };
    let deadline = Instant::now() + Duration::from_secs(5);
    while running() > 0 {
        assert!(Instant::now() < deadline, "a hung it2 was left running");
        std::thread::sleep(Duration::from_millis(50));
    }
}
