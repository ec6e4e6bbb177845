//! Where a teammate runs, as a type: [`BackendKind`]. The protocol's `backendType` strings
//! (`tmux`, `iterm2`, `zellij`, `kitty`, `wezterm`, `in-process`) exist only here, at the edge:
//! they are parsed once when a member is read ([`crate::Member::backend_kind`]) and
//! written from the enum. The enum, its strings, the names people know and [`BackendKind::ALL`]
//! are made from one list (`backend_kinds!`), so a kind cannot be missing from `ALL`: a new
//! terminal is one line there (and its `backend::terminals` file).

use std::fmt;

/// Declares [`BackendKind`] from one line per kind: the variant (with its doc), its
/// `backendType` string and the name a person knows it by.
macro_rules! backend_kinds {
    ($( $(#[$doc:meta])* $variant:ident => $text:literal, $name:literal; )*) => {
        /// The kinds of teammate executors teamlead knows.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum BackendKind {
            $( $(#[$doc])* $variant, )*
        }

        impl BackendKind {
            /// Every kind, in the order the UI lists them.
            pub const ALL: [BackendKind; [$($text),*].len()] = [$(BackendKind::$variant),*];

            /// The `backendType` string of PROTOCOL.md 2.
            pub fn as_str(self) -> &'static str {
                match self {
                    $( BackendKind::$variant => $text, )*
                }
            }

            /// The name a person knows it by (`iTerm2`, `WezTerm`, …).
            pub fn terminal_name(self) -> &'static str {
                match self {
                    $( BackendKind::$variant => $name, )*
                }
            }
        }
    };
}

backend_kinds! {
    /// A pane of tmux (the user's server or a private one).
    Tmux => "tmux", "tmux";
    /// An iTerm2 split, through `it2`.
    Iterm2 => "iterm2", "iTerm2";
    /// A pane of Zellij (the lead's session or a private background one).
    Zellij => "zellij", "Zellij";
    /// A kitty window, through `kitty @`.
    Kitty => "kitty", "kitty";
    /// A WezTerm pane, through `wezterm cli`.
    Wezterm => "wezterm", "WezTerm";
    /// A window of GNU screen, in a private detached session.
    Screen => "screen", "screen";
    /// A tokio task of the lead's own process.
    InProcess => "in-process", "in-process";
}

impl BackendKind {
    /// Parses a `backendType` string; `None` for one this version does not know.
    pub fn parse(text: &str) -> Option<BackendKind> {
        BackendKind::ALL.into_iter().find(|k| k.as_str() == text)
    }

    /// Every terminal with panes, in words: `tmux, iTerm2, Zellij, kitty or WezTerm`.
    pub fn pane_terminals() -> String {
        let names: Vec<&str> = BackendKind::ALL
            .into_iter()
            .filter(|k| k.is_pane())
            .map(BackendKind::terminal_name)
            .collect();
        match names.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
            Some((last, _)) => last.to_string(),
            None => String::new(),
        }
    }

    /// Does a teammate of this kind live in a pane (a process of its own)?
    pub fn is_pane(self) -> bool {
        !matches!(self, BackendKind::InProcess)
    }

    /// The kind a member's `tmuxPaneId` implies when `backendType` is absent (older Claude
    /// Code): `%N` is a tmux pane, `in-process` an in-process teammate, another non-empty id an
    /// iTerm2 session; `""` (no pane yet) and `leader` say nothing.
    pub(crate) fn from_pane_id(pane_id: &str) -> Option<BackendKind> {
        if pane_id.starts_with('%') {
            Some(BackendKind::Tmux)
        } else if pane_id == BackendKind::InProcess.as_str() {
            Some(BackendKind::InProcess)
        } else if pane_id.is_empty() || pane_id == "leader" {
            None
        } else {
            Some(BackendKind::Iterm2)
        }
    }
}

impl fmt::Display for BackendKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for BackendKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for BackendKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        BackendKind::parse(&s)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown backend `{s}`")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_reads_pane_ids() {
        for kind in BackendKind::ALL {
            assert_eq!(BackendKind::parse(kind.as_str()), Some(kind));
        }
        assert_eq!(BackendKind::parse("ghostty"), None);
        assert_eq!(BackendKind::from_pane_id("%12"), Some(BackendKind::Tmux));
        assert_eq!(
            BackendKind::from_pane_id("in-process"),
            Some(BackendKind::InProcess)
        );
        assert_eq!(
            BackendKind::from_pane_id("9F2C-11"),
            Some(BackendKind::Iterm2)
        );
        assert_eq!(BackendKind::from_pane_id(""), None);
        assert_eq!(BackendKind::from_pane_id("leader"), None);
    }
}
