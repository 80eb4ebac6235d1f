//! The store's one integration test binary: opening and migrating, the frame lifecycle, import.

mod budgets;
mod foreign;
mod frames;
mod import;
mod open;
mod payloads;
mod search;
mod usage;
mod workspace;
