//! The one reading of a shell command for permission rules, with no I/O: what the rules
//! propose ([`suggested_rule_contents`]), what they match ([`BashPattern`]) and what they say
//! in words ([`rule_meaning`]) all come from [`read`], which parses the command with a real
//! bash grammar (`brush-parser`), never by splitting characters.
//!
//! A command is *plain* when bash would run exactly the simple commands its words show: simple
//! commands joined by `;`, `&&`, `||`, `|` or newlines, each made of literal words (quotes
//! removed), with no redirection other than `2>&1`-style duplications and `/dev/null`, no
//! command or process substitution, no here-document, no `&`, no variable assignment, no
//! parameter or tilde expansion, no glob that reaches outside the working directory, no
//! compound command (`{ }`, `( )`, `if`, loops, functions), no invisible or control characters.
//! Only a plain command gets prefix rules, and a prefix rule only ever matches a plain command
//! whose every simple command it covers; anything else is an exact rule (the text the person
//! saw), or nothing when even that cannot be a rule. A prefix rule is itself *safe* only when
//! its first word does not run other commands (launchers, shells, interpreters, `xargs`,
//! `find`, `git` aliases, `cd`, …, see [`safe_prefix`]); an unsafe prefix rule is never
//! proposed, never offered and never allows anything.

use std::io::Cursor;

use brush_parser::ast;
use brush_parser::word::WordPiece;

/// The longest command read at all (longer ones are unreadable: exact rules only).
const MAX_COMMAND: usize = 8192;
/// The deepest nesting of brackets read at all.
const MAX_NESTING: usize = 32;

/// How a command reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reading {
    /// Every simple command found, nested ones too (inside substitutions, groups, loops), as
    /// its words: literal words with quotes removed, other words as written. For deny and ask
    /// rules, which match any part.
    pub commands: Vec<Vec<String>>,
    /// `None` when the command is plain (then `commands` are exactly what runs, in order);
    /// otherwise why a prefix rule cannot vouch for it.
    pub opaque: Option<&'static str>,
}

impl Reading {
    /// The simple commands that run, when the command is plain.
    pub fn plain(&self) -> Option<&[Vec<String>]> {
        match self.opaque {
            None if !self.commands.is_empty() => Some(&self.commands),
            _ => None,
        }
    }
}

/// Why a command the grammar did not read is opaque.
pub(crate) const UNREADABLE: &str = "the shell grammar cannot read it";

fn options() -> brush_parser::ParserOptions {
    brush_parser::ParserOptions::default()
}

/// Reads `command` as bash would.
pub fn read(command: &str) -> Reading {
    read_nested(command, 0)
}

fn unreadable() -> Reading {
    Reading {
        commands: Vec::new(),
        opaque: Some(UNREADABLE),
    }
}

