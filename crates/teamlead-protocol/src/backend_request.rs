//! What the person asked for as the teammates' backend: [`BackendRequest`], `auto` or one
//! [`BackendKind`] by name. One type for the `--backend` flag (parsed by the command line with
//! [`FromStr`](std::str::FromStr)), the config file's `backend` key (serde) and detection
//! (`backend::detect::detect`, which turns it into the session's `BackendChoice`); it lives
//! here, below every layer that reads it. Its names are `auto` and the kinds' own
//! `backendType` strings, so a new kind needs nothing here.

use std::sync::LazyLock;

use crate::BackendKind;

/// Where teammates run, as asked (`--backend`, `backend = …`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum BackendRequest {
    /// Detected from the environment (`backend::detect`).
    #[default]
    Auto,
    /// One kind by name (`tmux`, …, `in-process`).
    Kind(BackendKind),
}

/// `auto`, then every kind's name.
static NAMES: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
    BackendRequest::all()
        .into_iter()
        .map(BackendRequest::as_str)
        .collect()
});

impl BackendRequest {
    /// Every request: `auto`, then each kind in [`BackendKind::ALL`]'s order.
    pub fn all() -> Vec<BackendRequest> {
        std::iter::once(BackendRequest::Auto)
            .chain(BackendKind::ALL.into_iter().map(BackendRequest::Kind))
            .collect()
    }

    /// Its name: `auto` or the kind's `backendType` string.
    pub fn as_str(self) -> &'static str {
        match self {
            BackendRequest::Auto => "auto",
            BackendRequest::Kind(kind) => kind.as_str(),
        }
    }

    /// Every name, for error messages (`auto`, `tmux`, …, `in-process`).
    pub fn names() -> &'static [&'static str] {
        &NAMES
    }
}

impl std::fmt::Display for BackendRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for BackendRequest {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s == BackendRequest::Auto.as_str() {
            return Ok(BackendRequest::Auto);
        }
        BackendKind::parse(s)
            .map(BackendRequest::Kind)
            .ok_or_else(|| {
                let names = BackendRequest::names();
                let (last, rest) = names.split_last().unwrap_or((&"auto", &[]));
                format!(
                    "unknown backend `{s}` (expected {} or {last})",
                    rest.join(", ")
                )
            })
    }
}

impl<'de> serde::Deserialize<'de> for BackendRequest {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse()
            .map_err(|_| serde::de::Error::unknown_variant(&s, BackendRequest::names()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_parses_back() {
        for request in BackendRequest::all() {
            assert_eq!(request.as_str().parse::<BackendRequest>(), Ok(request));
        }
        assert_eq!(BackendRequest::all().len(), BackendKind::ALL.len() + 1);
        let err = "ghostty".parse::<BackendRequest>().unwrap_err();
        assert!(
            err.starts_with("unknown backend `ghostty` (expected auto, tmux,")
                && err.ends_with(" or in-process)"),
            "{err}"
        );
        #[derive(serde::Deserialize)]
        struct File {
            backend: BackendRequest,
        }
        let file: File = toml::from_str("backend = \"in-process\"").unwrap();
        assert_eq!(file.backend, BackendRequest::Kind(BackendKind::InProcess));
        let err = toml::from_str::<File>("backend = \"ghostty\"")
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("unknown variant `ghostty`, expected one of"),
            "{err}"
        );
    }
}
