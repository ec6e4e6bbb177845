//! The command-line tools as child processes on temporary homes (`inspect`, `monitor`, `task`, `clean`, `config`, `hosts`, `man`, `relay`).

mod clean_worktrees;
mod config;
mod hosts;
mod inspect;
mod man;
mod relay;
mod task;