fn nesting(command: &str) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    for c in command.chars() {
        match c {
            '(' | '{' | '[' => {
                depth += 1;
                max = max.max(depth);
            }
            ')' | '}' | ']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max.max(command.matches('`').count() / 2)
}

fn read_nested(command: &str, depth: usize) -> Reading {
    if command.len() > MAX_COMMAND || nesting(command) > MAX_NESTING || depth > 8 {
        return unreadable();
    }
    let parsed = std::panic::catch_unwind(|| {
        let mut parser = brush_parser::Parser::new(Cursor::new(command), &options());
        parser.parse_program()
    });
    let Ok(Ok(program)) = parsed else {
        return unreadable();
    };
    let mut walker = Walker {
        commands: Vec::new(),
        opaque: None,
        depth,
    };
    for list in &program.complete_commands {
        walker.list(list);
    }
    if command.chars().any(invisible) {
        walker.flag("it has control or invisible characters");
    }
    if command.chars().any(look_alike) {
        walker.flag("it has a character that looks like shell syntax or ASCII");
    }
    Reading {
        commands: walker.commands,
        opaque: walker.opaque,
    }
}

/// A character a person cannot see for what it is: control characters (but newline and tab),
/// Unicode spaces, zero-width and direction marks.
fn invisible(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || (!c.is_ascii() && c.is_whitespace())
        || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{feff}' | '\u{00ad}' | '\u{180e}')
}

/// A character made to look like another: fullwidth and small forms (`；`, `ｒｍ`), general
/// punctuation (`‚`, `․`, `⁏`), and other semicolon, colon and slash look-alikes.
fn look_alike(c: char) -> bool {
    matches!(c,
        '\u{ff00}'..='\u{ffef}'
        | '\u{fe50}'..='\u{fe6f}'
        | '\u{2000}'..='\u{206f}'
        | '\u{037e}' | '\u{0589}' | '\u{05c3}' | '\u{2215}' | '\u{29f8}' | '\u{a789}'
        | '\u{02d0}' | '\u{02f8}' | '\u{1735}' | '\u{2236}' | '\u{01c0}' | '\u{2223}'
        | '\u{2758}')
}

struct Walker {
    commands: Vec<Vec<String>>,
    opaque: Option<&'static str>,
    depth: usize,
}

impl Walker {
    fn flag(&mut self, why: &'static str) {
        if self.opaque.is_none() {
            self.opaque = Some(why);
        }
    }

    fn list(&mut self, list: &ast::CompoundList) {
        for ast::CompoundListItem(and_or, separator) in &list.0 {
            if matches!(separator, ast::SeparatorOperator::Async) {
                self.flag("it runs something in the background (&)");
            }
            self.pipeline(&and_or.first);
            for next in &and_or.additional {
                match next {
                    ast::AndOr::And(p) | ast::AndOr::Or(p) => self.pipeline(p),
                }
            }
        }
    }

    fn pipeline(&mut self, pipeline: &ast::Pipeline) {
        if pipeline.timed.is_some() {
            self.flag("it is timed (time runs another command)");
        }
        if pipeline.bang {
            self.flag("it is negated (!)");
        }
        for command in &pipeline.seq {
            self.command(command);
        }
    }

    fn command(&mut self, command: &ast::Command) {
        match command {
            ast::Command::Simple(simple) => self.simple(simple),
            ast::Command::Compound(compound, redirects) => {
                self.flag("it has a compound command (group, subshell, if, loop)");
                self.compound(compound);
                if let Some(list) = redirects {
                    for r in &list.0 {
                        self.redirect(r);
                    }
                }
            }
            ast::Command::Function(function) => {
                self.flag("it defines a function");
                self.compound(&function.body.0);
            }
            ast::Command::ExtendedTest(..) => self.flag("it has a [[ test ]]"),
        }
    }

    fn compound(&mut self, compound: &ast::CompoundCommand) {
        use ast::CompoundCommand as C;
        match compound {
            C::Arithmetic(_) => {}
            C::ArithmeticForClause(c) => self.list(&c.body.list),
            C::BraceGroup(c) => self.list(&c.list),
            C::Subshell(c) => self.list(&c.list),
            C::ForClause(c) => self.list(&c.body.list),
            C::CaseClause(c) => {
                for item in &c.cases {
                    if let Some(list) = &item.cmd {
                        self.list(list);
                    }
                }
            }
            C::IfClause(c) => {
                self.list(&c.condition);
                self.list(&c.then);
                for e in c.elses.iter().flatten() {
                    if let Some(condition) = &e.condition {
                        self.list(condition);
                    }
                    self.list(&e.body);
                }
            }
            C::WhileClause(c) | C::UntilClause(c) => {
                self.list(&c.0);
                self.list(&c.1.list);
            }
            C::Coprocess(c) => {
                self.flag("it starts a coprocess");
                self.command(&c.body);
            }
        }
    }

    /// A word as bash would pass it, when it is literal; otherwise its text as written (and
    /// the reading is opaque). Substitutions inside are read too.
    fn word(&mut self, word: &ast::Word) -> String {
        match literal(&word.value) {
            Ok(text) => text,
            Err(why) => {
                self.flag(why);
                self.substitutions(&word.value);
                word.value.clone()
            }
        }
    }

    /// The commands inside the substitutions of a word, for deny rules.
    fn substitutions(&mut self, word: &str) {
        let Ok(pieces) = brush_parser::word::parse(word, &options()) else {
            return;
        };
        let mut stack: Vec<WordPiece> = pieces.into_iter().map(|p| p.piece).collect();
        while let Some(piece) = stack.pop() {
            match piece {
                WordPiece::CommandSubstitution(inner)
                | WordPiece::BackquotedCommandSubstitution(inner) => {
                    let nested = read_nested(&inner, self.depth + 1);
                    self.commands.extend(nested.commands);
                }
                WordPiece::DoubleQuotedSequence(inner)
                | WordPiece::GettextDoubleQuotedSequence(inner) => {
                    stack.extend(inner.into_iter().map(|p| p.piece));
                }
                _ => {}
            }
        }
    }

    fn redirect(&mut self, redirect: &ast::IoRedirect) {
        use ast::IoFileRedirectKind as K;
        use ast::IoFileRedirectTarget as T;
        let harmless = match redirect {
            ast::IoRedirect::File(_, K::DuplicateOutput | K::DuplicateInput, target) => {
                match target {
                    T::Fd(_) => true,
                    T::Duplicate(w) => {
                        !w.value.is_empty() && w.value.chars().all(|c| c.is_ascii_digit())
                    }
                    _ => false,
                }
            }
            ast::IoRedirect::File(_, K::Write | K::Append | K::Clobber | K::Read, target) => {
                matches!(target, T::Filename(w) if w.value == "/dev/null")
            }
            ast::IoRedirect::OutputAndError(w, _) => w.value == "/dev/null",
            _ => false,
        };
        if !harmless {
            self.flag("it has a redirection");
        }
        match redirect {
            ast::IoRedirect::File(_, _, T::ProcessSubstitution(_, sub)) => {
                self.flag("it has a process substitution");
                self.list(&sub.list);
            }
            ast::IoRedirect::File(_, _, T::Filename(w) | T::Duplicate(w))
            | ast::IoRedirect::OutputAndError(w, _)
            | ast::IoRedirect::HereString(_, w) => {
                self.word(w);
            }
            ast::IoRedirect::HereDocument(_, doc) => {
                self.flag("it has a here-document");
                if doc.requires_expansion {
                    self.substitutions(&doc.doc.value);
                }
            }
            ast::IoRedirect::File(_, _, T::Fd(_)) => {}
        }
    }

    /// One item before (`prefix`) or after the command word. After it, `X=1` is an argument
    /// (`make CC=cc`); before it, an assignment.
    fn item(
        &mut self,
        item: &ast::CommandPrefixOrSuffixItem,
        words: &mut Vec<String>,
        prefix: bool,
    ) {
        match item {
            ast::CommandPrefixOrSuffixItem::IoRedirect(r) => self.redirect(r),
            ast::CommandPrefixOrSuffixItem::Word(w) => {
                let text = self.word(w);
                words.push(text);
            }
            ast::CommandPrefixOrSuffixItem::AssignmentWord(_, w) => {
                if prefix {
                    self.flag("it sets a variable");
                }
                let text = self.word(w);
                words.push(text);
            }
            ast::CommandPrefixOrSuffixItem::ProcessSubstitution(_, sub) => {
                self.flag("it has a process substitution");
                self.list(&sub.list);
            }
        }
    }

    fn simple(&mut self, simple: &ast::SimpleCommand) {
        let mut words = Vec::new();
        let mut assignments = Vec::new();
        if let Some(prefix) = &simple.prefix {
            for item in &prefix.0 {
                self.item(item, &mut assignments, true);
            }
        }
        match &simple.word_or_name {
            Some(name) => {
                let text = self.word(name);
                words.push(text);
            }
            None => self.flag("it has no command word"),
        }
        if let Some(suffix) = &simple.suffix {
            for item in &suffix.0 {
                self.item(item, &mut words, false);
            }
        }
        if simple.word_or_name.is_some() {
            self.commands.push(words);
        }
    }
}

/// The text bash passes for a word, when nothing in it expands; else why not.
fn literal(word: &str) -> Result<String, &'static str> {
    let pieces = brush_parser::word::parse(word, &options()).map_err(|_| UNREADABLE)?;
    let mut out = String::new();
    let mut glob = false;
    for p in &pieces {
        literal_piece(&p.piece, false, &mut out, &mut glob)?;
    }
    if glob && (out.starts_with('/') || out.starts_with('~') || out.split('/').any(|c| c == "..")) {
        return Err("it has a glob outside the working directory");
    }
    Ok(out)
}

fn literal_piece(
    piece: &WordPiece,
    quoted: bool,
    out: &mut String,
    glob: &mut bool,
) -> Result<(), &'static str> {
    match piece {
        WordPiece::Text(text) => {
            if !quoted && text.contains(['*', '?', '[']) {
                *glob = true;
            }
            out.push_str(text);
        }
        WordPiece::SingleQuotedText(text) => out.push_str(text),
        WordPiece::EscapeSequence(seq) => {
            let escaped = seq.strip_prefix('\\').unwrap_or(seq);
            if quoted && !escaped.starts_with(['$', '`', '"', '\\', '\n']) {
                out.push('\\');
            }
            if escaped != "\n" {
                out.push_str(escaped);
            }
        }
        WordPiece::DoubleQuotedSequence(inner) => {
            for p in inner {
                literal_piece(&p.piece, true, out, glob)?;
            }
        }
        WordPiece::AnsiCQuotedText(_) | WordPiece::GettextDoubleQuotedSequence(_) => {
            return Err("it has $'…' or $\"…\" quoting");
        }
        WordPiece::TildeExpansion(_) => return Err("it has a tilde expansion (~)"),
        WordPiece::ParameterExpansion(_) => return Err("it has a parameter expansion ($…)"),
        WordPiece::CommandSubstitution(_) | WordPiece::BackquotedCommandSubstitution(_) => {
            return Err("it has a command substitution");
        }
        WordPiece::ArithmeticExpression(_) => return Err("it has an arithmetic expansion"),
    }
    Ok(())
}

