//! Writes the two tiktoken encodings Flame counts with as compact tables in `OUT_DIR`, which
//! `src/tables.rs` embeds and reads.
//!
//! tiktoken-rs embeds its encodings as base64 text with every rank spelled out: 5.3 MB for these
//! two, a fifth of the app's binary. A byte-pair encoding needs far less: each of its tokens
//! past the 256 single bytes is two lower-ranked tokens joined (that is how byte-pair encodings
//! are learnt, and this script checks it of every token), so a table is
//! - the number of ordinary tokens, four bytes little-endian;
//! - the width in bits of a rank, one byte (enough bits for the number of tokens);
//! - the byte each of the ranks 0 to 255 stands for, 256 bytes;
//! - for every further rank, in order, the ranks of its first and second part, each `width`
//!   bits, packed from the lowest bit of each byte up;
//!
//! 1.3 MB for both. The tables are made from tiktoken-rs's own encodings here, at build time, so
//! they cannot drift from the version Cargo.lock pins; `tables.rs` tests that the encodings built
//! from them are tiktoken-rs's.

use std::collections::HashMap;
use std::path::PathBuf;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    for (name, encoding) in
        [("o200k_base", tiktoken_rs::o200k_base()), ("cl100k_base", tiktoken_rs::cl100k_base())]
    {
        let encoding = encoding.unwrap_or_else(|e| panic!("{name} ships with tiktoken-rs: {e}"));
        // Ordinary tokens have the ranks from 0 up without a gap and the special tokens come
        // after one (o200k_base's ordinary ranks end at 199,997, its first special is 199,999),
        // so the first rank without a token ends them.
        let mut tokens = Vec::new();
        while let Ok(token) = encoding.decode_bytes(&[tokens.len() as u32]) {
            tokens.push(token);
        }
        let path = out.join(format!("{name}.tokens"));
        std::fs::write(&path, table(name, &tokens))
            .unwrap_or_else(|e| panic!("could not write {}: {e}", path.display()));
    }
}

/// The table of `tokens`, indexed by rank, in the layout the module documentation describes.
fn table(name: &str, tokens: &[Vec<u8>]) -> Vec<u8> {
    let width = u32::BITS - (tokens.len() as u32).leading_zeros();
    let mut table = Vec::new();
    table.extend_from_slice(&(tokens.len() as u32).to_le_bytes());
    table.push(width as u8);
    for (rank, token) in tokens[..256].iter().enumerate() {
        match token.as_slice() {
            [byte] => table.push(*byte),
            _ => panic!("{name}'s rank {rank} is not a single byte"),
        }
    }
    let ranks: HashMap<&[u8], usize> =
        tokens.iter().enumerate().map(|(rank, token)| (token.as_slice(), rank)).collect();
    let mut bits = BitWriter { table, buffer: 0, held: 0 };
    for (rank, token) in tokens.iter().enumerate().skip(256) {
        let (first, second) = (1..token.len())
            .find_map(|split| {
                let first = *ranks.get(&token[..split])?;
                let second = *ranks.get(&token[split..])?;
                (first < rank && second < rank).then_some((first, second))
            })
            .unwrap_or_else(|| panic!("{name}'s rank {rank} is not two lower-ranked tokens"));
        bits.write(first as u64, width);
        bits.write(second as u64, width);
    }
    bits.finish()
}

/// Packs numbers of a given width into bytes, lowest bits first.
struct BitWriter {
    table: Vec<u8>,
    buffer: u64,
    held: u32,
}

impl BitWriter {
    fn write(&mut self, value: u64, width: u32) {
        self.buffer |= value << self.held;
        self.held += width;
        while self.held >= 8 {
            self.table.push(self.buffer as u8);
            self.buffer >>= 8;
            self.held -= 8;
        }
    }

    fn finish(mut self) -> Vec<u8> {
        if self.held > 0 {
            self.table.push(self.buffer as u8);
        }
        self.table
    }
}
