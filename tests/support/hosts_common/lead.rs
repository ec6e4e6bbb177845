//! The lead's side of the test hosts: a teamlead home and config file, its own runtime
//! directory (teamlead's ssh control sockets) and an ssh config with its own known_hosts and
//! key, so the real `~/.ssh` is never read; its ssh masters are ended on drop.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use super::{TestHost, processes_where, sh};
use crate::cli_common::TestHome;
use crate::programs;

/// The lead's side: a teamlead home and config file ([`TestHome`]), a runtime directory for
/// teamlead's ssh masters, and an ssh config of the test (its own known_hosts and key).
pub struct TestLead {
    pub home: TestHome,
    /// `TEAMLEAD_RUNTIME_DIR` (short: control sockets live under it).
    runtime: tempfile::TempDir,
    /// The ssh config, known_hosts and keys.
    ssh: tempfile::TempDir,
    /// The public line of the lead's key.
    pub public_key: String,
}

impl TestLead {
    pub fn new() -> TestLead {
        let home = TestHome::empty();
        let runtime = tempfile::Builder::new().prefix("tlr").tempdir().unwrap();
        std::fs::set_permissions(runtime.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        let ssh = tempfile::tempdir().unwrap();
        let key = ssh.path().join("id_lead");
        sh(
            &programs::required("ssh-keygen"),
            &[
                "-q",
                "-t",
                "ed25519",
                "-N",
                "",
                "-C",
                "test-lead",
                "-f",
                &key.display().to_string(),
            ],
        );
        let public_key = std::fs::read_to_string(key.with_extension("pub")).unwrap();
        std::fs::write(ssh.path().join("known_hosts"), "").unwrap();
        let config = format!(
            "Host *\n  UserKnownHostsFile {known}\n  GlobalKnownHostsFile /dev/null\n  \
             IdentityFile {key}\n  IdentitiesOnly yes\n  PasswordAuthentication no\n  \
             KbdInteractiveAuthentication no\n  UpdateHostKeys no\n",
            known = ssh.path().join("known_hosts").display(),
            key = key.display(),
        );
        std::fs::write(ssh.path().join("config"), config).unwrap();
        TestLead {
            home,
            runtime,
            ssh,
            public_key,
        }
    }

    /// The lead's key may log in to `host`, and `host`'s key is known: a host set up right.
    pub fn trust(&self, host: &TestHost) {
        host.authorize(&self.public_key);
        self.know(host);
    }

    /// `host`'s key goes into the lead's known_hosts.
    pub fn know(&self, host: &TestHost) {
        use std::io::Write;
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(self.ssh.path().join("known_hosts"))
            .unwrap();
        writeln!(file, "{} {}", host.address, host.host_key).unwrap();
    }

    /// The binary with the lead's home, config file, runtime directory and ssh config.
    pub fn cmd(&self) -> assert_cmd::Command {
        let mut cmd = self.home.cmd();
        cmd.env("TEAMLEAD_RUNTIME_DIR", self.runtime.path())
            .env("TEAMLEAD_SSH_CONFIG", self.ssh.path().join("config"))
            .env("HOME", self.ssh.path())
            .env_remove("XDG_RUNTIME_DIR")
            .env_remove("SSH_AUTH_SOCK");
        cmd
    }

    /// The same as a std command (for a long-running `serve`).
    pub fn std_cmd(&self) -> Command {
        let mut cmd = self.home.std_cmd();
        cmd.env("TEAMLEAD_RUNTIME_DIR", self.runtime.path())
            .env("TEAMLEAD_SSH_CONFIG", self.ssh.path().join("config"))
            .env("HOME", self.ssh.path())
            .env_remove("XDG_RUNTIME_DIR")
            .env_remove("SSH_AUTH_SOCK");
        cmd
    }

    /// `teamlead hosts add NAME user@address`, which must succeed.
    pub fn add_host(&self, name: &str, host: &TestHost) {
        self.cmd()
            .args(["hosts", "add", name, &host.destination()])
            .assert()
            .success();
    }

    /// The ssh config file of this lead (what `TEAMLEAD_SSH_CONFIG` names).
    pub fn ssh_config(&self) -> PathBuf {
        self.ssh.path().join("config")
    }

    /// teamlead's ssh control directory.
    pub fn control_dir(&self) -> PathBuf {
        self.runtime.path().join("ssh")
    }

    /// The control sockets there.
    pub fn sockets(&self) -> Vec<PathBuf> {
        use std::os::unix::fs::FileTypeExt;
        std::fs::read_dir(self.control_dir())
            .map(|entries| {
                entries
                    .flatten()
                    .filter(|e| e.file_type().is_ok_and(|t| t.is_socket()))
                    .map(|e| e.path())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The ssh masters this lead left running, by pid (their command line names its runtime
    /// directory).
    pub fn masters(&self) -> Vec<i32> {
        let dir = self.runtime.path().display().to_string();
        processes_where(|_, cmdline| cmdline.starts_with("ssh") && cmdline.contains(&dir))
    }
}

impl Drop for TestLead {
    fn drop(&mut self) {
        for socket in self.sockets() {
            let _ = Command::new(programs::required("ssh"))
                .arg("-o")
                .arg(format!("ControlPath={}", socket.display()))
                .args(["-O", "exit", "test-host"])
                .stdin(Stdio::null())
                .stderr(Stdio::null())
                .output();
        }
        for pid in self.masters() {
            // SAFETY: an ssh master started for this test's runtime directory.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
}
