//! `teamlead relay --stdio`: this host's end of a link to a lead on another host, started by
//! the lead over ssh. Standard input and output carry the link (`teamlead_relay`'s JSON lines,
//! nothing else is ever written to standard output); standard error says why it ended. The
//! team's copy on this host lives under `--home`, as any team does.

use color_eyre::eyre::{Result, eyre};
use teamlead_relay::{End, Ended, RelayOptions};

use super::args::RelayArgs;
use super::{Context, Failure};

/// Runs the relay until the lead closes the link (exit 0), refuses or is refused (exit 3, with
/// why and what to do), goes silent, or breaks it (exit 1).
pub fn run(ctx: &Context, _args: &RelayArgs) -> Result<()> {
    let options = RelayOptions {
        version: env!("CARGO_PKG_VERSION").to_string(),
        poll: teamlead_relay::driver::DEFAULT_POLL,
    };
    let ended = teamlead_relay::run_stdio(
        &ctx.home,
        std::io::stdin(),
        std::io::stdout().lock(),
        &options,
    )
    .map_err(|e| eyre!("the link to the lead broke: {e}"))?;
    tracing::info!("relay ended: {ended:?}");
    match ended {
        Ended::Closed | Ended::Stopped => Ok(()),
        Ended::Link(End::Refused(r)) => {
            Err(Failure::new(3, format!("refused the lead: {} ({})", r.why, r.fix)).into())
        }
        Ended::Link(End::RefusedByPeer(r)) => Err(Failure::new(
            3,
            format!("the lead refused this relay: {} ({})", r.why, r.fix),
        )
        .into()),
        Ended::Link(End::Silent) => Err(eyre!("the lead went silent")),
    }
}
