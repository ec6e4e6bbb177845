//! Stopping the current turn of one of teamlead's own teammates running as a process of its own
//! (`teamlead teammate` in a pane): the lead's `/interrupt` and `/steer` send it `SIGUSR1`,
//! which the teammate takes as "stop this turn, keep running" (`agent::process`). Only a
//! process that catches the signal gets it (`SigCgt` in `/proc/<pid>/status`): to any other,
//! such as a `teamlead teammate` of an older build, it would be the end.

use std::path::Path;

use super::lead_probe::procs::{ProcTable, SCAN_DEADLINE};
use super::reap;

/// The signal a `teamlead teammate` takes as "stop the current turn".
pub const TURN_SIGNAL: i32 = libc::SIGUSR1;

/// Sends [`TURN_SIGNAL`] to the `teamlead teammate` processes of `agent` (`name@team`) in the
/// home at `root` that catch it; how many were told. Blocking: a process table scan.
pub fn interrupt_turn(root: &Path, agent: &str) -> usize {
    let table = ProcTable::scan(SCAN_DEADLINE);
    reap::agent_processes(&table, root, agent, false)
        .into_iter()
        .filter(|p| p.comm == "teamlead" && p.argv.iter().any(|a| a == "teammate"))
        .filter(|p| catches(p.pid, TURN_SIGNAL))
        // SAFETY: kill(2) with a pid and a signal number has no memory effects.
        .filter(|p| unsafe { libc::kill(p.pid as libc::pid_t, TURN_SIGNAL) } == 0)
        .count()
}

/// Whether process `pid` has a handler for `signal` (its `SigCgt` mask).
fn catches(pid: u32, signal: i32) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    status
        .lines()
        .find_map(|l| l.strip_prefix("SigCgt:"))
        .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .is_some_and(|mask| mask & (1u64 << (signal - 1)) != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_without_a_handler_is_not_said_to_catch_the_signal() {
        // This test process installs no SIGUSR1 handler; a sleep never does.
        let mut sleep = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        assert!(!catches(sleep.id(), TURN_SIGNAL));
        assert!(!catches(u32::MAX, TURN_SIGNAL), "no such process");
        let _ = sleep.kill();
        let _ = sleep.wait();
    }
}
