//! Who may use the web view: a one-time login token (printed once with the login link, never
//! logged) exchanged for a session cookie (HttpOnly, SameSite=Strict), a per-session token the
//! page sends in a header on every write (CSRF: a forged form or cross-site request has the
//! cookie withheld by SameSite, and cannot know the header), and a limit on login attempts.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The session cookie's name.
pub const COOKIE: &str = "teamlead_session";
/// The header every write carries.
pub const CSRF_HEADER: &str = "x-teamlead-csrf";
/// How long a session lasts.
pub const SESSION_LIFE: Duration = Duration::from_secs(12 * 3600);
/// Login attempts one address may make per window, and all addresses together.
pub const LOGINS_PER_ADDRESS: u32 = 10;
pub const LOGINS_IN_ALL: u32 = 30;
pub const LOGIN_WINDOW: Duration = Duration::from_secs(60);

/// A long random token (256 bits, hex).
pub fn token() -> String {
    (0..4)
        .map(|_| format!("{:016x}", rand::random::<u64>()))
        .collect()
}

/// Compares two secrets in time that does not depend on where they differ.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

struct Session {
    csrf: String,
    since: Instant,
}

/// Why a login was refused.
#[derive(Debug, PartialEq, Eq)]
pub enum LoginRefused {
    /// Too many attempts: wait.
    TooMany,
    /// Not the token, or it was used already.
    Wrong,
}

#[derive(Default)]
struct Inner {
    /// The login token not yet used.
    login: Option<String>,
    sessions: HashMap<String, Session>,
    /// Attempts per address in the current window, and in all.
    attempts: HashMap<IpAddr, u32>,
    all: u32,
    window: Option<Instant>,
}

/// The web view's sessions.
#[derive(Default)]
pub struct Auth(Mutex<Inner>);

/// A session's cookie value and its CSRF token.
pub struct Granted {
    pub session: String,
    pub csrf: String,
}

impl Auth {
    /// With a fresh login token (returned: it goes in the link printed, nowhere else).
    pub fn new() -> (Auth, String) {
        let login = token();
        let auth = Auth(Mutex::new(Inner {
            login: Some(login.clone()),
            ..Inner::default()
        }));
        (auth, login)
    }

    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A new one-time login token (the previous one no longer works).
    pub fn renew_login(&self) -> String {
        let login = token();
        self.inner().login = Some(login.clone());
        login
    }

    /// Exchanges the login token for a session (once).
    pub fn login(&self, from: IpAddr, offered: &str) -> Result<Granted, LoginRefused> {
        let mut inner = self.inner();
        let now = Instant::now();
        if inner
            .window
            .is_none_or(|at| now.duration_since(at) > LOGIN_WINDOW)
        {
            inner.window = Some(now);
            inner.attempts.clear();
            inner.all = 0;
        }
        inner.all += 1;
        let mine = inner.attempts.entry(from).or_insert(0);
        *mine += 1;
        if *mine > LOGINS_PER_ADDRESS || inner.all > LOGINS_IN_ALL {
            return Err(LoginRefused::TooMany);
        }
        let valid = inner.login.as_deref().is_some_and(|t| same(t, offered));
        if !valid {
            return Err(LoginRefused::Wrong);
        }
        inner.login = None;
        inner
            .sessions
            .retain(|_, s| s.since.elapsed() < SESSION_LIFE);
        let granted = Granted {
            session: token(),
            csrf: token(),
        };
        inner.sessions.insert(
            granted.session.clone(),
            Session {
                csrf: granted.csrf.clone(),
                since: now,
            },
        );
        Ok(granted)
    }

    /// The CSRF token of a live session.
    pub fn session(&self, cookie: &str) -> Option<String> {
        let inner = self.inner();
        inner
            .sessions
            .iter()
            .find(|(id, s)| same(id, cookie) && s.since.elapsed() < SESSION_LIFE)
            .map(|(_, s)| s.csrf.clone())
    }

    /// Is `header` the CSRF token of the session `cookie`?
    pub fn write_allowed(&self, cookie: &str, header: &str) -> bool {
        self.session(cookie).is_some_and(|csrf| same(&csrf, header))
    }
}

/// The session cookie's value in a `Cookie` header.
pub fn cookie_value(header: &str) -> Option<&str> {
    header
        .split(';')
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == COOKIE)
        .map(|(_, v)| v)
}

/// The `Set-Cookie` header of a new session.
pub fn set_cookie(session: &str) -> String {
    format!(
        "{COOKIE}={session}; HttpOnly; SameSite=Strict; Path=/; Max-Age={}",
        SESSION_LIFE.as_secs()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_login_token_works_once_and_attempts_are_limited() {
        let (auth, login) = Auth::new();
        let me: IpAddr = [127, 0, 0, 1].into();
        assert_eq!(auth.login(me, "nope").err(), Some(LoginRefused::Wrong));
        let granted = auth.login(me, &login).ok().unwrap();
        assert!(auth.write_allowed(&granted.session, &granted.csrf));
        assert!(!auth.write_allowed(&granted.session, "x"));
        assert_eq!(auth.login(me, &login).err(), Some(LoginRefused::Wrong));
        for _ in 0..LOGINS_PER_ADDRESS {
            let _ = auth.login(me, "guess");
        }
        let fresh = auth.renew_login();
        assert_eq!(auth.login(me, &fresh).err(), Some(LoginRefused::TooMany));
        let other: IpAddr = [10, 0, 0, 7].into();
        assert!(auth.login(other, &fresh).is_ok());
    }

    #[test]
    fn the_cookie_is_found_among_others() {
        assert_eq!(cookie_value("a=1; teamlead_session=abc; b=2"), Some("abc"));
        assert_eq!(cookie_value("a=1"), None);
        assert!(set_cookie("x").contains("HttpOnly; SameSite=Strict"));
    }
}
