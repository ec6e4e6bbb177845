//! The lead's prices reach the host: a remote `claude` teammate's cost is counted by the relay
//! from its transcript on the host, with the lead's config rows (`[prices."model"]`) tried
//! before the built-in ones, as a local teammate's would be.

use std::io::Write;

use teamlead_protocol::pricing::{Price, PriceTable};
use teamlead_protocol::store::remote_facts;
use teamlead_protocol::{Member, TeamFile};
use teamlead_relay::transcripts::SESSION_KEY;

use crate::support::{Pair, TEAM, run_until};

const SESSION: &str = "0c2f4a51-9d0e-4f5b-8a7c-3e1d2b6f9a80";

/// A model the built-in table has no row for: only the lead's config prices it.
const MODEL: &str = "house-model-2";

fn lead_prices() -> PriceTable {
    let price = Price {
        input: 10.0,
        output: 100.0,
        cache_write: None,
        cache_write_1h: None,
        cache_read: None,
    };
    PriceTable::built_in().with_overrides([(&"house-model".to_string(), &price)])
}

/// The host's team with `mate`, a `claude` teammate of session [`SESSION`], and its transcript:
/// one answer of [`MODEL`] with 1,000 input and 100 output tokens.
fn host_with_claude_mate(pair: &Pair) {
    let home = pair.relay_home();
    teamlead_protocol::store::create_team(home, &TeamFile::new(TEAM, None, "/w")).unwrap();
    let mut mate = Member::new("mate", TEAM, "/w");
    mate.extra.insert(SESSION_KEY.into(), SESSION.into());
    teamlead_protocol::store::add_member(home, TEAM, mate).unwrap();
    let dir = home.root.join("projects").join("-w");
    std::fs::create_dir_all(&dir).unwrap();
    let line = format!(
        r#"{{"type":"user","timestamp":"2026-11-29T10:00:00.000Z","message":{{"role":"user","content":"go"}}}}
{{"type":"assistant","message":{{"id":"msg_1","model":"{MODEL}","content":[{{"type":"text","text":"x"}}],"usage":{{"input_tokens":1000,"output_tokens":100}}}}}}
"#
    );
    std::fs::File::create(dir.join(format!("{SESSION}.jsonl")))
        .unwrap()
        .write_all(line.as_bytes())
        .unwrap();
}

fn cost_at_lead(pair: &Pair) -> Option<f64> {
    let facts = remote_facts::read(pair.lead_home(), TEAM, "mate").ok()??;
    facts
        .ledger
        .models
        .iter()
        .find(|m| m.model == MODEL)?
        .micros
}

#[test]
fn a_remote_claude_teammate_is_priced_with_the_leads_config_rows() {
    let mut pair = Pair::new();
    host_with_claude_mate(&pair);
    pair.lead
        .set_prices(teamlead_relay::prices::rows_value(&lead_prices()));
    let step = pair.lead.set_hosted(&["mate".to_string()]).unwrap();
    pair.take_lead(step);
    pair.connect();
    // 1,000 × $10 + 100 × $100 per million tokens: 20,000 micro-dollars.
    assert!(
        run_until(&mut pair, 300, |p| cost_at_lead(p).is_some()),
        "the lead never got a priced answer: {:?}",
        remote_facts::read(pair.lead_home(), TEAM, "mate")
    );
    assert_eq!(cost_at_lead(&pair), Some(20_000.0));

    // A new relay process on the host prices the same way, before and after the lead's
    // next connection sends its rows again.
    pair.drop_link();
    pair.restart_relay(crate::support::identity("remote-host"));
    std::fs::remove_dir_all(remote_facts::dir(pair.lead_home(), TEAM).unwrap()).unwrap();
    pair.connect();
    assert!(run_until(&mut pair, 300, |p| cost_at_lead(p).is_some()));
    assert_eq!(cost_at_lead(&pair), Some(20_000.0));
}
