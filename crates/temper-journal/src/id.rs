//! The journal's ids as types: a run's and an attempt's cannot be swapped, nor taken for a count.
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        #[cfg_attr(feature = "sqlx", derive(sqlx::Type), sqlx(transparent))]
        pub struct $name(pub i64);

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }

        impl FromStr for $name {
            type Err = std::num::ParseIntError;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                s.parse().map(Self)
            }
        }
    };
}

id_type!(
    /// A run's id: the store numbers runs from 1.
    RunId
);
id_type!(
    /// An attempt's id, unique across the store's runs.
    AttemptId
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_read_and_print_as_their_number() {
        let run: RunId = "42".parse().unwrap();
        assert_eq!(run, RunId(42));
        assert_eq!(run.to_string(), "42");
        assert_eq!(serde_json::to_string(&AttemptId(7)).unwrap(), "7");
        assert_eq!(serde_json::from_str::<AttemptId>("7").unwrap(), AttemptId(7));
        assert!("x".parse::<RunId>().is_err());
    }
}