/// Commands that run other commands, or change what later commands mean: a prefix rule on
/// one of them would allow anything. Compared with the command's base name, and with version
/// digits removed (`python3.12`, `node18`).
const RUNNERS: &[&str] = &[
    // launchers and wrappers
    "env",
    "sudo",
    "doas",
    "su",
    "runuser",
    "pkexec",
    "sg",
    "newgrp",
    "nice",
    "renice",
    "nohup",
    "timeout",
    "time",
    "command",
    "exec",
    "builtin",
    "xargs",
    "find",
    "watch",
    "parallel",
    "ssh",
    "sshpass",
    "eval",
    "source",
    ".",
    "strace",
    "ltrace",
    "chroot",
    "unshare",
    "nsenter",
    "setsid",
    "stdbuf",
    "ionice",
    "taskset",
    "chrt",
    "flock",
    "script",
    "firejail",
    "bwrap",
    "systemd-run",
    "at",
    "batch",
    "crontab",
    "trap",
    "coproc",
    "fc",
    "valgrind",
    "gdb",
    "lldb",
    "perf",
    "hyperfine",
    "entr",
    "expect",
    "tmux",
    "screen",
    "nix-shell",
    "nix",
    "direnv",
    "xvfb-run",
    "faketime",
    "proot",
    "caffeinate",
    "catchsegv",
    "busybox",
    "toybox",
    "npx",
    "bunx",
    "pnpx",
    "uvx",
    "pipx",
    "open",
    "xdg-open",
    "start",
    "rr",
    "torsocks",
    "proxychains",
    "proxychains4",
    "dbus-launch",
    "dbus-run-session",
    "with-contenv",
    "s6-setuidgid",
    "chpst",
    "setpriv",
    "capsh",
    "vipe",
    // shells
    "sh",
    "bash",
    "zsh",
    "dash",
    "fish",
    "ksh",
    "mksh",
    "pdksh",
    "csh",
    "tcsh",
    "ash",
    "rbash",
    "yash",
    "pwsh",
    "powershell",
    "nu",
    "elvish",
    "xonsh",
    "oil",
    "osh",
    "ysh",
    "rc",
    "es",
    // interpreters
    "python",
    "python2",
    "python3",
    "pypy",
    "pypy3",
    "ipython",
    "node",
    "nodejs",
    "perl",
    "ruby",
    "irb",
    "php",
    "lua",
    "luajit",
    "deno",
    "bun",
    "tsx",
    "ts-node",
    "Rscript",
    "R",
    "julia",
    "tclsh",
    "wish",
    "osascript",
    "java",
    "jshell",
    "groovy",
    "scala",
    "kotlin",
    "guile",
    "racket",
    "sbcl",
    "clisp",
    "ocaml",
    "ghci",
    "runghc",
    "runhaskell",
    "erl",
    "elixir",
    "iex",
    "swift",
    "dotnet",
    "cscript",
    "wscript",
    "awk",
    "gawk",
    "mawk",
    "nawk",
    "m4",
    // commands whose options or scripts run other commands or write anywhere
    "sed",
    "gsed",
    "tar",
    "rsync",
    "zip",
    "vi",
    "vim",
    "nvim",
    "view",
    "ex",
    "emacs",
    "nano",
    "less",
    "more",
    "most",
    "man",
    "git",
    "ssh-agent",
    "scp",
    "sftp",
    // shell builtins that change the meaning of later commands
    "cd",
    "pushd",
    "popd",
    "export",
    "set",
    "unset",
    "alias",
    "unalias",
    "declare",
    "typeset",
    "local",
    "readonly",
    "shopt",
    "ulimit",
    "umask",
    "hash",
    "enable",
    "bind",
];

