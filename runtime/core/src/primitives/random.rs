//! Bytes from the operating system's random source: the `requestState` key and ids that
//! must not repeat across processes.

/// Fills `bytes` from the OS: `/dev/urandom` on Unix (never blocks once the kernel's pool
/// is initialised, which it is long before a server starts), `getrandom` elsewhere.
#[cfg(unix)]
pub(crate) fn fill(bytes: &mut [u8]) -> std::io::Result<()> {
    use std::io::Read;
    std::fs::File::open("/dev/urandom")?.read_exact(bytes)
}

/// Fills `bytes` from the OS.
#[cfg(not(unix))]
pub(crate) fn fill(bytes: &mut [u8]) -> std::io::Result<()> {
    getrandom::getrandom(bytes).map_err(std::io::Error::other)
}

#[cfg(test)]
mod tests {
    #[test]
    fn two_draws_differ_and_are_not_all_zero() {
        let (mut a, mut b) = ([0u8; 32], [0u8; 32]);
        super::fill(&mut a).unwrap();
        super::fill(&mut b).unwrap();
        assert_ne!(a, b);
        assert_ne!(a, [0u8; 32]);
    }
}
