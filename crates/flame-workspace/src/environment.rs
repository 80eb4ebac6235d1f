//! The environment commands start from, and keeping keys out of every process a command can read.
//!
//! A command gets this process's variables without Flame's own and without anything that looks
//! like a key ([`is_scrubbed_variable`]). That is not enough on its own: a command can read the
//! environment its parent started with from `/proc/$PPID/environ`, whatever the parent removed
//! from its variables since (removing a variable changes libc's list, not the block the kernel
//! shows). So the front ends call [`Environment::withdraw_secrets`] first thing in `main`: it
//! keeps a copy of the environment for the settings to read the keys from, then overwrites the
//! secrets in the process's own environment block, so neither `/proc/<flame>/environ` nor a
//! variable read later holds them.

use std::ffi::{OsStr, OsString};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::ffi::OsStrExt;

/// Variables that name Flame's providers or are Flame's own; with [`is_scrubbed_variable`].
const SCRUBBED_PREFIXES: [&str; 3] = ["FLAME_", "ANTHROPIC_", "OPENAI_"];

/// Suffixes of the usual names for API keys and tokens of any service.
const SECRET_SUFFIXES: [&str; 5] =
    ["_API_KEY", "_APIKEY", "_API_TOKEN", "_AUTH_TOKEN", "_SECRET_KEY"];

/// Whether a variable holds a key: a name (compared in upper case) that ends with `_API_KEY`,
/// `_APIKEY`, `_API_TOKEN`, `_AUTH_TOKEN` or `_SECRET_KEY` — the providers' keys
/// (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`, `ANTHROPIC_AUTH_TOKEN`) and any other service's.
pub fn is_secret_variable(name: &OsStr) -> bool {
    let Some(name) = name.to_str() else { return false };
    let upper = name.to_ascii_uppercase();
    SECRET_SUFFIXES.iter().any(|suffix| upper.ends_with(suffix))
}

/// Whether a variable is removed from a command's environment. The rule: a name (compared in
/// upper case) that starts with `FLAME_`, `ANTHROPIC_` or `OPENAI_` (Flame's own settings and
/// the providers' keys and base URLs), or that holds a key ([`is_secret_variable`]). Everything
/// else — `PATH`, `HOME`, the toolchains' variables — is passed on, so commands run as in the
/// person's terminal.
pub fn is_scrubbed_variable(name: &OsStr) -> bool {
    let upper = name.to_str().map(str::to_ascii_uppercase).unwrap_or_default();
    SCRUBBED_PREFIXES.iter().any(|prefix| upper.starts_with(prefix)) || is_secret_variable(name)
}

/// The environment a command starts from, before scrubbing: explicit, so it is an input like
/// any other.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Environment {
    variables: Vec<(OsString, OsString)>,
}

impl Environment {
    /// This process's environment.
    pub fn inherited() -> Environment {
        Environment::from_variables(std::env::vars_os())
    }

    pub fn from_variables(
        variables: impl IntoIterator<Item = (OsString, OsString)>,
    ) -> Environment {
        Environment { variables: variables.into_iter().collect() }
    }

    /// This process's environment, secrets included, after overwriting the secrets
    /// ([`is_secret_variable`]) in the process's own environment block: from then on they are
    /// only in the returned copy, which is where the front end reads its keys. The second value
    /// says how many were overwritten, or why they could not be (no `/proc`), in which case
    /// commands can still read them from this process.
    ///
    /// Call it first thing in `main`, before any other thread runs: the block is overwritten
    /// through `/proc/self/mem`, underneath libc's list of variables, which then holds empty
    /// entries where the secrets were (neither `getenv` nor `std::env` sees an empty entry).
    pub fn withdraw_secrets() -> (Environment, std::io::Result<usize>) {
        let environment = Environment::inherited();
        (environment, wipe_own_secrets())
    }

    /// The value of variable `name`, if it is set and is text.
    pub fn get(&self, name: &str) -> Option<String> {
        self.variables
            .iter()
            .rev()
            .find(|(key, _)| key.as_os_str() == OsStr::new(name))
            .and_then(|(_, value)| value.to_str())
            .map(str::to_owned)
    }

    /// The variables a command gets: all but the scrubbed ones.
    pub fn scrubbed(&self) -> impl Iterator<Item = &(OsString, OsString)> {
        self.variables.iter().filter(|(name, _)| !is_scrubbed_variable(name))
    }
}

/// Overwrites with zero bytes every `NAME=value` entry of this process's environment block whose
/// name is a secret; returns how many.
fn wipe_own_secrets() -> std::io::Result<usize> {
    let stat = std::fs::read_to_string("/proc/self/stat")?;
    let env_start = environment_start(&stat).ok_or_else(|| {
        std::io::Error::other("/proc/self/stat does not say where the environment is")
    })?;
    let mut block = Vec::new();
    std::fs::File::open("/proc/self/environ")?.read_to_end(&mut block)?;
    let secrets = secret_entries(&block);
    if secrets.is_empty() {
        return Ok(0);
    }
    let mut memory = std::fs::OpenOptions::new().write(true).open("/proc/self/mem")?;
    for (offset, length) in &secrets {
        memory.seek(SeekFrom::Start(env_start + *offset as u64))?;
        memory.write_all(&vec![0u8; *length])?;
    }
    Ok(secrets.len())
}

/// Where the environment block starts, from `/proc/self/stat`: field 50, `env_start` (the
/// fields are counted from 1, and the second, the command's name in parentheses, may hold
/// spaces, so they are counted after its closing parenthesis, which is field 2's end).
fn environment_start(stat: &str) -> Option<u64> {
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(50 - 3).and_then(|field| field.parse().ok())
}

/// The offset and length of each `NAME=value` entry of an environment block (entries end with a
/// NUL byte) whose name is a secret.
fn secret_entries(block: &[u8]) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    let mut offset = 0;
    for entry in block.split(|byte| *byte == 0) {
        let name = entry.split(|byte| *byte == b'=').next().unwrap_or_default();
        if entry.contains(&b'=') && is_secret_variable(OsStr::from_bytes(name)) {
            found.push((offset, entry.len()));
        }
        offset += entry.len() + 1;
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_found_by_name_in_an_environment_block() {
        let block = b"PATH=/bin\0OPENAI_API_KEY=sk-1\0HOME=/h\0anthropic_auth_token=t\0X_API_KEY\0";
        let found = secret_entries(block);
        assert_eq!(found, [(10, 19), (38, 22)]);
        assert_eq!(&block[10..29], b"OPENAI_API_KEY=sk-1");
        assert!(!is_secret_variable(OsStr::new("ANTHROPIC_BASE_URL")));
        assert!(is_scrubbed_variable(OsStr::new("ANTHROPIC_BASE_URL")));
    }

    #[test]
    fn the_start_of_the_environment_is_read_past_a_name_with_spaces() {
        let fields: Vec<String> = (3..=52).map(|n| n.to_string()).collect();
        let stat = format!("12 (a b) c) {}", fields.join(" "));
        assert_eq!(environment_start(&stat), Some(50));
        assert_eq!(environment_start("12 (x) 1 2"), None);
    }
}