/// Tools whose second word is a subcommand: their prefix rule keeps it (`cargo test:*`), and
/// without a plain subcommand they get no prefix rule at all.
const SUBCOMMAND_TOOLS: &[&str] = &[
    "apt",
    "apt-get",
    "brew",
    "cargo",
    "docker",
    "podman",
    "gh",
    "git",
    "go",
    "kubectl",
    "make",
    "npm",
    "pip",
    "pip3",
    "pnpm",
    "poetry",
    "rustup",
    "systemctl",
    "uv",
    "yarn",
];

/// Subcommands that run arbitrary commands (`npm exec`, `uv run`, `docker run`, …).
const RUNNING_SUBCOMMANDS: &[(&str, &str)] = &[
    ("npm", "exec"),
    ("npm", "x"),
    ("npm", "explore"),
    ("pnpm", "exec"),
    ("pnpm", "dlx"),
    ("pnpm", "x"),
    ("yarn", "exec"),
    ("yarn", "dlx"),
    ("uv", "run"),
    ("uv", "tool"),
    ("poetry", "run"),
    ("poetry", "shell"),
    ("docker", "run"),
    ("docker", "exec"),
    ("docker", "compose"),
    ("podman", "run"),
    ("podman", "exec"),
    ("kubectl", "exec"),
    ("kubectl", "run"),
    ("kubectl", "debug"),
    ("go", "run"),
    ("go", "generate"),
    ("go", "tool"),
    ("cargo", "install"),
    ("gh", "alias"),
    ("gh", "extension"),
    ("rustup", "run"),
    ("pip", "install"),
    ("pip3", "install"),
    ("brew", "bundle"),
    ("systemctl", "edit"),
];

