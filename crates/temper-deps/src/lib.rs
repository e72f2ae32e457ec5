//! No code: every third-party crate the workspace uses, with the features the whole workspace
//! gives it (cargo-hakari's workspace-hack, generated: `cargo hakari generate`). Each member has
//! it as a dev-dependency, so `cargo test -p X` builds X's dependencies as the workspace's test
//! build did and reuses them: the protections' rows (`tests/protections/run.py`), each one
//! package's build, rebuilt some 30 to 80 crates the first time each package was built alone
//! (docs/testing.md). A dev-dependency only: a library still starts as soon as its own
//! dependencies are built, and a release build leaves it out.
