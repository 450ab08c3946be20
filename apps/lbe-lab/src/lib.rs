//! lbe-lab