/// The git subcommands a prefix rule may name: built in (never an alias, which could run
/// anything) and running nothing configured by their arguments.
const GIT_SUBCOMMANDS: &[&str] = &[
    "status",
    "log",
    "diff",
    "show",
    "add",
    "commit",
    "branch",
    "checkout",
    "switch",
    "fetch",
    "pull",
    "push",
    "merge",
    "restore",
    "stash",
    "tag",
    "rev-parse",
    "blame",
    "ls-files",
    "ls-tree",
    "remote",
    "init",
    "clone",
    "mv",
    "rm",
    "reset",
    "describe",
    "shortlog",
    "reflog",
    "cherry-pick",
    "revert",
    "worktree",
    "cat-file",
    "rev-list",
    "name-rev",
    "for-each-ref",
    "merge-base",
    "show-ref",
    "count-objects",
    "fsck",
    "gc",
    "prune",
    "clean",
    "apply",
    "am",
    "format-patch",
    "range-diff",
    "notes",
    "sparse-checkout",
    "cherry",
];

/// Options with which a tool runs a command or a script it is given (`make --eval`,
/// `cargo --config`, `git -c`, `rg --pre`, `tar --to-command`): a simple command holding one
/// is never covered by a prefix rule, and gets none. (`name`, option; an option that ends with
/// `=` matches as a prefix of the word, others the whole word or `option=…`.)
const RUNNING_OPTIONS: &[(&str, &str)] = &[
    ("make", "--eval"),
    ("make", "-f"),
    ("make", "--file"),
    ("make", "--makefile"),
    ("make", "SHELL="),
    ("make", "MAKESHELL="),
    ("cargo", "--config"),
    ("cargo", "-Z"),
    ("git", "-c"),
    ("git", "--config-env"),
    ("git", "--exec"),
    ("git", "-x"),
    ("git", "--ext-diff"),
    ("git", "--upload-pack"),
    ("git", "--receive-pack"),
    ("git", "--exec-path"),
    ("git", "--open-files-in-pager"),
    ("git", "-O"),
    ("git", "--output"),
    ("rg", "--pre"),
    ("rg", "--search-zip"),
    ("rg", "-z"),
    ("sort", "--compress-program"),
    ("npm", "--script-shell"),
    ("yarn", "--script-shell"),
    ("pnpm", "--script-shell"),
];

fn runs_more(words: &[String]) -> bool {
    let Some(first) = words.first() else {
        return false;
    };
    let name = command_name(first);
    words[1..].iter().any(|w| {
        RUNNING_OPTIONS.iter().any(|(tool, option)| {
            *tool == name
                && (if option.ends_with('=') {
                    w.starts_with(option)
                } else {
                    w == option
                        || w.strip_prefix(option)
                            .is_some_and(|rest| rest.starts_with('='))
                        || (option.len() == 2 && !option.starts_with("--") && w.starts_with(option))
                })
        })
    })
}

/// Whether the rule prefix `prefix` covers the simple command `words`: it starts with its
/// words and holds no option that runs something else ([`RUNNING_OPTIONS`]).
pub fn covers(prefix: &[String], words: &[String]) -> bool {
    words.starts_with(prefix) && !runs_more(words)
}

/// The name a command word runs, for the lists above: its base name, version digits removed.
fn command_name(word: &str) -> &str {
    let base = word.rsplit('/').next().unwrap_or(word);
    let trimmed = base.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    if trimmed.is_empty() { base } else { trimmed }
}

fn runner(word: &str) -> bool {
    let base = word.rsplit('/').next().unwrap_or(word);
    RUNNERS.contains(&base) || RUNNERS.contains(&command_name(word))
}

/// A word a prefix rule can start with: a command name or path (`cargo`, `./run.sh`,
/// `apt-get`), plain ASCII, never an option, a group, an assignment, a glob or a variable.
fn command_word(word: &str) -> bool {
    !word.is_empty()
        && !word.starts_with('-')
        && word.chars().any(|c| c.is_ascii_alphanumeric())
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/' | '+'))
        && !word.split('/').any(|c| c == "..")
}

/// A subcommand word (`test`, `rev-parse`, `run-script`).
fn subcommand_word(word: &str) -> bool {
    word.starts_with(|c: char| c.is_ascii_alphabetic())
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'))
}

