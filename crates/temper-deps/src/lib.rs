//! No code: every third-party crate the workspace uses, with the features the whole workspace
//! gives it (cargo-hakari's workspace-hack, generated: `cargo hakari generate`). Each member
//! depends on it, so `cargo test -p X` builds X's dependencies as the workspace's build did and
//! reuses them: the protections' rows (`tests/protections/run.py`), each one package's build,
//! rebuilt some 80 crates the first time each package was built alone (docs/testing.md).
