//! Test hosts: each one a network namespace the test makes itself (a veth pair, a /30 of
//! 10.23.0.0/16 that no other interface uses), running Debian's `sshd` on its own address,
//! with a host key made by the test and a login user of its own (`useradd`, a temporary HOME,
//! PATH given by sshd: a directory of links the test chooses, so "no tmux there" is real).
//! The lead side ([`TestLead`]) has its own ssh config, known_hosts and key, passed to the
//! binary through `TEAMLEAD_SSH_CONFIG`, and its own runtime directory: the real `~/.ssh` is
//! never read. Everything is torn down on drop: the lead's ssh masters, the user's processes,
//! sshd, the namespace and its veth pair, the user. Needs root; [`skip_unless_root`] says so.

#![allow(dead_code)]

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::programs;

pub mod crew;
mod lead;
pub mod link;
pub use lead::TestLead;

/// True (and a message on stderr) when these tests cannot run here: they need root for
/// namespaces, veth pairs, sshd and users.
pub fn skip_unless_root() -> bool {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        return false;
    }
    eprintln!("skipped: test hosts need root (network namespaces, sshd, useradd)");
    true
}

static NEXT: AtomicUsize = AtomicUsize::new(0);

/// Runs a program to its end, failing the test with its stderr when it fails.
pub(crate) fn sh(program: &Path, args: &[&str]) -> String {
    let out = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{} {args:?}: {e}", program.display()));
    assert!(
        out.status.success(),
        "{} {args:?}: {}",
        program.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn ip(args: &[&str]) -> String {
    sh(&programs::required("ip"), args)
}

/// A lock held across processes while a subnet is chosen and taken (two test binaries, or
/// two checkouts, may make hosts at once): a flock on the temporary directory itself, so no
/// lock file is left behind.
struct NetLock(std::fs::File);

impl NetLock {
    fn take() -> NetLock {
        use std::os::fd::AsRawFd;
        let dir = std::fs::File::open(std::env::temp_dir()).unwrap();
        // SAFETY: flock on a descriptor owned here; released when the file closes.
        assert_eq!(unsafe { libc::flock(dir.as_raw_fd(), libc::LOCK_EX) }, 0);
        NetLock(dir)
    }
}

/// What a test host has.
#[derive(Debug, Clone)]
pub struct HostSetup {
    /// tmux on the login user's PATH.
    pub tmux: bool,
}

impl Default for HostSetup {
    fn default() -> HostSetup {
        HostSetup { tmux: true }
    }
}

/// The programs linked into a host's PATH directory (those this machine has).
const HOST_PROGRAMS: &[&str] = &[
    "sh", "bash", "env", "uname", "cat", "head", "tail", "mkdir", "chmod", "mv", "rm", "ls", "cp",
    "ln", "sleep", "true", "false", "id", "ps", "kill", "grep", "sed", "tr", "wc", "date",
    "dirname", "basename", "readlink", "touch", "stat", "git", "node",
];

/// One test host.
pub struct TestHost {
    /// The network namespace.
    pub ns: String,
    /// The veth end in the lead's namespace.
    veth: String,
    /// The host's address (`10.23.X.2`).
    pub address: String,
    /// Its login user.
    pub user: String,
    pub uid: u32,
    /// The login user's HOME.
    home: tempfile::TempDir,
    /// sshd's files: config, host key, authorized_keys, the PATH directory, its log.
    dir: tempfile::TempDir,
    sshd: Option<Child>,
    /// The host key's public line (`ssh-ed25519 AAAA…`).
    pub host_key: String,
}

impl TestHost {
    /// A host with `setup`, its sshd answering on port 22 of its address.
    pub fn start(setup: HostSetup) -> TestHost {
        TestHost::start_with_env(setup, &[])
    }

    /// [`TestHost::start`] with `env` in every login session's environment (sshd's
    /// `SetEnv`, as a host's own profile would set it), e.g. what Claude Code needs offline.
    pub fn start_with_env(setup: HostSetup, env: &[(&str, &str)]) -> TestHost {
        let n = NEXT.fetch_add(1, Ordering::SeqCst);
        let pid = std::process::id();
        let tag = format!("{:x}x{n}", pid % 0xfffff);
        let ns = format!("tlh-{tag}");
        let veth = format!("tlh{tag}a");
        let peer = format!("tlh{tag}b");
        let user = format!("tlh{tag}");
        let dir = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        // The user first, so a failure below still leaves a host to drop.
        sh(
            &programs::required("useradd"),
            &[
                "--no-create-home",
                "--home-dir",
                &home.path().display().to_string(),
                "--shell",
                "/bin/sh",
                "--password",
                "*",
                "--no-user-group",
                "--gid",
                "nogroup",
                &user,
            ],
        );
        let uid = uid_of(&user);
        std::os::unix::fs::chown(home.path(), Some(uid), None).unwrap();
        let mut host = TestHost {
            ns: ns.clone(),
            veth: veth.clone(),
            address: String::new(),
            user: user.clone(),
            uid,
            home,
            dir,
            sshd: None,
            host_key: String::new(),
        };
        let lock = NetLock::take();
        let x = free_subnet(pid as usize + n);
        host.address = format!("10.23.{x}.2");
        ip(&["netns", "add", &ns]);
        ip(&[
            "link", "add", &veth, "type", "veth", "peer", "name", &peer, "netns", &ns,
        ]);
        ip(&["addr", "add", &format!("10.23.{x}.1/30"), "dev", &veth]);
        ip(&["link", "set", &veth, "up"]);
        let in_ns = |args: &[&str]| {
            let mut all = vec!["netns", "exec", ns.as_str(), "ip"];
            all.extend_from_slice(args);
            ip(&all)
        };
        in_ns(&["addr", "add", &format!("10.23.{x}.2/30"), "dev", &peer]);
        in_ns(&["link", "set", &peer, "up"]);
        in_ns(&["link", "set", "lo", "up"]);
        drop(lock);
        host.start_sshd(&setup, env);
        host
    }

    pub fn home(&self) -> &Path {
        self.home.path()
    }

    /// `user@address`.
    pub fn destination(&self) -> String {
        format!("{}@{}", self.user, self.address)
    }

    fn start_sshd(&mut self, setup: &HostSetup, env: &[(&str, &str)]) {
        let dir = self.dir.path().to_path_buf();
        let bin = dir.join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        let mut programs_there: Vec<&str> = HOST_PROGRAMS.to_vec();
        if setup.tmux {
            programs_there.push("tmux");
        }
        let path = std::env::var_os("PATH").unwrap_or_default();
        for program in programs_there {
            if let Some(found) = std::env::split_paths(&path)
                .map(|d| d.join(program))
                .find(|p| p.is_file())
            {
                std::os::unix::fs::symlink(found, bin.join(program)).unwrap();
            }
        }
        // Readable by the login user: its PATH and the authorized keys.
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let key = dir.join("host_key");
        sh(
            &programs::required("ssh-keygen"),
            &[
                "-q",
                "-t",
                "ed25519",
                "-N",
                "",
                "-C",
                "test-host",
                "-f",
                &key.display().to_string(),
            ],
        );
        let public = std::fs::read_to_string(key.with_extension("pub")).unwrap();
        self.host_key = public
            .split_whitespace()
            .take(2)
            .collect::<Vec<_>>()
            .join(" ");
        std::fs::write(dir.join("authorized_keys"), "").unwrap();
        let config = format!(
            "ListenAddress {addr}:22\nHostKey {key}\nPidFile none\nAuthorizedKeysFile {keys}\n\
             StrictModes no\nUsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n\
             PubkeyAuthentication yes\nPermitRootLogin no\nAllowUsers {user}\nSetEnv PATH={bin}{env}\n\
             PrintMotd no\nPrintLastLog no\nMaxStartups 100\nLogLevel VERBOSE\n",
            addr = self.address,
            key = key.display(),
            keys = dir.join("authorized_keys").display(),
            user = self.user,
            bin = bin.display(),
            env = env
                .iter()
                .map(|(k, v)| format!(" {k}={v}"))
                .collect::<String>(),
        );
        std::fs::write(dir.join("sshd_config"), config).unwrap();
        // sshd's privilege separation directory (Debian makes it at boot only).
        let _ = std::fs::create_dir_all("/run/sshd");
        let log = std::fs::File::create(dir.join("sshd.log")).unwrap();
        let sshd = Command::new(programs::required("ip"))
            .args(["netns", "exec", &self.ns])
            .arg(programs::required("sshd"))
            .args(["-D", "-e", "-f"])
            .arg(dir.join("sshd_config"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        self.sshd = Some(sshd);
        self.wait_listening();
    }

    /// Waits until sshd accepts connections (from the lead's namespace).
    fn wait_listening(&mut self) {
        let addr: std::net::SocketAddr = format!("{}:22", self.address).parse().unwrap();
        let end = Instant::now() + Duration::from_secs(10);
        loop {
            if std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
                return;
            }
            if let Some(status) = self.sshd.as_mut().and_then(|c| c.try_wait().ok().flatten()) {
                panic!("sshd ended ({status}): {}", self.sshd_log());
            }
            assert!(
                Instant::now() < end,
                "sshd never listened: {}",
                self.sshd_log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// What sshd logged.
    pub fn sshd_log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("sshd.log")).unwrap_or_default()
    }

    /// Lets `public_key` (a `.pub` line) log in as the host's user.
    pub fn authorize(&self, public_key: &str) {
        use std::io::Write;
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(self.dir.path().join("authorized_keys"))
            .unwrap();
        writeln!(file, "{}", public_key.trim()).unwrap();
    }

    /// The host's end of the link goes down (a partition: what the lead sends goes nowhere,
    /// and an ssh master already connected sees no answer) or comes back up.
    pub fn set_link(&self, up: bool) {
        let peer = self.peer();
        ip(&[
            "netns",
            "exec",
            &self.ns,
            "ip",
            "link",
            "set",
            &peer,
            if up { "up" } else { "down" },
        ]);
    }

    /// The veth end inside the namespace.
    fn peer(&self) -> String {
        format!("{}b", self.veth.trim_end_matches('a'))
    }

    /// `tc netem` on the host's end of the link (`["delay", "10ms"]`; empty removes it).
    /// `false` when this kernel has no netem (sch_netem): the caller skips, saying so.
    pub fn netem(&self, args: &[&str]) -> bool {
        let tc = programs::required("tc").display().to_string();
        let peer = self.peer();
        let mut all = vec!["netns", "exec", self.ns.as_str(), tc.as_str(), "qdisc"];
        if args.is_empty() {
            all.extend(["del", "dev", peer.as_str(), "root"]);
        } else {
            all.extend(["replace", "dev", peer.as_str(), "root", "netem"]);
            all.extend_from_slice(args);
        }
        let out = Command::new(programs::required("ip"))
            .args(&all)
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stderr);
        if said.contains("qdisc kind is unknown") {
            eprintln!("this kernel has no netem (sch_netem): {said}");
            return false;
        }
        assert!(
            out.status.success() || args.is_empty(),
            "tc {all:?}: {said}"
        );
        true
    }

    /// Puts this test's teamlead binary at `~/.local/bin/teamlead` on the host, as `hosts
    /// install` would, without going through ssh (for tests about something else).
    pub fn give_teamlead(&self) {
        let bin = self.home().join(".local/bin");
        std::fs::create_dir_all(&bin).unwrap();
        let target = bin.join("teamlead");
        std::fs::copy(env!("CARGO_BIN_EXE_teamlead"), &target).unwrap();
        for path in [self.home().join(".local"), bin, target] {
            std::os::unix::fs::chown(&path, Some(self.uid), None).unwrap();
        }
    }

    /// Makes `rel` (a directory under the host's HOME, with its parents) owned by the host's
    /// user; returns its path.
    pub fn make_dir(&self, rel: &str) -> std::path::PathBuf {
        let path = self.home().join(rel);
        std::fs::create_dir_all(&path).unwrap();
        let mut at = path.clone();
        while at.starts_with(self.home()) && at != self.home() {
            std::os::unix::fs::chown(&at, Some(self.uid), None).unwrap();
            at = at.parent().unwrap().to_path_buf();
        }
        path
    }

    /// Writes `text` to `rel` under the host's HOME, owned by the host's user.
    pub fn write_file(&self, rel: &str, text: &str) -> std::path::PathBuf {
        let path = self.home().join(rel);
        if let Some(parent) = Path::new(rel)
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
        {
            self.make_dir(&parent.to_string_lossy());
        }
        std::fs::write(&path, text).unwrap();
        std::os::unix::fs::chown(&path, Some(self.uid), None).unwrap();
        path
    }

    /// Processes of the host's user, by pid.
    pub fn user_processes(&self) -> Vec<i32> {
        processes_where(|status, _| {
            status
                .lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .is_some_and(|u| u == self.uid.to_string())
        })
    }
}

impl Drop for TestHost {
    fn drop(&mut self) {
        for pid in self.user_processes() {
            // SAFETY: a signal to a process of this test's own user.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        if let Some(mut sshd) = self.sshd.take() {
            let _ = sshd.kill();
            let _ = sshd.wait();
        }
        // sshd's per-connection processes in the namespace (root's, named by the test's user).
        let user = self.user.clone();
        for pid in
            processes_where(|_, cmdline| cmdline.starts_with("sshd: ") && cmdline.contains(&user))
        {
            // SAFETY: a connection process of this test's own sshd.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        let ip_path = programs::required("ip");
        let _ = Command::new(&ip_path)
            .args(["link", "del", &self.veth])
            .output();
        let _ = Command::new(&ip_path)
            .args(["netns", "del", &self.ns])
            .output();
        let end = Instant::now() + Duration::from_secs(5);
        while !self.user_processes().is_empty() && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = Command::new(programs::required("userdel"))
            .arg(&self.user)
            .output();
    }
}

/// The uid of `user` (from /etc/passwd).
fn uid_of(user: &str) -> u32 {
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap();
    passwd
        .lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            (f.first() == Some(&user)).then(|| f[2].parse().unwrap())
        })
        .unwrap_or_else(|| panic!("{user} is not in /etc/passwd"))
}

/// A third octet X such that no address or route of this machine is in 10.23.X.0/24, starting
/// the search at `seed`.
fn free_subnet(seed: usize) -> usize {
    let used = format!("{}\n{}", ip(&["-4", "-o", "addr"]), ip(&["-4", "route"]));
    (0..256)
        .map(|i| (seed + i) % 256)
        .find(|x| !used.contains(&format!("10.23.{x}.")))
        .expect("a free 10.23.X.0/30")
}

/// Pids whose `/proc/PID/status` and command line (NULs as spaces) satisfy `keep`.
pub(crate) fn processes_where(keep: impl Fn(&str, &str) -> bool) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            !status.is_empty() && keep(&status, &cmdline)
        })
        .collect()
}