/// The safe prefix for one simple command's words: the command word, plus the subcommand for
/// tools with subcommands. `None` when no prefix rule would be safe: the first word is not a
/// plain command name, or runs other commands (a launcher, a shell, an interpreter, `xargs`,
/// `find`, `cd`, …), or a tool's subcommand is missing, an option, or runs other commands
/// (`npm exec`, `uv run`, a git alias).
pub fn safe_prefix(words: &[String]) -> Option<Vec<String>> {
    let first = words.first()?;
    if !command_word(first) || runner(first) && command_name(first) != "git" {
        return None;
    }
    let name = command_name(first);
    let base = first.rsplit('/').next().unwrap_or(first);
    let tool = [name, base]
        .into_iter()
        .find(|n| SUBCOMMAND_TOOLS.contains(n));
    let Some(tool) = tool else {
        return Some(vec![first.clone()]);
    };
    let second = words.get(1).filter(|w| subcommand_word(w))?;
    if tool == "git" && !GIT_SUBCOMMANDS.contains(&second.as_str()) {
        return None;
    }
    if RUNNING_SUBCOMMANDS.contains(&(tool, second.as_str())) {
        return None;
    }
    Some(vec![first.clone(), second.clone()])
}

/// Whether a prefix rule of these words is safe: it starts with the safe prefix of a command
/// that starts with them (`cargo test`, `npm run build`; never `env`, `git`, `cargo`).
pub fn prefix_is_safe(words: &[String]) -> bool {
    safe_prefix(words).is_some_and(|p| words.starts_with(&p))
}

/// The exact rule for a command: its text when that reads back as an exact rule (one line,
/// valid, not ending like a prefix rule).
fn exact_rule(command: &str) -> Vec<String> {
    let text = command.trim();
    let looks_like_prefix = text == "*" || text.ends_with(":*") || text.ends_with(" *");
    if super::valid_rule_content(text) && !looks_like_prefix {
        vec![text.to_string()]
    } else {
        Vec::new()
    }
}

/// The rule contents that, added as allow rules, cover `command` next time and nothing the
/// person did not see: one safe `prefix:*` per distinct simple command of a plain command;
/// otherwise the exact command; nothing when even the exact command would not make a valid
/// rule (a multi-line command with a here-document, control characters).
pub fn suggested_rule_contents(command: &str) -> Vec<String> {
    let reading = read(command);
    let Some(commands) = reading.plain() else {
        return exact_rule(command);
    };
    let mut out: Vec<String> = Vec::new();
    for words in commands {
        let Some(prefix) = safe_prefix(words).filter(|p| covers(p, words)) else {
            return exact_rule(command);
        };
        let rule = format!("{}:*", prefix.join(" "));
        if !super::valid_rule_content(&rule) {
            return exact_rule(command);
        }
        if !out.contains(&rule) {
            out.push(rule);
        }
    }
    out
}

/// What a Bash rule's content means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BashPattern {
    /// No content, `""` or `*`: every command.
    Any,
    /// `cargo test:*` or `cargo test *`: plain commands whose every simple command starts
    /// with these words. Unsafe when the words are not a safe prefix: then it allows nothing.
    Prefix(String),
    /// Anything else: the whole command, exactly (surrounding whitespace ignored).
    Exact(String),
}

impl BashPattern {
    /// Reads rule content.
    pub fn from_rule(content: Option<&str>) -> BashPattern {
        let Some(content) = content.map(str::trim) else {
            return BashPattern::Any;
        };
        if content.is_empty() || content == "*" {
            return BashPattern::Any;
        }
        if let Some(prefix) = content
            .strip_suffix(":*")
            .or_else(|| content.strip_suffix(" *"))
        {
            let prefix = prefix.trim();
            if prefix.is_empty() {
                return BashPattern::Any;
            }
            return BashPattern::Prefix(prefix.to_string());
        }
        BashPattern::Exact(content.to_string())
    }

    /// The words of a prefix rule, when the prefix reads as one plain simple command.
    pub fn prefix_words(&self) -> Option<Vec<String>> {
        let BashPattern::Prefix(prefix) = self else {
            return None;
        };
        let reading = read(prefix);
        match reading.plain() {
            Some([words]) => Some(words.clone()),
            _ => None,
        }
    }

    /// Whether this rule allows only what its text shows: an exact rule, or a prefix rule on
    /// a safe prefix. `Any` and unsafe prefixes (`env:*`, `bash:*`, `git:*`) are not.
    pub(crate) fn is_safe(&self) -> bool {
        match self {
            BashPattern::Any => false,
            BashPattern::Exact(_) => true,
            BashPattern::Prefix(_) => self.prefix_words().is_some_and(|w| prefix_is_safe(&w)),
        }
    }

