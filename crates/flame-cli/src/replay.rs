//! `flame replay`: the comparison as a table.

use std::fmt::Write as _;
use std::path::Path;

use flame_api::{ApiError, ImportFormat, Replay, ReplayOptions, ReplayProvider};
use flame_model::CacheLifetime;
use flame_model::cost::format_usd;

use crate::args::{LifetimeArg, ProviderArg};

/// The replay's options from the command line's.
pub fn options(provider: ProviderArg, lifetime: Option<LifetimeArg>) -> ReplayOptions {
    ReplayOptions {
        provider: match provider {
            ProviderArg::Anthropic => ReplayProvider::Anthropic,
            ProviderArg::Openai => ReplayProvider::Openai,
        },
        conversation: lifetime.map(|l| match l {
            LifetimeArg::FiveMinutes => CacheLifetime::Short,
            LifetimeArg::OneHour => CacheLifetime::Long,
        }),
        keep_tool_results: None,
        price: None,
    }
}

/// Runs the replay of `path` and prints it.
pub fn run(
    path: &Path,
    format: Option<ImportFormat>,
    session: Option<&str>,
    options: &ReplayOptions,
    calls: bool,
    json: bool,
) -> Result<(), ApiError> {
    let replay = flame_api::replay_file(path, format, session, options)?;
    if json {
        let text = serde_json::to_string_pretty(&replay)
            .map_err(|e| ApiError::internal("write JSON", e))?;
        crate::terminal::print_line(&text)
    } else {
        crate::terminal::print_line(&crate::terminal::escape_controls(&table(&replay, calls)))
    }
}

fn table(r: &Replay, calls: bool) -> String {
    let mut out = String::new();
    let share = |flame: u64, linear: u64| {
        if linear == 0 {
            "-".to_owned()
        } else {
            format!("{:.0}%", flame as f64 * 100.0 / linear as f64)
        }
    };
    if calls {
        let _ = writeln!(
            out,
            "{:>5}  {:<44} {:>10} {:>10} {:>6} {:>8} {:>9} {:>9} {:>6}",
            "call",
            "frame",
            "linear",
            "flame",
            "share",
            "recalled",
            "linear $",
            "flame $",
            "cached"
        );
        for (i, c) in r.per_call.iter().enumerate() {
            let title: String = c.frame_title.chars().take(44).collect();
            let recalled = if c.returning_paths == 0 {
                String::new()
            } else {
                format!("{}/{}", c.recalled_paths, c.returning_paths)
            };
            let _ = writeln!(
                out,
                "{:>5}  {:<44} {:>10} {:>10} {:>6} {:>8} {:>9} {:>9} {:>6}",
                i + 1,
                title,
                c.linear_tokens,
                c.flame_tokens,
                share(c.flame_tokens, c.linear_tokens),
                recalled,
                format_usd(c.linear_micro_usd),
                format_usd(c.flame_micro_usd),
                share(c.flame_cache.read, c.flame_tokens),
            );
        }
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "input dollars under {}'s prompt cache at {} list prices (Flame's conversation cached for {})",
        match r.provider {
            ReplayProvider::Anthropic => "Anthropic",
            ReplayProvider::Openai => "OpenAI",
        },
        r.reference_model,
        match r.conversation {
            CacheLifetime::Short => "5 minutes",
            CacheLifetime::Long => "an hour",
        }
    );
    let _ = writeln!(out, "{:<28} {:>12} {:>12} {:>6}", "", "linear", "flame", "share");
    let money = |flame: u64, linear: u64| {
        if linear == 0 { "-".to_owned() } else { format!("{:.2}x", flame as f64 / linear as f64) }
    };
    let _ = writeln!(
        out,
        "{:<28} {:>12} {:>12} {:>6}",
        "input dollars",
        format_usd(r.linear_micro_usd),
        format_usd(r.flame_micro_usd),
        money(r.flame_micro_usd, r.linear_micro_usd)
    );
    let controlled = |total: u64| total.saturating_sub(r.fixed_micro_usd);
    let _ = writeln!(
        out,
        "{:<28} {:>12} {:>12} {:>6}",
        "without the fixed prompt",
        format_usd(controlled(r.linear_micro_usd)),
        format_usd(controlled(r.flame_micro_usd)),
        money(controlled(r.flame_micro_usd), controlled(r.linear_micro_usd))
    );
    let _ = writeln!(
        out,
        "{:<28} {:>12} {:>12} {:>6}",
        "floor (a cache that never forgets)",
        "",
        format_usd(r.floor_micro_usd),
        money(r.flame_micro_usd, r.floor_micro_usd)
    );
    let linear_read = r.linear_usage.cache_read_tokens;
    let _ = writeln!(
        out,
        "{:<28} {:>12} {:>12}",
        "read from the cache",
        share(linear_read, r.linear_usage.prompt_tokens()),
        share(r.flame_cache.read, r.flame_tokens)
    );
    let _ = writeln!(
        out,
        "openings made: {} ({} made again by the rules); a frame's request starts with {} of its previous one, on average",
        r.openings,
        r.openings_rebuilt,
        r.prefix_share.map_or_else(|| "-".to_owned(), |s| format!("{:.1}%", s * 100.0))
    );
    let _ = writeln!(
        out,
        "{:<28} {:>12} {:>12} {:>6}",
        format!("total over {} calls", r.calls),
        r.linear_tokens,
        r.flame_tokens,
        share(r.flame_tokens, r.linear_tokens)
    );
    let _ = writeln!(
        out,
        "{:<28} {:>12} {:>12} {:>6}",
        "peak call",
        r.peak_linear,
        r.peak_flame,
        share(r.peak_flame, r.peak_linear)
    );
    let mean = |t: u64| t.checked_div(r.calls).unwrap_or(0);
    let _ = writeln!(
        out,
        "{:<28} {:>12} {:>12}",
        "mean call",
        mean(r.linear_tokens),
        mean(r.flame_tokens)
    );
    let percentiles: Vec<String> =
        r.ratio_percentiles.iter().map(|(p, v)| format!("p{p} {:.0}%", v * 100.0)).collect();
    let _ = writeln!(out, "flame/linear per call: {}", percentiles.join(", "));
    let _ = writeln!(
        out,
        "first-touch recall: {} ({} of {} files a frame touched first, after another frame had, named in its context)",
        r.first_touch_recall.map_or_else(|| "-".to_owned(), |v| format!("{:.0}%", v * 100.0)),
        r.recalled_paths,
        r.returning_paths
    );
    let _ = writeln!(
        out,
        "subagents: {} tokens of transcript, {} tokens of results handed back",
        r.subagent_transcript_tokens, r.subagent_result_tokens
    );
    if r.recorded_growth > 0 {
        let _ = writeln!(
            out,
            "token estimate: Flame counts {} tokens where the recorded input grew by {} between calls ({:.1}%)",
            r.counted_growth,
            r.recorded_growth,
            r.counted_growth as f64 * 100.0 / r.recorded_growth as f64
        );
    }
    let _ = write!(
        out,
        "compaction calls left out: {} ({} linear tokens)\nlinear: recorded input incl. cache reads and writes; flame: assembled context + the thread's fixed overhead (system prompt and tools, estimated from its first call)",
        r.compaction_calls, r.compaction_linear_tokens
    );
    out
}
