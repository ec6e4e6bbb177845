//! The hub: one task between the controller and the clients. It takes every [`LeadEvent`],
//! keeps what a late client needs ([`Replay`]) and the story ([`Story`]), and passes each
//! event on to the attached clients without ever waiting for one (a client that falls
//! behind by a whole queue is dropped, the controller never is). Commands from clients go to
//! the controller in the order they came, through a forwarder, so the hub never waits for the
//! controller either. `/detach` and a screen that closed are the hub's business: that client
//! leaves, the team keeps running. With a policy hook ([`super::policy`]) the hub asks it
//! about each new permission request, beside the loop, answers for it and says so in the
//! transcript. With an idle limit ([`HubOptions::idle_exit`]) the hub ends the team as `/quit`
//! does once no client (a screen or `ctl`) has been connected for that long, and says so in
//! the log and the story. The hub ends when the controller does (after `Exited`).

use std::collections::{BTreeMap, HashSet};

use tokio::sync::mpsc;

use super::policy::{self, PolicyDecision, PolicyHook};
use super::replay::Replay;
use super::story::Story;
use super::wire::{ClientMsg, ServerMsg};
use crate::lead::commands::{Input, SlashCommand, parse_input};
use crate::lead::contract::{
    LeadCommand, LeadEvent, PendingPermission, PermissionDecision, TeammateView, TranscriptItem,
};

/// How many messages may wait for one client before it is dropped.
pub const CLIENT_QUEUE: usize = 16_384;

/// What a hub is for.
#[derive(Debug, Clone, Default)]
pub struct HubOptions {
    /// The team's name (for notes and the hook's document).
    pub team: String,
    /// The permission policy hook.
    pub policy: Option<PolicyHook>,
    /// End the team (as `/quit`) once no client has been connected for this long.
    pub idle_exit: Option<std::time::Duration>,
    /// Push a request that waits with no screen attached (`[push]`).
    pub push: Option<super::push::PushOptions>,
}

/// What the listener tells the hub.
#[derive(Debug)]
pub enum HubInput {
    Connected {
        id: u64,
        tx: mpsc::Sender<ServerMsg>,
    },
    Message {
        id: u64,
        msg: ClientMsg,
    },
    Gone {
        id: u64,
    },
}

struct Client {
    tx: mpsc::Sender<ServerMsg>,
    attached: bool,
    follows_story: bool,
    /// It attached with transcripts: a screen (`ctl` attaches without).
    screen: bool,
}

