//! The bytes a dump's reader gave, counted (the size cap is checked on what was read).

/// A reader that counts what it gave.
pub(super) struct Counted<R> {
    pub(super) inner: R,
    pub(super) read: u64,
}

impl<R: std::io::Read> std::io::Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        Ok(n)
    }
}
