//! `sqlx::migrate!` embeds the migration files at build time; a new file alone would not
//! rebuild the crate, so the folders are watched.
fn main() {
    println!("cargo:rerun-if-changed=../../migrations/sqlite");
    println!("cargo:rerun-if-changed=../../migrations/postgres");
}