/// The hub's state.
pub struct Hub {
    replay: Replay,
    story: Story,
    clients: BTreeMap<u64, Client>,
    /// The client whose jump asked for the terminal last (it gets `HandOverTerminal`).
    jumper: Option<u64>,
    commands: mpsc::UnboundedSender<LeadCommand>,
    team: String,
    policy: Option<PolicyHook>,
    /// Requests the hook was asked about.
    asked: HashSet<u64>,
    /// The latest queue and team (what the hook's document is made of).
    pending: Vec<PendingPermission>,
    members: Vec<TeammateView>,
    decided: mpsc::UnboundedSender<(PendingPermission, PolicyDecision)>,
    /// The last screen went away without `/detach` (its terminal closed): the next screen is
    /// told the team kept running, and how to end it.
    hung_up: bool,
    /// End the team once no client has been connected for this long.
    idle_exit: Option<std::time::Duration>,
    /// Since when no client has been connected (`None` while one is).
    idle_since: Option<tokio::time::Instant>,
    /// The idle limit has ended the team (it is said once).
    idle_ended: bool,
    push: Option<(super::push::PushOptions, super::push::Pusher)>,
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Runs the hub until the controller's events end; returns when every client was told.
pub async fn run(
    mut events: mpsc::Receiver<LeadEvent>,
    mut inputs: mpsc::Receiver<HubInput>,
    controller: mpsc::Sender<LeadCommand>,
    options: HubOptions,
) {
    let HubOptions {
        team,
        policy,
        idle_exit,
        push,
    } = options;
    let (decided, mut decisions) = mpsc::unbounded_channel();
    let (commands, mut forward) = mpsc::unbounded_channel::<LeadCommand>();
    tokio::spawn(async move {
        while let Some(command) = forward.recv().await {
            if controller.send(command).await.is_err() {
                break;
            }
        }
    });
    let mut hub = Hub {
        replay: Replay::default(),
        story: Story::default(),
        clients: BTreeMap::new(),
        jumper: None,
        commands,
        team,
        policy,
        asked: HashSet::new(),
        pending: Vec::new(),
        members: Vec::new(),
        decided,
        hung_up: false,
        idle_exit,
        idle_since: Some(tokio::time::Instant::now()),
        idle_ended: false,
        push: push.map(|options| (options, super::push::Pusher::default())),
    };
    loop {
        let idle_deadline = hub.idle_deadline();
        // While a screen is attached nothing is pushed (the person sees the dialog there), so
        // there is no deadline to wake for.
        let screen_attached = hub.clients.values().any(|c| c.attached && c.screen);
        let push_deadline = hub
            .push
            .as_ref()
            .filter(|_| !screen_attached)
            .and_then(|(options, pusher)| pusher.next_due(options.after));
        tokio::select! {
            biased;
            event = events.recv() => match event {
                Some(event) => hub.on_event(event),
                None => break,
            },
            Some((request, decision)) = decisions.recv() => hub.on_decision(request, decision),
            input = inputs.recv() => match input {
                Some(input) => hub.on_input(input),
                // The listener is gone: nobody can attach any more; events still drain.
                None => {
                    while let Some(event) = events.recv().await {
                        hub.on_event(event);
                    }
                    break;
                }
            },
            () = sleep_until_opt(idle_deadline) => hub.end_idle_team(),
            () = sleep_until_opt(push_deadline) => hub.push_due(),
        }
        hub.watch_idle();
    }
    tracing::info!("lead server: the controller has finished");
}

/// Sleeps until `deadline`; never without one.
async fn sleep_until_opt(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

impl Hub {
    /// When the idle limit ends the team, if it is on, nobody is connected and it has not yet.
    fn idle_deadline(&self) -> Option<tokio::time::Instant> {
        if self.idle_ended {
            return None;
        }
        Some(self.idle_since? + self.idle_exit?)
    }

    /// Starts the idle clock when the last client has gone, stops it when one is connected.
    fn watch_idle(&mut self) {
        match (self.clients.is_empty(), self.idle_since) {
            (true, None) => self.idle_since = Some(tokio::time::Instant::now()),
            (false, Some(_)) => self.idle_since = None,
            _ => {}
        }
    }

    /// Nobody has been connected for the idle limit: the team ends as `/quit` ends it, and the
    /// log and the story say why.
    fn end_idle_team(&mut self) {
        self.idle_ended = true;
        let limit = self
            .idle_exit
            .map(|d| humantime::format_duration(d).to_string())
            .unwrap_or_default();
        let team = crate::protocol::display::visible_line(&self.team).into_owned();
        let text = format!(
            "No screen or ctl client has been connected to team `{team}` for {limit} (server-idle-exit): ending the team as /quit does."
        );
        tracing::info!("lead server: {text}");
        self.on_event(LeadEvent::Transcript(TranscriptItem::System { text }));
        let _ = self.commands.send(LeadCommand::Quit);
    }

    fn on_event(&mut self, event: LeadEvent) {
        if let LeadEvent::HandOverTerminal { .. } = &event {
            if let Some(id) = self.jumper.take() {
                self.send_to(id, ServerMsg::Event(event));
            }
            return;
        }
        match &event {
            LeadEvent::Team(team) => self.members = team.clone(),
            LeadEvent::Permissions(queue) => self.on_queue(queue),
            _ => {}
        }
        self.replay.apply(&event);
        let story = self.story.observe(&event, now_ms());
        let mut dropped = Vec::new();
        for (id, client) in &self.clients {
            let mut ok = true;
            if client.attached {
                ok &= client.tx.try_send(ServerMsg::Event(event.clone())).is_ok();
            }
            if client.follows_story {
                for e in &story {
                    ok &= client.tx.try_send(ServerMsg::Story(e.clone())).is_ok();
                }
            }
            if !ok {
                dropped.push(*id);
            }
        }
        for id in dropped {
            tracing::warn!("lead server: client {id} fell behind and was dropped");
            self.clients.remove(&id);
        }
    }

    /// Pushes the requests that waited long enough while no screen is attached.
    fn push_due(&mut self) {
        let attached = self.clients.values().any(|c| c.attached && c.screen);
        let Some((options, pusher)) = &mut self.push else {
            return;
        };
        for request in pusher.due(tokio::time::Instant::now(), options.after, attached) {
            super::push::send(options, &self.team, &request);
        }
    }

    /// Asks the hook about each request it has not seen.
    fn on_queue(&mut self, queue: &[PendingPermission]) {
        self.pending = queue.to_vec();
        if let Some((_, pusher)) = &mut self.push {
            pusher.on_queue(queue, tokio::time::Instant::now());
        }
        let Some(hook) = &self.policy else {
            return;
        };
        for p in queue {
            if !self.asked.insert(p.key) {
                continue;
            }
            let document = policy::request_document(&self.team, p, &self.members);
            let (hook, request, decided) = (hook.clone(), p.clone(), self.decided.clone());
            tokio::spawn(async move {
                let decision = policy::ask(&hook, &document).await;
                let _ = decided.send((request, decision));
            });
        }
    }

    /// Carries out the hook's decision on a request still waiting, and says so.
    fn on_decision(&mut self, p: PendingPermission, decision: PolicyDecision) {
        if !self.pending.iter().any(|q| q.key == p.key) {
            return;
        }
        let what = format!("{}'s {} request #{}", p.worker, p.tool_name, p.key);
        let (note, answer) = match decision {
            PolicyDecision::Allow => (
                format!("Policy hook allowed {what}."),
                Some(PermissionDecision::AllowOnce),
            ),
            PolicyDecision::Deny { feedback } => (
                match &feedback {
                    Some(f) => format!("Policy hook denied {what}: {f}"),
                    None => format!("Policy hook denied {what}."),
                },
                Some(PermissionDecision::Deny { feedback }),
            ),
            PolicyDecision::Ask { why } => {
                (format!("Policy hook left {what} to you ({why})."), None)
            }
        };
        tracing::info!("{note}");
        self.on_event(LeadEvent::Transcript(TranscriptItem::System { text: note }));
        if let Some(decision) = answer {
            self.story.note_decision(p.key, &decision);
            let _ = self.commands.send(LeadCommand::AnswerPermission {
                key: p.key,
                decision,
            });
        }
    }

    /// A client went away; a screen that leaves without `/detach` as the last one attached
    /// leaves the team running with nobody to see it.
    fn screen_left(&mut self, id: u64) {
        let was_screen = self.clients.remove(&id).is_some_and(|c| c.attached);
        if was_screen && !self.clients.values().any(|c| c.attached) {
            self.hung_up = true;
        }
    }

    fn send_to(&mut self, id: u64, msg: ServerMsg) {
        let failed = self
            .clients
            .get(&id)
            .is_some_and(|c| c.tx.try_send(msg).is_err());
        if failed {
            self.clients.remove(&id);
        }
    }

    fn on_input(&mut self, input: HubInput) {
        match input {
            HubInput::Connected { id, tx } => {
                self.clients.insert(
                    id,
                    Client {
                        tx,
                        attached: false,
                        follows_story: false,
                        screen: false,
                    },
                );
            }
            HubInput::Gone { id } => self.screen_left(id),
            HubInput::Message { id, msg } => self.on_message(id, msg),
        }
    }

    fn on_message(&mut self, id: u64, msg: ClientMsg) {
        match msg {
            ClientMsg::Attach { transcripts } => {
                for event in self.replay.snapshot(transcripts) {
                    self.send_to(id, ServerMsg::Event(event));
                }
                if std::mem::take(&mut self.hung_up) {
                    let team = crate::protocol::display::visible_line(&self.team).into_owned();
                    let text = format!(
                        "Team `{team}` kept running after its last screen's terminal closed. /quit ends it (its teammates too); /detach leaves it running, and `teamlead attach {team}` comes back."
                    );
                    let note = LeadEvent::Transcript(TranscriptItem::System { text });
                    self.send_to(id, ServerMsg::Event(note));
                }
                self.send_to(id, ServerMsg::SnapshotEnd);
                if let Some(c) = self.clients.get_mut(&id) {
                    c.attached = true;
                    c.screen = transcripts;
                }
            }
            ClientMsg::Story { follow } => {
                let history: Vec<_> = self.story.history().cloned().collect();
                for e in history {
                    self.send_to(id, ServerMsg::Story(e));
                }
                self.send_to(id, ServerMsg::StoryEnd);
                if let Some(c) = self.clients.get_mut(&id) {
                    c.follows_story = follow;
                }
            }
            ClientMsg::Command(command) => self.on_command(id, command),
        }
    }

    /// Client `id` sent a command that ends the team: every other screen is told who, so it
    /// does not close without a word (`ServerMsg::EndedBy`). The lead may still refuse it
    /// (`/team delete` with teammates running): the screens are told only what was asked.
    fn ending(&mut self, id: u64, command: &LeadCommand) {
        let how = match command {
            LeadCommand::Submit { text, .. } => text.trim().to_string(),
            LeadCommand::Detach => "/quit --keep".to_string(),
            _ => "/quit".to_string(),
        };
        let who = match self.clients.get(&id) {
            Some(c) if c.screen => "another screen".to_string(),
            _ => format!("`teamlead ctl {}`", self.team),
        };
        let others: Vec<u64> = self
            .clients
            .iter()
            .filter(|(other, c)| **other != id && c.screen)
            .map(|(other, _)| *other)
            .collect();
        for other in others {
            self.send_to(
                other,
                ServerMsg::EndedBy {
                    who: who.clone(),
                    how: how.clone(),
                },
            );
        }
    }

    fn on_command(&mut self, id: u64, command: LeadCommand) {
        match command.inner() {
            LeadCommand::ScreenClosed => {
                tracing::info!("lead server: client {id}'s screen closed");
                self.screen_left(id);
                return;
            }
            // From any view: a slash command is the lead's.
            LeadCommand::Submit { text, .. }
                if parse_input(text) == Ok(Input::Slash(SlashCommand::DetachScreen)) =>
            {
                self.send_to(id, ServerMsg::Detached);
                if let Some(c) = self.clients.get_mut(&id) {
                    c.attached = false;
                }
                return;
            }
            LeadCommand::Jump { .. } => self.jumper = Some(id),
            LeadCommand::Quit | LeadCommand::Detach => self.ending(id, command.inner()),
            LeadCommand::Submit { text, .. }
                if matches!(
                    parse_input(text),
                    Ok(Input::Slash(SlashCommand::Quit | SlashCommand::Detach))
                ) =>
            {
                self.ending(id, command.inner())
            }
            LeadCommand::AnswerPermission { key, decision } => {
                self.story.note_decision(*key, decision)
            }
            _ => {}
        }
        let _ = self.commands.send(command);
    }
}
