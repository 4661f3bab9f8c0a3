//! Work done on a thread beside `create`'s pipeline: bookkeeping written while git
//! makes the checkout ([`super::apply`]).

/// A thread's work, waited for by [`Beside::wait`], else when dropped: no return leaves
/// it writing behind the run's back.
pub(super) struct Beside(Option<std::thread::JoinHandle<std::io::Result<()>>>);

impl Beside {
    pub(super) fn start(
        work: Option<impl FnOnce() -> std::io::Result<()> + Send + 'static>,
    ) -> Beside {
        Beside(work.map(std::thread::spawn))
    }

    /// Its result (`Ok` when there was no work, or it was waited for already).
    pub(super) fn wait(&mut self) -> std::io::Result<()> {
        match self.0.take().map(std::thread::JoinHandle::join) {
            None => Ok(()),
            Some(Ok(r)) => r,
            Some(Err(_)) => Err(std::io::Error::other("the writer thread panicked")),
        }
    }
}

impl Drop for Beside {
    fn drop(&mut self) {
        let _ = self.wait();
    }
}