    /// Allow rules: does this pattern alone cover the whole command? A prefix rule covers a
    /// plain command whose every simple command starts with its words, and only when it is
    /// safe.
    pub fn allows(&self, command: &str, reading: &Reading) -> bool {
        match self {
            BashPattern::Any => true,
            BashPattern::Exact(text) => command.trim() == text,
            BashPattern::Prefix(_) => {
                let Some(prefix) = self.prefix_words().filter(|w| prefix_is_safe(w)) else {
                    return false;
                };
                reading
                    .plain()
                    .is_some_and(|cmds| cmds.iter().all(|c| covers(&prefix, c)))
            }
        }
    }

    /// Deny and ask rules: does this pattern catch some part of the command (any simple
    /// command found, nested ones too, also after a launcher such as `sudo` or `env`)? An
    /// unreadable command is caught when the prefix appears in it as words.
    pub fn catches(&self, command: &str, reading: &Reading) -> bool {
        match self {
            BashPattern::Any => true,
            BashPattern::Exact(text) => {
                command.trim() == text || reading.commands.iter().any(|c| c.join(" ") == *text)
            }
            BashPattern::Prefix(prefix) => {
                let words = self
                    .prefix_words()
                    .unwrap_or_else(|| prefix.split_whitespace().map(str::to_string).collect());
                let in_commands = reading.commands.iter().any(|c| {
                    c.starts_with(&words)
                        || (c.first().is_some_and(|w| runner(w))
                            && (1..c.len()).any(|i| c[i..].starts_with(&words)))
                });
                in_commands
                    || (reading.opaque == Some(UNREADABLE) && text_contains_words(command, prefix))
            }
        }
    }
}

/// `prefix` appears in `text` on word boundaries (for commands the grammar cannot read).
fn text_contains_words(text: &str, prefix: &str) -> bool {
    let boundary = |c: Option<char>| {
        c.is_none_or(|c| {
            c.is_whitespace()
                || matches!(
                    c,
                    ';' | '&' | '|' | '(' | ')' | '`' | '{' | '}' | '\'' | '"' | '$' | '<' | '>'
                )
        })
    };
    text.match_indices(prefix).any(|(i, m)| {
        boundary(text[..i].chars().next_back()) && boundary(text[i + m.len()..].chars().next())
    })
}

