//! Writes a generated Flame export (`flame_import::scale`) for benchmarks and scale tests:
//!
//! ```text
//! cargo run --release -p flame-import --features scale --example scale_export -- \
//!     --frames 100000 --messages 200000 --out target/scale/export-100k.json [--seed 19] [--chain 40]
//! ```
//!
//! The file is written under a temporary name beside `--out` and renamed once complete, so a
//! benchmark never reads half an export. The counts are bounded by `MAX_SCALE_FRAMES` and
//! `MAX_SCALE_MESSAGES` (1M frames, 2M messages); the 100k/200k export is 278 MB and takes a
//! few seconds.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use flame_import::scale::{ScaleSpec, write_export};

const USAGE: &str = "usage: scale_export --frames N --messages M --out FILE [--seed S] [--chain D]";

fn main() -> ExitCode {
    match run(std::env::args().skip(1).collect()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(why) => {
            eprintln!("scale_export: {why}\n{USAGE}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: Vec<String>) -> Result<(), String> {
    let mut frames = None;
    let mut messages = None;
    let mut out = None;
    let mut seed = 19u64;
    let mut chain = None;
    let mut args = args.into_iter();
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{flag} needs a value"));
        let number = |text: String| -> Result<u64, String> {
            text.replace('_', "").parse().map_err(|_| format!("{flag}: {text:?} is not a number"))
        };
        match flag.as_str() {
            "--frames" => frames = Some(number(value()?)? as usize),
            "--messages" => messages = Some(number(value()?)? as usize),
            "--seed" => seed = number(value()?)?,
            "--chain" => chain = Some(number(value()?)? as usize),
            "--out" => out = Some(PathBuf::from(value()?)),
            _ => return Err(format!("unknown argument {flag:?}")),
        }
    }
    let (Some(frames), Some(messages), Some(out)) = (frames, messages, out) else {
        return Err("--frames, --messages and --out are required".to_owned());
    };
    let mut spec = ScaleSpec::new(frames, messages, seed);
    if let Some(chain) = chain {
        spec.chain = chain;
    }
    spec.check()?;
    if let Some(folder) = out.parent().filter(|f| !f.as_os_str().is_empty()) {
        std::fs::create_dir_all(folder)
            .map_err(|e| format!("cannot create {}: {e}", folder.display()))?;
    }
    let mut partial = out.clone().into_os_string();
    partial.push(".partial");
    let partial = PathBuf::from(partial);
    let started = std::time::Instant::now();
    let written = (|| {
        let file = std::fs::File::create(&partial)?;
        let mut writer = BufWriter::with_capacity(1 << 20, file);
        let counts = write_export(&spec, &mut writer)?;
        writer.into_inner().map_err(std::io::IntoInnerError::into_error)?.sync_all()?;
        std::fs::rename(&partial, &out)?;
        Ok::<_, std::io::Error>(counts)
    })();
    let counts = written.map_err(|e| {
        let _ = std::fs::remove_file(&partial);
        format!("cannot write {}: {e}", out.display())
    })?;
    println!(
        "wrote {}: {} frames, {} messages, {} bytes in {:.1} s",
        out.display(),
        counts.frames,
        counts.messages,
        counts.bytes,
        started.elapsed().as_secs_f64()
    );
    std::io::stdout().flush().map_err(|e| e.to_string())
}
