//! The built-in price list against the published figures, one test per model name, and how
//! names, overrides and tiers are priced.

use super::*;

/// A test that `$model` (and a dated id of it) takes the published rates: input, output,
/// 5-minute write, 1-hour write, cache read.
macro_rules! published {
    ($test:ident, $model:literal, $input:expr, $output:expr, $w5:expr, $w1:expr, $read:expr) => {
        #[test]
        fn $test() {
            let t = PriceTable::built_in();
            for name in [$model.to_string(), format!("{}-20260101", $model)] {
                let row = t
                    .price(&name)
                    .unwrap_or_else(|| panic!("{name} has no price"));
                assert_eq!(
                    (
                        row.input,
                        row.output,
                        row.cache_write_5m,
                        row.cache_write_1h,
                        row.cache_read
                    ),
                    ($input, $output, $w5, $w1, $read),
                    "{name} (row {})",
                    row.name
                );
            }
        }
    };
}

published!(fable_5_2, "claude-fable-5-2", 8.0, 40.0, 10.0, 16.0, 0.20);
published!(fable_5_1, "claude-fable-5-1", 10.0, 50.0, 12.5, 20.0, 0.25);
published!(
    mythos_5_1,
    "claude-mythos-5-1",
    10.0,
    50.0,
    12.5,
    20.0,
    0.25
);
published!(fable_5, "claude-fable-5", 10.0, 50.0, 12.5, 20.0, 1.0);
published!(mythos_5, "claude-mythos-5", 10.0, 50.0, 12.5, 20.0, 1.0);
published!(opus_5_5, "claude-opus-5-5", 4.0, 20.0, 5.0, 8.0, 0.20);
published!(opus_5, "claude-opus-5", 5.0, 25.0, 6.25, 10.0, 0.50);
published!(opus_4_8, "claude-opus-4-8", 5.0, 25.0, 6.25, 10.0, 0.50);
published!(opus_4_7, "claude-opus-4-7", 5.0, 25.0, 6.25, 10.0, 0.50);
published!(opus_4_6, "claude-opus-4-6", 5.0, 25.0, 6.25, 10.0, 0.50);
published!(opus_4_5, "claude-opus-4-5", 5.0, 25.0, 6.25, 10.0, 0.50);
published!(opus_4_1, "claude-opus-4-1", 15.0, 75.0, 18.75, 30.0, 1.50);
published!(opus_4, "claude-opus-4", 15.0, 75.0, 18.75, 30.0, 1.50);
published!(opus_4_0, "claude-opus-4-0", 15.0, 75.0, 18.75, 30.0, 1.50);
published!(opus_3, "claude-3-opus", 15.0, 75.0, 18.75, 30.0, 1.50);
published!(sonnet_5_5, "claude-sonnet-5-5", 2.0, 10.0, 2.5, 4.0, 0.20);
published!(sonnet_5, "claude-sonnet-5", 2.0, 10.0, 2.5, 4.0, 0.20);
published!(sonnet_4_6, "claude-sonnet-4-6", 3.0, 15.0, 3.75, 6.0, 0.30);
published!(sonnet_4_5, "claude-sonnet-4-5", 3.0, 15.0, 3.75, 6.0, 0.30);
published!(sonnet_4, "claude-sonnet-4", 3.0, 15.0, 3.75, 6.0, 0.30);
published!(sonnet_3_7, "claude-3-7-sonnet", 3.0, 15.0, 3.75, 6.0, 0.30);
published!(sonnet_3_5, "claude-3-5-sonnet", 3.0, 15.0, 3.75, 6.0, 0.30);
published!(haiku_5_5, "claude-haiku-5-5", 0.10, 0.50, 0.125, 0.20, 0.01);
published!(haiku_4_5, "claude-haiku-4-5", 1.0, 5.0, 1.25, 2.0, 0.10);
published!(haiku_3_5, "claude-3-5-haiku", 0.80, 4.0, 1.0, 1.60, 0.08);
published!(haiku_3, "claude-3-haiku", 0.25, 1.25, 0.30, 0.50, 0.03);

#[test]
fn the_built_in_list_reads_and_every_row_names_its_source_and_date() {
    assert_eq!(PriceTable::built_in_error(), None);
    let t = PriceTable::built_in();
    assert_eq!(t.rows().count(), 25);
    for row in t.rows() {
        assert!(!row.source.trim().is_empty(), "{} has no source", row.name);
        assert_eq!(row.checked.len(), 10, "{} has no date", row.name);
        assert!(!row.models.is_empty() || !row.prefixes.is_empty());
        for model in &row.models {
            assert_eq!(t.price(model).map(|r| &r.name), Some(&row.name), "{model}");
        }
    }
    for (alias, model) in t.aliases() {
        assert!(
            t.price(model).is_some(),
            "{alias} names {model}, which has no row"
        );
    }
}

#[test]
fn exact_names_then_dated_ids_then_prefixes_and_aliases() {
    let t = PriceTable::built_in();
    let by = |m: &str| t.find(m).map(|m| (m.row.name.clone(), m.by));
    assert_eq!(
        by("claude-opus-4-1"),
        Some(("Claude Opus 4.1".into(), MatchedBy::Exact))
    );
    assert_eq!(
        by("claude-opus-4-20250514"),
        Some((
            "Claude Opus 4".into(),
            MatchedBy::Dated("claude-opus-4".into())
        ))
    );
    assert_eq!(
        by("claude-opus-4-1@20250805").map(|b| b.0),
        Some("Claude Opus 4.1".into())
    );
    assert_eq!(
        by("claude-3-5-sonnet-latest").map(|b| b.0),
        Some("Claude Sonnet 3.5".into())
    );
    assert_eq!(
        by("claude-opus-4-6[1m]").map(|b| b.0),
        Some("Claude Opus 4.6".into())
    );
    // No catch-all: an unknown model of a known family has no price rather than a wrong one.
    assert_eq!(by("claude-opus-6"), None);
    assert_eq!(by("fable-5-2"), None);
    assert_eq!(by("gpt-5"), None);
    for (alias, row) in [
        ("opus", "Claude Opus 5.5"),
        ("opus[1m]", "Claude Opus 5.5"),
        ("opusplan", "Claude Opus 5.5"),
        ("sonnet", "Claude Sonnet 5.5"),
        ("haiku", "Claude Haiku 5.5"),
    ] {
        let m = t.find(alias).unwrap();
        assert_eq!(m.row.name, row, "{alias}");
        assert_eq!(m.alias.as_ref().map(|a| a.0.as_str()), Some(alias));
    }
}

