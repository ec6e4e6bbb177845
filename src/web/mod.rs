//! The web view of a lead server: a small HTTP server (axum on the server's tokio runtime) for a
//! phone or a browser, with the team, its transcript and the waiting requests, that answers
//! requests and messages teammates. It is one more client of the hub, through the same
//! contract as `attach` and `ctl` ([`upstream`]): it never touches the team's files and never
//! blocks the controller's loop. Its state ([`state`]) is kept from the hub's events and sent
//! to pages as numbered server-sent events, so a page that slept catches up from the last
//! number it saw. Every string from a teammate is escaped before it is sent ([`view`]) and the
//! page only sets text; logins, sessions and CSRF are [`auth`]'s, the routes [`routes`]'s, and
//! what a page may do is [`Allow`] (`web-allow`).

pub mod actions;
pub mod auth;
pub mod routes;
pub mod state;
pub mod upstream;
pub mod view;

use std::net::SocketAddr;
use std::sync::Arc;

use upstream::Upstream;

/// Where the web view listens unless told otherwise: loopback, a port the system picks.
pub const DEFAULT_ADDR: &str = "127.0.0.1:0";

/// What the web view may do when neither `--allow` nor the config file's `web-allow` says.
pub const DEFAULT_ALLOW: &str = "read,answer,message";

/// What the page may do beyond reading (`web-allow`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Allow {
    pub answer: bool,
    pub message: bool,
    pub steer: bool,
    pub interrupt: bool,
}

/// The words of `web-allow`.
pub const ALLOW_WORDS: [&str; 5] = ["read", "answer", "message", "steer", "interrupt"];

impl Default for Allow {
    /// Read, answer and message; steering and interrupting are opt-in.
    fn default() -> Allow {
        Allow {
            answer: true,
            message: true,
            steer: false,
            interrupt: false,
        }
    }
}

impl Allow {
    /// Reads a list such as `read,answer,message,steer` (reading is always allowed).
    pub fn parse(text: &str) -> Result<Allow, String> {
        let mut allow = Allow {
            answer: false,
            message: false,
            steer: false,
            interrupt: false,
        };
        for word in text
            .split([',', ' '])
            .map(str::trim)
            .filter(|w| !w.is_empty())
        {
            match word {
                "read" => {}
                "answer" => allow.answer = true,
                "message" => allow.message = true,
                "steer" => allow.steer = true,
                "interrupt" => allow.interrupt = true,
                other => {
                    return Err(format!(
                        "`{}` is not one of {}",
                        crate::protocol::display::visible_line(other),
                        ALLOW_WORDS.join(", ")
                    ));
                }
            }
        }
        Ok(allow)
    }

    /// The words in force.
    pub fn words(&self) -> Vec<&'static str> {
        let mut out = vec!["read"];
        for (on, word) in [
            (self.answer, "answer"),
            (self.message, "message"),
            (self.steer, "steer"),
            (self.interrupt, "interrupt"),
        ] {
            if on {
                out.push(word);
            }
        }
        out
    }
}

/// How the web view is started.
#[derive(Debug, Clone)]
pub struct WebOptions {
    pub addr: SocketAddr,
    pub allow: Allow,
}

/// A web view that listens.
pub struct Running {
    /// Where it listens (the port the system picked).
    pub addr: SocketAddr,
    /// The one-time login link (print it once; never log it).
    pub login_url: String,
    /// Ends when the lead's connection has ended.
    pub pump: tokio::task::JoinHandle<()>,
    pub server: tokio::task::JoinHandle<()>,
}

impl Running {
    /// What listening here exposes, when it is more than this machine (`None` on loopback).
    pub fn exposure(&self, allow: &Allow) -> Option<String> {
        if self.addr.ip().is_loopback() {
            return None;
        }
        Some(format!(
            "teamlead web: listening on {} beyond this machine, in plain HTTP: anyone who can reach it sees the login page, and whoever holds the login link can read the team's transcript, requests and tasks and {}. Prefer an SSH tunnel or a private network (tailscale serve) to an open network.",
            self.addr,
            match allow.words().as_slice() {
                ["read"] => "nothing more".to_string(),
                words => words[1..].join(", "),
            }
        ))
    }
}

/// Binds `options.addr` and serves the page for `upstream`'s team.
pub async fn start(upstream: Upstream, options: WebOptions) -> std::io::Result<Running> {
    let listener = tokio::net::TcpListener::bind(options.addr).await?;
    let addr = listener.local_addr()?;
    let shared = state::Shared::new();
    let (auth, login) = auth::Auth::new();
    let Upstream { events, commands } = upstream;
    let pump = tokio::spawn(state::pump(shared.clone(), events));
    let app = routes::router(routes::App {
        shared,
        auth: Arc::new(auth),
        allow: options.allow,
        commands,
    });
    let server = tokio::spawn(async move {
        let service = app.into_make_service_with_connect_info::<SocketAddr>();
        if let Err(e) = axum::serve(listener, service).await {
            tracing::warn!("web view: the HTTP server ended: {e}");
        }
    });
    let host = if addr.ip().is_unspecified() {
        "THIS-HOST".to_string()
    } else {
        addr.ip().to_string()
    };
    let host = if addr.is_ipv6() && !addr.ip().is_unspecified() {
        format!("[{host}]")
    } else {
        host
    };
    Ok(Running {
        addr,
        login_url: format!("http://{host}:{}/login?token={login}", addr.port()),
        pump,
        server,
    })
}
