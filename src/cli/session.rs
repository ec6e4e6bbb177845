//! The interactive parts of the command line: the lead session, the demo, the teammate runtime
//! and `clean`. Placeholder until the session is wired in: each says it is not available.

use color_eyre::eyre::{Result, bail};

use super::Context;
use super::args::{CleanArgs, DemoArgs, LeadArgs, TeammateArgs};

/// `teamlead [--team NAME] [--backend …] [--agent …]`: the interactive lead session.
pub fn run_lead(_ctx: &Context, _args: &LeadArgs) -> Result<()> {
    bail!("the interactive lead session is not available in this build yet")
}

/// `teamlead demo`.
pub fn run_demo(_ctx: &Context, _args: &DemoArgs) -> Result<()> {
    bail!("the demo is not available in this build yet")
}

/// `teamlead teammate …`: the teammate runtime.
pub fn run_teammate(ctx: &Context, args: &TeammateArgs) -> Result<()> {
    super::teammate::run(ctx, args)
}

/// `teamlead clean [--orphans] [--dry-run]`.
pub fn run_clean(ctx: &Context, args: &CleanArgs) -> Result<()> {
    super::clean::run(ctx, args)
}
