//! `teamlead inspect [TEAM] [--json]`: a read-only report. Without a team, the teams of the
//! home; with one, its members, tasks and blockers, unread messages and problems. Nothing is
//! written, moved or locked.

pub mod report;
pub mod text;

use color_eyre::eyre::Result;

use super::Context;
use super::args::InspectArgs;
use super::output::Out;
use super::style::Style;
use crate::protocol::display::escape_json_output;

pub fn run(ctx: &Context, args: &InspectArgs) -> Result<()> {
    let mut out = Out::new();
    let style = Style::stdout();
    match &args.team {
        None => {
            let report = report::home_report(&ctx.home)?;
            if args.json {
                out.line(escape_json_output(&serde_json::to_string_pretty(&report)?))?;
            } else {
                out.raw(text::home_text(&report, style))?;
            }
        }
        Some(team) => {
            let prices = super::config::prices_in_force();
            let report = report::team_report(&ctx.home, team, &prices)?;
            if args.json {
                out.line(escape_json_output(&serde_json::to_string_pretty(&report)?))?;
            } else {
                out.raw(text::team_text(&report, style))?;
            }
        }
    }
    Ok(())
}
