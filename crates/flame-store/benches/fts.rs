//! Search over a large store: 1M messages in a 100k-frame tree (override with
//! FLAME_BENCH_MESSAGES and FLAME_BENCH_FRAMES), their words drawn from a 50,000-word vocabulary
//! with the skewed frequencies of real text (Zipf's law: the n-th commonest word is about 1/n as
//! frequent as the commonest), a tenth of the replies carrying a tool call. Prints `BENCH <name>
//! <value> <unit>` lines for `make bench`.
//!
//! Target (issue 18): a search's p95 ≤ 20 ms over a set of searches that a person would type —
//! common, middling and rare words, two and three words, prefixes still being typed, a tool's
//! name, and searches within the tree — each run with the window's default of 50 hits and their
//! snippets. Also printed: the import's rate, indexing included, and the size of the two
//! indexes.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::time::{Duration, Instant};

use flame_model::{Actor, NewMessage, Role, ToolCall};
use flame_store::{Change, DEFAULT_SEARCH_HITS, ImportedMessage, Store};

fn env_count(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn bench(name: &str, value: f64, unit: &str) {
    println!("BENCH {name} {value:.3} {unit}");
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// A small deterministic generator (xorshift64*), so the bench needs no random crate.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Words of prose and of programming, commonest first, then made-up identifiers and names to
/// fill the vocabulary's long tail.
const COMMON: &str = "the of and to a in is it that for you was with on as have be at this are \
    not but from or by one had all we can there your which when an will if do more about so up \
    what out would their them then these some her him into has two like other could time no \
    first been now than way only its use new may over also after just where most know get \
    through back much before go good well should because each those people take very same \
    file function test error frame context model tree message result value type string return \
    call tool build run check change read write path data line code list name index store query \
    search parse config server client request response stream token cache update delete create \
    commit branch merge diff patch bug fix issue review release version module crate package \
    import export option setting window pane button menu dialog event handler state reply user \
    assistant question answer plan step task goal criteria status done failed blocked started \
    finished pending open close start stop retry resume push pop focus graph width height \
    layout render paint canvas mirror tooltip label title header footer section table column \
    row field key number count limit size length offset byte char text markdown json yaml toml \
    sqlite index migration schema transaction lock thread process signal timeout deadline \
    latency throughput benchmark profile memory allocation pointer reference borrow lifetime \
    trait struct enum match loop iterator closure async await future task spawn channel";

const SYLLABLES: [&str; 24] = [
    "ka", "lo", "mi", "ren", "sto", "vel", "tra", "quo", "zen", "pri", "dal", "fer", "gus", "hol",
    "jin", "nar", "pel", "ros", "sil", "tun", "var", "wex", "yor", "bri",
];

fn vocabulary(size: usize, rng: &mut Rng) -> Vec<String> {
    let mut words: Vec<String> = COMMON.split_whitespace().map(str::to_owned).collect();
    let mut seen: std::collections::HashSet<String> = words.iter().cloned().collect();
    while words.len() < size {
        let parts = 2 + rng.below(3);
        let mut word: String = (0..parts).map(|_| SYLLABLES[rng.below(SYLLABLES.len())]).collect();
        // Some identifiers as code writes them.
        match rng.below(6) {
            0 => word = format!("{word}_{}", SYLLABLES[rng.below(SYLLABLES.len())]),
            1 => word.push_str(&rng.below(100).to_string()),
            _ => {}
        }
        if seen.insert(word.clone()) {
            words.push(word);
        }
    }
    words
}

/// Draws word ranks with Zipf's law (exponent 1).
struct Zipf {
    cumulative: Vec<f64>,
}

impl Zipf {
    fn new(n: usize) -> Zipf {
        let mut total = 0.0;
        let cumulative = (0..n)
            .map(|rank| {
                total += 1.0 / (rank + 1) as f64;
                total
            })
            .collect::<Vec<_>>();
        Zipf { cumulative: cumulative.iter().map(|c| c / total).collect() }
    }

    fn draw(&self, rng: &mut Rng) -> usize {
        let u = rng.unit();
        self.cumulative.partition_point(|c| *c < u).min(self.cumulative.len() - 1)
    }
}

fn sentence(words: &[String], zipf: &Zipf, rng: &mut Rng, count: usize) -> String {
    let mut text = String::with_capacity(count * 8);
    for i in 0..count {
        if i > 0 {
            text.push(if rng.below(12) == 0 { '\n' } else { ' ' });
        }
        text.push_str(&words[zipf.draw(rng)]);
        if rng.below(15) == 0 {
            text.push('.');
        }
    }
    text
}

fn main() {
    let frame_count = env_count("FLAME_BENCH_FRAMES", 100_000);
    let message_count = env_count("FLAME_BENCH_MESSAGES", 1_000_000);
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("flame.db")).unwrap();
    let (tree, frames, _) = flame_store::synthetic::tree(frame_count, 0);
    let mut rng = Rng(0x5eed_f1a3e);
    let words = vocabulary(50_000, &mut rng);
    let zipf = Zipf::new(words.len());
    let messages: Vec<ImportedMessage> = (0..message_count)
        .map(|i| {
            let length = 10 + rng.below(70);
            let text = sentence(&words, &zipf, &mut rng, length);
            let mut message = NewMessage::text(
                match i % 3 {
                    0 => Role::User,
                    1 => Role::Assistant,
                    _ => Role::Tool,
                },
                text,
            );
            if i % 3 == 1 && rng.below(10) == 0 {
                let path =
                    format!("src/{}/{}.rs", words[zipf.draw(&mut rng)], words[zipf.draw(&mut rng)]);
                message.tool_calls = Some(vec![ToolCall {
                    arguments: serde_json::json!({ "path": path }),
                    id: format!("call_{i}"),
                    name: "read_file".into(),
                }]);
            }
            ImportedMessage {
                frame: rng.below(frame_count),
                tokens: (message.content.len() as u64).div_ceil(4),
                message,
                at: i as i64,
            }
        })
        .collect();

    // The import leaves the frames and messages to `catch_up_search`, which the first search
    // would otherwise run; both are timed, so the rate is of rows indexed.
    let started = Instant::now();
    store.import_tree(Change { actor: Actor::Cli, at: 1 }, &tree, &frames, &messages).unwrap();
    let import = started.elapsed();
    let started = Instant::now();
    assert_eq!(store.catch_up_search().unwrap(), (frame_count + message_count) as u64);
    let catch_up = started.elapsed();
    eprintln!(
        "imported {frame_count} frames and {message_count} messages in {import:?}, indexed in {catch_up:?}"
    );
    bench(
        "store.search_import_indexed_rows_per_s",
        (frame_count + message_count) as f64 / (import + catch_up).as_secs_f64(),
        "rows/s",
    );
    bench("store.search_1m_catch_up", catch_up.as_secs_f64(), "s");
    drop(messages);
    // What the two indexes take, from SQLite's own page accounting.
    let indexed: i64 = rusqlite::Connection::open(dir.path().join("flame.db"))
        .unwrap()
        .query_row(
            "SELECT sum(pgsize) FROM dbstat WHERE name LIKE 'message_search%' OR name LIKE 'frame_search%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    bench("store.search_1m_index_size", indexed as f64 / 1_048_576.0, "MiB");

    let word = |rank: usize| words[rank].as_str();
    let prefix = |rank: usize, chars: usize| words[rank].chars().take(chars).collect::<String>();
    let searches: Vec<(String, bool)> = vec![
        (word(3).to_owned(), false),
        (word(40).to_owned(), false),
        (word(150).to_owned(), false),
        (word(400).to_owned(), false),
        (word(2_000).to_owned(), false),
        (word(10_000).to_owned(), false),
        (word(40_000).to_owned(), false),
        (format!("{} {}", word(60), word(3_000)), false),
        (format!("{} {} {}", word(20), word(200), word(900)), false),
        (format!("{} {}", word(100), word(250)), false),
        (prefix(700, 3), false),
        (prefix(700, 4), false),
        (prefix(700, 5), false),
        (prefix(12_000, 6), false),
        (format!("{} {}", word(80), prefix(5_000, 3)), false),
        ("read_file".to_owned(), false),
        (format!("\"{}\" AND NEAR(", word(1_200)), false),
        (word(300).to_owned(), true),
        (format!("{} {}", word(30), word(500)), true),
    ];
    let mut times = Vec::new();
    for (text, in_tree) in &searches {
        let filter = in_tree.then_some(&tree.id);
        // The first run reads the index from disk; a person's search is measured warm.
        let hits = store.search(text, filter, DEFAULT_SEARCH_HITS).unwrap();
        let mut these = Vec::new();
        for _ in 0..20 {
            let started = Instant::now();
            let again = store.search(text, filter, DEFAULT_SEARCH_HITS).unwrap();
            these.push(started.elapsed());
            assert_eq!(again.len(), hits.len());
        }
        these.sort();
        eprintln!(
            "{text:?}{}: {} hits, median {:.2} ms",
            if *in_tree { " in the tree" } else { "" },
            hits.len(),
            millis(percentile(&these, 0.5))
        );
        times.extend(these);
    }
    times.sort();
    bench("store.search_1m_p50", millis(percentile(&times, 0.5)), "ms");
    bench("store.search_1m_p95", millis(percentile(&times, 0.95)), "ms");
}
