//! The teammates of one team that run on other hosts (DESIGN.md "Hosts"): each in a session of
//! the team's private tmux server on its host (`tmux -L teamlead-<team>`, started over the
//! host's ssh master and living on without it, so a dropped link leaves the teammate running),
//! one [`HostLink`] per host carrying its inboxes, route and team file. Every call here blocks
//! (ssh); the executor runs them on the blocking pool.
//!
//! A remote member is marked in the lead's team file by its `teamleadHost` key (ids stay
//! `name@team`). A listing that fails (the host unreachable) is never read as "not running".

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use super::link::{HostLink, LinkSpec, StateSink, link_id};
use super::model_forward::{ModelProxy, ModelTarget};
use super::probe::remote_teamlead_env;
use super::{Connection, Connector};
use crate::backend::executor::{ExecutorError, Liveness, LivenessReport, SpawnRequest, Spawned};
use crate::backend::launch::{TeammateLaunch, TeammateProgram, shell_quote};
use crate::config::HostConfig;
use crate::protocol::{BackendKind, InboxEntry, LEAD_NAME, Member};
use crate::store::{self, Home};

/// The member key that names the host a teammate runs on.
pub use crate::protocol::HOST_KEY;

/// How long a spawn waits for the host to have the team's new route and team file.
const SYNC_DEADLINE: Duration = Duration::from_secs(20);

/// How long a teammate waits for a lead that is gone (the teammates' own rule).
const GRACE_VAR: &str = teamlead_relay::presence::GRACE_VAR;

/// How long the host's teammates (and a `claude` teammate's guard there) wait for a lead whose
/// link is gone (`relay::presence`): the lead's own grace when one was set, as for a local
/// teammate, else the hosts' longer default (a link that drops is not a dead lead).
pub(super) fn host_grace_ms() -> u128 {
    super::on_host::host_grace_of(std::env::var(GRACE_VAR).ok().as_deref()).as_millis()
}

/// How long one tmux call on a host may take.
const CALL_DEADLINE: Duration = Duration::from_secs(15);

/// The host a member runs on (`None`: the lead's host).
pub fn member_host(member: &Member) -> Option<&str> {
    member.host()
}

/// The socket name of the team's private tmux server on a host.
pub fn tmux_socket(team: &str) -> String {
    format!("teamlead-{team}")
}

/// The pid of the host's master as its last check recorded it (beside its socket).
fn master_pid(connection: &Connection) -> Option<String> {
    std::fs::read_to_string(connection.control.with_extension("pid"))
        .ok()
        .map(|p| p.trim().to_string())
}

/// `tmux -L <team's socket> -f /dev/null ARGS` as a command line for a host's shell.
pub fn team_tmux_line(team: &str, args: &[&str]) -> String {
    let mut line = vec![
        "tmux".to_string(),
        "-L".to_string(),
        shell_quote(&tmux_socket(team)),
        "-f".to_string(),
        "/dev/null".to_string(),
    ];
    line.extend(args.iter().map(|a| shell_quote(a)));
    line.join(" ")
}

/// What it takes to run teammates of one team on other hosts.
pub struct RemoteTeammates {
    pub home: Home,
    pub team: String,
    /// The team's creation time (part of each link id).
    pub created_ms: u64,
    pub version: String,
    /// teamlead's own teammate engine (`shell`, `llm`).
    pub engine: String,
    pub connector: Connector,
    pub hosts: Vec<HostConfig>,
    pub sink: StateSink,
    links: Mutex<HashMap<String, HostLink>>,
    /// Each remote teammate's host.
    members: Mutex<HashMap<String, String>>,
    /// The lead's config price rows, sent to every relay.
    prices: serde_json::Value,
    /// The model endpoint of teamlead's own `llm` teammates (`None`: the shell engine).
    llm: Option<super::model_forward::ForwardedModel>,
    /// The lead's end of the forwarded model endpoint, made at the first use.
    proxy: Mutex<Option<ModelProxy>>,
    /// The port each host forwards to it, and the master (its pid) that holds the forward.
    ports: Mutex<HashMap<String, (u16, Option<String>)>>,
    /// Teammates whose start is under way: counted already, with no session yet.
    starting: Mutex<std::collections::HashSet<String>>,
    /// Where the links hand the entries for the lead's inbox as they arrive (the lead's
    /// drain), for the links started from now on.
    lead_entries: Mutex<Option<crate::backend::executor::LeadEntrySink>>,
}

fn failed(what: impl std::fmt::Display) -> ExecutorError {
    ExecutorError::Failed(what.to_string())
}

