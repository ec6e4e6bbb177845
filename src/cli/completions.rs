//! `teamlead completions SHELL` and `teamlead man [COMMAND]`: the completion script
//! clap_complete generates and the manual page clap_mangen generates from the same clap
//! definitions, on stdout.

use clap::CommandFactory;
use color_eyre::eyre::{Result, bail};

use super::args::{Cli, CompletionsArgs, ManArgs};

pub fn run(args: &CompletionsArgs) -> Result<()> {
    let mut command = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "teamlead", &mut script);
    super::output::Out::new().raw(String::from_utf8_lossy(&script))?;
    Ok(())
}

/// The manual page (roff) of teamlead, or of one of its commands (`teamlead-inspect(1)`).
pub fn man(args: &ManArgs) -> Result<()> {
    let mut command = Cli::command();
    command.build();
    let page = match &args.command {
        None => command,
        Some(name) => {
            let Some(sub) = command.find_subcommand(name) else {
                let names: Vec<_> = command
                    .get_subcommands()
                    .map(|c| c.get_name().to_string())
                    .collect();
                bail!("no command `{name}`: one of {}", names.join(", "));
            };
            let title = format!("teamlead-{name}");
            sub.clone().name(title).bin_name(format!("teamlead {name}"))
        }
    };
    let mut roff = Vec::new();
    clap_mangen::Man::new(page).render(&mut roff)?;
    super::output::Out::new().raw(String::from_utf8_lossy(&roff))?;
    Ok(())
}
