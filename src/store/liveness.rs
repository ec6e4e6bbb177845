//! The lead liveness lock: the lead holds an exclusive flock on
//! `teams/<team>/.teamlead/lead.lock` for its whole life (the pid is written inside); the
//! kernel drops it when the lead dies, however it dies. Only teamlead processes use it.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::error::{Result, StoreError, io_at};
use super::home::Home;

/// The held liveness lock; dropping it (or the process dying) releases it.
#[derive(Debug)]
pub struct LeadLiveness {
    file: File,
    path: PathBuf,
}

impl LeadLiveness {
    /// Takes the lock of `team`'s lead, or fails with `LeadAlive` when another process holds it.
    pub fn acquire(home: &Home, team: &str) -> Result<LeadLiveness> {
        let path = home.lead_lock_path(team)?;
        home.ensure_dir(&home.teamlead_dir(team)?)?;
        super::atomic::check_regular_file(&path)?;
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io_at(&path))?;
        // A reader checking liveness holds the lock for an instant: try a few times before
        // concluding that another lead is running.
        let mut attempts = 0;
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(TryLockError::WouldBlock) if attempts < 5 => {
                    attempts += 1;
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                Err(TryLockError::WouldBlock) => {
                    return Err(StoreError::LeadAlive {
                        team: team.to_string(),
                        pid: read_pid(&mut file),
                    });
                }
                Err(TryLockError::Error(e)) => return Err(StoreError::io(&path, e)),
            }
        }
        let pid = std::process::id().to_string();
        file.set_len(0)
            .and_then(|()| file.seek(SeekFrom::Start(0)).map(|_| ()))
            .and_then(|()| file.write_all(pid.as_bytes()))
            .and_then(|()| file.sync_all())
            .map_err(io_at(&path))?;
        Ok(LeadLiveness { file, path })
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for LeadLiveness {
    fn drop(&mut self) {
        let _ = self.file.unlock();
    }
}

fn read_pid(file: &mut File) -> Option<u32> {
    let mut text = String::new();
    file.seek(SeekFrom::Start(0)).ok()?;
    file.read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
}

/// Is a lead of `team` running (does some process hold the liveness lock)? Never blocks.
pub fn is_lead_alive(home: &Home, team: &str) -> bool {
    lead_pid(home, team).is_some()
}

/// The pid of the running lead of `team` (`Some(0)` if alive but the pid is unreadable).
pub fn lead_pid(home: &Home, team: &str) -> Option<u32> {
    let path = home.lead_lock_path(team).ok()?;
    if std::fs::symlink_metadata(&path)
        .ok()?
        .file_type()
        .is_symlink()
    {
        return None;
    }
    let mut file = File::open(&path).ok()?;
    match file.try_lock() {
        Ok(()) => {
            let _ = file.unlock();
            None
        }
        Err(TryLockError::WouldBlock) => Some(read_pid(&mut file).unwrap_or(0)),
        Err(TryLockError::Error(_)) => None,
    }
}