impl RemoteTeammates {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        home: Home,
        team: &str,
        created_ms: u64,
        version: &str,
        engine: &str,
        connector: Connector,
        hosts: Vec<HostConfig>,
        sink: StateSink,
    ) -> RemoteTeammates {
        RemoteTeammates {
            home,
            team: team.to_string(),
            created_ms,
            version: version.to_string(),
            engine: engine.to_string(),
            connector,
            hosts,
            sink,
            links: Mutex::new(HashMap::new()),
            members: Mutex::new(HashMap::new()),
            starting: Mutex::new(std::collections::HashSet::new()),
            lead_entries: Mutex::new(None),
            llm: None,
            prices: serde_json::Value::Array(Vec::new()),
            proxy: Mutex::new(None),
            ports: Mutex::new(HashMap::new()),
        }
    }

    /// Teamlead's own teammates on hosts use the `llm` engine with `config`'s model, reached
    /// through the forwarded endpoint.
    pub fn with_llm(
        mut self,
        config: Option<super::model_forward::ForwardedModel>,
    ) -> RemoteTeammates {
        self.llm = config;
        self
    }

    /// The lead's prices (its config rows go to every relay, which prices the host's
    /// `claude` teammates with them).
    pub fn with_prices(mut self, prices: &crate::protocol::pricing::PriceTable) -> RemoteTeammates {
        self.prices = teamlead_relay::prices::rows_value(prices);
        self
    }

    /// The base URL, on `host`, of the lead's endpoint for `target` (forwarded over the
    /// host's master; the relay on the lead's side started at the first use).
    fn model_url(&self, host: &str, target: &ModelTarget) -> Result<String, ExecutorError> {
        let connection = self.connection(host)?;
        let mut proxy = self
            .proxy
            .lock()
            .map_err(|_| failed("the model forward's lock is poisoned"))?;
        if proxy.is_none() {
            let socket = self
                .connector
                .control_dir
                .join(format!("model-{}.sock", std::process::id()));
            let started = ModelProxy::start(&socket).map_err(|e| {
                failed(format!(
                    "the model endpoint for {host} cannot listen at {}: {e}",
                    socket.display()
                ))
            })?;
            *proxy = Some(started);
        }
        let Some(proxy) = proxy.as_ref() else {
            return Err(failed("no model forward"));
        };
        let token = proxy.route(target);
        let port = self.forward_port(host, &connection, &proxy.socket)?;
        Ok(format!("http://127.0.0.1:{port}/{token}"))
    }

    /// The host's port of the model forward: asked of its master again (the same master
    /// keeps it; a new one is asked for the same port first).
    fn forward_port(
        &self,
        host: &str,
        connection: &Connection,
        socket: &std::path::Path,
    ) -> Result<u16, ExecutorError> {
        let want = self
            .ports
            .lock()
            .ok()
            .and_then(|p| p.get(host).map(|(port, _)| *port));
        let port = super::model_forward::forward(connection, socket, want)
            .map_err(|e| failed(format!("the model forward to {host}: {e}")))?;
        if want.is_some_and(|w| w != port) {
            tracing::warn!(
                "{host}: the model forward moved from port {want:?} to {port}; teammates started before reach the model again after /respawn"
            );
        }
        if let Ok(mut ports) = self.ports.lock() {
            ports.insert(host.to_string(), (port, master_pid(connection)));
        }
        Ok(port)
    }

    /// Keeps every host's model forward in place: a master replaced since (another pid) lost
    /// it, and is asked for it again.
    fn keep_forwards(&self) {
        let socket = match self.proxy.lock() {
            Ok(p) => p.as_ref().map(|p| p.socket.clone()),
            Err(_) => None,
        };
        let Some(socket) = socket else { return };
        let hosts: Vec<(String, Option<String>)> = self
            .ports
            .lock()
            .map(|p| {
                p.iter()
                    .map(|(h, (_, pid))| (h.clone(), pid.clone()))
                    .collect()
            })
            .unwrap_or_default();
        for (host, pid) in hosts {
            let up = self
                .links
                .lock()
                .ok()
                .and_then(|l| l.get(&host).map(HostLink::is_up))
                .unwrap_or(false);
            if !up {
                continue;
            }
            if let Ok(connection) = self.connection(&host)
                && master_pid(&connection) != pid
                && let Err(e) = self.forward_port(&host, &connection, &socket)
            {
                tracing::warn!("{e}");
            }
        }
    }

    /// The host `name` runs on, if it is a remote teammate of this session.
    pub fn host_of(&self, name: &str) -> Option<String> {
        self.members.lock().ok()?.get(name).cloned()
    }

    /// Counts `name` as a teammate of this session on `host` (a spawn, an adoption).
    pub(super) fn register(&self, name: &str, host: &str) {
        if let Ok(mut m) = self.members.lock() {
            m.insert(name.to_string(), host.to_string());
        }
    }

    /// Whether `host`'s link carries traffic now.
    pub fn host_up(&self, host: &str) -> bool {
        self.links
            .lock()
            .ok()
            .and_then(|l| l.get(host).map(HostLink::is_up))
            .unwrap_or(false)
    }

    /// The remote teammates, with their hosts.
    pub fn all(&self) -> Vec<(String, String)> {
        self.members
            .lock()
            .map(|m| m.iter().map(|(n, h)| (n.clone(), h.clone())).collect())
            .unwrap_or_default()
    }

    fn host(&self, name: &str) -> Result<&HostConfig, ExecutorError> {
        self.hosts.iter().find(|h| h.name == name).ok_or_else(|| {
            failed(format!(
                "no host `{name}` in the config file: `teamlead hosts add {name} [user@]host` adds it"
            ))
        })
    }

    pub(super) fn connection(&self, host: &str) -> Result<Connection, ExecutorError> {
        Ok(self.connector.connection(self.host(host)?))
    }

    /// The teammates that run on `host`.
    fn hosted(&self, host: &str) -> Vec<String> {
        let mut names: Vec<String> = self
            .all()
            .into_iter()
            .filter(|(_, h)| h == host)
            .map(|(n, _)| n)
            .collect();
        names.sort();
        names
    }

    /// Tells `host`'s link the route as it is now (starting the link first); returns the
    /// generation to wait for.
    pub(super) fn update_route(&self, host: &str) -> Result<u64, ExecutorError> {
        let hosted = self.hosted(host);
        let mut links = self
            .links
            .lock()
            .map_err(|_| failed("the links' lock is poisoned"))?;
        if !links.contains_key(host) {
            let spec = LinkSpec {
                connection: self.connection(host)?,
                home: self.home.clone(),
                team: self.team.clone(),
                link: link_id(&self.team, self.created_ms, host),
                hosted: hosted.clone(),
                version: self.version.clone(),
                prices: self.prices.clone(),
                lead_entries: self.lead_entries.lock().ok().and_then(|s| s.clone()),
            };
            let link = HostLink::start(spec, self.sink.clone())
                .map_err(|e| failed(format!("no thread for the link to {host}: {e}")))?;
            links.insert(host.to_string(), link);
        }
        let link = links
            .get(host)
            .ok_or_else(|| failed(format!("no link to {host}")))?;
        Ok(link.set_hosted(hosted))
    }

    /// Where every link started from now on hands the entries for the lead's inbox as they
    /// arrive (the controller sets it before it adopts or spawns anyone).
    pub fn set_lead_entries(&self, sink: crate::backend::executor::LeadEntrySink) {
        if let Ok(mut slot) = self.lead_entries.lock() {
            *slot = Some(sink);
        }
    }

    /// `entry`, about to be appended to the lead's copy of `name`'s inbox, handed to the link of
    /// the host `name` runs on ([`HostLink::hand_off`]); nothing for a local teammate or a host
    /// without a link yet (the link's pick-up from the file carries it). Two short locks, no
    /// I/O: the controller's loop calls it.
    pub fn hand_off(&self, name: &str, entry: &InboxEntry) {
        let Some(host) = self.host_of(name) else {
            return;
        };
        if let Ok(links) = self.links.lock()
            && let Some(link) = links.get(&host)
        {
            link.hand_off(name, entry.clone());
        }
    }

    /// Waits until `host`'s relay acknowledged route `generation` (the links' lock is taken
    /// only to get the link's waiter).
    fn wait_synced(&self, host: &str, generation: u64) -> bool {
        self.link_waiter(host, |_| ())
            .is_some_and(|(_, w)| w.wait(generation, SYNC_DEADLINE))
    }

    /// `with` run on `host`'s link under the links' lock, and a waiter of that link to wait
    /// with once the lock is let go (`None`: no link to the host).
    fn link_waiter<T>(
        &self,
        host: &str,
        with: impl FnOnce(&HostLink) -> T,
    ) -> Option<(T, super::link::SyncedWaiter)> {
        let links = self.links.lock().ok()?;
        let link = links.get(host)?;
        Some((with(link), link.synced_waiter()))
    }

    /// `tmux -L <team's socket> -f /dev/null ARGS` on `host`, through its master.
    pub(super) fn tmux(&self, host: &str, args: &[&str]) -> Result<Option<i32>, ExecutorError> {
        let connection = self.connection(host)?;
        let out = connection
            .call(&team_tmux_line(&self.team, args), None, CALL_DEADLINE)
            .map_err(|e| failed(format!("on {host}: {e}")))?;
        if out.status != Some(0) && !args.contains(&"has-session") {
            return Err(failed(format!(
                "tmux on {host}: {}",
                out.stderr.lines().last().unwrap_or("failed")
            )));
        }
        Ok(out.status)
    }

    /// The command line that runs teamlead's own teammate on the host, as the local pane
    /// executor builds it, with the host's teamlead and home; nothing of the lead's
    /// environment goes along; it starts in `cwd` (an `llm` teammate gets the forwarded endpoint, its provider and
    /// model, never a key).
    fn command_line(
        &self,
        host: &HostConfig,
        request: &SpawnRequest,
        cwd: &str,
    ) -> Result<String, ExecutorError> {
        let launch = TeammateLaunch {
            program: TeammateProgram::Teamlead {
                binary: "teamlead".to_string(),
                engine: self.engine.clone(),
            },
            cwd: String::new(),
            name: request.name.clone(),
            team: self.team.clone(),
            color: request.color.clone(),
            parent_session_id: None,
            plan_mode_required: request.plan_mode_required,
            agent_type: Some(request.agent_type.clone()),
            model: request.model.clone(),
            lead_mode: request.mode,
            session_id: None,
            guard: None,
        };
        let args = launch.args();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut env = Vec::new();
        if let Some(llm) = &self.llm {
            let url = self.model_url(&host.name, &llm.target)?;
            env.push(("TEAMLEAD_PROVIDER".to_string(), llm.provider.clone()));
            env.push((llm.base_url_var.to_string(), url));
            env.push(("TEAMLEAD_MODEL".to_string(), llm.model.clone()));
        }
        env.push((GRACE_VAR.to_string(), host_grace_ms().to_string()));
        Ok(remote_teamlead_env(
            host.home.as_deref(),
            Some(cwd),
            &env,
            &args,
        ))
    }

    /// The command line of a `claude` teammate on the host (its own Claude Code, found
    /// there), or why it cannot run there.
    fn claude_line(
        &self,
        host: &HostConfig,
        request: &SpawnRequest,
        cwd: &str,
    ) -> Result<String, ExecutorError> {
        let connection = self.connection(&host.name)?;
        let binary = super::remote_claude::find_claude(&connection).map_err(failed)?;
        let url = if host.forward_model {
            let target = ModelTarget::for_claude(&|k| std::env::var(k).ok());
            Some(self.model_url(&host.name, &target)?)
        } else {
            None
        };
        Ok(super::remote_claude::command_line(
            host,
            &binary,
            &self.team,
            request,
            cwd,
            url.as_deref(),
            host_grace_ms(),
        ))
    }

    /// Starts `request` on `host` (its member entry exists): the member is marked with its
    /// host, its prompt goes to its inbox (the link forwards it), the host gets the route and
    /// team file, then the teammate starts in the team's tmux server there.
    pub fn spawn(&self, host: &str, request: &SpawnRequest) -> Result<Spawned, ExecutorError> {
        if let Ok(mut s) = self.starting.lock() {
            s.insert(request.name.clone());
        }
        let started = self.start(host, request);
        if let Ok(mut s) = self.starting.lock() {
            s.remove(&request.name);
        }
        started
    }

    fn start(&self, host: &str, request: &SpawnRequest) -> Result<Spawned, ExecutorError> {
        let config = self.host(host)?.clone();
        let name = request.name.clone();
        // What it runs is known before anything is made for it: a host without claude is
        // one clear line, and nothing of the team is there yet.
        // The request's directory when it has one (its worktree there), else the host's `dir`.
        let cwd = match request.cwd.to_str() {
            Some(dir) if !dir.is_empty() => dir.to_string(),
            _ => config.dir.clone().unwrap_or_else(|| "~".to_string()),
        };
        let line = if request.claude {
            self.claude_line(&config, request, &cwd)?
        } else {
            self.command_line(&config, request, &cwd)?
        };
        let pane = format!("{host}:{name}");
        store::team::edit_team(&self.home, &self.team, |file| {
            if let Some(m) = file.members.iter_mut().find(|m| m.name == name) {
                m.extra
                    .insert(HOST_KEY.to_string(), serde_json::json!(host));
                // A `claude` teammate's session: the relay there reads its transcript for
                // the lead (`teamlead_relay::transcripts`).
                match request.session_id.as_deref().filter(|_| request.claude) {
                    Some(session) => m.extra.insert(
                        teamlead_relay::transcripts::SESSION_KEY.to_string(),
                        serde_json::json!(session),
                    ),
                    None => m.extra.remove(teamlead_relay::transcripts::SESSION_KEY),
                };
                m.tmux_pane_id = pane.clone();
                m.backend_type = Some(BackendKind::Tmux.as_str().to_string());
                m.cwd = cwd.clone();
            }
            Ok(())
        })?;
        let prompt: Vec<InboxEntry> = request
            .prompt
            .iter()
            .map(|p| InboxEntry::new(LEAD_NAME, p.clone()))
            .collect();
        store::inbox::replace(&self.home, &self.team, &name, &prompt)?;
        self.register(&name, host);
        let session = [
            "new-session",
            "-d",
            "-s",
            &name,
            "-x",
            "200",
            "-y",
            "50",
            &line,
        ];
        let generation = self.update_route(host)?;
        // A relay that starts sessions itself gets the start right behind the route, over the
        // open connection: one trip. Otherwise the route's ack, then a tmux call over ssh.
        let via_relay = self.link_waiter(host, |link| {
            link.can_start()
                .then(|| link.start_session(&name, &team_tmux_line(&self.team, &session)))
                .is_some()
        });
        let started = match via_relay {
            Some((true, waiter)) => match waiter.wait_started(&name, SYNC_DEADLINE) {
                Some(None) => Ok(()),
                Some(Some(why)) => Err(failed(format!("tmux on {host}: {why}"))),
                None => Err(failed(format!(
                    "{host} is unreachable: it did not start {name} within {} s",
                    SYNC_DEADLINE.as_secs()
                ))),
            },
            _ if !self.wait_synced(host, generation) => Err(failed(format!(
                "{host} is unreachable: the team's files did not reach it within {} s",
                SYNC_DEADLINE.as_secs()
            ))),
            _ => self.tmux(host, &session).map(|_| ()),
        };
        if let Err(e) = started {
            self.forget(&name);
            return Err(e);
        }
        Ok(Spawned {
            pane_id: pane,
            kind: BackendKind::Tmux,
        })
    }

    /// `name` no longer runs on its host: out of the route.
    pub(super) fn forget(&self, name: &str) -> Option<String> {
        let host = self.members.lock().ok()?.remove(name)?;
        let _ = self.update_route(&host);
        Some(host)
    }

    /// Kills `name`'s tmux session on its host (the server ends with its last session).
    pub fn kill(&self, name: &str) -> Result<(), ExecutorError> {
        let Some(host) = self.host_of(name) else {
            return Err(ExecutorError::NoSuchTeammate(name.to_string()));
        };
        let target = format!("={name}");
        let alive = self.tmux(&host, &["has-session", "-t", &target])?;
        if alive == Some(0) {
            self.tmux(&host, &["kill-session", "-t", &target])?;
        }
        self.forget(name);
        Ok(())
    }

    /// The liveness of each remote teammate whose host answers; a host that does not answer
    /// says nothing about its teammates (they are shown unreachable, never gone).
    pub fn liveness(&self) -> Vec<LivenessReport> {
        self.keep_forwards();
        let mut reports = Vec::new();
        for (name, host) in self.all() {
            let starting = self.starting.lock().is_ok_and(|s| s.contains(&name));
            let liveness = if starting || !self.host_up(&host) {
                Liveness::Running
            } else {
                // Only tmux's own "no such session" (status 1) says it is gone; a call that
                // failed or was cut says nothing.
                match self.tmux(&host, &["has-session", "-t", &format!("={name}")]) {
                    Ok(Some(1)) => Liveness::Closed,
                    Ok(_) | Err(_) => Liveness::Running,
                }
            };
            reports.push(LivenessReport {
                name,
                liveness,
                tail: Vec::new(),
            });
        }
        reports
    }

    /// The end of the session: every remote teammate killed, the links ended.
    pub fn quit(&self) {
        for (name, _) in self.all() {
            if let Err(e) = self.kill(&name) {
                tracing::warn!("{name} on its host: {e}");
            }
        }
        self.detach();
    }

    /// The links end; the teammates keep running on their hosts.
    pub fn detach(&self) {
        if let Ok(mut proxy) = self.proxy.lock() {
            proxy.take();
        }
        let links: Vec<HostLink> = self
            .links
            .lock()
            .map(|mut l| l.drain().map(|(_, link)| link).collect())
            .unwrap_or_default();
        drop(links);
    }
}
