//! What the person asked for as the teammates' backend: [`BackendRequest`], `auto` or one
//! backend by name. One enum for the `--backend` flag (clap), the config file's `backend` key
//! (serde) and detection (`backend::detect::detect`, which turns it into the session's
//! `BackendChoice`); it lives here, below every layer that reads it.

use clap::ValueEnum;
use serde::Deserialize;

use crate::protocol::BackendKind;

/// Where teammates run, as asked (`--backend`, `backend = …`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BackendRequest {
    /// Inside tmux → tmux; inside Zellij → Zellij; in kitty (remote control) → kitty; in
    /// WezTerm → WezTerm; in iTerm2 with `it2` → iTerm2; tmux on PATH → a private tmux server;
    /// else in-process
    #[default]
    Auto,
    /// tmux panes (the user's server, or a private one outside tmux)
    Tmux,
    /// iTerm2 splits through `it2`
    Iterm2,
    /// Zellij panes (beside the lead inside Zellij, else a private background session)
    Zellij,
    /// kitty windows through `kitty @` (needs KITTY_LISTEN_ON)
    Kitty,
    /// WezTerm panes through `wezterm cli`
    Wezterm,
    /// Teammates inside the lead's process
    InProcess,
}

impl std::str::FromStr for BackendRequest {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "auto" => Ok(BackendRequest::Auto),
            "tmux" => Ok(BackendRequest::Tmux),
            "iterm2" => Ok(BackendRequest::Iterm2),
            "zellij" => Ok(BackendRequest::Zellij),
            "kitty" => Ok(BackendRequest::Kitty),
            "wezterm" => Ok(BackendRequest::Wezterm),
            "in-process" => Ok(BackendRequest::InProcess),
            other => Err(format!(
                "unknown backend `{other}` (expected auto, tmux, iterm2, zellij, kitty, wezterm or in-process)"
            )),
        }
    }
}

impl BackendRequest {
    /// The request that finds panes of this kind again (`clean` closing a dead team's panes).
    pub fn for_kind(kind: BackendKind) -> BackendRequest {
        match kind {
            BackendKind::Tmux => BackendRequest::Tmux,
            BackendKind::Iterm2 => BackendRequest::Iterm2,
            BackendKind::Zellij => BackendRequest::Zellij,
            BackendKind::Kitty => BackendRequest::Kitty,
            BackendKind::Wezterm => BackendRequest::Wezterm,
            BackendKind::InProcess => BackendRequest::InProcess,
        }
    }
}
