//! Lead server benchmark, run by hand: `cargo bench --bench server_latency`.
//! A lead with its hub and socket in this process (a temporary home and runtime directory),
//! one client attached over the socket as a screen is. Measured: the round trip of a
//! `Barrier` command (client → socket → hub → controller → hub → socket → client), p50 and
//! p99 over 2,000 one at a time: an upper bound of the event → attached client latency (one
//! leg of it). Plain std timing, one machine.

use std::time::{Duration, Instant};

use teamlead::lead::contract::{LeadCommand, LeadEvent};
use teamlead::lead::{Lead, LeadOptions};
use teamlead::server::wire::{ClientMsg, ServerMsg};
use teamlead::server::{client, hub, listener, paths};
use teamlead::store::Home;
use tokio::sync::mpsc;

const ROUND_TRIPS: usize = 2_000;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let home_dir = tempfile::tempdir().expect("home");
        let run_dir = tempfile::tempdir().expect("runtime dir");
        let cwd = tempfile::tempdir().expect("cwd");
        let home = Home::new(home_dir.path());
        let opts = LeadOptions::new(home.clone(), cwd.path()).with_team("bench");
        let (handle, events) = Lead::start(opts).expect("lead");
        let socket = paths::socket_in(run_dir.path(), &home, "bench");
        let bound = listener::bind(&socket).expect("bind");
        let (hub_tx, hub_rx) = mpsc::channel(1024);
        tokio::spawn(hub::run(
            events,
            hub_rx,
            handle.commands.clone(),
            hub::HubOptions {
                team: "bench".into(),
                policy: None,
                idle_exit: None,
                push: None,
            },
        ));
        let hello = ServerMsg::Hello {
            team: "bench".into(),
            pid: std::process::id(),
            version: "bench".into(),
        };
        tokio::spawn(async move {
            let writers = tokio_util::task::TaskTracker::new();
            listener::accept_loop(&bound.listener, hub_tx, hello, &writers).await;
            drop(bound);
        });
        let mut conn = client::connect(&socket, "bench").await.expect("connect");
        conn.send(&ClientMsg::Attach { transcripts: true })
            .await
            .expect("attach");
        while !matches!(conn.recv().await, Ok(Some(ServerMsg::SnapshotEnd))) {}
        let mut times = Vec::with_capacity(ROUND_TRIPS);
        for token in 0..ROUND_TRIPS as u64 {
            let start = Instant::now();
            conn.send(&ClientMsg::Command(LeadCommand::Barrier { token }))
                .await
                .expect("send");
            loop {
                match conn.recv().await.expect("recv") {
                    Some(ServerMsg::Event(LeadEvent::Barrier { token: t, .. })) if t == token => {
                        break;
                    }
                    Some(_) => {}
                    None => panic!("the server went away"),
                }
            }
            times.push(start.elapsed());
        }
        times.sort();
        let ms = |d: Duration| format!("{:.3} ms", d.as_secs_f64() * 1000.0);
        println!(
            "socket round trip (client → controller → client), {ROUND_TRIPS} one at a time: p50 {}  p99 {}  max {}",
            ms(percentile(&times, 0.5)),
            ms(percentile(&times, 0.99)),
            ms(*times.last().expect("times"))
        );
        let _ = handle.commands.send(LeadCommand::Quit).await;
        let _ = tokio::time::timeout(Duration::from_secs(10), handle.commands.closed()).await;
    });
}
