//! Logging setup: tracing to a daily file under the user's state directory
//! (`$XDG_STATE_HOME/teamlead/` on Linux), never to the terminal. `TEAMLEAD_LOG_DIR` overrides
//! the directory; without a state directory the logs go to `<home>/teamlead-logs`. `-v` raises
//! the level (info → debug → trace); `TEAMLEAD_LOG` takes a full filter (`teamlead=trace`).

use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use etcetera::BaseStrategy;
use tracing_subscriber::EnvFilter;

/// The directory log files go to.
pub fn log_dir(home_root: Option<&Path>) -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("TEAMLEAD_LOG_DIR").filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    if let Some(state) = etcetera::choose_base_strategy()
        .ok()
        .and_then(|s| s.state_dir())
    {
        return Some(state.join("teamlead"));
    }
    home_root.map(|h| h.join("teamlead-logs"))
}

/// Installs the file logger; returns the directory in use, or `None` when logging is off (no
/// directory could be made). Never fails the command.
pub fn init(verbose: u8, home_root: Option<&Path>) -> Option<PathBuf> {
    let dir = log_dir(home_root)?;
    // Logs quote messages and commands: a directory teamlead makes for them is private (0700),
    // so the log files in it are too, whatever their own mode.
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(crate::store::safe_file::PRIVATE_DIR_MODE)
        .create(&dir)
        .ok()?;
    let appender = tracing_appender::rolling::RollingFileAppender::builder()
        .rotation(tracing_appender::rolling::Rotation::DAILY)
        .filename_prefix("teamlead")
        .filename_suffix("log")
        .max_log_files(7)
        .build(&dir)
        .ok()?;
    let level = match verbose {
        0 => "info",
        1 => "debug",
        _ => "trace",
    };
    let filter = std::env::var("TEAMLEAD_LOG")
        .ok()
        .and_then(|f| EnvFilter::try_new(f).ok())
        .unwrap_or_else(|| EnvFilter::new(format!("warn,teamlead={level}")));
    let installed = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(appender)
        .with_ansi(false)
        .with_thread_names(true)
        .try_init()
        .is_ok();
    installed.then_some(dir)
}
