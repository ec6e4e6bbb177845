//! The lead liveness lock: the lead holds an exclusive flock on
//! `teams/<team>/.teamlead/lead.lock` for its whole life (the pid is written inside); the
//! kernel drops it when the lead dies, however it dies. Only teamlead processes use it. The file
//! is opened through `safe_file` (lstat first, `O_NOFOLLOW | O_NONBLOCK`, fstat), so a FIFO or a
//! link planted there is reported, never opened for a blocking read; flock works on that
//! descriptor as on any other. It is created with mode 0600.

use std::fs::{File, TryLockError};
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::error::{Result, StoreError, io_at};
use super::home::Home;
use super::safe_file::{MAX_SMALL_FILE_BYTES, open_or_create_private, open_regular, read_bounded};

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
        home.check_inside(&path)?;
        home.ensure_dir(&home.teamlead_dir(team)?)?;
        let mut file = open_or_create_private(&path)?;
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
                        pid: read_pid(&path, &mut file),
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

fn read_pid(path: &Path, file: &mut File) -> Option<u32> {
    file.seek(SeekFrom::Start(0)).ok()?;
    let bytes = read_bounded(path, file, MAX_SMALL_FILE_BYTES).ok()?;
    std::str::from_utf8(&bytes).ok()?.trim().parse().ok()
}

/// Is a lead of `team` running (does some process hold the liveness lock)? Never blocks.
pub fn is_lead_alive(home: &Home, team: &str) -> bool {
    lead_pid(home, team).is_some()
}

/// The pid of the running lead of `team` (`Some(0)` if alive but the pid is unreadable).
/// `None` when no lead runs, and also when the liveness file cannot be checked (see
/// [`check_lead`] for the reason).
pub fn lead_pid(home: &Home, team: &str) -> Option<u32> {
    check_lead(home, team).ok().flatten()
}

/// [`lead_pid`] with the reason when the liveness file cannot be checked: a symbolic link, a
/// FIFO or a directory at `lead.lock` (or on the way to it) is an error, never a block.
pub fn check_lead(home: &Home, team: &str) -> Result<Option<u32>> {
    let path = home.lead_lock_path(team)?;
    home.check_inside(&path)?;
    let Some(mut file) = open_regular(&path)? else {
        return Ok(None);
    };
    match file.try_lock() {
        Ok(()) => {
            let _ = file.unlock();
            Ok(None)
        }
        Err(TryLockError::WouldBlock) => Ok(Some(read_pid(&path, &mut file).unwrap_or(0))),
        Err(TryLockError::Error(e)) => Err(StoreError::io(&path, e)),
    }
}

/// The pid written in `team`'s liveness file, whether or not that lead still runs; `None`
/// when there is no file or it holds no pid. Never blocks: a FIFO, a directory or a symbolic
/// link there is an error.
pub fn recorded_pid(home: &Home, team: &str) -> Result<Option<u32>> {
    let path = home.lead_lock_path(team)?;
    home.check_inside(&path)?;
    let Some(mut file) = open_regular(&path)? else {
        return Ok(None);
    };
    Ok(read_pid(&path, &mut file))
}
