//! `teamlead completions SHELL`: the completion script clap_complete generates for the
//! command line, on stdout.

use clap::CommandFactory;
use color_eyre::eyre::Result;

use super::args::{Cli, CompletionsArgs};

pub fn run(args: &CompletionsArgs) -> Result<()> {
    let mut command = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "teamlead", &mut script);
    super::output::Out::new().raw(String::from_utf8_lossy(&script))?;
    Ok(())
}
