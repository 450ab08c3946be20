//! lbe-netem