#[test]
fn the_config_rows_come_first_and_fill_in_the_cache_rates() {
    let custom = Price {
        input: 2.0,
        output: 4.0,
        cache_write: None,
        cache_write_1h: None,
        cache_read: Some(0.3),
    };
    let over = [
        ("claude-opus-".to_string(), custom),
        ("gpt-".to_string(), custom),
        ("opus".to_string(), custom),
    ];
    let t = PriceTable::built_in().with_overrides(over.iter().map(|(p, c)| (p, c)));
    let row = t.price("claude-opus-4-1-20250805").unwrap();
    assert!(row.from_config);
    assert_eq!(
        (row.cache_write_5m, row.cache_write_1h, row.cache_read),
        (2.5, 4.0, 0.3)
    );
    assert_eq!(t.price("gpt-5").unwrap().output, 4.0);
    assert_eq!(t.find("opus").unwrap().by, MatchedBy::Exact);
    assert_eq!(t.price("claude-sonnet-5").unwrap().input, 2.0);
    assert!(!t.price("claude-sonnet-5").unwrap().from_config);
}

#[test]
fn one_hour_writes_reads_and_tiers_are_priced_apart() {
    let t = PriceTable::built_in();
    let tokens = Tokens {
        input: 1_000,
        output: 2_000,
        cache_write_5m: 10_000,
        cache_write_1h: 20_000,
        cache_read: 60_000,
    };
    // Opus 5.5: 1000×4 + 2000×20 + 10000×5 + 20000×8 + 60000×0.20
    // = 4000 + 40000 + 50000 + 160000 + 12000 = 266,000 micro-dollars.
    assert_eq!(
        t.cost_micros(Some("claude-opus-5-5"), &tokens),
        Some(266_000)
    );
    // Fast mode: every rate ×2.
    let fast = t.message_micros("claude-opus-5-5", true, &tokens).unwrap();
    assert_eq!(fast.round() as u64, 532_000);
    // Haiku 5.5, prompt 91,000 ≤ 100K: 1000×0.10 + 2000×0.50 + 10000×0.125 + 20000×0.20
    // + 60000×0.01 = 100 + 1000 + 1250 + 4000 + 600 = 6,950.
    let haiku = t
        .message_micros("claude-haiku-5-5", false, &tokens)
        .unwrap();
    assert_eq!(haiku.round() as u64, 6_950);
    // The same with 10,000 more input: prompt 101,000 > 100K, every token at 5×:
    // (11000×0.10 + 10000×0.125 + 20000×0.20 + 60000×0.01) × 5 + 2000×0.50 × 5
    // = (1100 + 1250 + 4000 + 600) × 5 + 5000 = 34,750 + 5,000 = 39,750 ($0.50/$2.50 per MTok).
    let over = Tokens {
        input: 11_000,
        ..tokens
    };
    let haiku = t.message_micros("claude-haiku-5-5", false, &over).unwrap();
    assert_eq!(haiku.round() as u64, 39_750);
    // Haiku 3: its own cache rates, not multipliers of its input ($0.30 / $0.50 / $0.03).
    // 1000×0.25 + 2000×1.25 + 10000×0.30 + 20000×0.50 + 60000×0.03
    // = 250 + 2500 + 3000 + 10000 + 1800 = 17,550.
    assert_eq!(t.cost_micros(Some("claude-3-haiku"), &tokens), Some(17_550));
    assert_eq!(t.cost_micros(None, &tokens), None);
}

#[test]
fn the_ledger_keeps_unpriced_models_apart() {
    let t = PriceTable::built_in();
    let mut ledger = Ledger::default();
    let tokens = Tokens {
        input: 1_000_000,
        ..Tokens::default()
    };
    for model in ["claude-sonnet-5", "fable-5-2", "claude-sonnet-5"] {
        ledger.add(model, &tokens, t.message_micros(model, false, &tokens));
    }
    assert_eq!(ledger.cost_micros(), Some(4_000_000));
    assert_eq!(ledger.unpriced(), vec!["fable-5-2".to_string()]);
    assert_eq!(ledger.tokens().input, 3_000_000);
    ledger.remove("claude-sonnet-5", &tokens, Some(2_000_000.0));
    assert_eq!(ledger.cost_micros(), Some(2_000_000));
}

#[test]
fn dollars_to_the_cent_and_rates_as_listed() {
    assert_eq!(dollars(167_500), "$0.17");
    assert_eq!(dollars(0), "$0.00");
    assert_eq!(dollars(4_000), "<$0.01");
    assert_eq!(dollars(12_345_678), "$12.35");
    assert_eq!(dollars(1_234_567_890), "$1,235");
    assert_eq!(rate(4.0), "$4");
    assert_eq!(rate(0.2), "$0.20");
    assert_eq!(rate(0.125), "$0.125");
    assert_eq!(rate(18.75), "$18.75");
    assert_eq!(rate(0.01), "$0.01");
}
