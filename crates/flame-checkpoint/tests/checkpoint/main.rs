//! The checkpoint engine against real git repositories built in temporary folders.

mod fixture;
mod limits;
mod round_trip;
mod upkeep;