/// What a Bash rule allows, in words: `every command that starts with git status`,
/// `exactly: echo a > out1`, `every command`, or `nothing (…)` for a rule that allows
/// nothing here (an unsafe prefix).
pub fn rule_meaning(content: Option<&str>) -> String {
    let pattern = BashPattern::from_rule(content);
    match &pattern {
        BashPattern::Any => "every command".to_string(),
        BashPattern::Exact(text) => format!("exactly: {text}"),
        BashPattern::Prefix(_) => match pattern.prefix_words() {
            Some(words) if prefix_is_safe(&words) => {
                format!("every command that starts with {}", words.join(" "))
            }
            _ => "nothing (a prefix that runs other commands is never allowed)".to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(c: &str) -> Vec<Vec<String>> {
        read(c).commands
    }

    #[test]
    fn reads_simple_commands_with_quotes_removed() {
        let r = read("mkdir -p out && echo 'a && b' out/f; ls | wc -l\necho \"x;y\" g\\it");
        assert_eq!(r.opaque, None);
        assert_eq!(
            r.commands,
            vec![
                vec!["mkdir", "-p", "out"],
                vec!["echo", "a && b", "out/f"],
                vec!["ls"],
                vec!["wc", "-l"],
                vec!["echo", "x;y", "git"],
            ]
        );
        assert_eq!(read("make 2>&1").opaque, None);
        assert_eq!(read("make >/dev/null 2>&1").opaque, None);
        assert_eq!(words("'git' \"status\""), vec![vec!["git", "status"]]);
    }

    #[test]
    fn what_is_not_plain() {
        for c in [
            "echo $(whoami)",
            "echo `whoami`",
            "echo a > out",
            "cat < /etc/passwd",
            "diff <(ls) <(ls -a)",
            "cat <<EOF\nx\nEOF",
            "sleep 1 &",
            "X=1 make",
            "echo $HOME",
            "ls ~",
            "ls /etc/*",
            "ls ../*",
            "{ make; }",
            "(cd x && make)",
            "if true; then ls; fi",
            "f() { ls; }",
            "! ls",
            "time ls",
            "[[ -f x ]]",
            "echo\u{a0}hi",
            "echo \u{202e}x",
            "(echo x",
            "echo 'unterminated",
        ] {
            assert!(read(c).plain().is_none(), "{c:?} read as plain");
        }
        assert!(read("echo '$(whoami)' \"a b\"").plain().is_some());
        assert!(read("ls *.rs src/*").plain().is_some());
    }

    #[test]
    fn substitutions_are_read_for_deny_rules() {
        let r = read("echo $(rm -rf x) `curl y`");
        assert!(
            r.commands
                .contains(&vec!["rm".to_string(), "-rf".into(), "x".into()])
        );
        assert!(r.commands.contains(&vec!["curl".to_string(), "y".into()]));
        let deny = BashPattern::from_rule(Some("rm:*"));
        for c in [
            "ls && rm -rf x",
            "echo $(rm x)",
            "(rm x)",
            "sudo rm -rf /",
            "env X=1 rm x",
            "if true; then rm x; fi",
        ] {
            assert!(deny.catches(c, &read(c)), "{c}");
        }
        assert!(!deny.catches("ls rm", &read("ls rm")));
        assert!(deny.catches("echo $(rm x", &read("echo $(rm x")));
    }

    #[test]
    fn prefixes_are_safe_or_absent() {
        let p = |c: &str| {
            read(c)
                .plain()
                .and_then(|w| safe_prefix(&w[0]))
                .map(|w| w.join(" "))
        };
        assert_eq!(p("cargo test -p x").as_deref(), Some("cargo test"));
        assert_eq!(p("git status").as_deref(), Some("git status"));
        assert_eq!(p("rm -rf build").as_deref(), Some("rm"));
        assert_eq!(p("./run.sh now").as_deref(), Some("./run.sh"));
        for c in [
            "cargo --version",
            "git",
            "git -c a=b status",
            "git my-alias",
            "env X=1 true",
            "/usr/bin/env true",
            "sudo ls",
            "bash -c ls",
            "python3 x.py",
            "python3.12 x.py",
            "xargs rm",
            "find . -name x",
            "cd sub",
            "npx foo",
            "npm exec foo",
            "uv run x",
            "ｒｍ x",
        ] {
            assert_eq!(p(c), None, "{c}");
        }
    }

    #[test]
    fn suggestions_are_safe_prefixes_or_the_exact_command() {
        assert_eq!(
            suggested_rule_contents("cargo test -p x"),
            vec!["cargo test:*"]
        );
        assert_eq!(
            suggested_rule_contents("mkdir -p out && cargo build 2>&1 && mkdir b"),
            vec!["mkdir:*", "cargo build:*"]
        );
        assert_eq!(
            suggested_rule_contents("env X=1 true"),
            vec!["env X=1 true"]
        );
        assert_eq!(
            suggested_rule_contents("echo a > out1"),
            vec!["echo a > out1"]
        );
        assert_eq!(suggested_rule_contents("echo `date`"), vec!["echo `date`"]);
        assert_eq!(
            suggested_rule_contents("{ cargo build; } 2>&1"),
            vec!["{ cargo build; } 2>&1"]
        );
        assert!(suggested_rule_contents("(echo x").is_empty());
        assert!(suggested_rule_contents("cat <<EOF\nx\nEOF").is_empty());
        assert!(suggested_rule_contents("echo $(ls) *").is_empty());
        assert_eq!(suggested_rule_contents("ls -d *"), vec!["ls:*"]);
        assert_eq!(
            suggested_rule_contents("git status\nls"),
            vec!["git status:*", "ls:*"]
        );
    }

    #[test]
    fn prefix_rules_match_only_plain_commands_they_cover() {
        let rule = BashPattern::from_rule(Some("git status:*"));
        let ok = |c: &str| rule.allows(c, &read(c));
        assert!(ok("git status"));
        assert!(ok("git status --short 2>&1"));
        assert!(ok("'git' status"));
        assert!(!ok("git statusx"));
        assert!(!ok("git status -c core.fsmonitor=x"));
        assert!(
            BashPattern::from_rule(Some("make build:*")).allows("make build", &read("make build"))
        );
        assert!(
            !BashPattern::from_rule(Some("make build:*"))
                .allows("make build --eval=x", &read("make build --eval=x"))
        );
        assert!(
            !BashPattern::from_rule(Some("cargo test:*"))
                .allows("cargo test --config x", &read("cargo test --config x"))
        );
        for c in [
            "git status; rm -rf ~",
            "git status > /etc/x",
            "git status $(curl x)",
            "git status\nrm x",
            "git status & rm x",
            "git status && rm x",
            "git status | sh",
            "git status `rm x`",
            "X=1 git status",
            "git status <(rm x)",
        ] {
            assert!(!ok(c), "{c:?}");
        }
        let env = BashPattern::from_rule(Some("env:*"));
        assert!(!env.is_safe());
        assert!(!env.allows("env rm -f victim", &read("env rm -f victim")));
        let exact = BashPattern::from_rule(Some("echo $(date)"));
        assert!(exact.allows(" echo $(date) ", &read("echo $(date)")));
    }

    #[test]
    fn meanings_in_words() {
        assert_eq!(
            rule_meaning(Some("git status:*")),
            "every command that starts with git status"
        );
        assert_eq!(
            rule_meaning(Some("echo a > out1")),
            "exactly: echo a > out1"
        );
        assert_eq!(rule_meaning(None), "every command");
        assert!(rule_meaning(Some("env:*")).starts_with("nothing"));
    }
}
