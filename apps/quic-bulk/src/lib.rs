//! quic-bulk
