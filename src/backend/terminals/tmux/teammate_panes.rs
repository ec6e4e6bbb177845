//! Panes of `teamlead teammate` processes found by what they were started with: tmux keeps a
//! pane's start command (`#{pane_start_command}`) for as long as the pane exists, dead or
//! alive, so a teammate pane can be recognised without its team's files. The orphan sweep
//! uses it for teammates whose team directory is gone (nothing on disk names their pane any
//! more). Only commands that run teamlead's own `teammate` subcommand with
//! `TEAMLEAD_HOME=<this home>` count; anything else on the server is never touched.

use super::TmuxServer;

/// One teammate pane as its start command describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeammatePane {
    pub pane: String,
    pub team: String,
    pub name: String,
    /// The pane's program has exited (tmux keeps the pane under `remain-on-exit`).
    pub dead: bool,
}

/// The teammate panes of `home_root` on `server` (none when the server does not answer).
pub fn teammate_panes(server: &TmuxServer, home_root: &str) -> Vec<TeammatePane> {
    const SEP: char = '\u{1f}';
    let format = format!("#{{pane_id}}{SEP}#{{pane_dead}}{SEP}#{{pane_start_command}}");
    let Ok(listing) = server.run(&["list-panes", "-a", "-F", &format]) else {
        return Vec::new();
    };
    listing
        .lines()
        .filter_map(|line| {
            let mut fields = line.splitn(3, SEP);
            let (pane, dead, command) = (fields.next()?, fields.next()?, fields.next()?);
            let (team, name) = teammate_of(command, home_root)?;
            Some(TeammatePane {
                pane: pane.to_string(),
                team,
                name,
                dead: dead == "1",
            })
        })
        .collect()
}

/// The team and name of a `teamlead teammate` start command of `home_root`.
fn teammate_of(command: &str, home_root: &str) -> Option<(String, String)> {
    // tmux shows a one-string command in double quotes.
    let command = command
        .strip_prefix('"')
        .and_then(|c| c.strip_suffix('"'))
        .map(|c| c.replace("\\\"", "\"").replace("\\\\", "\\"))
        .unwrap_or_else(|| command.to_string());
    let words = shell_words(&command);
    let home = format!("TEAMLEAD_HOME={home_root}");
    if !words.contains(&home) || !words.iter().any(|w| w == "teammate") {
        return None;
    }
    let value = |flag: &str| {
        words
            .windows(2)
            .find(|w| w[0] == flag)
            .map(|w| w[1].clone())
    };
    Some((value("--team-name")?, value("--agent-name")?))
}

/// Splits a command line as `sh` would for the quoting teamlead writes (single quotes, double
/// quotes, backslashes); no expansion.
pub(crate) fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    word.push(q);
                }
            }
            '"' => {
                in_word = true;
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => word.extend(chars.next()),
                        q => word.push(q),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.extend(chars.next());
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_teammates_of_this_home_only() {
        let line = "\"cd '/w/my repo' && env TEAMLEAD_HOME='/h/a b' /bin/teamlead teammate \
                    --agent-id al@t1 --agent-name al --team-name t1 --engine shell\"";
        assert_eq!(
            teammate_of(line, "/h/a b"),
            Some(("t1".to_string(), "al".to_string()))
        );
        assert_eq!(teammate_of(line, "/h/other"), None);
        let claude = "cd /w && env TEAMLEAD_HOME=/h claude --agent-id al@t1 --agent-name al \
                      --team-name t1";
        assert_eq!(teammate_of(claude, "/h"), None, "not teamlead's teammate");
        assert_eq!(
            shell_words(r#"a 'b c'"d\"e" f\ g"#),
            ["a", "b cd\"e", "f g"]
        );
    }
}
