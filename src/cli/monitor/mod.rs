//! `teamlead monitor [TEAM]`: a read-only, event-driven log of every file created, changed or
//! deleted in a team's directories (every team when none is given), one line per change with
//! the time since start and a digest of what the change means. Messages are reported once
//! each, whether monitor sees them in an inbox or only in the delivery log of a teamlead lead
//! that drained them at once. Whatever appears where a protocol file should be (a FIFO, a
//! symlink, a directory, a huge or malformed file) is one line, and monitor keeps running.
//! Every text that came from a file goes through `protocol::display::visible_line`, so no
//! escape sequence, control or bidi character reaches the terminal. Runs until Ctrl-C.

pub mod digest;
pub mod messages;
pub mod places;

use std::time::Instant;

use color_eyre::eyre::{Result, WrapErr};

use super::Context;
use super::args::MonitorArgs;
use super::output::Out;
use super::style::Style;
use crate::protocol::display::visible_line;
use crate::watch::{WatchOptions, WatchScope, watch};

pub fn run(ctx: &Context, args: &MonitorArgs) -> Result<()> {
    let home = &ctx.home;
    let scope = match &args.team {
        Some(team) => WatchScope::team(home, team)?,
        None => WatchScope::all(home),
    };
    let options = WatchOptions::default().with_locks(args.locks);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .wrap_err("cannot start the async runtime")?;
    runtime.block_on(async {
        let (watcher, mut events) = watch(&scope, &options)?;
        let mut digester = digest::Digester::new(home);
        digester.prime(&scope);
        let style = Style::stdout();
        let mut out = Out::new();
        let exists = scope.roots().iter().any(|r| r.is_dir());
        let what = match &args.team {
            Some(team) if exists => format!("team {team}"),
            Some(team) => format!("team {team} (it does not exist yet)"),
            None => "every team".to_string(),
        };
        let header = format!(
            "monitoring {what} in {} ({}); Ctrl-C to stop",
            home.root.display(),
            watcher.mode().label()
        );
        out.line(style.dim(&visible_line(&header)))?;
        let start = Instant::now();
        let ctrl_c = tokio::signal::ctrl_c();
        tokio::pin!(ctrl_c);
        loop {
            tokio::select! {
                event = events.recv() => {
                    let Some(event) = event else { break };
                    for line in digester.digest(&event) {
                        let elapsed = start.elapsed().as_secs_f64();
                        out.line(format!(
                            "{} {}  {}",
                            style.dim(&format!("+{elapsed:.3}s")),
                            style.bold(&visible_line(&line.team)),
                            visible_line(&line.text)
                        ))?;
                    }
                }
                _ = &mut ctrl_c => break,
            }
        }
        drop(watcher);
        Ok(())
    })
}
